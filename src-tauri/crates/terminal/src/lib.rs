//! perch-terminal: the terminal the model uses, only as the user allows. Six layers, of which the model is
//! told only the last: the blocklist on the parsed command line ([`blocklist`], [`parse`],
//! [`wrappers`]); lines the parser cannot reduce to plain words asked about and never
//! auto-approved; the PATH guard ([`guard`]); a hard timeout killing the whole process group
//! ([`exec`]); the Landlock sandbox ([`sandbox`], the `perch-sandbox` launcher); and approval
//! through the tool gate ([`policy`], [`tools`]). Commands run in a real PTY and stream to the
//! tool card and the panel as [`TerminalUpdate`]s (paced for the panel by [`feed`]); each is saved
//! as a `terminal_events` row.
//! (Over 500 lines: `Terminal` is the one state the tools, the panel and the engine share, its
//! commands, sessions and updates, and it reads best whole.)

pub mod blocklist;
pub mod exec;
pub mod feed;
mod find;
pub mod guard;
pub mod parse;
pub mod paths;
pub mod policy;
pub mod sandbox;
pub mod settings;
pub mod tools;
mod wrappers;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use perch_sandbox::Enforcement;
use serde::Serialize;
use tokio::sync::{OnceCell, broadcast, mpsc};
use tokio_util::sync::CancellationToken;

use perch_store::Store;
use perch_store::terminal::TerminalEvent;
use perch_tools::{CallOrigin, Progress};
pub use policy::{Assessment, Check, Decision, assess, decide};
pub use sandbox::{SandboxUnavailable, SandboxView};
pub use settings::{AskLevel, TerminalSettings};

/// What happens in the terminal, for the panel and the tool cards.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "event", content = "data", rename_all = "snake_case")]
pub enum TerminalUpdate {
    Started(Box<JobView>),
    Output {
        job: u32,
        data: String,
    },
    /// Still running after `secs` seconds.
    Running {
        job: u32,
        secs: u64,
    },
    /// It ended (or was refused: then `job` is 0); the saved event.
    Finished {
        job: u32,
        event: Box<TerminalEvent>,
    },
    /// Session mode began (`folder` set) or ended (`folder` empty) for a conversation.
    Session {
        conversation_id: String,
        run_id: String,
        folder: Option<String>,
        reason: Option<String>,
    },
}

