//! What an app (MCP Apps) shown in a tool card may do, at the engine's level: open its page
//! (checked, with its policy), and its requests to its own server. A tool call from an app goes
//! through the same gate as the model's ([`CallContext::gate`]): the same rules, grants and
//! question, asked on the card the app lives in and naming the app. Nothing an app asks reaches
//! another server, another conversation or Perch itself.

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::Engine;
use crate::agent::tools::{CallContext, Gate, OfferedTool, check_arguments, model_name};
use crate::agent::{TurnEvent, TurnSink};
use crate::mcp::apps::cache::PageKey;
use crate::mcp::apps::csp::{self, RefusedDomain};
use crate::mcp::apps::resource::{self, AppPage};
use crate::mcp::apps::sessions::{AppError, AppPlace, ServedPage};
use crate::mcp::{CallError, ToolOutput, ToolView};
use crate::store::tool_calls::{ToolCallRecord, ToolCallStatus};

/// The largest arguments an app may send with a call.
const MAX_ARGUMENTS_BYTES: usize = 256 * 1024;
/// The largest resource an app may read.
const MAX_READ_BYTES: usize = 10 * 1024 * 1024;
/// The longest log line kept from an app.
const MAX_LOG_CHARS: usize = 2048;
/// The most an app may have the model told (its text and its structured part, as JSON); the
/// UI's bridge holds the same limit.
pub const MAX_MODEL_CONTEXT_CHARS: usize = 4000;

/// An opened app, for its card.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct AppOpen {
    /// Names the session in each request.
    pub session: String,
    /// The page's one-time token (the desktop makes it the frame's address).
    pub token: String,
    /// What the card calls the app: the tool's title, else its name.
    pub app_name: String,
    /// The tool as MCP describes it, for the app's `hostContext.toolInfo`.
    pub tool: Value,
    pub tool_input: Value,
    /// The call's result as MCP's `CallToolResult`, when it has one.
    pub tool_result: Option<Value>,
    pub prefers_border: Option<bool>,
    /// Origins its scripts may reach (none by default), shown on the card.
    pub connect_domains: Vec<String>,
    pub resource_domains: Vec<String>,
    /// What it asked for and was refused.
    pub refused_domains: Vec<RefusedDomain>,
}

/// The tool as MCP's `Tool` object.
fn tool_json(tool: &ToolView) -> Value {
    let mut v =
        json!({ "name": tool.name, "description": tool.description, "inputSchema": tool.input_schema });
    if let Some(title) = &tool.title {
        v["title"] = json!(title);
    }
    v
}

/// Nothing to report: an app's calls are shown in its own frame.
struct Unseen;
impl TurnSink for Unseen {
    fn send(&self, _: TurnEvent) {}
}

impl Engine {
    /// Opens the app of a tool card: checks apps are shown for its server, reads and checks its
    /// page, builds its policy, and opens a session.
    pub async fn open_app(&self, call_id: &str) -> Result<AppOpen, AppError> {
        let (call, conversation_id) = self
            .store()
            .tool_call(call_id)
            .await
            .map_err(|e| AppError::refused(e.to_string()))?
            .ok_or_else(|| AppError::refused("there is no such tool call"))?;
        if call.status != ToolCallStatus::Done {
            return Err(AppError::refused("the tool call did not finish, so its app has nothing to show"));
        }
        if self.app_sessions().hung(call_id) {
            tracing::info!(server = %call.server, tool = %call.tool, "an app that held up the page is not opened again");
            return Err(AppError::refused(
                "it stopped responding and held up Perch's window, so it stays off until Perch restarts",
            ));
        }
        let settings = self.settings().get().await;
        if !settings.tools.apps_for(&call.server) {
            return Err(AppError::refused(format!("apps from {} are turned off", call.server)));
        }
        let tool = self
            .mcp()
            .server_tool(&call.server, &call.tool)
            .ok_or_else(|| AppError::refused(format!("{} no longer offers {}", call.server, call.tool)))?;
        let uri = tool
            .ui
            .as_ref()
            .and_then(|u| u.resource_uri.clone())
            .ok_or_else(|| AppError::refused(format!("{} has no interface", call.tool)))?;
        let page = self.app_page_for(&call.server, &uri).await?;
        let policy = csp::policy(page.ui.as_ref());
        tracing::info!(
            server = %call.server, uri = %uri, csp = %policy.header,
            refused = policy.refused.len(), "an app's page opens"
        );
        let place = AppPlace {
            server: call.server.clone(),
            tool: call.tool.clone(),
            conversation_id,
            message_id: call.message_id,
            call_id: call.id.clone(),
            round: call.round,
            text_offset: call.text_offset,
            resource_uri: uri,
        };
        let served = ServedPage { html: page.html.clone(), csp: policy.header };
        let (session, token) = self.app_sessions().open(place, served, Instant::now());
        Ok(AppOpen {
            session,
            token,
            app_name: tool.title.clone().unwrap_or_else(|| tool.name.clone()),
            tool: tool_json(&tool),
            tool_input: call.arguments.clone(),
            // The whole result when it was saved for the app, else what the card kept.
            tool_result: match self.store().app_result(call_id).await {
                Ok(Some(whole)) => Some(whole),
                _ => call.output.as_ref().map(crate::mcp::output::to_result_json),
            },
            prefers_border: page.ui.as_ref().and_then(|u| u.prefers_border),
            connect_domains: policy.connect,
            resource_domains: policy.resources,
            refused_domains: policy.refused,
        })
    }

