//! The built-in `terminal` tool server: eight tools, one executor, for every provider.
//! `vet` is where the layers meet the approval gate: blocked lines are refused (the model
//! reads only that the command is not allowed; the card and the panel show why), lines the
//! parser cannot reduce are asked about with the reason, and the rest follow the ask level,
//! remembered approvals and session mode.
//! (Over 500 lines: the eight tools' descriptions and schemas, which the model reads, beside the
//! one dispatch and `vet` that use them.)

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::policy::{self, Check, Context, Decision};
use super::{Session, Terminal, TerminalSettings, exec, find};
use perch_store::Store;
use perch_store::terminal::TerminalEvent;
use perch_tools::questions::{ApprovalChoice, ApprovalDetail};
use perch_tools::{BuiltinServer, CallError, CallOrigin, Progress, ToolOutput, ToolView, Vetting};

pub use super::settings::SERVER;

/// What the model reads when the blocklist refuses a line (it is never told the rules).
const NOT_ALLOWED: &str = "This command was not run: it is not allowed on this computer. Do not try to \
    reach the same result another way; tell the user what you wanted to do and why.";

/// What the terminal's tools read from the engine above them, which implements it: the
/// dependency runs from the engine to the terminal, never back.
pub trait TerminalHost: Send + Sync {
    /// The terminal settings now (the user may change them between two calls).
    fn settings(&self) -> BoxFuture<'_, TerminalSettings>;
    /// A token that fires when the answer `run_id` has ended (what it started is then cleaned
    /// up); `None` when no such answer is running.
    fn run_ended(&self, run_id: &str) -> Option<CancellationToken>;
}

/// The terminal as an MCP-style built-in server. It holds the terminal, the history database
/// (conversations' folders, remembered approvals) and its host.
pub struct TerminalServer {
    terminal: Arc<Terminal>,
    host: Arc<dyn TerminalHost>,
    store: Store,
}

impl TerminalServer {
    pub fn new(terminal: Arc<Terminal>, host: Arc<dyn TerminalHost>, store: Store) -> Self {
        Self { terminal, host, store }
    }
}

fn tool(name: &str, description: &str, read_only: bool, properties: Value, required: &[&str]) -> ToolView {
    ToolView {
        name: name.to_owned(),
        title: None,
        description: description.to_owned(),
        input_schema: json!({ "type": "object", "properties": properties, "required": required }),
        read_only,
        destructive: !read_only && name != "request_session_mode" && name != "end_session_mode",
        harmless_when: None,
        ui: None,
    }
}

/// The eight tools, as the model sees them.
pub fn tool_views() -> Vec<ToolView> {
    let id = json!({ "type": "integer", "description": "The id run_command returned" });
    vec![
        tool(
            "run_command",
            "Run a shell command (bash) in a terminal on the user's computer and return its output and exit \
             code. The user approves commands. A command that is still running after a while returns its \
             output so far and an id for read_output, send_input and kill_process.",
            false,
            json!({
                "command": { "type": "string", "description": "The command line to run" },
                "cwd": { "type": "string", "description": "The folder to run it in (default: the working folder)" },
                "timeout": { "type": "integer", "description": "Seconds before it is stopped (lower than the default only)" },
                "reason": { "type": "string", "description": "Why you want to run it, shown to the user" }
            }),
            &["command"],
        ),
        tool(
            "send_input",
            "Type text into a running command that waits for input (add \\n to press Enter).",
            false,
            json!({ "id": id, "text": { "type": "string" } }),
            &["id", "text"],
        ),
        tool(
            "read_output",
            "Wait for and read new output of a running command.",
            true,
            json!({ "id": id }),
            &["id"],
        ),
        tool(
            "kill_process",
            "Stop a running command and everything it started.",
            false,
            json!({ "id": id }),
            &["id"],
        ),
        tool(
            "get_environment",
            "Describe the computer's terminal: operating system, shell, working folder, installed tools, sandbox.",
            true,
            json!({}),
            &[],
        ),
        tool(
            "find_files",
            "Find files by name pattern (glob such as *.rs or src/**/*.toml) under a folder.",
            true,
            json!({
                "pattern": { "type": "string" },
                "directory": { "type": "string", "description": "Where to look (default: the working folder)" }
            }),
            &["pattern"],
        ),
        tool(
            "request_session_mode",
            "Ask the user to let commands run without a question each, until the end of this answer.",
            false,
            json!({ "reason": { "type": "string", "description": "What you will do in the session" } }),
            &["reason"],
        ),
        tool("end_session_mode", "End session mode early.", false, json!({}), &[]),
    ]
}

