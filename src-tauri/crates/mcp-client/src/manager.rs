//! Runs the configured servers: one supervisor task per running server starts it, watches it,
//! restarts it with exponential backoff when it dies (up to a bound, then leaves it in error
//! with the reason), and closes it when asked. Calls go straight to the server's peer.
//! (Over 500 lines: the manager's whole surface, one short method for each thing the engine and the
//! UI ask of the servers; the work behind them is in `manager/`.)

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

mod calls;
mod edits;
mod idle;
mod signing;
pub use signing::SignInFailure;
mod supervisor;

use rmcp::Peer;
use rmcp::RoleClient;
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;

use super::config::{self, ConfigProblem, LoadedConfig, ServerConfig};
use super::handler::{AppsOff, ProgressRoutes, Sampler, Shared};
use super::logs::ServerLog;
use super::{
    BuiltinServer, CallError, EditError, McpEvent, PromptView, ResourceView, ServerStatus, ServerView,
    ToolView,
};
use perch_tools::questions::Questions;

/// Restarts after a crash before giving up; a server that ran this long counts as healthy.
const MAX_RESTARTS: u32 = 5;
const HEALTHY_AFTER: Duration = Duration::from_secs(60);
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How long a stopping server gets before it is killed (rmcp closes stdin, then SIGTERM, then kills).
const STOP_GRACE: Duration = Duration::from_secs(8);
/// How long quitting waits for servers before killing them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

pub struct McpManager {
    data_dir: PathBuf,
    logs_dir: Option<PathBuf>,
    slots: Mutex<BTreeMap<String, Arc<Slot>>>,
    problems: Mutex<Vec<ConfigProblem>>,
    events: broadcast::Sender<McpEvent>,
    shared: Arc<Shared>,
    /// Environment for every server (where the review socket is).
    env: Mutex<Vec<(String, String)>>,
    /// Secrets for particular servers (the web server's search keys), looked up at each start.
    secret_env: std::sync::OnceLock<SecretEnv>,
    /// Servers built into Perch (the terminal), listed and called like the others.
    builtins: Mutex<Vec<Arc<dyn BuiltinServer>>>,
    /// Where sign-ins are kept (the engine's key store); without it nothing signs in.
    keys: std::sync::OnceLock<Arc<perch_foundation::keys::Keys>>,
    /// The user's file as last read, to notice edits made outside Perch.
    seen_file: Mutex<edits::Seen>,
}

/// The secret environment one server gets at start: stored keys or a fresh access token that
/// only that server may see, so a third-party server never receives them.
pub type SecretEnv =
    Arc<dyn Fn(&ServerConfig, Freshness) -> futures::future::BoxFuture<'static, ServerSecrets> + Send + Sync>;

/// Whether the secrets a server starts with may be the stored ones, or must be renewed first
/// (its service refused the stored ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    AsStored,
    Renewed,
}

/// What [`SecretEnv`] gives a server.
#[derive(Default)]
pub struct ServerSecrets {
    pub env: Vec<(String, String)>,
    /// When something in `env` stops working (an access token's expiry): the server is put to
    /// rest a little before, and the next call starts it with fresh ones.
    pub valid_until: Option<std::time::SystemTime>,
}

impl std::fmt::Debug for McpManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpManager").field("data_dir", &self.data_dir).finish_non_exhaustive()
    }
}

struct Slot {
    config: Mutex<ServerConfig>,
    state: Mutex<State>,
    log: Mutex<ServerLog>,
    progress: ProgressRoutes,
}

