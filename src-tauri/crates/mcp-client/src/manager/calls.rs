//! Calls on a connected server: tools (with timeout, cancellation, progress and the rounds of
//! a multi round-trip request), resources and prompts.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest,
    GetPromptRequestParams, InputResponses, MetaObject, ReadResourceRequestParams, RequestMetaObject,
    ServerResult,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use rmcp::{Peer, RoleClient};
use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::super::handler::PerchClient;
use super::super::output::from_result;
use super::super::{CallError, CallOrigin, Progress, ToolOutput, Vetting};
use super::{McpManager, Slot};
use perch_tools::questions::ApprovalChoice;

/// The result `_meta` key by which a server Perch starts with secrets says its service refused
/// them (the bundled Google server, on a 401: `mcp_servers/google`).
const CREDENTIALS_REFUSED_META: &str = "app.perch/credentialsRefused";

/// How one call of an MCP server's tool ended.
enum Attempt {
    Done(ToolOutput),
    CredentialsRefused(ToolOutput),
}

/// The `_meta` key for [`CallOrigin::result_chars`] (the bundled web server reads it under the
/// same name: `mcp_servers/web/src/server.rs`).
const RESULT_CHARS_META: &str = "app.perch/resultChars";

impl McpManager {
    /// Calls a tool. `cancel` stops it (the server is told); `progress` receives its progress.
    pub async fn call_tool(
        self: &Arc<Self>,
        server: &str,
        tool: &str,
        arguments: Option<Map<String, Value>>,
        cancel: &CancellationToken,
        progress: Option<mpsc::UnboundedSender<Progress>>,
    ) -> Result<ToolOutput, CallError> {
        self.call_tool_from(&CallOrigin::default(), server, tool, arguments, cancel, progress).await
    }

    /// A built-in server's verdict on a call (`Default` for MCP servers).
    pub async fn vet(&self, origin: &CallOrigin, server: &str, tool: &str, arguments: &Value) -> Vetting {
        match self.builtin(server) {
            Some(b) => b.vet(origin, tool, arguments).await,
            None => Vetting::Default,
        }
    }

    /// Tells a built-in server how the user answered about a call; false for MCP servers.
    pub async fn answered(
        &self,
        origin: &CallOrigin,
        server: &str,
        tool: &str,
        arguments: &Value,
        choice: ApprovalChoice,
    ) -> bool {
        match self.builtin(server) {
            Some(b) => {
                b.answered(origin, tool, arguments, choice).await;
                true
            }
            None => false,
        }
    }

    /// Calls a tool on behalf of `origin` (an answer's tool call).
    pub async fn call_tool_from(
        self: &Arc<Self>,
        origin: &CallOrigin,
        server: &str,
        tool: &str,
        arguments: Option<Map<String, Value>>,
        cancel: &CancellationToken,
        progress: Option<mpsc::UnboundedSender<Progress>>,
    ) -> Result<ToolOutput, CallError> {
        if let Some(builtin) = self.builtin(server) {
            let arguments = Value::Object(arguments.unwrap_or_default());
            return builtin.call(origin, tool, &arguments, cancel, progress).await;
        }
        match self.call_mcp_tool(origin, server, tool, arguments.clone(), cancel, progress.clone()).await? {
            Attempt::Done(output) => Ok(output),
            // The server's service refused the access token it was started with (revoked, or
            // expired early): it starts again with renewed secrets, and the call is sent once more.
            Attempt::CredentialsRefused(output) => {
                tracing::info!(%server, "the server's credentials were refused; renewing them");
                if self.restart_with_renewed_secrets(server).await.is_err() {
                    return Ok(output);
                }
                // Without renewed access (it ended for good) the server no longer offers the
                // tool: the first answer, which says what to do, stands. Any other failure of
                // the second call is its own (a send that timed out may have gone).
                match self.call_mcp_tool(origin, server, tool, arguments, cancel, progress).await {
                    Ok(Attempt::Done(output) | Attempt::CredentialsRefused(output)) => Ok(output),
                    Err(CallError::UnknownTool { .. } | CallError::NotRunning { .. }) => Ok(output),
                    Err(e) => Err(e),
                }
            }
        }
    }

