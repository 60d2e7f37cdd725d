//! Servers that stop when idle (`stopWhenIdle` in their configuration; the bundled ones do).
//! Such a server is stopped after a quiet spell to free what it holds, and the lists it gave are
//! saved in the data folder, so its tools stay offered while it is not running, and at the next
//! launch before it has started at all. The first call starts it again.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use rmcp::{Peer, RoleClient};
use serde::{Deserialize, Serialize};

use super::super::config::ServerConfig;
use super::super::launch::START_TIMEOUT;
use super::super::{CallError, PromptView, ResourceView, ServerStatus, ToolView};
use super::{McpManager, Slot, State};

/// Where the lists of idle-stopping servers are kept, one file per server.
const LISTS_DIR: &str = "mcp_lists";

/// What a server offered when it last ran.
#[derive(Serialize, Deserialize)]
struct SavedLists {
    /// The lists hold only for the same command (or URL) and the same Perch, whose bundled
    /// servers change with it.
    source: String,
    protocol_version: Option<String>,
    server_info: Option<String>,
    #[serde(default)]
    instructions: Option<String>,
    tools: Vec<ToolView>,
    resources: Vec<ResourceView>,
    prompts: Vec<PromptView>,
}

fn source(config: &ServerConfig) -> String {
    let transport = serde_json::to_string(&config.transport).unwrap_or_default();
    format!("perch {} {transport}", env!("CARGO_PKG_VERSION"))
}

/// A file name for any server name (names come from the user's JSON).
fn file_for(name: &str) -> String {
    let safe: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    format!("{safe}.json")
}

impl McpManager {
    fn lists_path(&self, name: &str) -> PathBuf {
        self.data_dir.join(LISTS_DIR).join(file_for(name))
    }

    /// Puts an idle-stopping server whose lists were saved by an earlier run at rest instead of
    /// starting it. False when it has to start (no lists yet, or they came from another command).
    pub(super) fn rest_from_saved(&self, name: &str, slot: &Slot) -> bool {
        let config = slot.config();
        if config.stop_when_idle_secs == 0 {
            return false;
        }
        let saved = std::fs::read(self.lists_path(name))
            .ok()
            .and_then(|bytes| serde_json::from_slice::<SavedLists>(&bytes).ok())
            .filter(|saved| saved.source == source(&config));
        let Some(saved) = saved else { return false };
        let mut s = slot.state();
        s.status = Some(ServerStatus::Idle);
        s.protocol_version = saved.protocol_version;
        s.server_info = saved.server_info;
        s.instructions = saved.instructions;
        s.tools = saved.tools;
        s.resources = saved.resources;
        s.prompts = saved.prompts;
        true
    }

    /// Drops the lists a server left for its idle times (what it offers has changed).
    pub fn forget_saved_lists(&self, name: &str) {
        match std::fs::remove_file(self.lists_path(name)) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!(server = name, error = %e, "could not remove a server's saved lists"),
        }
    }

    /// Saves what an idle-stopping server offers, for the times it is not running.
    pub(super) async fn save_lists(&self, name: &str, slot: &Slot) {
        let config = slot.config();
        if config.stop_when_idle_secs == 0 {
            return;
        }
        let saved = {
            let s = slot.state();
            SavedLists {
                source: source(&config),
                protocol_version: s.protocol_version.clone(),
                server_info: s.server_info.clone(),
                instructions: s.instructions.clone(),
                tools: s.tools.clone(),
                resources: s.resources.clone(),
                prompts: s.prompts.clone(),
            }
        };
        let path = self.lists_path(name);
        let written = async {
            let json = serde_json::to_vec(&saved).map_err(std::io::Error::other)?;
            if let Some(dir) = path.parent() {
                tokio::fs::create_dir_all(dir).await?;
            }
            // Written whole, then renamed: a reader never sees half a file.
            let partial = path.with_extension("json.partial");
            tokio::fs::write(&partial, json).await?;
            tokio::fs::rename(&partial, &path).await
        };
        if let Err(e) = written.await {
            // Only costs a start at the next launch.
            tracing::warn!(server = name, path = %path.display(), error = %e, "could not save the server's lists");
        }
    }

    /// The peer for a call, starting an idle server first, and the call counted as in flight.
    /// One lookup of the slot and one lock of its state for a connected server: the peer, its
    /// status and the count are read and written together.
    pub(super) async fn peer_for_call(
        self: &Arc<Self>,
        name: &str,
    ) -> Result<(InFlight, Peer<RoleClient>), CallError> {
        let slot = self.slot(name)?;
        if slot.state().status == Some(ServerStatus::Idle) {
            tracing::info!(server = name, "starting an idle MCP server for a call");
            let wait = START_TIMEOUT.min(Duration::from_secs(slot.config().timeout_secs.into()));
            self.ensure_connected(name, wait).await?;
        }
        let peer = {
            let mut s = slot.state();
            let peer = connected(name, &s)?;
            s.calls_in_flight += 1;
            s.last_used = Some(Instant::now());
            peer
        };
        Ok((InFlight(slot), peer))
    }
}

