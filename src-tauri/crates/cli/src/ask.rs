//! `perch ask` and `perch models`: the chat from a terminal.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, bail};
use base64::Engine as _;
use perch_core::Engine;
use perch_core::agent::{
    FileInput, ImageInput, TurnEvent, TurnKind, TurnOptions, TurnRequest, TurnSink, run_turn_with, tools,
};
use perch_core::providers::pick_default;
use perch_core::questions::{
    Answer, ApprovalChoice, ApprovalDetail, ApprovalQuestion, Question, QuestionChange,
};
use perch_core::store::MessageStatus;
use perch_core::store::tool_calls::ToolCallStatus;
use perch_core::terminal::TerminalUpdate;

use crate::output::print_json;

/// Prints the answer as it streams: text to stdout, thinking to stderr when asked.
struct Terminal {
    thinking: bool,
}

impl TurnSink for Terminal {
    fn send(&self, event: TurnEvent) {
        match event {
            TurnEvent::Text(t) => out!("{t}"),
            TurnEvent::Thinking(t) if self.thinking => {
                eprint!("{t}");
                let _ = std::io::stderr().flush();
            }
            TurnEvent::ToolCall(call) => {
                let name = format!("{}:{}", call.server, call.tool);
                let detail = match (call.status, &call.output) {
                    (ToolCallStatus::Pending, _) => format!("{}", call.arguments),
                    (ToolCallStatus::Running, _) => "running".into(),
                    (status, Some(out)) => {
                        let first: String =
                            out.text.lines().next().unwrap_or_default().chars().take(120).collect();
                        format!("{status:?}: {first}").to_lowercase()
                    }
                    (status, None) => format!("{status:?}").to_lowercase(),
                };
                eprintln!("[tool {name}] {detail}");
            }
            TurnEvent::Started(started) if !started.memories.is_empty() => {
                for memory in &started.memories {
                    eprintln!("[memory] {}", memory.text);
                }
            }
            TurnEvent::Finished(_) => outln!(),
            _ => {}
        }
    }
}

#[derive(clap::Args)]
pub struct Ask {
    pub question: String,
    /// provider:model, e.g. local:qwen3-0.6b, ollama:qwen3-vl:8b-instruct or anthropic:claude-sonnet-4-5.
    #[arg(long)]
    pub model: Option<String>,
    /// Attach an image (for vision models); repeat for more.
    #[arg(long = "image")]
    pub images: Vec<PathBuf>,
    /// Attach files as context (text; images go as --image does); several allowed.
    #[arg(long = "file", num_args = 1..)]
    pub files: Vec<PathBuf>,
    /// Continue a conversation (its id, or a unique prefix).
    #[arg(long)]
    pub conversation: Option<String>,
    /// Print the model's reasoning to stderr.
    #[arg(long)]
    pub thinking: bool,
    /// Let tools run without asking: server:tool, either part may be * (e.g. demo:*). Repeatable.
    #[arg(long = "approve")]
    pub approve: Vec<String>,
    /// Offer no tools to the model.
    #[arg(long)]
    pub no_tools: bool,
    /// The terminal's working folder for this conversation (commands run there and may
    /// change files only there), in place of the one from the settings.
    #[arg(long)]
    pub cwd: Option<PathBuf>,
}

pub async fn ask(engine: Engine, args: Ask) -> anyhow::Result<()> {
    let model = match args.model {
        Some(model) => model,
        None => default_model(&engine).await?,
    };
    let mut images = args.images.iter().map(read_image).collect::<anyhow::Result<Vec<_>>>()?;
    let mut files = Vec::new();
    // Images among the files go the image way; the rest must be text (checked by the turn).
    for path in &args.files {
        match perch_core::files::inspect(path)? {
            perch_core::files::FileKind::Image { .. } => images.push(read_image(path)?),
            perch_core::files::FileKind::Text { .. } => {
                let absolute = std::path::absolute(path).unwrap_or_else(|_| path.clone());
                files.push(FileInput {
                    path: absolute.to_string_lossy().into_owned(),
                    first_lines: None,
                    lines: None,
                });
            }
        }
    }
    let mut conversation_id = match args.conversation {
        Some(id) => Some(engine.store().resolve_conversation_id(&id).await?),
        None => None,
    };
    if let Some(dir) = &args.cwd {
        // The folder is checked before anything is saved; a new conversation is made now, so
        // the folder is its own from the first command.
        let dir = std::path::absolute(dir)?;
        engine.terminal().check_folder(&dir)?;
        let cid = match conversation_id {
            Some(cid) => cid,
            None => {
                let title = perch_core::agent::title_from(&args.question);
                engine.store().create_conversation(&title, Some(&model)).await?.id
            }
        };
        engine.choose_working_folder(&dir, Some(&cid)).await?;
        conversation_id = Some(cid);
    }
    let run_id = uuid_like();
    let request = TurnRequest {
        conversation_id,
        model,
        kind: TurnKind::Ask { text: args.question, images, files, selections: Vec::new() },
        run_id: Some(run_id.clone()),
    };
    let sink = Terminal { thinking: args.thinking };
    if !args.no_tools {
        start_tools(&engine).await;
    }
    let options = TurnOptions { extra_rules: tools::approve_rules(&args.approve), no_tools: args.no_tools };
    // A task on the runtime rather than on this (the main) thread: the connection's task runs on
    // a worker, and handing every chunk across threads cost more than the engine's own work.
    let mut turn = tokio::spawn({
        let engine = engine.clone();
        async move { run_turn_with(engine.agent(), request, &sink, options).await }
    });
    let answer = tokio::select! {
        answer = &mut turn => answer??,
        _ = tokio::signal::ctrl_c() => {
            // Stop the answer; what arrived is saved as stopped.
            engine.runs().cancel(&run_id);
            turn.await??
        }
    };
    engine.shutdown(std::time::Duration::from_secs(2)).await;
    match answer.status {
        MessageStatus::Error => bail!("{}", answer.error.unwrap_or_else(|| "the answer failed".into())),
        MessageStatus::Stopped => {
            bail!("stopped; the partial answer is saved in conversation {}", &answer.conversation_id[..8])
        }
        _ => Ok(()),
    }
}