#[derive(Default)]
struct State {
    status: Option<ServerStatus>,
    pid: Option<u32>,
    last_error: Option<String>,
    /// Starts that failed so far, so a wait can end at the first failure it sees.
    failed_attempts: u64,
    connected_at: Option<i64>,
    restarts: u32,
    protocol_version: Option<String>,
    server_info: Option<String>,
    instructions: Option<String>,
    tools: Vec<ToolView>,
    resources: Vec<ResourceView>,
    prompts: Vec<PromptView>,
    peer: Option<Peer<RoleClient>>,
    /// Cancels the supervisor (stop); present while one runs.
    stop: Option<CancellationToken>,
    /// Ends when the supervisor has finished.
    done: Option<tokio::sync::watch::Receiver<bool>>,
    /// Calls under way, and when the last one started or ended (for `stopWhenIdle`).
    calls_in_flight: u32,
    last_used: Option<Instant>,
    /// The stored sign-in, as last read.
    sign_in: Option<super::sign_in::SignInView>,
    /// The `WWW-Authenticate` of the answer that asked for a sign-in.
    challenge: Option<String>,
    /// What a 403 asked to be allowed beyond the sign-in (a step-up), for the next sign-in.
    wanted_scope: Option<String>,
    /// The sign-in under way: its page, and how to cancel it.
    signing_in: Option<(String, CancellationToken)>,
    /// It was started with secrets that run out (an access token), which can be renewed.
    renewable_secrets: bool,
    /// Its next start asks for renewed secrets.
    renew_secrets: bool,
}