    /// One call of an MCP server's tool.
    async fn call_mcp_tool(
        self: &Arc<Self>,
        origin: &CallOrigin,
        server: &str,
        tool: &str,
        arguments: Option<Map<String, Value>>,
        cancel: &CancellationToken,
        progress: Option<mpsc::UnboundedSender<Progress>>,
    ) -> Result<Attempt, CallError> {
        let (in_flight, peer) = self.peer_for_call(server).await?;
        let slot = in_flight.slot();
        // Only the timeout: the whole configuration (command, arguments, environment) is not
        // cloned for every call.
        let timeout_secs = slot.config.lock().unwrap_or_else(|p| p.into_inner()).timeout_secs;
        let mut params = CallToolRequestParams::new(tool.to_owned());
        if let Some(args) = arguments {
            params = params.with_arguments(args);
        }
        let mut meta = None;
        if let Some(chars) = origin.result_chars {
            let mut map = Map::new();
            map.insert(RESULT_CHARS_META.to_owned(), Value::from(chars));
            meta = Some(RequestMetaObject(MetaObject(map)));
        }
        let handler = PerchClient {
            server: server.to_owned(),
            shared: self.shared.clone(),
            progress: slot.progress.clone(),
        };
        // A server may answer `input_required` (SEP-2322): Perch answers its requests (the
        // user, through the same questions as for a request sent on its own) and sends the
        // call again with the answers and the server's state, as it came, under a new id.
        let round = Round { server, tool, timeout_secs, meta, progress };
        let mut state_only_rounds = 0u32;
        for _ in 0..MAX_INPUT_ROUNDS {
            let result = match send_round(&peer, slot, &round, params.clone(), cancel).await? {
                ServerResult::CallToolResult(result) => {
                    let refused = result.is_error == Some(true)
                        && result
                            .meta
                            .as_ref()
                            .and_then(|m| m.0.get(CREDENTIALS_REFUSED_META))
                            .and_then(Value::as_bool)
                            .unwrap_or(false);
                    let output = from_result(result);
                    return Ok(if refused {
                        Attempt::CredentialsRefused(output)
                    } else {
                        Attempt::Done(output)
                    });
                }
                ServerResult::InputRequiredResult(result) => result,
                other => {
                    return Err(CallError::Protocol {
                        server: server.to_owned(),
                        message: format!("answered a tool call with something else: {other:?}"),
                    });
                }
            };
            let requests = result.input_requests.unwrap_or_default();
            if requests.is_empty() && result.request_state.is_none() {
                return Err(CallError::Protocol {
                    server: server.to_owned(),
                    message: "asked for input without saying what it needs".into(),
                });
            }
            if requests.is_empty() {
                // Only state: the server is working; ask again a little later each time.
                state_only_rounds += 1;
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(100) * state_only_rounds.min(20)) => {}
                    () = cancel.cancelled() => return Err(CallError::Cancelled),
                }
            }
            let mut responses = InputResponses::new();
            for (key, request) in requests {
                let answer = handler.fulfil(request, cancel).await.map_err(|e| CallError::Protocol {
                    server: server.to_owned(),
                    message: format!("could not answer its request for input: {}", e.message),
                })?;
                responses.insert(key, answer);
            }
            if cancel.is_cancelled() {
                return Err(CallError::Cancelled);
            }
            params.input_responses = (!responses.is_empty()).then_some(responses);
            params.request_state = result.request_state;
        }
        Err(CallError::Protocol {
            server: server.to_owned(),
            message: format!(
                "still asked for input after {MAX_INPUT_ROUNDS} rounds, so the call was given up"
            ),
        })
    }

    /// Reads a resource as the server sent it (an app's page is checked by `apps::resource`).
    pub async fn read_resource_raw(
        self: &Arc<Self>,
        server: &str,
        uri: &str,
    ) -> Result<rmcp::model::ReadResourceResult, CallError> {
        let (_in_flight, peer) = self.peer_for_call(server).await?;
        peer.read_resource(ReadResourceRequestParams::new(uri))
            .await
            .map_err(|e| CallError::Protocol { server: server.to_owned(), message: e.to_string() })
    }

    /// Reads a resource, as text (binary contents are described).
    pub async fn read_resource(self: &Arc<Self>, server: &str, uri: &str) -> Result<String, CallError> {
        let (_in_flight, peer) = self.peer_for_call(server).await?;
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
        self: &Arc<Self>,
        server: &str,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<String, CallError> {
        let (_in_flight, peer) = self.peer_for_call(server).await?;
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
}

/// Rounds of `input_required` answered before a call is given up (rmcp's own cap).
const MAX_INPUT_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

/// What every round of one call shares.
struct Round<'a> {
    server: &'a str,
    tool: &'a str,
    timeout_secs: u32,
    meta: Option<RequestMetaObject>,
    progress: Option<mpsc::UnboundedSender<Progress>>,
}