    /// An app's page: from the cache when this connection to its server gave it already, else
    /// read and checked (and kept).
    async fn app_page_for(&self, server: &str, uri: &str) -> Result<Arc<AppPage>, AppError> {
        let key = |mcp: &crate::mcp::McpManager| {
            let view = mcp.server(server).ok();
            PageKey {
                server: server.to_owned(),
                server_info: view.as_ref().and_then(|v| v.server_info.clone()),
                connected_at: view.and_then(|v| v.connected_at),
                uri: uri.to_owned(),
            }
        };
        if let Some(page) = self.app_pages().get(&key(self.mcp())) {
            return Ok(page);
        }
        let read = self
            .mcp()
            .read_resource_raw(server, uri)
            .await
            .map_err(|e| AppError::refused(format!("its page could not be read: {e}")))?;
        let listed = self
            .mcp()
            .server(server)
            .ok()
            .and_then(|view| view.resources.into_iter().find(|r| r.uri == uri))
            .and_then(|r| r.ui);
        let page = Arc::new(
            resource::page_from(uri, listed.as_ref(), read).map_err(|e| AppError::refused(e.to_string()))?,
        );
        // Keyed after the read: reading starts a server that was idle.
        self.app_pages().put(key(self.mcp()), Arc::clone(&page));
        Ok(page)
    }

    /// The page for a frame's token, once.
    pub fn app_page(&self, token: &str) -> Option<ServedPage> {
        self.app_sessions().take_page(token, Instant::now())
    }

    /// Closes an app's session: its calls and questions are cancelled.
    pub fn close_app(&self, session: &str) {
        self.app_sessions().close(session);
    }

    /// One request from an app, for its own server only.
    pub async fn app_request(&self, session: &str, method: &str, params: Value) -> Result<Value, AppError> {
        let place = self.app_sessions().place(session)?;
        let params = match params {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            _ => return Err(AppError::invalid("the parameters must be an object")),
        };
        match method {
            "tools/call" => self.app_tool_call(session, &place, &params).await,
            "tools/list" => {
                let server =
                    self.mcp().server(&place.server).map_err(|e| AppError::refused(e.to_string()))?;
                let tools: Vec<Value> = server
                    .tools
                    .iter()
                    .filter(|t| t.ui.as_ref().is_none_or(|u| u.app))
                    .map(tool_json)
                    .collect();
                Ok(json!({ "tools": tools }))
            }
            "resources/read" => {
                self.app_sessions().admit_read(session, Instant::now())?;
                let uri = params
                    .get("uri")
                    .and_then(Value::as_str)
                    .ok_or_else(|| AppError::invalid("uri is missing"))?;
                let read = self
                    .mcp()
                    .read_resource_raw(&place.server, uri)
                    .await
                    .map_err(|e| AppError::refused(e.to_string()))?;
                let value = serde_json::to_value(read).map_err(|e| AppError::refused(e.to_string()))?;
                if value.to_string().len() > MAX_READ_BYTES {
                    return Err(AppError::refused("the resource is larger than an app may read"));
                }
                Ok(value)
            }
            "resources/list" => {
                let server =
                    self.mcp().server(&place.server).map_err(|e| AppError::refused(e.to_string()))?;
                let listed: Vec<Value> = server
                    .resources
                    .iter()
                    .map(|r| json!({ "uri": r.uri, "name": r.name, "description": r.description, "mimeType": r.mime_type }))
                    .collect();
                Ok(json!({ "resources": listed }))
            }
            "ui/update-model-context" => self.update_model_context(session, &place, &params).await,
            "notifications/message" => {
                if self.app_sessions().admit_log(session, Instant::now()) {
                    let level = params.get("level").and_then(Value::as_str).unwrap_or("info");
                    let mut data = params.get("data").map(Value::to_string).unwrap_or_default();
                    if let Some((cut, _)) = data.char_indices().nth(MAX_LOG_CHARS) {
                        data.truncate(cut);
                    }
                    tracing::info!(target: "mcp", server = %place.server, app = %place.resource_uri, level, "app log: {data}");
                }
                Ok(json!({}))
            }
            other => Err(AppError::not_found(format!("Perch does not answer {other:?} from an app"))),
        }
    }

