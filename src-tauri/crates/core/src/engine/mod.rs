//! The engine: the data dir, the store and the settings, opened once and shared, and every
//! capability wired to them. The agent gets its parts from here (`crate::agent::Agent`); what
//! an app shown in a tool card may do is in `app_calls`.

pub mod add_link_save;
pub mod app_calls;
mod google;
pub mod permissions;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::agent::runs::Runs;
use crate::agent::{Agent, AgentParts};
use crate::keys::Keys;
use crate::mcp::McpManager;
pub use crate::notices::StartupNotice;
use crate::owner::{self, ProcessOwner};
use crate::paths::{DataDir, PathsError};
use crate::providers::ModelCache;
use crate::questions::Questions;
use crate::review::server::{self, ReviewServer, ServerConfig, ServerError};
use crate::review::{self, ReviewService, SharedReviews};
use crate::settings::SettingsHandle;
use crate::store::{Integrity, OpenReport, Store, StoreError};

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    #[error(transparent)]
    DataDir(#[from] PathsError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Overrides Settings -> Tools' client ID metadata document URL (an empty value: none).
pub const CLIENT_METADATA_URL_ENV: &str = "PERCH_CLIENT_METADATA_URL";

/// A cheap-to-clone handle on everything the app and the CLI share.
#[derive(Clone, Debug)]
pub struct Engine {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// The history, the settings, the keys, the providers, the MCP servers, the questions and
    /// the captures, shared with the rest of the engine through its accessors.
    agent: Agent,
    opened: OpenReport,
    reviews: SharedReviews,
    review_server: Mutex<Option<ReviewServer>>,
    /// The `@` picker's search: a new one cancels the one before.
    file_search: crate::files::Picker,
    voice: Arc<crate::voice::Voice>,
    speech: Arc<crate::speech::Speech>,
    control: Arc<crate::socket_requests::AppControl>,
    terminal: Arc<crate::terminal::Terminal>,
    /// Apps' pages already read.
    app_pages: crate::mcp::apps::cache::PageCache,
    google: crate::google::Connection,
    /// The Google connection under way (one at a time): how to cancel it, and Google's page.
    google_connecting: Mutex<Option<(tokio_util::sync::CancellationToken, String)>>,
    /// The crash reports the first `startup_notices` announced (announcing marks them shown),
    /// kept so that later callers (a reloaded window) get the same ones.
    crash_notices: std::sync::OnceLock<Vec<StartupNotice>>,
}

impl Engine {
    pub async fn start(data_dir: DataDir) -> Result<Self, StartError> {
        let (store, opened) = Store::open(&data_dir.db_path(), Integrity::Quick).await?;
        let settings = Arc::new(SettingsHandle::load(store.clone()).await?);
        tracing::info!(data_dir = %data_dir.root().display(), schema = opened.schema_version, "engine started");
        let owner = ProcessOwner::claim(data_dir.root())
            .inspect_err(|e| tracing::warn!(error = %e, "could not claim this process's answers"))
            .ok();
        let root = data_dir.root().to_path_buf();
        let interrupted = store.mark_interrupted(move |id| owner::is_running(&root, id)).await?;
        if interrupted > 0 {
            tracing::info!(interrupted, "answers cut off by an exit were kept as stopped");
        }
        owner::sweep(data_dir.root());
        let reviews = Arc::new(ReviewService::new(store.clone()));
        let keys = Arc::new(Keys::new(data_dir.root()));
        let questions = Arc::new(Questions::default());
        let data_dir_root = &data_dir.root().to_path_buf();
        let captures =
            crate::capture::Captures::open(data_dir.captures_dir(), settings.get().await.capture.keep());
        let mcp = McpManager::new(data_dir.root(), Some(data_dir.logs_dir().join("mcp")), questions.clone());
        let google = crate::google::Connection::new(keys.clone());
        mcp.set_secret_env(crate::mcp::secrets::from_keys(keys.clone(), google.clone()));
        mcp.set_keys(keys.clone());
        let terminal = Arc::new(crate::terminal::Terminal::new(store.clone(), data_dir.root()));
        let voice = Arc::new(crate::voice::Voice::new(data_dir_root));
        let speech = Arc::new(crate::speech::Speech::new(data_dir_root));
        let agent = Agent::new(AgentParts {
            local: Arc::new(crate::local::LocalModels::new(data_dir_root)),
            data_dir,
            store,
            settings,
            keys,
            http: crate::providers::http::Clients::default(),
            questions,
            mcp,
            captures: Arc::new(captures),
            owner,
        });
        let inner = Inner {
            agent,
            opened,
            reviews,
            review_server: Mutex::new(None),
            file_search: crate::files::Picker::default(),
            voice,
            speech,
            control: Arc::default(),
            terminal,
            app_pages: Default::default(),
            google,
            google_connecting: Mutex::default(),
            crash_notices: std::sync::OnceLock::new(),
        };
        let engine = Self { inner: Arc::new(inner) };
        let agent = &engine.inner.agent;
        let sampler = crate::agent::sampling::ModelSampler {
            settings: agent.settings().clone(),
            questions: agent.questions().clone(),
            keys: agent.keys().clone(),
            http: agent.http_clients().clone(),
            local: agent.local().clone(),
        };
        agent.mcp().set_sampler(Arc::new(sampler));
        engine.inner.terminal.set_enabled(engine.settings().get().await.terminal.enabled);
        let host = TerminalHost { settings: agent.settings().clone(), runs: agent.runs().clone() };
        let terminal = crate::terminal::tools::TerminalServer::new(
            engine.inner.terminal.clone(),
            Arc::new(host),
            agent.store().clone(),
        );
        agent.mcp().add_builtin(Arc::new(terminal));
        agent
            .mcp()
            .add_builtin(Arc::new(perch_knowledge::tool::KnowledgeServer::new(agent.knowledge().clone())));
        agent.mcp().add_builtin(Arc::new(perch_memories::tool::MemoryServer::new(
            agent.store().clone(),
            agent.questions().clone(),
            agent.memories().clone(),
        )));
        Ok(engine)
    }

    /// What answering works with (every turn takes it).
    pub fn agent(&self) -> &Agent {
        &self.inner.agent
    }
    pub fn data_dir(&self) -> &DataDir {
        self.inner.agent.data_dir()
    }
    pub fn store(&self) -> &Store {
        self.inner.agent.store()
    }
    pub fn settings(&self) -> &SettingsHandle {
        self.inner.agent.settings()
    }
    pub fn open_report(&self) -> &OpenReport {
        &self.inner.opened
    }

    /// Signs in to an MCP server (see `mcp::sign_in`) with Perch's client ID metadata document
    /// from the settings (or [`CLIENT_METADATA_URL_ENV`]); `open` shows the sign-in page (the browser, or a terminal's URL).
    pub async fn sign_in_mcp(
        &self,
        server: &str,
        scope: Option<String>,
        open: crate::mcp::sign_in::OpenUrl,
    ) -> Result<crate::mcp::sign_in::SignInView, crate::mcp::manager::SignInFailure> {
        // The environment wins, for a fork's build or a test's own document.
        let document = match std::env::var(CLIENT_METADATA_URL_ENV) {
            Ok(url) => url,
            Err(_) => self.settings().get().await.tools.client_metadata_url,
        };
        let document = Some(document).filter(|d| !d.trim().is_empty());
        self.mcp().sign_in(server, document, scope, open).await
    }

    pub fn keys(&self) -> &Arc<Keys> {
        self.inner.agent.keys()
    }

    /// Runs in flight, to stop one or all.
    pub fn runs(&self) -> &Runs {
        self.inner.agent.runs()
    }
    /// Turns being answered, for a view that comes back to one.
    pub fn live_turns(&self) -> &crate::agent::live::LiveTurns {
        self.inner.agent.live_turns()
    }
    pub fn model_cache(&self) -> &ModelCache {
        self.inner.agent.model_cache()
    }
    /// A model's capabilities, cached for ten minutes.
    pub async fn model_info(
        &self,
        provider: &dyn crate::providers::Provider,
        id: &crate::providers::ModelId,
    ) -> Result<crate::providers::ModelInfo, crate::providers::ProviderError> {
        self.inner.agent.model_info(provider, id).await
    }
    /// The providers these settings configure, with the engine's keys, clients and local models.
    pub fn registry(&self, settings: &crate::settings::Settings) -> crate::providers::Registry {
        self.inner.agent.registry(settings)
    }

    /// The HTTP clients every provider and download of this engine reuses.
    pub fn http_clients(&self) -> &crate::providers::http::Clients {
        self.inner.agent.http_clients()
    }
    /// The id this process's streaming answers record as their owner.
    pub fn owner_id(&self) -> Option<&str> {
        self.inner.agent.owner_id()
    }

    /// Questions waiting for the user (tool approvals, elicitation, sampling).
    pub fn questions(&self) -> &Arc<Questions> {
        self.inner.agent.questions()
    }

    /// Top-K tool retrieval (and the embedded model it may use).
    pub fn tool_picker(&self) -> &crate::agent::picker::ToolPicker {
        self.inner.agent.tool_picker()
    }

    /// Local models and the sidecar that runs them.
    pub fn local(&self) -> &Arc<crate::local::LocalModels> {
        self.inner.agent.local()
    }

    /// Searches for files to attach (see [`crate::files::search_roots`] for where), streaming
    /// updates to `report`; a new search cancels the running one.
    pub async fn search_files(
        &self,
        query: String,
        chosen_root: Option<PathBuf>,
        report: impl FnMut(&crate::files::SearchUpdate) + Send + 'static,
    ) -> Result<crate::files::SearchUpdate, crate::files::FilesError> {
        let configured = self.settings().get().await.tools.roots;
        let roots = crate::files::search_roots(chosen_root.as_deref(), &configured);
        let cancel = self.inner.file_search.begin();
        let options = crate::files::SearchOptions::default();
        let first = roots.first().cloned().unwrap_or_default();
        let walk = tokio::task::spawn_blocking(move || {
            crate::files::search(&roots, &query, &options, &cancel, report)
        });
        walk.await.unwrap_or_else(|e| {
            Err(crate::files::FilesError::Io { path: first, source: std::io::Error::other(e.to_string()) })
        })
    }

    /// Stops the running file search (the picker closed).
    pub fn cancel_file_search(&self) {
        self.inner.file_search.cancel();
    }

    /// Screen captures waiting for a question, and the frozen screen while selecting.
    pub fn captures(&self) -> &Arc<crate::capture::Captures> {
        self.inner.agent.captures()
    }

    /// App requests from the socket (show, toggle, screenshot), for the window to answer.
    pub fn app_control(&self) -> &Arc<crate::socket_requests::AppControl> {
        &self.inner.control
    }

    /// Dictation and whisper models.
    /// Reading aloud: the voices and the speaker.
    pub fn speech(&self) -> &Arc<crate::speech::Speech> {
        &self.inner.speech
    }

    pub fn voice(&self) -> &Arc<crate::voice::Voice> {
        &self.inner.voice
    }

    /// The knowledge folders (`crate::knowledge`).
    pub fn knowledge(&self) -> &Arc<crate::knowledge::KnowledgeService> {
        self.inner.agent.knowledge()
    }

    /// The memories (`crate::memories`).
    pub fn memories(&self) -> &Arc<crate::memories::Memories> {
        self.inner.agent.memories()
    }

    /// The terminal the model may use (commands, sessions, the sandbox).
    pub fn terminal(&self) -> &Arc<crate::terminal::Terminal> {
        &self.inner.terminal
    }

    /// The apps (MCP Apps) open in tool cards.
    pub fn app_sessions(&self) -> &Arc<crate::mcp::apps::sessions::AppSessions> {
        self.inner.agent.app_sessions()
    }

    /// Apps' pages already read (MCP Apps).
    pub fn app_pages(&self) -> &crate::mcp::apps::cache::PageCache {
        &self.inner.app_pages
    }

    pub fn mcp(&self) -> &Arc<McpManager> {
        self.inner.agent.mcp()
    }

    /// Starts the MCP servers marked auto-start, with the roots from the settings.
    pub async fn start_mcp_servers(&self) {
        let roots = self.settings().get().await.tools.roots.iter().map(PathBuf::from).collect();
        self.mcp().set_roots(roots).await;
        self.apply_apps_setting().await;
        self.mcp().set_env(self.child_env());
        self.mcp().start_auto();
    }

    /// Tells the MCP manager which servers hear of MCP Apps (Settings -> Tools), closes the
    /// apps of servers whose apps were turned off, and restarts the running servers whose
    /// answer changed (a server learns it when it starts). Returns the closed sessions.
    pub async fn apply_apps_setting(&self) -> Vec<String> {
        let tools = self.settings().get().await.tools;
        let changed = self.mcp().set_apps(tools.apps, &tools.apps_off);
        let mut closed = Vec::new();
        for server in self.mcp().list() {
            if !tools.apps_for(&server.config.name) {
                closed.extend(self.app_sessions().close_server(&server.config.name));
            }
        }
        for server in &changed {
            if let Err(e) = self.mcp().restart(server).await {
                tracing::warn!(server, error = %e, "could not restart a server after its apps setting changed");
            }
        }
        closed
    }

    /// Stops every MCP server and waits for them to exit (killing those that do not).
    pub async fn stop_mcp_servers(&self) {
        self.mcp().shutdown().await;
    }

    pub fn reviews(&self) -> &SharedReviews {
        &self.inner.reviews
    }

    /// Starts or stops the review socket to match the settings; returns where it listens.
    pub async fn apply_review_socket_setting(&self) -> Result<Option<PathBuf>, ServerError> {
        let settings = self.settings().get().await.review;
        self.stop_review_socket().await;
        if !settings.socket_enabled {
            return Ok(None);
        }
        let mut config = ServerConfig::new(review::socket_path(self.data_dir().root()));
        config.limits.max_content_chars = settings.max_content_chars.max(1) as usize;
        config.limits.max_line_bytes = settings.max_line_bytes.max(1024) as usize;
        config.idle_timeout = Duration::from_secs(settings.idle_timeout_secs.max(1).into());
        // Weak: the socket's server belongs to the engine and must not keep it alive.
        let engine = Arc::downgrade(&self.inner);
        let connections_changed: crate::socket_requests::ConnectionsChanged = Arc::new(move || {
            let engine = engine.upgrade().map(|inner| Engine { inner });
            Box::pin(async move {
                if let Some(engine) = engine {
                    engine.google_changed().await;
                }
            })
        });
        let handler = crate::socket_requests::SocketHandler {
            reviews: self.inner.reviews.clone(),
            control: self.inner.control.clone(),
            connections_changed,
        };
        let server = server::start(config, Arc::new(handler)).await?;
        let path = server.path().to_path_buf();
        if let Err(e) = review::write_discovery_file(self.data_dir().root(), &path) {
            tracing::warn!(error = %e, "could not write the review socket's discovery file");
        }
        *self.inner.review_server.lock().unwrap_or_else(|p| p.into_inner()) = Some(server);
        self.mcp().set_env(self.child_env());
        Ok(Some(path))
    }

    async fn stop_review_socket(&self) {
        let running = self.inner.review_server.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(server) = running {
            server.stop().await;
            review::remove_discovery_file(self.data_dir().root());
        }
    }

    /// Environment for every process Perch starts: where the review socket is.
    pub fn child_env(&self) -> Vec<(String, String)> {
        let guard = self.inner.review_server.lock().unwrap_or_else(|p| p.into_inner());
        guard
            .as_ref()
            .map(|s| vec![(perch_ipc::ENV_PATH.to_owned(), s.path().to_string_lossy().into_owned())])
            .unwrap_or_default()
    }

    /// Stops every answer in flight and waits (up to `wait`) until each has saved what arrived.
    async fn stop_all_runs(&self, wait: Duration) {
        if self.runs().cancel_all() == 0 {
            return;
        }
        let deadline = std::time::Instant::now() + wait;
        while self.runs().active() > 0 && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Makes `folder` (as typed: `~` and relative paths from home) the terminal's working
    /// folder once the terminal's checks pass: for one conversation, or (without one) the
    /// default in Settings. Returns it made absolute.
    pub async fn choose_working_folder(
        &self,
        folder: &Path,
        conversation_id: Option<&str>,
    ) -> Result<PathBuf, crate::terminal::TerminalError> {
        let dir = self.inner.terminal.check_folder(folder)?;
        let typed = dir.display().to_string();
        match conversation_id {
            Some(cid) => self.store().set_conversation_folder(cid, Some(&typed)).await?,
            None => {
                self.settings().update(|s| s.terminal.working_folder = typed).await?;
            }
        }
        Ok(dir)
    }

    /// Kills the terminal's commands and waits (up to `wait`) until each has ended; returns how
    /// many had not.
    pub async fn stop_terminal(&self, wait: Duration) -> usize {
        self.inner.terminal.shutdown(wait).await
    }

    /// Stops everything the engine runs, before the process exits: answers in flight are
    /// stopped and saved, the terminal's commands killed and awaited, the MCP servers closed,
    /// the local model runtime stopped, dictation ended and the review socket removed. Each
    /// waits at most `wait` (the MCP servers and the runtime their own short grace).
    pub async fn shutdown(&self, wait: Duration) {
        self.stop_all_runs(wait).await;
        let left = self.stop_terminal(wait).await;
        if left > 0 {
            tracing::warn!(left, "terminal commands still ending at exit");
        }
        tokio::join!(self.stop_mcp_servers(), self.local().runtime().stop());
        self.inner.voice.shutdown();
        self.knowledge().shutdown();
        // Dropping the server closes it and removes its socket.
        drop(self.inner.review_server.lock().unwrap_or_else(|p| p.into_inner()).take());
        review::remove_discovery_file(self.data_dir().root());
    }

    /// Things from start-up the UI shows once, such as a database that had to be replaced.
    pub fn startup_notices(&self) -> Vec<StartupNotice> {
        let mut notices = Vec::new();
        if let Some(r) = &self.inner.opened.recovered {
            notices.push(StartupNotice {
                title: "Your history database was damaged".into(),
                detail: format!(
                    "Perch could not read it ({}), so it started a new one. The damaged file was kept as {}.",
                    r.reason,
                    r.backup.display()
                ),
                section: None,
            });
        }
        let crashes =
            self.inner.crash_notices.get_or_init(|| crate::crash::notices(&self.data_dir().crashes_dir()));
        notices.extend(crashes.iter().cloned());
        // Shown outside Settings -> MCP too: a server missing from every chat's tools, and its
        // apps from old answers, would otherwise go unexplained.
        let problems = self.mcp().problems();
        if let Some(first) = problems.first() {
            let more = match problems.len() - 1 {
                0 => String::new(),
                1 => " (and 1 more problem)".to_owned(),
                n => format!(" (and {n} more problems)"),
            };
            notices.push(StartupNotice {
                title: "Your MCP servers file has a problem".into(),
                detail: format!(
                    "{first}{more}. The servers it names are not available until it is fixed; save the fixed file and Perch reads it again."
                ),
                section: Some("MCP".into()),
            });
        }
        notices
    }
}

/// What the terminal's tools read from the engine: its settings and its answers.
struct TerminalHost {
    settings: Arc<SettingsHandle>,
    runs: Arc<Runs>,
}

impl crate::terminal::tools::TerminalHost for TerminalHost {
    fn settings(&self) -> futures::future::BoxFuture<'_, crate::terminal::TerminalSettings> {
        Box::pin(async move { self.settings.get().await.terminal })
    }

    fn run_ended(&self, run_id: &str) -> Option<tokio_util::sync::CancellationToken> {
        self.runs.ended(run_id)
    }
}
