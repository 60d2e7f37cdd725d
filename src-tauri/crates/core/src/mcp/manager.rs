//! Runs the configured servers: one supervisor task per running server starts it, watches it,
//! restarts it with exponential backoff when it dies (up to a bound, then leaves it in error
//! with the reason), and closes it when asked. Calls go straight to the server's peer.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use rmcp::Peer;
use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest,
    GetPromptRequestParams, ReadResourceRequestParams, ServerResult,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use serde_json::{Map, Value};
use tokio::io::AsyncBufReadExt;
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;

use super::config::{self, ConfigProblem, LoadedConfig, ServerConfig};
use super::handler::{PerchClient, ProgressRoutes, Sampler, Shared};
use super::launch::{self, Launched};
use super::logs::ServerLog;
use super::{
    CallError, McpEvent, Progress, PromptArgumentView, PromptView, ResourceView, ServerStatus, ServerView,
    ToolOutput, ToolView,
};
use crate::asks::Asks;

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
    connected_at: Option<i64>,
    restarts: u32,
    protocol_version: Option<String>,
    server_info: Option<String>,
    tools: Vec<ToolView>,
    resources: Vec<ResourceView>,
    prompts: Vec<PromptView>,
    peer: Option<Peer<RoleClient>>,
    /// Cancels the supervisor (stop); present while one runs.
    stop: Option<CancellationToken>,
    /// Ends when the supervisor has finished.
    done: Option<tokio::sync::watch::Receiver<bool>>,
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
    pub fn new(data_dir: &Path, logs_dir: Option<PathBuf>, asks: Arc<Asks>) -> Arc<Self> {
        let (changed_tx, mut changed_rx) = mpsc::unbounded_channel::<String>();
        let shared = Arc::new(Shared {
            asks,
            roots: Default::default(),
            sampler: Default::default(),
            changed: changed_tx,
            closing: CancellationToken::new(),
        });
        let manager = Arc::new(Self {
            data_dir: data_dir.to_path_buf(),
            logs_dir,
            slots: Mutex::default(),
            problems: Mutex::default(),
            events: broadcast::channel(256).0,
            shared,
            env: Mutex::default(),
        });
        manager.apply(config::load(data_dir));
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

    /// The folders servers may work in (MCP roots); servers are told when they change.
    pub async fn set_roots(&self, roots: Vec<PathBuf>) {
        *self.shared.roots.write().unwrap_or_else(|p| p.into_inner()) = roots;
        for peer in self.peers() {
            let _ = peer.notify_roots_list_changed().await;
        }
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
        self.slots
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned()
            .ok_or_else(|| CallError::UnknownServer(name.to_owned()))
    }

    fn peers(&self) -> Vec<Peer<RoleClient>> {
        self.slots().into_iter().filter_map(|(_, s)| s.state().peer.clone()).collect()
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
        let restart = self.apply(config::load(&self.data_dir));
        for (name, slot) in self.slots() {
            let config = slot.config();
            let running = slot.state().stop.is_some();
            if running && (!config.enabled || restart.contains(&name)) {
                self.stop(&name).await.ok();
            }
            if config.enabled && config.auto_start && (restart.contains(&name) || !running) {
                self.start(&name).ok();
            }
            self.changed(&name);
        }
    }

    /// Starts every enabled server marked auto-start.
    pub fn start_auto(self: &Arc<Self>) {
        for (name, slot) in self.slots() {
            let config = slot.config();
            if config.enabled && config.auto_start {
                self.start(&name).ok();
            }
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
        drop(state);
        self.changed(name);
        Ok(())
    }

    pub async fn restart(self: &Arc<Self>, name: &str) -> Result<(), CallError> {
        self.stop(name).await?;
        self.start(name)
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

    /// Starts a server if needed and waits until it is connected or has failed.
    pub async fn ensure_connected(self: &Arc<Self>, name: &str, wait: Duration) -> Result<(), CallError> {
        let slot = self.slot(name)?;
        if slot.state().stop.is_none() {
            self.start(name)?;
        }
        let deadline = Instant::now() + wait;
        let mut events = self.subscribe();
        loop {
            let (status, error) = {
                let s = slot.state();
                (s.status, s.last_error.clone())
            };
            match status {
                Some(ServerStatus::Connected) => return Ok(()),
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

    async fn supervise(&self, name: &str, slot: &Arc<Slot>, stop: &CancellationToken) {
        let mut failures = 0u32;
        loop {
            slot.state().status = Some(ServerStatus::Starting);
            self.changed(name);
            let config = slot.config();
            let handler = PerchClient {
                server: name.to_owned(),
                shared: self.shared.clone(),
                progress: slot.progress.clone(),
            };
            let env = self.env.lock().unwrap_or_else(|p| p.into_inner()).clone();
            let on_stderr = {
                let (slot, events, server) = (slot.clone(), self.events.clone(), name.to_owned());
                move |stderr| {
                    tokio::spawn(async move {
                        let mut lines = tokio::io::BufReader::new(stderr).lines();
                        while let Ok(Some(line)) = lines.next_line().await {
                            let line = slot.log().push(&line);
                            let _ = events.send(McpEvent::Log { server: server.clone(), line });
                        }
                    });
                }
            };
            let start_timeout = launch::START_TIMEOUT.min(Duration::from_secs(config.timeout_secs.into()));
            let launched = tokio::select! {
                () = stop.cancelled() => return,
                l = launch::launch(&config.transport, handler, &env, start_timeout, on_stderr) => l,
            };
            let started = Instant::now();
            let mut permanent = false;
            let outcome = match launched {
                Ok(Launched { client, pid }) => {
                    self.connected(name, slot, &client, pid).await;
                    let closing = client.cancellation_token();
                    let waiting = client.waiting();
                    tokio::pin!(waiting);
                    tokio::select! {
                        _ = &mut waiting => Err("it exited unexpectedly".to_owned()),
                        () = stop.cancelled() => {
                            closing.cancel();
                            let _ = tokio::time::timeout(STOP_GRACE, &mut waiting).await;
                            Ok(())
                        }
                    }
                }
                Err(e) => {
                    permanent = e.permanent;
                    Err(e.message)
                }
            };
            {
                let mut s = slot.state();
                if outcome.is_err() {
                    s.status = Some(ServerStatus::Disconnected);
                }
                s.peer = None;
                s.pid = None;
                s.connected_at = None;
                s.tools.clear();
                s.resources.clear();
                s.prompts.clear();
            }
            let Err(reason) = outcome else { return };
            // Give the stderr reader a moment to record the server's last words.
            tokio::time::sleep(Duration::from_millis(50)).await;
            let tail = slot.log().tail(3);
            let reason = if tail.is_empty() {
                reason
            } else {
                format!("{reason}; its last output: {}", tail.join(" | "))
            };
            tracing::warn!(server = name, %reason, "MCP server failed");
            slot.log().push(&format!("[perch] {reason}"));
            if started.elapsed() >= HEALTHY_AFTER {
                failures = 0;
            }
            failures += 1;
            if permanent {
                failures = MAX_RESTARTS + 1;
            }
            {
                let mut s = slot.state();
                if permanent {
                    s.status = Some(ServerStatus::Error);
                    s.last_error = Some(reason);
                } else if failures > MAX_RESTARTS {
                    s.status = Some(ServerStatus::Error);
                    s.last_error = Some(format!("gave up after {MAX_RESTARTS} restarts: {reason}"));
                } else {
                    s.status = Some(ServerStatus::Disconnected);
                    s.last_error = Some(reason);
                    s.restarts += 1;
                }
            }
            self.changed(name);
            if failures > MAX_RESTARTS {
                return;
            }
            let backoff = (FIRST_BACKOFF * 2u32.pow(failures - 1)).min(MAX_BACKOFF);
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep(backoff) => {}
            }
        }
    }

    async fn connected(&self, name: &str, slot: &Slot, client: &launch::Client, pid: Option<u32>) {
        let info = client.peer_info();
        {
            let mut s = slot.state();
            s.pid = pid;
            s.peer = Some(client.peer().clone());
            s.protocol_version = info.as_ref().map(|i| i.protocol_version.to_string());
            s.server_info = info
                .as_ref()
                .and_then(|i| i.server_info.as_ref())
                .map(|s| format!("{} {}", s.name, s.version));
        }
        if let Err(e) = self.fetch_lists(slot).await {
            slot.log().push(&format!("[perch] could not list its capabilities: {e}"));
        }
        let mut s = slot.state();
        s.status = Some(ServerStatus::Connected);
        s.last_error = None;
        s.connected_at = Some(chrono::Utc::now().timestamp_millis());
        drop(s);
        tracing::info!(server = name, ?pid, "MCP server connected");
        self.changed(name);
    }

    /// Fetches tools, resources and prompts (those the server offers).
    async fn fetch_lists(&self, slot: &Slot) -> Result<(), String> {
        let Some(peer) = slot.state().peer.clone() else { return Err("not connected".into()) };
        let caps = peer.peer_info().map(|i| i.capabilities.clone());
        let tools = peer.list_all_tools().await.map_err(|e| e.to_string())?;
        let tools = tools
            .into_iter()
            .map(|t| {
                let annotations = t.annotations.as_ref();
                ToolView {
                    name: t.name.to_string(),
                    title: t.title.clone(),
                    description: t.description.as_deref().unwrap_or_default().to_owned(),
                    input_schema: Value::Object((*t.input_schema).clone()),
                    read_only: annotations.and_then(|a| a.read_only_hint).unwrap_or(false),
                    destructive: annotations.and_then(|a| a.destructive_hint).unwrap_or(false),
                }
            })
            .collect();
        let mut resources = Vec::new();
        if caps.as_ref().is_some_and(|c| c.resources.is_some())
            && let Ok(list) = peer.list_all_resources().await
        {
            resources = list
                .into_iter()
                .map(|r| ResourceView {
                    uri: r.uri.clone(),
                    name: r.name.clone(),
                    description: r.description.clone(),
                    mime_type: r.mime_type.clone(),
                })
                .collect();
        }
        let mut prompts = Vec::new();
        if caps.as_ref().is_some_and(|c| c.prompts.is_some())
            && let Ok(list) = peer.list_all_prompts().await
        {
            prompts = list
                .into_iter()
                .map(|p| PromptView {
                    name: p.name.clone(),
                    description: p.description.clone(),
                    arguments: p
                        .arguments
                        .unwrap_or_default()
                        .into_iter()
                        .map(|a| PromptArgumentView {
                            name: a.name,
                            description: a.description,
                            required: a.required.unwrap_or(false),
                        })
                        .collect(),
                })
                .collect();
        }
        let mut s = slot.state();
        s.tools = tools;
        s.resources = resources;
        s.prompts = prompts;
        Ok(())
    }

    /// Fetches a server's tools, resources and prompts again.
    pub async fn refresh(&self, name: &str) -> Result<(), CallError> {
        let slot = self.slot(name)?;
        self.fetch_lists(&slot)
            .await
            .map_err(|message| CallError::Protocol { server: name.to_owned(), message })?;
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

    /// The tools of every connected server, as (server, tool).
    pub fn tools(&self) -> Vec<(String, ToolView)> {
        let mut all = Vec::new();
        for (name, slot) in self.slots() {
            let s = slot.state();
            if s.status == Some(ServerStatus::Connected) {
                all.extend(s.tools.iter().map(|t| (name.clone(), t.clone())));
            }
        }
        all
    }

    pub fn logs(&self, name: &str) -> Result<Vec<String>, CallError> {
        Ok(self.slot(name)?.log().lines())
    }

    fn connected_peer(&self, name: &str) -> Result<(Arc<Slot>, Peer<RoleClient>), CallError> {
        let slot = self.slot(name)?;
        let s = slot.state();
        match (&s.peer, s.status) {
            (Some(peer), Some(ServerStatus::Connected)) => {
                let peer = peer.clone();
                drop(s);
                Ok((slot, peer))
            }
            (_, status) => {
                let status = match status {
                    Some(ServerStatus::Starting) => "it is starting".to_owned(),
                    Some(ServerStatus::Disconnected) => {
                        format!("it is restarting after: {}", s.last_error.clone().unwrap_or_default())
                    }
                    Some(ServerStatus::Error) => s.last_error.clone().unwrap_or_else(|| "it failed".into()),
                    _ => "it is stopped; start it in Settings > MCP servers".into(),
                };
                Err(CallError::NotRunning { server: name.to_owned(), status })
            }
        }
    }

    /// Calls a tool. `cancel` stops it (the server is told); `progress` receives its progress.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<Map<String, Value>>,
        cancel: &CancellationToken,
        progress: Option<mpsc::UnboundedSender<Progress>>,
    ) -> Result<ToolOutput, CallError> {
        let (slot, peer) = self.connected_peer(server)?;
        let timeout_secs = slot.config().timeout_secs;
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Some(args) = arguments {
            params = params.with_arguments(args);
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let protocol = |e: ServiceError| match e {
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
                CallError::Closed { server: server.to_owned() }
            }
            ServiceError::McpError(e) if e.code.0 == -32602 && e.message.contains("tool") => {
                CallError::UnknownTool { server: server.to_owned(), tool: tool.to_owned() }
            }
            other => CallError::Protocol { server: server.to_owned(), message: other.to_string() },
        };
        let handle = peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(protocol)?;
        let (id, token) = (handle.id.clone(), handle.progress_token.clone());
        if let Some(tx) = progress {
            slot.progress.lock().unwrap_or_else(|p| p.into_inner()).insert(token.clone(), tx);
        }
        let timeout = Duration::from_secs(timeout_secs.into());
        let outcome = tokio::select! {
            r = tokio::time::timeout(timeout, handle.await_response()) => match r {
                Ok(r) => r.map_err(protocol),
                Err(_) => Err(CallError::Timeout { server: server.to_owned(), secs: timeout_secs }),
            },
            () = cancel.cancelled() => Err(CallError::Cancelled),
        };
        slot.progress.lock().unwrap_or_else(|p| p.into_inner()).remove(&token);
        if matches!(outcome, Err(CallError::Timeout { .. } | CallError::Cancelled)) {
            let reason = if cancel.is_cancelled() { "stopped by the user" } else { "timed out" };
            let _ =
                peer.notify_cancelled(CancelledNotificationParam::new(Some(id), Some(reason.into()))).await;
        }
        match outcome? {
            ServerResult::CallToolResult(result) => Ok(ToolOutput::from_result(result)),
            other => Err(CallError::Protocol {
                server: server.to_owned(),
                message: format!("answered a tool call with something else: {other:?}"),
            }),
        }
    }

    /// Reads a resource, as text (binary contents are described).
    pub async fn read_resource(&self, server: &str, uri: &str) -> Result<String, CallError> {
        let (_, peer) = self.connected_peer(server)?;
        let result = peer
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .map_err(|e| CallError::Protocol { server: server.to_owned(), message: e.to_string() })?;
        let parts: Vec<String> = result
            .contents
            .into_iter()
            .map(|c| match c {
                rmcp::model::ResourceContents::TextResourceContents { text, .. } => text,
                rmcp::model::ResourceContents::BlobResourceContents { mime_type, blob, .. } => {
                    format!(
                        "[{} bytes of {}]",
                        blob.len() / 4 * 3,
                        mime_type.unwrap_or_else(|| "binary data".into())
                    )
                }
                _ => String::new(),
            })
            .collect();
        Ok(parts.join("\n"))
    }

    /// Fills in a prompt, as the text of its messages.
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<String, CallError> {
        let (_, peer) = self.connected_peer(server)?;
        let mut params = GetPromptRequestParams::new(name);
        if !arguments.is_empty() {
            params = params.with_arguments(arguments);
        }
        let result = peer
            .get_prompt(params)
            .await
            .map_err(|e| CallError::Protocol { server: server.to_owned(), message: e.to_string() })?;
        let parts: Vec<String> = result
            .messages
            .into_iter()
            .map(|m| match serde_json::to_value(&m.content) {
                Ok(v) => v.get("text").and_then(Value::as_str).map_or_else(|| v.to_string(), str::to_owned),
                Err(_) => String::new(),
            })
            .collect();
        Ok(parts.join("\n\n"))
    }

    /// Config edits from the dashboard; each reloads the configuration.
    pub async fn import(self: &Arc<Self>, pasted: &str) -> Result<Vec<String>, String> {
        let names = config::import(&self.data_dir, pasted)?;
        self.reload().await;
        Ok(names)
    }

    pub async fn remove(self: &Arc<Self>, name: &str) -> Result<(), String> {
        let bundled = self.slot(name).map_err(|e| e.to_string())?.config().bundled;
        self.stop(name).await.ok();
        config::remove(&self.data_dir, name, bundled)?;
        self.reload().await;
        Ok(())
    }

    pub async fn set_enabled(self: &Arc<Self>, name: &str, enabled: bool) -> Result<(), String> {
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
        tools: s.tools.clone(),
        resources: s.resources.clone(),
        prompts: s.prompts.clone(),
    }
}