/// The peer of a connected server, or why there is none.
fn connected(name: &str, s: &State) -> Result<Peer<RoleClient>, CallError> {
    match (&s.peer, s.status) {
        (Some(peer), Some(ServerStatus::Connected)) => Ok(peer.clone()),
        (_, Some(ServerStatus::NeedsSignIn)) => {
            Err(CallError::NeedsSignIn { server: name.to_owned(), scope: None })
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

/// How long before its secrets run out a server is put to rest.
const STALE_MARGIN: Duration = Duration::from_secs(5 * 60);
/// The longest single wait while the secrets are good: the monotonic clock stops while the
/// computer sleeps, the wall clock does not, so it is looked at again this often.
const STALE_CHECK: Duration = Duration::from_secs(60);

/// A server is never put to rest sooner than this after it started, so the call that started
/// it (and a renewal's retry) runs even when the secrets could not be renewed in time.
const STALE_GRACE: Duration = Duration::from_secs(10);

/// Resolves a little before `valid_until` (never without one), once no call is under way, so
/// the next call starts the server with fresh secrets.
pub(super) async fn until_stale(slot: &Slot, valid_until: Option<SystemTime>) {
    let Some(until) = valid_until else { return std::future::pending().await };
    let earliest = SystemTime::now() + STALE_GRACE;
    let at = until.checked_sub(STALE_MARGIN).unwrap_or(until).max(earliest);
    loop {
        let left = at.duration_since(SystemTime::now()).unwrap_or_default();
        if left.is_zero() && slot.state().calls_in_flight == 0 {
            return;
        }
        tokio::time::sleep(if left.is_zero() { Duration::from_secs(1) } else { left.min(STALE_CHECK) }).await;
    }
}

/// Resolves once the server has had no call for `idle_secs` (never, for 0).
pub(super) async fn until_idle(slot: &Slot, idle_secs: u32) {
    if idle_secs == 0 {
        return std::future::pending().await;
    }
    let idle = Duration::from_secs(idle_secs.into());
    loop {
        let (busy, since) = {
            let s = slot.state();
            (s.calls_in_flight > 0, s.last_used)
        };
        let left = idle.saturating_sub(since.map_or(idle, |t| t.elapsed()));
        if !busy && left.is_zero() {
            return;
        }
        tokio::time::sleep(if busy { idle } else { left }).await;
    }
}

/// A call in flight: the server is not stopped under it, and its end restarts the quiet spell.
/// Counted by [`McpManager::peer_for_call`].
pub(super) struct InFlight(Arc<Slot>);

impl InFlight {
    pub(super) fn slot(&self) -> &Slot {
        &self.0
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut s = self.0.state();
        s.calls_in_flight = s.calls_in_flight.saturating_sub(1);
        s.last_used = Some(Instant::now());
    }
}
