//! Calls on a connected server: tools (with timeout, cancellation and progress), resources
//! and prompts.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest,
    GetPromptRequestParams, MetaObject, ReadResourceRequestParams, RequestMetaObject, ServerResult,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::super::{CallError, CallOrigin, Progress, ToolOutput, Vetting};
use super::McpManager;
use crate::questions::ApprovalChoice;

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
        let (in_flight, peer) = self.peer_for_call(server).await?;
        let slot = in_flight.slot();
        // Only the timeout: the whole configuration (command, arguments, environment) is not
        // cloned for every call.
        let timeout_secs = slot.config.lock().unwrap_or_else(|p| p.into_inner()).timeout_secs;
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
        let mut options = PeerRequestOptions::no_options();
        if let Some(chars) = origin.result_chars {
            let mut meta = Map::new();
            meta.insert(RESULT_CHARS_META.to_owned(), Value::from(chars));
            options = options.with_meta(RequestMetaObject(MetaObject(meta)));
        }
        let handle = peer.send_request_with_option(request, options).await.map_err(protocol)?;
        let (id, token) = (handle.id.clone(), handle.progress_token.clone());
        let routed = progress.is_some();
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
        if routed {
            slot.progress.lock().unwrap_or_else(|p| p.into_inner()).remove(&token);
        }
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