    async fn app_tool_call(
        &self,
        session: &str,
        place: &AppPlace,
        params: &Map<String, Value>,
    ) -> Result<Value, AppError> {
        let name =
            params.get("name").and_then(Value::as_str).ok_or_else(|| AppError::invalid("name is missing"))?;
        let arguments = params.get("arguments").cloned().unwrap_or_else(|| json!({}));
        if arguments.to_string().len() > MAX_ARGUMENTS_BYTES {
            return Err(AppError::invalid("the arguments are too large"));
        }
        let tool = self
            .mcp()
            .server_tool(&place.server, name)
            .ok_or_else(|| AppError::invalid(format!("{} has no tool named {name:?}", place.server)))?;
        if tool.ui.as_ref().is_some_and(|u| !u.app) {
            return Err(AppError::refused(format!("{name} may not be called by an app (its visibility)")));
        }
        check_arguments(&tool.input_schema, &arguments).map_err(|e| AppError::invalid(e.to_string()))?;
        let _slot = self.app_sessions().admit_call(session, Instant::now())?;
        let cancel = self.app_sessions().cancel_token(session)?;
        let settings = self.settings().get().await;
        let app_name = self
            .mcp()
            .server_tool(&place.server, &place.tool)
            .and_then(|t| t.title)
            .unwrap_or_else(|| place.tool.clone());
        let run_id = format!("app:{session}");
        let calls = CallContext {
            agent: self.agent(),
            settings: &settings.tools,
            conversation_id: &place.conversation_id,
            message_id: place.message_id,
            run_id: &run_id,
            cancel: &cancel,
            sink: &Unseen,
            extra_rules: &[],
            app: Some(&app_name),
            tools_off: None,
        };
        // Saved like the model's calls, in the card's answer and marked as the app's, so what an
        // app ran is on record (the card lists it, exports include it) whatever the gate decided.
        let record = ToolCallRecord {
            id: uuid::Uuid::new_v4().to_string(),
            call_id: String::new(),
            message_id: place.message_id,
            round: place.round,
            text_offset: place.text_offset,
            server: place.server.clone(),
            tool: name.to_owned(),
            arguments: arguments.clone(),
            status: ToolCallStatus::Pending,
            output: None,
            duration_ms: None,
            created_at: crate::store::now_ms(),
            app_of: Some(place.call_id.clone()),
            app_context: None,
        };
        if let Err(e) = self.store().add_tool_call(record.clone()).await {
            tracing::warn!(error = %e, "could not save an app's tool call");
        }
        // The question goes on the card the app lives in.
        let on_card = ToolCallRecord { id: place.call_id.clone(), ..record.clone() };
        let offered =
            OfferedTool { name: model_name(&place.server, name), server: place.server.clone(), tool };
        let gate = calls.gate(&on_card, &offered).await;
        // Only the user's answers count towards (or reset) the refusals in a row: a call a rule
        // or a grant let through says nothing about whether the user tires of this app.
        if let Gate::Answered { refusal } = &gate {
            self.app_sessions().answered(session, refusal.is_some());
        }
        if let Some(reason) = gate.refusal() {
            tracing::info!(server = %place.server, tool = name, app = %app_name, "an app's call was refused");
            let status =
                if cancel.is_cancelled() { ToolCallStatus::Cancelled } else { ToolCallStatus::Denied };
            self.save_app_call(&record, status, Some(&ToolOutput::error(reason.clone())), None).await;
            return Err(AppError::refused(reason));
        }
        tracing::info!(server = %place.server, tool = name, app = %app_name, "an app calls a tool");
        self.save_app_call(&record, ToolCallStatus::Running, None, None).await;
        let started = Instant::now();
        let origin = calls.origin(&record);
        let result = self
            .mcp()
            .call_tool_from(&origin, &place.server, name, arguments.as_object().cloned(), &cancel, None)
            .await;
        let took = Some(i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX));
        // The record keeps what the model would have read of it; the app gets all of it.
        let kept = |output: &ToolOutput| {
            let mut kept = output.clone();
            kept.keep(calls.result_chars() as usize);
            kept
        };
        match result {
            Ok(output) => {
                let status = if output.is_error { ToolCallStatus::Error } else { ToolCallStatus::Done };
                self.save_app_call(&record, status, Some(&kept(&output)), took).await;
                Ok(crate::mcp::output::to_result_json(&output))
            }
            Err(CallError::Cancelled) => {
                self.save_app_call(&record, ToolCallStatus::Cancelled, None, took).await;
                Err(AppError::refused("the call was cancelled (the app was closed)"))
            }
            Err(e) => {
                let message = format!("the tool could not run: {e}");
                self.save_app_call(
                    &record,
                    ToolCallStatus::Error,
                    Some(&ToolOutput::error(message.clone())),
                    took,
                )
                .await;
                Err(AppError::refused(message))
            }
        }
    }

    /// An app's context for the model (`ui/update-model-context`, as the bridge passes it on:
    /// `{text, structured?}`), kept on its card in place of the last one; empty clears it. The
    /// model reads it with the card's call from its next turn, quoted as the app's words
    /// (`context::with_tool_notes`); the card shows it. Rate-limited per app and per turn
    /// ([`AppSessions::admit_context_update`](crate::mcp::apps::sessions::AppSessions::admit_context_update)).
    async fn update_model_context(
        &self,
        session: &str,
        place: &AppPlace,
        params: &Map<String, Value>,
    ) -> Result<Value, AppError> {
        let text =
            params.get("text").and_then(Value::as_str).ok_or_else(|| AppError::invalid("text is missing"))?;
        let structured = match params.get("structured") {
            None | Some(Value::Null) => None,
            Some(v @ Value::Object(_)) => Some(v.to_string()),
            Some(_) => return Err(AppError::invalid("structured must be an object")),
        };
        // Counted as the bridge counts it: the text and the structured part's JSON together.
        if text.chars().count() + structured.as_deref().map_or(0, |j| j.chars().count())
            > MAX_MODEL_CONTEXT_CHARS
        {
            return Err(AppError::invalid(format!(
                "an app may have the model told at most {MAX_MODEL_CONTEXT_CHARS} characters"
            )));
        }
        self.app_sessions().admit_context_update(session, Instant::now())?;
        let told = match (text.trim().is_empty(), structured) {
            (true, None) => None,
            (true, Some(json)) => Some(json),
            (false, None) => Some(text.to_owned()),
            (false, Some(json)) => Some(format!("{text}\n{json}")),
        };
        self.store()
            .set_app_context(&place.call_id, told.as_deref())
            .await
            .map_err(|e| AppError::refused(e.to_string()))?;
        tracing::info!(
            server = %place.server, app = %place.resource_uri,
            chars = told.as_deref().map_or(0, |t| t.chars().count()), "an app set what the model is told"
        );
        Ok(json!({ "model_context": told }))
    }

    async fn save_app_call(
        &self,
        record: &ToolCallRecord,
        status: ToolCallStatus,
        output: Option<&ToolOutput>,
        duration_ms: Option<i64>,
    ) {
        if let Err(e) = self.store().update_tool_call(&record.id, status, output, duration_ms).await {
            tracing::warn!(error = %e, "could not save an app's tool call");
        }
    }

    /// The calls the app in one tool card made, as saved.
    pub async fn app_calls(&self, card_id: &str) -> Result<Vec<ToolCallRecord>, AppError> {
        self.store().app_calls(card_id).await.map_err(|e| AppError::refused(e.to_string()))
    }
}