/// Starts the MCP servers (waiting a little for them) and, on a terminal, answers approval
/// questions from the keyboard. Without a terminal, calls that need approval are declined.
async fn start_tools(engine: &Engine) {
    engine.start_mcp_servers().await;
    let names: Vec<String> = engine
        .mcp()
        .list()
        .into_iter()
        .filter(|s| s.config.enabled && s.config.auto_start)
        .map(|s| s.config.name)
        .collect();
    let waits = names.iter().map(|n| engine.mcp().ensure_connected(n, std::time::Duration::from_secs(20)));
    for (name, result) in names.iter().zip(futures::future::join_all(waits).await) {
        if let Err(e) = result {
            eprintln!("perch: MCP server {name} is not available: {e}");
        }
    }
    print_terminal(engine);
    if !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        return;
    }
    let mut changes = engine.questions().subscribe();
    let questions = engine.questions().clone();
    let engine = engine.clone();
    tokio::spawn(async move {
        while let Ok(event) = changes.recv().await {
            let QuestionChange::Asked(ask) = event else { continue };
            if let Question::Memory(m) = &ask.question {
                let keep = ask_memory(&m.text).await;
                let _ = questions.answer(ask.id, Answer::Memory { keep });
                continue;
            }
            let Question::ToolApproval(q) = ask.question else { continue };
            let terminal = q.detail.is_some();
            if let Some(ApprovalDetail::Command { needs_folder: true, .. }) = q.detail.as_deref() {
                let choice = ask_for_folder(&engine, &q).await;
                let _ = questions.answer(ask.id, Answer::Approval { choice });
                continue;
            }
            eprint!("{}", prompt(&q));
            let line = read_line().await;
            let choice = match line.as_deref().map(str::trim) {
                Some("y" | "Y" | "yes") => ApprovalChoice::Once,
                Some("c" | "C") if !terminal => ApprovalChoice::Conversation,
                Some("a" | "A") => ApprovalChoice::Always,
                Some("v" | "V") if !terminal => ApprovalChoice::Never,
                _ => ApprovalChoice::Deny,
            };
            let _ = questions.answer(ask.id, Answer::Approval { choice });
        }
    });
}

/// A memory the model proposes: kept as written (y), as typed instead (e), or not.
async fn ask_memory(text: &str) -> Option<String> {
    eprint!("\nThe model proposes to remember:\n  {text}\nKeep it? [y]es, [e]dit, [N]o: ");
    match read_line().await.as_deref().map(str::trim) {
        Some("y" | "Y" | "yes") => Some(text.to_owned()),
        Some("e" | "E" | "edit") => {
            eprint!("  Keep instead (empty: do not keep): ");
            read_line().await.map(|l| l.trim().to_owned()).filter(|l| !l.is_empty())
        }
        _ => None,
    }
}

async fn read_line() -> Option<String> {
    let _ = std::io::stderr().flush();
    let line = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).map(|_| line)
    })
    .await;
    line.ok().and_then(Result::ok)
}

/// The first command, before any working folder is chosen: the folder is asked for (and
/// saved, as `perch terminal folder` would), then the command as usual.
async fn ask_for_folder(engine: &Engine, q: &ApprovalQuestion) -> ApprovalChoice {
    loop {
        eprint!(
            "\nThe model wants to run a command, and the terminal has no working folder yet: commands may \
             change files only there.\n  Folder to use (empty: deny; later: perch terminal folder DIR): "
        );
        let Some(line) = read_line().await.map(|l| l.trim().to_owned()).filter(|l| !l.is_empty()) else {
            return ApprovalChoice::Deny;
        };
        // Typed at a prompt, a relative folder is where `perch` was started.
        let Ok(folder) = std::path::absolute(&line) else { continue };
        match engine.choose_working_folder(&folder, None).await {
            Ok(dir) => {
                let command = match q.detail.as_deref() {
                    Some(ApprovalDetail::Command { command, .. }) => command.as_str(),
                    _ => "",
                };
                eprint!("\nRun this command?\n  $ {command}\n  in {}\n  [y] run  [n] deny: ", dir.display());
                return match read_line().await.as_deref().map(str::trim) {
                    Some("y" | "Y" | "yes") => ApprovalChoice::Once,
                    _ => ApprovalChoice::Deny,
                };
            }
            Err(e) => eprintln!("perch: {e}"),
        }
    }
}

