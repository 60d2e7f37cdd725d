//! One server's life: start it, watch it, restart it with backoff when it dies, and fetch
//! what it offers once connected.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::AsyncBufReadExt;
use tokio_util::sync::CancellationToken;

use super::super::handler::PerchClient;
use super::super::launch::{self, Launched};
use super::super::{McpEvent, PromptArgumentView, PromptView, ResourceView, ServerStatus, ToolView};
use super::{
    FIRST_BACKOFF, Freshness, HEALTHY_AFTER, MAX_BACKOFF, MAX_RESTARTS, McpManager, STOP_GRACE, Slot, idle,
};
use perch_foundation::crash_loop::CrashLoop;

/// Why a server's lists could not be fetched.
#[derive(Debug, thiserror::Error)]
pub(super) enum ListError {
    #[error("it is not connected")]
    NotConnected,
    #[error(transparent)]
    Service(#[from] rmcp::service::ServiceError),
}

impl McpManager {
    pub(super) async fn supervise(&self, name: &str, slot: &Arc<Slot>, stop: &CancellationToken) {
        let mut crashes = CrashLoop::new(MAX_RESTARTS, HEALTHY_AFTER);
        loop {
            slot.state().status = Some(ServerStatus::Starting);
            slot.log().new_run();
            self.changed(name);
            let config = slot.config();
            let handler = PerchClient {
                server: name.to_owned(),
                shared: self.shared.clone(),
                progress: slot.progress.clone(),
            };
            let mut env = self.env.lock().unwrap_or_else(|p| p.into_inner()).clone();
            env.extend(crash_dir_env(&config, &self.data_dir));
            let mut secrets_until = None;
            if let Some(secrets) = self.secret_env.get().cloned() {
                let renew = std::mem::take(&mut slot.state().renew_secrets);
                let freshness = if renew { Freshness::Renewed } else { Freshness::AsStored };
                // Renewing may wait on the network: a stop meanwhile must not wait for it.
                let secrets = tokio::select! {
                    () = stop.cancelled() => return,
                    secrets = secrets(&config, freshness) => secrets,
                };
                env.extend(secrets.env);
                secrets_until = secrets.valid_until;
            }
            slot.state().renewable_secrets = secrets_until.is_some();
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
            let signed_in = self.stored_sign_in(slot, &config).await;
            let launched = tokio::select! {
                () = stop.cancelled() => return,
                l = launch::launch(&config.transport, handler, &env, start_timeout, on_stderr, signed_in) => l,
            };
            crashes.started(Instant::now());
            let mut permanent = false;
            let mut rested = false;
            let outcome = match launched {
                Ok(Launched { client, pid }) => {
                    self.connected(name, slot, &client, pid).await;
                    let closing = client.cancellation_token();
                    let waiting = client.waiting();
                    tokio::pin!(waiting);
                    // Asked to stop, or quiet long enough (`stopWhenIdle`): close it either way.
                    let closed = tokio::select! {
                        _ = &mut waiting => false,
                        () = stop.cancelled() => true,
                        () = idle::until_idle(slot, config.stop_when_idle_secs) => {
                            tracing::info!(server = name, "MCP server idle; stopped until its next call");
                            rested = true;
                            true
                        }
                        () = idle::until_stale(slot, secrets_until) => {
                            tracing::info!(server = name, "MCP server's access runs out; stopped until its next call");
                            rested = true;
                            true
                        }
                    };
                    if closed {
                        closing.cancel();
                        let _ = tokio::time::timeout(STOP_GRACE, &mut waiting).await;
                        Ok(())
                    } else {
                        Err("it exited unexpectedly".to_owned())
                    }
                }
                Err(e) => {
                    permanent = e.permanent();
                    if let launch::LaunchError::Handshake(failure) = &e
                        && failure.needs_auth
                    {
                        self.needs_sign_in(name, slot, &config, failure.challenge.clone());
                        return;
                    }
                    Err(e.to_string())
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
                if rested {
                    // Its lists stay: its tools are still offered, and a call starts it again.
                    s.status = Some(ServerStatus::Idle);
                } else {
                    s.tools.clear();
                    s.resources.clear();
                    s.prompts.clear();
                }
            }
            let Err(reason) = outcome else { return };
            // Give the stderr reader a moment to record the server's last words.
            tokio::time::sleep(Duration::from_millis(50)).await;
            tracing::warn!(server = name, %reason, "MCP server failed");
            let reason = {
                let mut log = slot.log();
                log.note(&reason);
                let words = log.last_words();
                if words.is_empty() { reason } else { format!("{reason}. It said: {}", words.join(" | ")) }
            };
            if permanent {
                crashes.give_up();
            }
            let again = crashes.crashed(Instant::now());
            {
                let mut s = slot.state();
                s.failed_attempts += 1;
                if permanent {
                    s.status = Some(ServerStatus::Error);
                    s.last_error = Some(reason);
                } else if again.is_none() {
                    s.status = Some(ServerStatus::Error);
                    s.last_error = Some(format!("gave up after {MAX_RESTARTS} restarts: {reason}"));
                } else {
                    s.status = Some(ServerStatus::Disconnected);
                    s.last_error = Some(reason);
                    s.restarts += 1;
                }
            }
            self.changed(name);
            let Some(in_a_row) = again else { return };
            let backoff = (FIRST_BACKOFF * 2u32.pow(in_a_row - 1)).min(MAX_BACKOFF);
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
            s.instructions = info.as_ref().and_then(|i| i.instructions.as_deref()).map(shown_instructions);
        }
        if let Err(e) = self.fetch_lists(slot).await {
            slot.log().note(&format!("could not list its capabilities: {e}"));
        } else {
            self.save_lists(name, slot).await;
        }
        let mut s = slot.state();
        s.status = Some(ServerStatus::Connected);
        s.last_used = Some(Instant::now());
        s.last_error = None;
        s.connected_at = Some(chrono::Utc::now().timestamp_millis());
        drop(s);
        tracing::info!(server = name, ?pid, "MCP server connected");
        self.changed(name);
    }

    /// Fetches tools, resources and prompts (those the server offers).
    pub(super) async fn fetch_lists(&self, slot: &Slot) -> Result<(), ListError> {
        let Some(peer) = slot.state().peer.clone() else { return Err(ListError::NotConnected) };
        let caps = peer.peer_info().map(|i| i.capabilities.clone());
        let tools = peer.list_all_tools().await?;
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
                    harmless_when: t
                        .meta
                        .as_ref()
                        .and_then(|m| m.0.get(super::super::HARMLESS_WHEN_META))
                        .filter(|schema| schema.is_object())
                        .cloned(),
                    ui: super::super::apps::ToolUi::from_meta(t.meta.as_ref().map(|m| &m.0)),
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
                    ui: super::super::apps::ResourceUi::from_meta(r.meta.as_ref().map(|m| &m.0)),
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
}

/// Where Perch's own servers (`perch-mcp-*`, whose panic hook is `perch-crash`'s) write a crash
/// report: the data folder's `crashes/`. Other programs are not told where Perch keeps its data.
fn crash_dir_env(
    config: &super::super::config::ServerConfig,
    data_dir: &std::path::Path,
) -> Option<(String, String)> {
    let super::super::config::Transport::Stdio { command, .. } = &config.transport else { return None };
    let program = std::path::Path::new(command).file_name()?.to_str()?;
    program.starts_with("perch-mcp-").then(|| {
        let dir = perch_foundation::paths::crashes_dir_in(data_dir);
        (perch_crash::DIR_ENV.to_owned(), dir.to_string_lossy().into_owned())
    })
}

/// A server's instructions as the dashboard shows them: the first 300 characters.
fn shown_instructions(text: &str) -> String {
    const SHOWN: usize = 300;
    let text = text.trim();
    match text.char_indices().nth(SHOWN) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}