impl Slot {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
    fn config(&self) -> ServerConfig {
        self.config.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
    fn log(&self) -> MutexGuard<'_, ServerLog> {
        self.log.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl McpManager {
    /// A manager over the servers configured for `data_dir`; nothing starts until asked.
    pub fn new(data_dir: &Path, logs_dir: Option<PathBuf>, questions: Arc<Questions>) -> Arc<Self> {
        let (changed_tx, mut changed_rx) = mpsc::unbounded_channel::<String>();
        let shared = Arc::new(Shared {
            questions,
            roots: Default::default(),
            sampler: Default::default(),
            changed: changed_tx,
            closing: CancellationToken::new(),
            apps_off: std::sync::RwLock::new(AppsOff::Some(Vec::new())),
        });
        let manager = Arc::new(Self {
            data_dir: data_dir.to_path_buf(),
            logs_dir,
            slots: Mutex::default(),
            problems: Mutex::default(),
            events: broadcast::channel(256).0,
            shared,
            env: Mutex::default(),
            secret_env: Default::default(),
            builtins: Mutex::default(),
            keys: Default::default(),
            seen_file: Mutex::default(),
        });
        manager.apply(manager.read_config());
        edits::watch(Arc::downgrade(&manager), data_dir.join(config::USER_FILE));
        // Lists that a server says changed are fetched again.
        let weak = Arc::downgrade(&manager);
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                while let Some(server) = changed_rx.recv().await {
                    let Some(manager) = weak.upgrade() else { break };
                    if let Err(e) = manager.refresh(&server).await {
                        tracing::warn!(%server, error = %e, "could not fetch a changed list");
                    }
                }
            });
        }
        manager
    }

    pub fn subscribe(&self) -> broadcast::Receiver<McpEvent> {
        self.events.subscribe()
    }

    pub fn set_sampler(&self, sampler: Arc<dyn Sampler>) {
        let _ = self.shared.sampler.set(sampler);
    }

    pub fn set_env(&self, env: Vec<(String, String)>) {
        *self.env.lock().unwrap_or_else(|p| p.into_inner()) = env;
    }

    /// The key store sign-ins are kept in.
    pub fn set_keys(&self, keys: Arc<perch_foundation::keys::Keys>) {
        let _ = self.keys.set(keys);
    }

    /// Sets, once, where servers' secrets come from; asked each time a server starts, so a key
    /// stored later reaches the server at its next start.
    pub fn set_secret_env(&self, secrets: SecretEnv) {
        let _ = self.secret_env.set(secrets);
    }

    /// The folders servers may work in (MCP roots); servers are told when they change.
    pub async fn set_roots(&self, roots: Vec<PathBuf>) {
        *self.shared.roots.write().unwrap_or_else(|p| p.into_inner()) = roots;
        for peer in self.peers() {
            let _ = peer.notify_roots_list_changed().await;
        }
    }

    /// Which servers are told about MCP Apps (from Settings -> Tools). Returns the running
    /// servers to restart (they learn it only at their next start): those turned on, and those
    /// turned off that listed tools for apps.
    pub fn set_apps(&self, shown: bool, off: &[String]) -> Vec<String> {
        let next = if shown { AppsOff::Some(off.to_vec()) } else { AppsOff::All };
        let before = {
            let mut current = self.shared.apps_off.write().unwrap_or_else(|p| p.into_inner());
            std::mem::replace(&mut *current, next.clone())
        };
        // Turned on, a server may offer tools it keeps from hosts without apps; turned off, only
        // a server that listed some has anything to take back.
        self.slots()
            .into_iter()
            .filter(|(name, slot)| {
                let s = slot.state();
                before.allows(name) != next.allows(name)
                    && matches!(s.status, Some(ServerStatus::Connected | ServerStatus::Starting))
                    && (next.allows(name) || s.tools.iter().any(|t| t.ui.is_some()))
            })
            .map(|(name, _)| name)
            .collect()
    }

    /// One server's tool as listed, including those only its app may call.
    pub fn server_tool(&self, server: &str, tool: &str) -> Option<ToolView> {
        let slot = self.slot(server).ok()?;
        let s = slot.state();
        s.tools.iter().find(|t| t.name == tool).cloned()
    }

    pub fn problems(&self) -> Vec<ConfigProblem> {
        self.problems.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn slots(&self) -> Vec<(String, Arc<Slot>)> {
        self.slots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    fn slot(&self, name: &str) -> Result<Arc<Slot>, CallError> {
        let found = self.slots.lock().unwrap_or_else(|p| p.into_inner()).get(name).cloned();
        found.ok_or_else(|| self.unknown(name))
    }

    /// An unknown server, with the configuration problems that may explain it (a file that
    /// does not parse, or this server's own entry), each with its file and line.
    fn unknown(&self, name: &str) -> CallError {
        let problems: Vec<String> = self
            .problems()
            .iter()
            .filter(|p| p.server.as_deref().is_none_or(|s| s == name))
            .map(ToString::to_string)
            .collect();
        if problems.is_empty() {
            CallError::UnknownServer(name.to_owned())
        } else {
            CallError::Misconfigured { server: name.to_owned(), problems: problems.join("; ") }
        }
    }

    fn peers(&self) -> Vec<Peer<RoleClient>> {
        self.slots().into_iter().filter_map(|(_, s)| s.state().peer.clone()).collect()
    }

    /// Reads the configuration, noting which version of the user's file it read. Noted before
    /// reading: an edit landing between the two is seen as a change and read again.
    fn read_config(&self) -> LoadedConfig {
        *self.seen_file() = edits::seen(&self.data_dir.join(config::USER_FILE));
        config::load(&self.data_dir)
    }

    fn seen_file(&self) -> MutexGuard<'_, edits::Seen> {
        self.seen_file.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn changed(&self, server: &str) {
        let _ = self.events.send(McpEvent::Changed { server: server.to_owned() });
    }

    /// Takes a new configuration: adds new servers, updates changed ones (a running server
    /// whose transport changed is restarted by `reload`), and forgets removed ones.
    fn apply(&self, loaded: LoadedConfig) -> Vec<String> {
        for p in &loaded.problems {
            tracing::warn!(problem = %p, "MCP server configuration");
        }
        *self.problems.lock().unwrap_or_else(|p| p.into_inner()) = loaded.problems;
        let mut slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        let mut restart = Vec::new();
        let names: Vec<String> = loaded.servers.iter().map(|s| s.name.clone()).collect();
        slots.retain(|name, slot| {
            let keep = names.contains(name);
            if !keep && let Some(stop) = slot.state().stop.take() {
                stop.cancel();
            }
            keep
        });
        for server in loaded.servers {
            match slots.get(&server.name) {
                Some(slot) => {
                    let mut config = slot.config.lock().unwrap_or_else(|p| p.into_inner());
                    if config.transport != server.transport {
                        restart.push(server.name.clone());
                    }
                    *config = server;
                }
                None => {
                    let slot = Slot {
                        log: Mutex::new(ServerLog::new(self.logs_dir.as_deref(), &server.name)),
                        config: Mutex::new(server.clone()),
                        state: Mutex::default(),
                        progress: ProgressRoutes::default(),
                    };
                    slots.insert(server.name.clone(), Arc::new(slot));
                }
            }
        }
        restart
    }

    /// Reads the configuration again, restarting servers whose command or URL changed and
    /// starting newly added ones that should start.
    pub async fn reload(self: &Arc<Self>) {
        let restart = self.apply(self.read_config());
        for (name, slot) in self.slots() {
            let config = slot.config();
            let active = {
                let s = slot.state();
                s.stop.is_some() || s.status == Some(ServerStatus::Idle)
            };
            if active && (!config.enabled || restart.contains(&name)) {
                self.stop(&name).await.ok();
            }
            if config.enabled && config.auto_start && (restart.contains(&name) || !active) {
                self.start_or_rest(&name, &slot);
            }
            self.changed(&name);
        }
    }

    /// Starts every enabled server marked auto-start; one that stops when idle and whose lists
    /// are known from an earlier run waits, idle, for its first call instead.
    pub fn start_auto(self: &Arc<Self>) {
        for (name, slot) in self.slots() {
            let config = slot.config();
            if config.enabled && config.auto_start {
                self.start_or_rest(&name, &slot);
            }
        }
    }

    fn start_or_rest(self: &Arc<Self>, name: &str, slot: &Slot) {
        if self.rest_from_saved(name, slot) {
            self.changed(name);
        } else {
            self.start(name).ok();
        }
    }

    /// Starts a server (no-op when it already runs).
    pub fn start(self: &Arc<Self>, name: &str) -> Result<(), CallError> {
        let slot = self.slot(name)?;
        let stop = CancellationToken::new();
        let (done_tx, done_rx) = tokio::sync::watch::channel(false);
        {
            let mut state = slot.state();
            if state.stop.is_some() {
                return Ok(());
            }
            state.stop = Some(stop.clone());
            state.done = Some(done_rx);
            state.restarts = 0;
            state.last_error = None;
            state.status = Some(ServerStatus::Starting);
        }
        self.changed(name);
        let manager = self.clone();
        let name = name.to_owned();
        tokio::spawn(async move {
            manager.supervise(&name, &slot, &stop).await;
            let mut state = slot.state();
            state.stop = None;
            state.peer = None;
            state.pid = None;
            drop(state);
            let _ = done_tx.send(true);
            manager.changed(&name);
        });
        Ok(())
    }

    /// Stops a server and waits until its process is gone.
    pub async fn stop(&self, name: &str) -> Result<(), CallError> {
        let slot = self.slot(name)?;
        let (stop, done) = {
            let state = slot.state();
            (state.stop.clone(), state.done.clone())
        };
        if let Some(stop) = stop {
            stop.cancel();
        }
        if let Some(mut done) = done {
            let _ = tokio::time::timeout(STOP_GRACE, done.wait_for(|d| *d)).await;
        }
        let mut state = slot.state();
        state.status = Some(ServerStatus::Stopped);
        state.connected_at = None;
        // An idle server kept its lists; a stopped one offers nothing.
        state.tools.clear();
        state.resources.clear();
        state.prompts.clear();
        drop(state);
        self.changed(name);
        Ok(())
    }

    pub async fn restart(self: &Arc<Self>, name: &str) -> Result<(), CallError> {
        self.stop(name).await?;
        self.start(name)
    }

    /// Starts a server that was given renewable secrets again with renewed ones, and waits
    /// until it is connected. Refused for any other server: a server cannot make Perch restart
    /// it by saying its credentials were refused unless Perch gave it some.
    pub(super) async fn restart_with_renewed_secrets(self: &Arc<Self>, name: &str) -> Result<(), CallError> {
        let slot = self.slot(name)?;
        {
            let mut s = slot.state();
            if !s.renewable_secrets {
                return Err(CallError::NotRunning {
                    server: name.to_owned(),
                    status: "it holds no renewable secrets".into(),
                });
            }
            s.renew_secrets = true;
        }
        self.restart(name).await?;
        let wait = super::launch::START_TIMEOUT.min(Duration::from_secs(slot.config().timeout_secs.into()));
        self.ensure_connected(name, wait).await
    }

    /// Stops every server (at quit): each is asked to close, and the process group of any
    /// still running after [`SHUTDOWN_GRACE`] is killed, so no server outlives the app.
    pub async fn shutdown(&self) {
        self.shared.closing.cancel();
        let slots = self.slots();
        let stopping = futures::future::join_all(slots.iter().map(|(n, _)| self.stop(n)));
        if tokio::time::timeout(SHUTDOWN_GRACE, stopping).await.is_err() {
            for (name, slot) in &slots {
                let state = slot.state();
                if let (Some(pid), Some(_)) = (state.pid, &state.stop) {
                    tracing::warn!(server = %name, pid, "MCP server did not stop in time; killing it");
                    kill_group(pid);
                }
            }
        }
    }

    /// Starts a server if needed and waits until it is connected or a start has failed (the
    /// supervisor may still retry; the caller hears about the failure at once).
    pub async fn ensure_connected(self: &Arc<Self>, name: &str, wait: Duration) -> Result<(), CallError> {
        let slot = self.slot(name)?;
        let failed_before = slot.state().failed_attempts;
        if slot.state().stop.is_none() {
            self.start(name)?;
        }
        let deadline = Instant::now() + wait;
        let mut events = self.subscribe();
        loop {
            let (status, error, failed) = {
                let s = slot.state();
                (s.status, s.last_error.clone(), s.failed_attempts > failed_before)
            };
            match status {
                Some(ServerStatus::Connected) => return Ok(()),
                Some(ServerStatus::Disconnected) if failed => {
                    return Err(CallError::NotRunning {
                        server: name.to_owned(),
                        status: error.unwrap_or_else(|| "it failed to start".into()),
                    });
                }
                Some(ServerStatus::NeedsSignIn) => {
                    return Err(CallError::NeedsSignIn { server: name.to_owned(), scope: None });
                }
                Some(ServerStatus::Error | ServerStatus::Stopped) => {
                    return Err(CallError::NotRunning {
                        server: name.to_owned(),
                        status: error.unwrap_or_else(|| "stopped".into()),
                    });
                }
                _ => {}
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(CallError::NotRunning {
                    server: name.to_owned(),
                    status: error.unwrap_or_else(|| "still starting".into()),
                });
            }
            let _ = tokio::time::timeout(left.min(Duration::from_millis(200)), events.recv()).await;
        }
    }

    /// Waits, at most `wait`, until no server is starting without a tool list from before (a
    /// first start, as on a fresh install): a question asked in the first seconds after launch
    /// was otherwise offered none of their tools, and a model that knew them from the
    /// conversation called a tool "that does not exist". Servers whose lists are saved offer
    /// them while they start, and are not waited for.
    pub async fn settle(&self, wait: Duration) {
        let deadline = Instant::now() + wait;
        let mut events = self.subscribe();
        loop {
            let starting = self.slots().into_iter().any(|(_, slot)| {
                let s = slot.state();
                s.status == Some(ServerStatus::Starting) && s.tools.is_empty()
            });
            let left = deadline.saturating_duration_since(Instant::now());
            if !starting || left.is_zero() {
                return;
            }
            let _ = tokio::time::timeout(left.min(Duration::from_millis(200)), events.recv()).await;
        }
    }

    /// Fetches a server's tools, resources and prompts again.
    pub async fn refresh(&self, name: &str) -> Result<(), CallError> {
        let slot = self.slot(name)?;
        self.fetch_lists(&slot).await.map_err(|e| match e {
            supervisor::ListError::NotConnected => {
                CallError::NotRunning { server: name.to_owned(), status: e.to_string() }
            }
            supervisor::ListError::Service(e) => {
                CallError::Protocol { server: name.to_owned(), message: e.to_string() }
            }
        })?;
        self.save_lists(name, &slot).await;
        self.changed(name);
        Ok(())
    }

    /// Every server, as the dashboard shows it.
    pub fn list(&self) -> Vec<ServerView> {
        self.slots().into_iter().map(|(_, slot)| view(&slot)).collect()
    }

    pub fn server(&self, name: &str) -> Result<ServerView, CallError> {
        self.slot(name).map(|s| view(&s))
    }

    /// Adds a built-in tool server.
    pub fn add_builtin(&self, server: Arc<dyn BuiltinServer>) {
        self.builtins.lock().unwrap_or_else(|p| p.into_inner()).push(server);
    }

    pub(crate) fn builtin(&self, name: &str) -> Option<Arc<dyn BuiltinServer>> {
        self.builtins.lock().unwrap_or_else(|p| p.into_inner()).iter().find(|b| b.name() == name).cloned()
    }

    /// The tools of every connected or idle server and of the built-in ones, as (server, tool).
    pub fn tools(&self) -> Vec<(String, ToolView)> {
        let mut all = Vec::new();
        for (name, slot) in self.slots() {
            let s = slot.state();
            // An idle server's tools are offered too (a call starts it), also while it starts.
            if matches!(s.status, Some(ServerStatus::Connected | ServerStatus::Idle | ServerStatus::Starting))
            {
                // A tool only its app may call is never offered to a model.
                let offered = s.tools.iter().filter(|t| super::apps::model_may_call(t.ui.as_ref()));
                all.extend(offered.map(|t| (name.clone(), t.clone())));
            }
        }
        // Built-in tools come after the user's servers, so ties in retrieval favour those.
        let builtins = self.builtins.lock().unwrap_or_else(|p| p.into_inner()).clone();
        all.extend(builtins.iter().flat_map(|b| b.tools().into_iter().map(|t| (b.name().to_owned(), t))));
        all
    }

    pub fn logs(&self, name: &str) -> Result<Vec<String>, CallError> {
        Ok(self.slot(name)?.log().lines())
    }

    /// Config edits from the dashboard; each reloads the configuration.
    pub async fn import(self: &Arc<Self>, pasted: &str) -> Result<Vec<String>, EditError> {
        let names = config::import(&self.data_dir, pasted, config::Existing::Replace)?;
        self.reload().await;
        Ok(names)
    }

    /// Like [`Self::import`], but never over a server that exists (an add-server link's entry).
    pub async fn add_new(self: &Arc<Self>, pasted: &str) -> Result<Vec<String>, EditError> {
        let names = config::import(&self.data_dir, pasted, config::Existing::Refuse)?;
        self.reload().await;
        Ok(names)
    }

    pub async fn remove(self: &Arc<Self>, name: &str) -> Result<(), EditError> {
        let bundled = self.slot(name)?.config().bundled;
        self.stop(name).await.ok();
        config::remove(&self.data_dir, name, bundled)?;
        self.reload().await;
        Ok(())
    }

    pub async fn set_enabled(self: &Arc<Self>, name: &str, enabled: bool) -> Result<(), EditError> {
        config::set_enabled(&self.data_dir, name, enabled)?;
        self.reload().await;
        if !enabled {
            self.stop(name).await.ok();
        }
        Ok(())
    }
}

/// Kills a server's process group (it leads its own, see `launch`).
#[cfg(unix)]
fn kill_group(pid: u32) {
    if let Ok(pid) = i32::try_from(pid)
        && pid > 1
    {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGKILL);
    }
}

#[cfg(not(unix))]
fn kill_group(_pid: u32) {}

fn view(slot: &Slot) -> ServerView {
    let config = slot.config();
    let s = slot.state();
    ServerView {
        config,
        status: s.status.unwrap_or(ServerStatus::Stopped),
        pid: s.pid,
        last_error: s.last_error.clone(),
        connected_at: s.connected_at,
        restarts: s.restarts,
        protocol_version: s.protocol_version.clone(),
        server_info: s.server_info.clone(),
        instructions: s.instructions.clone(),
        tools: s.tools.clone(),
        resources: s.resources.clone(),
        prompts: s.prompts.clone(),
        sign_in: s.sign_in.clone(),
        sign_in_page: s.signing_in.as_ref().map(|(page, _)| page.clone()),
    }
}