/// The question as the terminal shows it: a command with its folder, reason and sandbox.
fn prompt(q: &ApprovalQuestion) -> String {
    match q.detail.as_deref() {
        Some(ApprovalDetail::Command { command, cwd, reason, sandbox, why_asked, can_remember, .. }) => {
            let mut text = format!("\nRun this command?\n  $ {command}\n  in {cwd}\n");
            if let Some(r) = reason {
                text.push_str(&format!("  because: {r}\n"));
            }
            text.push_str(&format!("  sandbox: {}\n", sandbox.summary));
            if let Some(w) = why_asked {
                text.push_str(&format!("  note: {w}\n"));
            }
            let always = if *can_remember { "  [a] always allow this command" } else { "" };
            text + &format!("  [y] run{always}  [n] deny: ")
        }
        Some(ApprovalDetail::Session { reason, folder }) => format!(
            "\nStart a terminal session in {folder}? Commands run without asking until this answer ends.\n  \
             because: {reason}\n  [y] start  [n] deny: "
        ),
        Some(ApprovalDetail::Input { text, command }) => {
            format!("\nType {text:?} into {command}?\n  [y] send  [n] deny: ")
        }
        None => format!(
            "Allow {}:{} with {}?\n  [y] once  [c] for this conversation  [a] always  [n] no  [v] never: ",
            q.server, q.tool, q.arguments
        ),
    }
}

/// Terminal output as it arrives (to stderr, so stdout keeps the answer), and session banners.
fn print_terminal(engine: &Engine) {
    let mut updates = engine.terminal().subscribe();
    tokio::spawn(async move {
        loop {
            match updates.recv().await {
                Ok(TerminalUpdate::Started(job)) => eprintln!("$ {}", job.command),
                Ok(TerminalUpdate::Output { data, .. }) => {
                    eprint!("{data}");
                    let _ = std::io::stderr().flush();
                }
                Ok(TerminalUpdate::Finished { event, .. }) if event.blocked.is_some() => {
                    eprintln!("[blocked: {}]", event.blocked.unwrap_or_default());
                }
                Ok(TerminalUpdate::Session { folder: Some(folder), .. }) => {
                    eprintln!("[session mode on in {folder} until this answer ends]");
                }
                Ok(TerminalUpdate::Session { folder: None, .. }) => eprintln!("[session mode ended]"),
                Ok(_) => {}
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                    eprintln!("[{n} terminal updates skipped]")
                }
                Err(_) => break,
            }
        }
    });
}

fn uuid_like() -> String {
    format!("cli-{}-{}", std::process::id(), chrono::Utc::now().timestamp_millis())
}

/// The configured default, else the documented choice among what is installed.
async fn default_model(engine: &Engine) -> anyhow::Result<String> {
    let settings = engine.settings().get().await;
    if let Some(model) = settings.models.default_model.clone() {
        return Ok(model);
    }
    let registry = engine.registry(&settings);
    let available: Vec<_> = registry.list_models(false).await.into_iter().flat_map(|p| p.models).collect();
    pick_default(None, &available)
        .context("no model is available: download a local model (`perch local download qwen3-0.6b`), start Ollama (`ollama serve`), or add a provider key with `perch keys set`; or pass --model provider:model")
}

fn read_image(path: &PathBuf) -> anyhow::Result<ImageInput> {
    let mime = match path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() {
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("webp") => "image/webp",
        Some("gif") => "image/gif",
        _ => bail!("{} is not a PNG, JPEG, WebP or GIF image", path.display()),
    };
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Ok(ImageInput {
        name: path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
        mime: mime.into(),
        base64: base64::engine::general_purpose::STANDARD.encode(bytes),
        capture: None,
    })
}

pub async fn models(engine: Engine, json: bool) -> anyhow::Result<()> {
    let settings = engine.settings().get().await;
    let registry = engine.registry(&settings);
    let listing = registry.list_models(true).await;
    if json {
        return print_json(&listing);
    }
    for provider in listing {
        match provider.error {
            Some(e) => outln!("{}: {e}", provider.provider),
            None if provider.models.is_empty() => outln!("{}: no models", provider.provider),
            None => {
                outln!("{}:", provider.provider);
                for m in provider.models {
                    let c = m.capabilities;
                    let caps: Vec<&str> =
                        [(c.vision, "vision"), (c.tools, "tools"), (c.thinking, "thinking")]
                            .into_iter()
                            .filter_map(|(on, name)| on.then_some(name))
                            .collect();
                    let context =
                        m.context_length.map(|n| format!("  {}k context", n / 1024)).unwrap_or_default();
                    outln!("  {}  [{}]{context}", m.id, caps.join(", "));
                }
            }
        }
    }
    Ok(())
}