/// Sends one `tools/call` and waits for its answer, within the server's timeout; a timeout or
/// `cancel` tells the server (`notifications/cancelled`).
async fn send_round(
    peer: &Peer<RoleClient>,
    slot: &Slot,
    round: &Round<'_>,
    params: CallToolRequestParams,
    cancel: &CancellationToken,
) -> Result<ServerResult, CallError> {
    let (server, tool, timeout_secs) = (round.server, round.tool, round.timeout_secs);
    let protocol = |e: ServiceError| match e {
        ServiceError::TransportSend(ref sent) if let Some((challenge, scope)) = auth_refusal(sent) => {
            // Kept for the sign-in the card offers: where to sign in, and what more to allow.
            let mut s = slot.state();
            s.challenge = Some(challenge);
            s.wanted_scope = scope.clone();
            CallError::NeedsSignIn { server: server.to_owned(), scope }
        }
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
            CallError::Closed { server: server.to_owned() }
        }
        ServiceError::McpError(e) if e.code.0 == -32602 && e.message.contains("tool") => {
            CallError::UnknownTool { server: server.to_owned(), tool: tool.to_owned() }
        }
        other => CallError::Protocol { server: server.to_owned(), message: other.to_string() },
    };
    let mut options = PeerRequestOptions::no_options();
    if let Some(meta) = round.meta.clone() {
        options = options.with_meta(meta);
    }
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = peer.send_request_with_option(request, options).await.map_err(protocol)?;
    let (id, token) = (handle.id.clone(), handle.progress_token.clone());
    if let Some(tx) = round.progress.clone() {
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
    if round.progress.is_some() {
        slot.progress.lock().unwrap_or_else(|p| p.into_inner()).remove(&token);
    }
    if matches!(outcome, Err(CallError::Timeout { .. } | CallError::Cancelled)) {
        let reason = if cancel.is_cancelled() { "stopped by the user" } else { "timed out" };
        let _ = peer.notify_cancelled(CancelledNotificationParam::new(Some(id), Some(reason.into()))).await;
    }
    outcome
}

/// A request the server refused for want of credentials: 401 once the tokens could not be
/// refreshed, or 403 `insufficient_scope` (a step-up). Its challenge, and the scope it wants.
fn auth_refusal(error: &(dyn std::error::Error + 'static)) -> Option<(String, Option<String>)> {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let mut current = Some(error);
    while let Some(e) = current {
        match e.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            Some(StreamableHttpError::AuthRequired(refused)) => {
                return Some((refused.www_authenticate_header.clone(), None));
            }
            Some(StreamableHttpError::InsufficientScope(refused)) => {
                return Some((refused.www_authenticate_header.clone(), refused.required_scope.clone()));
            }
            _ => current = e.source(),
        }
    }
    None
}