/// A command that started.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct JobView {
    pub job: u32,
    pub call_id: Option<String>,
    pub conversation_id: Option<String>,
    pub command: String,
    pub cwd: String,
    pub sandbox: SandboxView,
    pub pid: Option<u32>,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TerminalError {
    #[error("the folder {0} does not exist")]
    NoFolder(String),
    #[error("there is no command with id {0} (it ended, or was never started)")]
    NoJob(u32),
    #[error(transparent)]
    Start(#[from] exec::StartError),
    #[error("the command has ended, so it cannot take input")]
    Ended,
    #[error("{0}")]
    BadFolder(String),
    #[error("the folder could not be saved: {0}")]
    Store(#[from] perch_store::StoreError),
}

/// A session: commands that pass layers 1-5 run without per-command questions until the
/// answer that asked for it ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub conversation_id: String,
    pub folder: PathBuf,
    pub reason: String,
}

struct Entry {
    job: Arc<exec::Job>,
    run_id: Option<String>,
    /// The folder it runs in: what is typed into it is judged there.
    cwd: PathBuf,
}

/// The terminal service: running commands, sessions, the sandbox this machine offers.
pub struct Terminal {
    store: Store,
    /// Perch's data folder, which commands never see.
    data_dir: PathBuf,
    enabled: AtomicBool,
    launcher: Option<PathBuf>,
    enforcement: OnceCell<Result<Enforcement, SandboxUnavailable>>,
    jobs: Mutex<BTreeMap<u32, Entry>>,
    next_job: AtomicU32,
    sessions: Mutex<HashMap<String, Session>>,
    watched: Mutex<HashSet<String>>,
    updates: broadcast::Sender<TerminalUpdate>,
    /// Ends the page's feed when a newer one starts (a page loaded again subscribes anew).
    panel: Mutex<CancellationToken>,
    /// A command that prints nothing for this long hands control back to the model.
    idle_return: Mutex<Duration>,
}

impl std::fmt::Debug for Terminal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Terminal").field("launcher", &self.launcher).finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Where the user's home is (commands are judged against it).
pub fn home() -> PathBuf {
    dirs::home_dir().unwrap_or_else(|| PathBuf::from("/"))
}

impl Terminal {
    pub fn new(store: Store, data_dir: &Path) -> Self {
        Self {
            store,
            data_dir: data_dir.to_path_buf(),
            enabled: AtomicBool::new(true),
            launcher: sandbox::launcher(),
            enforcement: OnceCell::new(),
            jobs: Mutex::default(),
            next_job: AtomicU32::new(1),
            sessions: Mutex::default(),
            watched: Mutex::default(),
            updates: broadcast::channel(512).0,
            panel: Mutex::new(CancellationToken::new()),
            idle_return: Mutex::new(Duration::from_secs(10)),
        }
    }

    pub fn subscribe(&self) -> broadcast::Receiver<TerminalUpdate> {
        self.updates.subscribe()
    }

    /// The feed of the window's page: one at a time. A page loaded again (freed while hidden,
    /// crashed, reloaded) subscribes anew, and the feed of the page it replaced ends, instead
    /// of pushing every update into a page that is gone.
    pub fn panel_feed(&self) -> feed::PanelFeed {
        let token = CancellationToken::new();
        std::mem::replace(&mut *lock(&self.panel), token.clone()).cancel();
        feed::PanelFeed::new(self.updates.subscribe()).until(token)
    }

    pub(crate) fn emit(&self, update: TerminalUpdate) {
        let _ = self.updates.send(update);
    }

    pub fn set_enabled(&self, on: bool) {
        self.enabled.store(on, Ordering::Relaxed);
    }
    pub fn enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    /// How long a silent command runs before the model gets control back (tests shorten it).
    pub fn set_idle_return(&self, idle: Duration) {
        *lock(&self.idle_return) = idle;
    }
    pub fn idle_return(&self) -> Duration {
        *lock(&self.idle_return)
    }

    /// What the sandbox enforces here (probed once), or why there is none.
    pub async fn enforcement(&self) -> Result<Enforcement, SandboxUnavailable> {
        let launcher = self.launcher.clone();
        let found = self
            .enforcement
            .get_or_init(|| async move {
                match &launcher {
                    Some(l) => sandbox::probe(l).await,
                    None => Err(SandboxUnavailable::LauncherMissing),
                }
            })
            .await;
        match sandbox::missing_reason(self.launcher.as_deref(), Some(found)) {
            Some(why) => Err(why),
            None => found.clone(),
        }
    }

    /// Checks a folder the user chose as the working folder (`~` and relative paths from the
    /// home folder) and returns it made absolute, or
    /// why it cannot be one: it must exist, and neither hold Perch's data, lie in a hidden
    /// credential store, nor be the home folder or above it (all of the user's start-up files
    /// would be writable).
    pub fn check_folder(&self, folder: &Path) -> Result<PathBuf, TerminalError> {
        let bad = |why: String| Err(TerminalError::BadFolder(why));
        // As typed in Settings or on the card: `~` and relative paths from the home folder.
        let home_dir = home();
        let folder =
            paths::resolve(&folder.to_string_lossy(), Some(&home_dir), &home_dir).unwrap_or_default();
        let folder = folder.as_path();
        let Ok(dir) = std::fs::canonicalize(folder) else {
            return bad(format!("{} does not exist", folder.display()));
        };
        if !dir.is_dir() {
            return bad(format!("{} is not a folder", dir.display()));
        }
        let home = home();
        let home = std::fs::canonicalize(&home).unwrap_or(home);
        let data = std::fs::canonicalize(&self.data_dir).unwrap_or_else(|_| self.data_dir.clone());
        if home.starts_with(&dir) {
            return bad(format!(
                "{} holds your whole home folder, with the files that run when you log in; choose a project folder inside it",
                dir.display()
            ));
        }
        if data.starts_with(&dir) || dir.starts_with(&data) {
            return bad(format!("{} holds Perch's own data, which commands never see", dir.display()));
        }
        if sandbox::hidden_paths(&home, &self.data_dir).iter().any(|h| dir.starts_with(h)) {
            return bad(format!("{} is hidden from commands (your sessions or credentials)", dir.display()));
        }
        Ok(dir)
    }

    /// The folders commands may change with these settings: the working folder (`cwd` where
    /// none is chosen) and the writable folders from Settings that pass [`Self::check_folder`],
    /// and those from Settings left out, each with why (the card names them).
    fn writable(&self, cwd: &Path, settings: &TerminalSettings) -> (Vec<PathBuf>, Vec<String>) {
        let home = home();
        let working = tools::chosen_folder(settings).unwrap_or_else(|| cwd.to_path_buf());
        let (found, mut left_out) = sandbox::writable_folders(&working, &settings.writable_folders, &home);
        let mut writable = vec![working];
        for folder in found.into_iter().skip(1) {
            match self.check_folder(&folder) {
                Ok(dir) if !writable.contains(&dir) => writable.push(dir),
                Ok(_) => {}
                Err(e) => left_out.push(e.to_string()),
            }
        }
        (writable, left_out)
    }

    /// Checks the folder a command is asked to start in and returns it made absolute: it must
    /// be the working folder, a writable folder from Settings, or inside one, never beneath a
    /// hidden path. Anything else is refused before a card is shown: a command started
    /// elsewhere would run where nothing was chosen for it.
    pub fn check_cwd(&self, cwd: &Path, settings: &TerminalSettings) -> Result<PathBuf, TerminalError> {
        let Ok(dir) = std::fs::canonicalize(cwd) else {
            return Err(TerminalError::NoFolder(cwd.display().to_string()));
        };
        let (writable, _) = self.writable(&dir, settings);
        let writable: Vec<PathBuf> = writable.iter().filter_map(|w| std::fs::canonicalize(w).ok()).collect();
        let inside = tools::chosen_folder(settings).is_some() && writable.iter().any(|w| dir.starts_with(w));
        let hidden = sandbox::hidden_paths(&home(), &self.data_dir).iter().any(|h| dir.starts_with(h));
        if !inside || hidden {
            let shown: Vec<String> = writable.iter().map(|w| w.display().to_string()).collect();
            return Err(TerminalError::BadFolder(format!(
                "{} is outside the folders commands may change ({}); run it from the working folder, \
                 or add the folder under Settings -> Terminal -> Writable folders",
                dir.display(),
                shown.join(", ")
            )));
        }
        Ok(dir)
    }

    /// The sandbox policy for a command in `cwd` with these settings, and the writable folders
    /// from Settings left out, each with why (the card names them).
    pub fn policy(&self, cwd: &Path, settings: &TerminalSettings) -> (perch_sandbox::Policy, Vec<String>) {
        let (writable, left_out) = self.writable(cwd, settings);
        let hidden = sandbox::hidden_paths(&home(), &self.data_dir);
        (sandbox::policy(&writable, &hidden, settings.network), left_out)
    }

    /// The sandbox a command in `cwd` gets with these settings, as the card shows it.
    pub async fn sandbox_view(&self, cwd: &Path, settings: &TerminalSettings) -> SandboxView {
        let (policy, missing) = self.policy(cwd, settings);
        let mut view = match self.enforcement().await {
            Ok(e) => sandbox::view(&policy, cwd, Some(&e), None),
            Err(why) => sandbox::view(&policy, cwd, None, Some(&why)),
        };
        if !missing.is_empty() {
            view.summary.push_str(&format!(". Not writable: {} (Settings -> Terminal)", missing.join("; ")));
        }
        view
    }

    /// Starts `command` in `cwd` (sandboxed where the sandbox works) and streams it.
    pub async fn run(
        self: &Arc<Self>,
        command: &str,
        cwd: &Path,
        settings: &TerminalSettings,
        timeout: Duration,
        origin: CallOrigin,
        progress: Option<mpsc::UnboundedSender<Progress>>,
    ) -> Result<(u32, Arc<exec::Job>), TerminalError> {
        let cwd = &self.check_cwd(cwd, settings)?;
        let (policy, _) = self.policy(cwd, settings);
        let shell = ["/bin/bash", "/usr/bin/bash", "/bin/sh"].into_iter().find(|s| Path::new(s).exists());
        let shell_argv = vec![shell.unwrap_or("sh").to_owned(), "-c".to_owned(), command.to_owned()];
        let (argv, view) = match (self.enforcement().await, &self.launcher) {
            (Ok(e), Some(launcher)) => {
                let mut argv = vec![launcher.display().to_string()];
                argv.extend(policy.to_args().into_iter().map(|a| a.to_string_lossy().into_owned()));
                argv.push("--".into());
                argv.extend(shell_argv);
                (argv, sandbox::view(&policy, cwd, Some(&e), None))
            }
            (Err(why), _) => (shell_argv, sandbox::view(&policy, cwd, None, Some(&why))),
            (Ok(_), None) => {
                (shell_argv, sandbox::view(&policy, cwd, None, Some(&SandboxUnavailable::LauncherMissing)))
            }
        };
        // The login shell's PATH, as MCP servers get: started from a desktop menu, Perch's own
        // PATH lacks what profiles add (nvm, cargo, ~/.local/bin).
        let path = perch_foundation::shell_path::login_path().await;
        let spec = exec::Spec {
            argv,
            cwd: cwd.to_path_buf(),
            env: guard::command_env(path, &settings.pass_env),
            timeout,
            max_output_bytes: u64::from(settings.max_output_mb.max(1)) << 20,
        };
        let (tx, mut rx) = mpsc::channel(64);
        let job = exec::start(spec, tx)?;
        let id = self.next_job.fetch_add(1, Ordering::Relaxed);
        lock(&self.jobs)
            .insert(id, Entry { job: job.clone(), run_id: origin.run_id.clone(), cwd: cwd.to_path_buf() });
        self.emit(TerminalUpdate::Started(Box::new(JobView {
            job: id,
            call_id: origin.call_id.clone(),
            conversation_id: origin.conversation_id.clone(),
            command: command.to_owned(),
            cwd: cwd.display().to_string(),
            sandbox: view.clone(),
            pid: job.pid,
        })));
        let me = self.clone();
        let (command, cwd, timeout_secs) = (command.to_owned(), cwd.display().to_string(), timeout.as_secs());
        let finished = job.clone();
        tokio::spawn(async move {
            while let Some(h) = rx.recv().await {
                match h {
                    exec::Happening::Output(data) => me.emit(TerminalUpdate::Output { job: id, data }),
                    exec::Happening::Running(secs) => {
                        me.emit(TerminalUpdate::Running { job: id, secs });
                        if let Some(p) = &progress {
                            let _ = p.send(Progress {
                                progress: secs as f64,
                                total: Some(timeout_secs as f64),
                                message: Some(format!("Still running after {secs} s")),
                            });
                        }
                    }
                }
            }
            // The channel closes when the command and its group are gone.
            let exit = finished.exit().unwrap_or_default();
            let (output, output_bytes) = finished.saved_output();
            let event = TerminalEvent {
                conversation_id: origin.conversation_id,
                message_id: origin.message_id,
                call_id: origin.call_id,
                command,
                cwd,
                exit_code: exit.code,
                output,
                output_bytes,
                duration_ms: exit.duration_ms,
                timed_out: exit.timed_out,
                killed: exit.killed || exit.output_capped,
                sandbox: view.summary,
                ..TerminalEvent::default()
            };
            me.record(event, id).await;
        });
        Ok((id, job))
    }

    /// Saves an event and tells the panel (`job` 0 for commands that never ran).
    pub async fn record(&self, mut event: TerminalEvent, job: u32) {
        match self.store.add_terminal_event(event.clone()).await {
            Ok(id) => event.id = id,
            Err(e) => tracing::warn!(error = %e, "could not save a terminal event"),
        }
        self.emit(TerminalUpdate::Finished { job, event: Box::new(event) });
    }

    pub fn job(&self, id: u32) -> Result<Arc<exec::Job>, TerminalError> {
        lock(&self.jobs).get(&id).map(|e| e.job.clone()).ok_or(TerminalError::NoJob(id))
    }

    /// The folder a command runs in.
    pub fn job_folder(&self, id: u32) -> Option<PathBuf> {
        lock(&self.jobs).get(&id).map(|e| e.cwd.clone())
    }

    /// Kills a command's process group (the panel's kill button, `kill_process`).
    pub fn kill(&self, id: u32) -> Result<(), TerminalError> {
        self.job(id)?.kill();
        Ok(())
    }

    /// Commands still running.
    pub fn running(&self) -> Vec<u32> {
        lock(&self.jobs).iter().filter(|(_, e)| e.job.exit().is_none()).map(|(id, _)| *id).collect()
    }

    /// Ends what a finished answer left behind: its commands and its session.
    pub fn end_run(&self, run_id: &str) {
        // Killed or ended, the answer's commands are forgotten: the kill is sent, and the group
        // (with the launcher's PID namespace, everything the command started) goes with it.
        let mut jobs = lock(&self.jobs);
        for entry in jobs.values().filter(|e| e.run_id.as_deref() == Some(run_id)) {
            entry.job.kill();
        }
        jobs.retain(|_, e| e.run_id.as_deref() != Some(run_id));
        drop(jobs);
        self.end_session(run_id);
        lock(&self.watched).remove(run_id);
    }

    /// Arranges for `end_run` when the answer `run_id` ends (`ended` fires), once per run.
    pub fn watch_run(self: &Arc<Self>, run_id: &str, ended: CancellationToken) {
        if !lock(&self.watched).insert(run_id.to_owned()) {
            return;
        }
        let (me, run_id) = (Arc::downgrade(self), run_id.to_owned());
        tokio::spawn(async move {
            ended.cancelled().await;
            if let Some(me) = me.upgrade() {
                me.end_run(&run_id);
            }
        });
    }

    pub fn start_session(&self, run_id: &str, session: Session) {
        self.emit(TerminalUpdate::Session {
            conversation_id: session.conversation_id.clone(),
            run_id: run_id.to_owned(),
            folder: Some(session.folder.display().to_string()),
            reason: Some(session.reason.clone()),
        });
        lock(&self.sessions).insert(run_id.to_owned(), session);
    }

    /// The sessions in force, with the answers they belong to.
    pub fn sessions(&self) -> Vec<(String, Session)> {
        lock(&self.sessions).iter().map(|(r, s)| (r.clone(), s.clone())).collect()
    }

    pub fn session(&self, run_id: &str) -> Option<Session> {
        lock(&self.sessions).get(run_id).cloned()
    }

    /// Ends the session of an answer, if it has one.
    pub fn end_session(&self, run_id: &str) -> bool {
        let ended = lock(&self.sessions).remove(run_id);
        if let Some(s) = &ended {
            self.emit(TerminalUpdate::Session {
                conversation_id: s.conversation_id.clone(),
                run_id: run_id.to_owned(),
                folder: None,
                reason: None,
            });
        }
        ended.is_some()
    }

    /// Ends every session of a conversation (the banner's End button, a new chat).
    pub fn end_sessions_of(&self, conversation_id: &str) {
        let runs: Vec<String> = lock(&self.sessions)
            .iter()
            .filter(|(_, s)| s.conversation_id == conversation_id)
            .map(|(r, _)| r.clone())
            .collect();
        for run in runs {
            self.end_session(&run);
        }
    }

    /// Kills every running command's process group.
    pub fn kill_all(&self) {
        for entry in lock(&self.jobs).values() {
            entry.job.kill();
        }
    }

    /// Kills every running command (at quit) and waits, at most `within`, until each has
    /// ended, so none is left behind when Perch exits. Returns how many were still running.
    pub async fn shutdown(&self, within: Duration) -> usize {
        let jobs: Vec<Arc<exec::Job>> = lock(&self.jobs).values().map(|e| e.job.clone()).collect();
        for job in &jobs {
            job.kill();
        }
        let deadline = tokio::time::Instant::now() + within;
        let mut left = 0;
        for job in &jobs {
            let stop = CancellationToken::new();
            let wait = job.wait_report(None, &stop);
            if tokio::time::timeout_at(deadline, wait).await.is_err() {
                left += 1;
            }
        }
        left
    }
}