fn text(arguments: &Value, key: &str) -> Option<String> {
    arguments.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn job_id(arguments: &Value) -> u32 {
    arguments.get("id").and_then(Value::as_u64).and_then(|v| u32::try_from(v).ok()).unwrap_or(0)
}

/// What the model is told when no working folder is chosen yet.
pub const NO_FOLDER: &str = "No working folder is chosen for the terminal yet, so no command can run. \
    Ask the user to choose one in Settings -> Terminal -> Working folder (from a terminal: \
    `perch terminal folder DIR`): commands may change files only there.";

/// Keys typed into a terminal as the lines they make: Enter is `\r` to a terminal (or
/// `\r\n`), and `\n` to the parser.
fn typed_line(keys: &str) -> String {
    keys.replace("\r\n", "\n").replace('\r', "\n")
}

/// Keys as the card shows them: control keys in caret notation (`^O`, `^[` for Esc, `^?` for
/// Delete), which would otherwise be invisible; Enter and Tab as they are.
fn visible_keys(keys: &str) -> String {
    keys.chars()
        .map(|c| match c {
            '\n' | '\t' => c.to_string(),
            '\u{7f}' => "^?".to_owned(),
            c if u32::from(c) < 0x20 => format!("^{}", char::from_u32(u32::from(c) + 0x40).unwrap_or('?')),
            c if c.is_control() => format!("<U+{:04X}>", u32::from(c)),
            c => c.to_string(),
        })
        .collect()
}

/// The working folder the user chose in Settings, `~` expanded; `None` until one is chosen.
pub fn chosen_folder(settings: &TerminalSettings) -> Option<PathBuf> {
    let home = super::home();
    match settings.working_folder.trim() {
        "" => None,
        f => super::paths::resolve(f, Some(&home), &home),
    }
}

/// The folder a command runs in: the model's (absolute, `~`, or under the working folder),
/// else the working folder from Settings (the home folder where none is chosen, for the
/// read-only tools; commands refuse to run without a chosen folder).
pub fn working_folder(asked: Option<&str>, settings: &TerminalSettings) -> PathBuf {
    let home = super::home();
    let base = chosen_folder(settings).unwrap_or_else(|| home.clone());
    match asked.map(str::trim).filter(|a| !a.is_empty()) {
        Some(a) => super::paths::resolve(a, Some(&base), &home).unwrap_or(base),
        None => base,
    }
}

impl TerminalServer {
    /// The terminal and the terminal settings this call is held to: the conversation's own
    /// working folder, where it was given one, in place of Settings'.
    async fn parts(&self, origin: &CallOrigin) -> (Arc<Terminal>, TerminalSettings) {
        let mut settings = self.host.settings().await;
        if let Some(cid) = &origin.conversation_id {
            match self.store.conversation_folder(cid).await {
                Ok(Some(folder)) => settings.working_folder = folder,
                Ok(None) => {}
                Err(e) => tracing::warn!(error = %e, "could not read the conversation's working folder"),
            }
        }
        let terminal = self.terminal.clone();
        // Checked again at every use, and used as what it now is: a folder that passed when it
        // was chosen may since have been replaced by a link to home or to Perch's data. One
        // that no longer passes counts as not chosen, so the card asks for a folder again.
        if let Some(folder) = chosen_folder(&settings) {
            match terminal.check_folder(&folder) {
                Ok(dir) => settings.working_folder = dir.display().to_string(),
                Err(e) => {
                    tracing::warn!(error = %e, "the working folder no longer passes the checks");
                    settings.working_folder.clear();
                }
            }
        }
        (terminal, settings)
    }

    async fn vet_command(&self, origin: &CallOrigin, arguments: &Value) -> Vetting {
        let (terminal, settings) = self.parts(origin).await;
        let command = text(arguments, "command").unwrap_or_default();
        if chosen_folder(&settings).is_none() {
            // The first command: the card asks for the folder, and Run waits for it.
            let sandbox = super::SandboxView {
                enforced: false,
                network_blocked: false,
                writable: Vec::new(),
                summary: "Choose the working folder first: commands may change files only there.".into(),
            };
            return Vetting::Ask {
                detail: ApprovalDetail::Command {
                    command,
                    cwd: String::new(),
                    reason: text(arguments, "reason"),
                    sandbox,
                    why_asked: Some("Perch needs a working folder before any command runs.".into()),
                    can_remember: false,
                    needs_folder: true,
                },
                approved: false,
                rules_may_allow: false,
            };
        }
        let cwd = match terminal
            .check_cwd(&working_folder(text(arguments, "cwd").as_deref(), &settings), &settings)
        {
            Ok(cwd) => cwd,
            Err(e) => return Vetting::Refuse(format!("Not run: {e}.")),
        };
        let assessment = policy::assess(&command, &cwd, &super::home());
        let sandbox = terminal.sandbox_view(&cwd, &settings).await;
        if let Check::Blocked(why) = &assessment.check {
            let event = TerminalEvent {
                blocked: Some(why.clone()),
                sandbox: sandbox.summary,
                ..refused(origin, command, &cwd)
            };
            terminal.record(event, 0).await;
            return Vetting::Refuse(NOT_ALLOWED.into());
        }
        // A session is granted for its folder: a command elsewhere is asked about.
        let session =
            origin.run_id.as_deref().and_then(|r| terminal.session(r)).filter(|s| cwd.starts_with(&s.folder));
        let remembered = self.store.is_approval_remembered(&assessment.hash()).await.unwrap_or(false);
        let ctx = Context {
            ask_level: settings.ask_level,
            remembered,
            session: session.is_some(),
            sandboxed: sandbox.enforced,
        };
        let decision = policy::decide(&assessment, ctx);
        let unclear = matches!(assessment.check, Check::Unclear(_));
        let why_asked = match (&assessment.check, sandbox.enforced) {
            (Check::Unclear(why), _) => Some(format!("Perch cannot check this command: {why}.")),
            (_, false) => {
                Some("This command would not be fully sandboxed, so Perch asks about every command.".into())
            }
            _ => None,
        };
        // Without the full sandbox every command is asked about: no rule overrides that.
        let rules_may_allow = !unclear && sandbox.enforced;
        Vetting::Ask {
            detail: ApprovalDetail::Command {
                command,
                cwd: cwd.display().to_string(),
                reason: text(arguments, "reason"),
                sandbox,
                why_asked,
                can_remember: !unclear,
                needs_folder: false,
            },
            approved: matches!(decision, Decision::Allowed(_)),
            rules_may_allow,
        }
    }

    async fn vet_input(&self, origin: &CallOrigin, arguments: &Value) -> Vetting {
        let (terminal, settings) = self.parts(origin).await;
        let id = job_id(arguments);
        let Ok(job) = terminal.job(id) else {
            return Vetting::Refuse(format!("There is no running command with id {id}."));
        };
        let input = text(arguments, "text").unwrap_or_default();
        // Typed into a shell, input is a command line like any other, assessed in the job's
        // folder: the whole line it ends, with what was typed before it.
        let line = typed_line(&format!("{}{input}", job.typed()));
        let folder = terminal.job_folder(id).or_else(|| chosen_folder(&settings)).unwrap_or_else(super::home);
        let assessment = policy::assess(&line, &folder, &super::home());
        if let Check::Blocked(_) = assessment.check {
            return Vetting::Refuse(NOT_ALLOWED.into());
        }
        // A session covers what is typed into commands of its folder only.
        let session = origin
            .run_id
            .as_deref()
            .and_then(|r| terminal.session(r))
            .is_some_and(|s| folder.starts_with(&s.folder));
        let detail = ApprovalDetail::Input { text: visible_keys(&line), command: format!("command {id}") };
        // Keys that end no line run nothing by themselves; the key that ends the line is judged
        // with the whole line. Every control key ends one (Ctrl+O runs it in readline, a
        // raw-mode program acts on any), and makes the line unclear, so it is asked about;
        // Ctrl+C alone only interrupts (readline drops the line).
        if !input.contains(exec::ends_line) || input == "\u{3}" {
            return Vetting::Ask { detail, approved: session, rules_may_allow: true };
        }
        // Only session mode lets a line through unasked, and only one Perch can check, in a
        // sandbox: a remembered approval is for a whole command in its folder, never for what
        // is typed into one, whatever the ask level.
        let sandbox = terminal.sandbox_view(&folder, &settings).await;
        let ctx = Context {
            ask_level: super::AskLevel::Always,
            remembered: false,
            session,
            sandboxed: sandbox.enforced,
        };
        let unclear = matches!(assessment.check, Check::Unclear(_));
        Vetting::Ask {
            detail,
            approved: matches!(policy::decide(&assessment, ctx), Decision::Allowed(_)),
            rules_may_allow: !unclear && sandbox.enforced,
        }
    }

    async fn run_command(
        &self,
        origin: &CallOrigin,
        arguments: &Value,
        cancel: &CancellationToken,
        progress: Option<mpsc::UnboundedSender<Progress>>,
    ) -> Result<ToolOutput, CallError> {
        let (terminal, settings) = self.parts(origin).await;
        if chosen_folder(&settings).is_none() {
            return Ok(ToolOutput::error(NO_FOLDER));
        }
        let command = text(arguments, "command").unwrap_or_default();
        // Checked again: the folders may have changed since the card was answered.
        let cwd = match terminal
            .check_cwd(&working_folder(text(arguments, "cwd").as_deref(), &settings), &settings)
        {
            Ok(cwd) => cwd,
            Err(e) => return Ok(ToolOutput::error(format!("Not run: {e}."))),
        };
        // The card may have been answered before the folder was chosen: the blocklist judges
        // the line again in the folder it now runs in (for a line vetted there, the same answer).
        if let Check::Blocked(why) = policy::assess(&command, &cwd, &super::home()).check {
            let event = TerminalEvent { blocked: Some(why), ..refused(origin, command, &cwd) };
            terminal.record(event, 0).await;
            return Ok(ToolOutput::error(NOT_ALLOWED));
        }
        let timeout = settings.timeout_for(arguments.get("timeout").and_then(Value::as_u64));
        if let Some(run) = &origin.run_id
            && let Some(ended) = self.host.run_ended(run)
        {
            terminal.watch_run(run, ended);
        }
        let (id, job) = terminal
            .run(&command, &cwd, &settings, timeout, origin.clone(), progress)
            .await
            .map_err(|e| CallError::Protocol { server: SERVER.into(), message: e.to_string() })?;
        // Inside an answer, a silent command hands control back so the model can feed it input.
        let idle = origin.run_id.as_ref().map(|_| terminal.idle_return());
        let stop = CancellationToken::new();
        let waiting = job.wait_report(idle, &stop);
        tokio::pin!(waiting);
        let report = tokio::select! {
            r = &mut waiting => r,
            () = cancel.cancelled() => {
                // Stop: the group is killed and what arrived is saved.
                job.kill();
                job.wait_report(None, &CancellationToken::new()).await
            }
        };
        Ok(describe(id, &command, &report))
    }

    async fn follow(
        &self,
        arguments: &Value,
        cancel: &CancellationToken,
        tool: &str,
    ) -> Result<ToolOutput, CallError> {
        let terminal = self.terminal.clone();
        let id = job_id(arguments);
        let job = terminal
            .job(id)
            .map_err(|e| CallError::Protocol { server: SERVER.into(), message: e.to_string() })?;
        let idle = match tool {
            "send_input" => {
                let input = text(arguments, "text").unwrap_or_default();
                job.send_input(&input)
                    .map_err(|e| CallError::Protocol { server: SERVER.into(), message: e.to_string() })?;
                Some(terminal.idle_return().min(std::time::Duration::from_secs(2)))
            }
            "kill_process" => {
                job.kill();
                None
            }
            _ => Some(terminal.idle_return()),
        };
        let report = job.wait_report(idle, cancel).await;
        Ok(describe(id, &format!("command {id}"), &report))
    }

    async fn session(
        &self,
        origin: &CallOrigin,
        arguments: &Value,
        start: bool,
    ) -> Result<ToolOutput, CallError> {
        let (terminal, settings) = self.parts(origin).await;
        let Some(run) = origin.run_id.as_deref() else {
            return Ok(ToolOutput::error("Session mode exists only inside an answer."));
        };
        if !start {
            let ended = terminal.end_session(run);
            return Ok(ToolOutput {
                text: if ended { "Session mode ended." } else { "Session mode was not on." }.into(),
                ..ToolOutput::default()
            });
        }
        let Some(folder) = chosen_folder(&settings) else {
            return Ok(ToolOutput::error(NO_FOLDER));
        };
        if let Some(ended) = self.host.run_ended(run) {
            terminal.watch_run(run, ended);
        }
        terminal.start_session(
            run,
            Session {
                conversation_id: origin.conversation_id.clone().unwrap_or_default(),
                folder: folder.clone(),
                reason: text(arguments, "reason").unwrap_or_default(),
            },
        );
        Ok(ToolOutput {
            text: format!(
                "Session mode is on until the end of this answer: commands in {} run without asking the user each time.",
                folder.display()
            ),
            ..ToolOutput::default()
        })
    }
}

/// The event of a command that never ran (denied, or blocked when the caller adds why).
fn refused(origin: &CallOrigin, command: String, cwd: &Path) -> TerminalEvent {
    TerminalEvent {
        conversation_id: origin.conversation_id.clone(),
        message_id: origin.message_id,
        call_id: origin.call_id.clone(),
        command,
        cwd: cwd.display().to_string(),
        denied: true,
        ..TerminalEvent::default()
    }
}

/// The model's view of a command: its new output, then how it stands.
fn describe(id: u32, command: &str, report: &exec::Report) -> ToolOutput {
    let mut text = report.output.trim_end().to_owned();
    let status = match report.exit {
        None => format!(
            "[still running as id {id}: it may be waiting for input. Use read_output(id={id}), \
             send_input(id={id}, text) or kill_process(id={id}).]"
        ),
        Some(e) if e.timed_out => {
            format!("[{command} ran past its time limit and was stopped after {} ms]", e.duration_ms)
        }
        Some(e) if e.output_capped => "[stopped: it printed more output than Perch keeps]".into(),
        Some(e) if e.killed => format!("[stopped by the user after {} ms]", e.duration_ms),
        Some(e) => match e.code {
            Some(code) => format!("[exit code {code} after {} ms]", e.duration_ms),
            None => format!("[ended by a signal after {} ms]", e.duration_ms),
        },
    };
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(&status);
    let failed = report.exit.is_some_and(|e| e.code != Some(0));
    ToolOutput { text, is_error: failed, ..ToolOutput::default() }
}

impl BuiltinServer for TerminalServer {
    fn name(&self) -> &'static str {
        SERVER
    }

    fn tools(&self) -> Vec<ToolView> {
        if self.terminal.enabled() { tool_views() } else { Vec::new() }
    }

    fn vet<'a>(
        &'a self,
        origin: &'a CallOrigin,
        tool: &'a str,
        arguments: &'a Value,
    ) -> BoxFuture<'a, Vetting> {
        async move {
            match tool {
                "run_command" => self.vet_command(origin, arguments).await,
                "send_input" => self.vet_input(origin, arguments).await,
                "request_session_mode" => {
                    let (_, settings) = self.parts(origin).await;
                    let Some(folder) = chosen_folder(&settings) else {
                        return Vetting::Refuse(NO_FOLDER.into());
                    };
                    Vetting::Ask {
                        detail: ApprovalDetail::Session {
                            reason: text(arguments, "reason").unwrap_or_default(),
                            folder: folder.display().to_string(),
                        },
                        approved: false,
                        rules_may_allow: true,
                    }
                }
                "find_files" => Vetting::Default,
                _ => Vetting::NoQuestion,
            }
        }
        .boxed()
    }

    fn answered<'a>(
        &'a self,
        origin: &'a CallOrigin,
        tool: &'a str,
        arguments: &'a Value,
        choice: ApprovalChoice,
    ) -> BoxFuture<'a, ()> {
        async move {
            let (terminal, settings) = self.parts(origin).await;
            if tool != "run_command" {
                return;
            }
            let command = text(arguments, "command").unwrap_or_default();
            let cwd = working_folder(text(arguments, "cwd").as_deref(), &settings);
            let assessment = policy::assess(&command, &cwd, &super::home());
            match choice {
                // Lines Perch cannot check are never remembered (the card offers no "always").
                ApprovalChoice::Always if assessment.check == Check::Clear => {
                    if let Err(e) = self.store.remember_approval(&assessment.hash(), &assessment.label).await
                    {
                        tracing::warn!(error = %e, "could not remember the approval");
                    }
                }
                c if !c.allows() => {
                    terminal.record(refused(origin, command, &cwd), 0).await;
                }
                _ => {}
            }
        }
        .boxed()
    }

    fn call<'a>(
        &'a self,
        origin: &'a CallOrigin,
        tool: &'a str,
        arguments: &'a Value,
        cancel: &'a CancellationToken,
        progress: Option<mpsc::UnboundedSender<Progress>>,
    ) -> BoxFuture<'a, Result<ToolOutput, CallError>> {
        async move {
            match tool {
                "run_command" => {
                    // Direct calls (`perch mcp call`, no answer to approve them) pass layers 1-3
                    // and run only lines Perch can check.
                    if origin.run_id.is_none() {
                        match self.vet_command(origin, arguments).await {
                            Vetting::Refuse(why) => return Ok(ToolOutput::error(why)),
                            Vetting::Ask {
                                detail: ApprovalDetail::Command { needs_folder: true, .. },
                                ..
                            } => {
                                return Ok(ToolOutput::error(NO_FOLDER));
                            }
                            Vetting::Ask {
                                detail:
                                    ApprovalDetail::Command { why_asked: Some(why), can_remember: false, .. },
                                ..
                            } => {
                                return Ok(ToolOutput::error(format!(
                                    "{why} Run it yourself in a terminal if you mean it."
                                )));
                            }
                            _ => {}
                        }
                    }
                    self.run_command(origin, arguments, cancel, progress).await
                }
                "send_input" | "read_output" | "kill_process" => self.follow(arguments, cancel, tool).await,
                "request_session_mode" => self.session(origin, arguments, true).await,
                "end_session_mode" => self.session(origin, arguments, false).await,
                "get_environment" => {
                    let (terminal, settings) = self.parts(origin).await;
                    let cwd = working_folder(None, &settings);
                    let sandbox = terminal.sandbox_view(&cwd, &settings).await;
                    Ok(ToolOutput { text: find::environment(&cwd, &sandbox).await, ..ToolOutput::default() })
                }
                "find_files" => {
                    let (_, settings) = self.parts(origin).await;
                    let dir = working_folder(text(arguments, "directory").as_deref(), &settings);
                    let pattern = text(arguments, "pattern").unwrap_or_default();
                    Ok(find::find_files(dir, pattern, cancel).await)
                }
                other => Err(CallError::UnknownTool { server: SERVER.into(), tool: other.to_owned() }),
            }
        }
        .boxed()
    }
}

/// True when `path` lies in a credential store (find_files never lists those): a prefix check
/// against the blocklist's list, so no command line is built from a name found on disk.
pub(crate) fn is_credential_path(path: &Path) -> bool {
    super::blocklist::credential(path, &super::home()).is_some()
}
