//! Perch's side of a connection: who we are, what we support, and what we do when a server
//! reports progress, changes its tools, or asks for roots, input (elicitation) or the model
//! (sampling). Questions go to the user through [`perch_tools::questions`]; nothing is granted silently.
// Roots and sampling are deprecated by the 2026-07-28 protocol, but servers on 2025-11-25
// (most of those in use) still ask for them.
#![allow(deprecated)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, RwLock};

use futures::future::BoxFuture;
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams,
    ElicitResult, ElicitationAction as McpAction, Implementation, InputRequest, ListRootsResult,
    ProgressNotificationParam, ProgressToken, Root,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Progress;
use perch_tools::questions::{Answer, ElicitationAction, ElicitationQuestion, Question, Questions};

/// Answers a server's sampling request: asks the user, then the model. Set by the engine,
/// which knows the models; without one, servers are told Perch cannot sample.
pub trait Sampler: Send + Sync {
    fn create_message(
        &self,
        server: String,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'static, Result<CreateMessageResult, SamplingError>>;
}

/// Why a sampling request got no answer; the server hears the message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SamplingError {
    #[error("the user has not chosen a default model for Perch, so it cannot sample")]
    NoDefaultModel,
    #[error("the user declined the sampling request")]
    Declined,
    /// The model could not be used or did not answer (its message).
    #[error("{0}")]
    Model(String),
}

/// What every connection shares with the manager.
pub(crate) struct Shared {
    pub questions: Arc<Questions>,
    pub roots: RwLock<Vec<PathBuf>>,
    pub sampler: OnceLock<Arc<dyn Sampler>>,
    /// Server names whose lists changed and need fetching again.
    pub changed: mpsc::UnboundedSender<String>,
    /// Cancelled at shutdown, so pending questions end.
    pub closing: CancellationToken,
    /// Which servers are told about MCP Apps (from Settings -> Tools).
    pub apps_off: RwLock<AppsOff>,
}

/// The servers Perch does not offer apps to: every one, or those listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AppsOff {
    All,
    Some(Vec<String>),
}

impl AppsOff {
    pub fn allows(&self, server: &str) -> bool {
        match self {
            Self::All => false,
            Self::Some(off) => !off.iter().any(|s| s == server),
        }
    }
}

/// Progress listeners by token, for one connection.
pub(crate) type ProgressRoutes = Arc<Mutex<HashMap<ProgressToken, mpsc::UnboundedSender<Progress>>>>;

#[derive(Clone)]
pub(crate) struct PerchClient {
    pub server: String,
    pub shared: Arc<Shared>,
    pub progress: ProgressRoutes,
}

impl ClientHandler for PerchClient {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::builder()
            .enable_roots()
            .enable_roots_list_changed()
            .enable_sampling()
            .enable_elicitation()
            .build();
        // MCP Apps, only to a server whose apps are shown: the others may offer text-only tools.
        let apps = self.shared.apps_off.read().unwrap_or_else(|p| p.into_inner()).allows(&self.server);
        if apps && let Value::Object(settings) = super::apps::client_extension() {
            capabilities
                .extensions
                .get_or_insert_default()
                .insert(super::apps::EXTENSION.to_owned(), settings);
        }
        ClientConfig::new(capabilities, Implementation::new("perch", env!("CARGO_PKG_VERSION")))
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _: NotificationContext<RoleClient>) {
        let routes = self.progress.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(tx) = routes.get(&params.progress_token) {
            let _ =
                tx.send(Progress { progress: params.progress, total: params.total, message: params.message });
        }
    }

    async fn on_tool_list_changed(&self, _: NotificationContext<RoleClient>) {
        let _ = self.shared.changed.send(self.server.clone());
    }

    async fn on_resource_list_changed(&self, _: NotificationContext<RoleClient>) {
        let _ = self.shared.changed.send(self.server.clone());
    }

    async fn on_prompt_list_changed(&self, _: NotificationContext<RoleClient>) {
        let _ = self.shared.changed.send(self.server.clone());
    }

    async fn list_roots(&self, _: RequestContext<RoleClient>) -> Result<ListRootsResult, ErrorData> {
        Ok(self.roots())
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        Ok(self.elicit(request, &context.ct).await)
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        self.sample(params).await
    }
}

impl PerchClient {
    /// The folders the user lets servers work in.
    fn roots(&self) -> ListRootsResult {
        let roots = self.shared.roots.read().unwrap_or_else(|p| p.into_inner()).clone();
        ListRootsResult::new(
            roots
                .iter()
                .map(|p| {
                    let mut root = Root::new(format!("file://{}", p.display()));
                    root.name = p.file_name().map(|n| n.to_string_lossy().into_owned());
                    root
                })
                .collect(),
        )
    }

    /// Asks the user what the server wants filled in; `cancel` (the request's end) withdraws
    /// the question. An accepted form carries the schema's defaults for the fields the user
    /// left out (SEP-1034), so the server gets what the form showed.
    async fn elicit(&self, request: ElicitRequestParams, cancel: &CancellationToken) -> ElicitResult {
        let (message, schema) = match request {
            ElicitRequestParams::FormElicitationParams { message, requested_schema, .. } => {
                (message, serde_json::to_value(requested_schema).unwrap_or_default())
            }
            ElicitRequestParams::UrlElicitationParams { message, url, .. } => {
                // Perch never opens a link on a server's say-so; show it for the user to follow.
                let text = format!("{message}\n\nThe server asks you to open: {url}");
                (text, serde_json::json!({ "type": "object", "properties": {} }))
            }
            _ => return ElicitResult::new(McpAction::Decline),
        };
        let question = Question::Elicitation(ElicitationQuestion {
            server: self.server.clone(),
            message,
            schema: schema.clone(),
        });
        let stop = self.shared.closing.child_token();
        let answer = tokio::select! {
            a = self.shared.questions.ask(question, &stop) => a,
            () = cancel.cancelled() => None,
        };
        match answer {
            Some(Answer::Elicitation { action: ElicitationAction::Accept, content }) => {
                ElicitResult::new(McpAction::Accept).with_content(with_defaults(&schema, content))
            }
            Some(Answer::Elicitation { action: ElicitationAction::Decline, .. }) => {
                ElicitResult::new(McpAction::Decline)
            }
            _ => ElicitResult::new(McpAction::Cancel),
        }
    }

    async fn sample(&self, params: CreateMessageRequestParams) -> Result<CreateMessageResult, ErrorData> {
        let Some(sampler) = self.shared.sampler.get() else {
            return Err(ErrorData::internal_error("Perch cannot answer sampling requests here", None));
        };
        sampler
            .create_message(self.server.clone(), params)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    /// Answers one input request of an `input_required` result (SEP-2322) as Perch answers
    /// the same request sent on its own: the user is asked, the model samples, the roots are
    /// listed. The answer is the result's JSON, for the retry's `inputResponses`.
    pub(crate) async fn fulfil(
        &self,
        request: InputRequest,
        cancel: &CancellationToken,
    ) -> Result<Value, ErrorData> {
        let value = match request {
            InputRequest::Elicitation(r) => serde_json::to_value(self.elicit(r.params, cancel).await),
            InputRequest::CreateMessage(r) => serde_json::to_value(self.sample(r.params).await?),
            InputRequest::ListRoots(_) => serde_json::to_value(self.roots()),
            _ => {
                return Err(ErrorData::invalid_request(
                    "Perch does not know this kind of input request",
                    None,
                ));
            }
        };
        value.map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }
}

/// An accepted form's content with the schema's default for every property it left out.
fn with_defaults(schema: &Value, content: Option<Value>) -> Value {
    let mut content = content.unwrap_or_else(|| serde_json::json!({}));
    if let (Some(fields), Some(properties)) =
        (content.as_object_mut(), schema.get("properties").and_then(Value::as_object))
    {
        for (name, property) in properties {
            if let Some(default) = property.get("default")
                && !fields.contains_key(name)
            {
                fields.insert(name.clone(), default.clone());
            }
        }
    }
    content
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_accepted_form_gets_the_defaults_of_the_fields_left_out() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {
                "name": { "type": "string", "default": "John Doe" },
                "age": { "type": "integer", "default": 30 },
                "status": { "type": "string", "enum": ["active", "inactive"], "default": "active" },
                "verified": { "type": "boolean", "default": true },
                "note": { "type": "string" }
            }
        });
        let filled = with_defaults(&schema, Some(serde_json::json!({ "age": 41 })));
        assert_eq!(
            filled,
            serde_json::json!({ "name": "John Doe", "age": 41, "status": "active", "verified": true })
        );
        // No content at all is an empty form: every default, nothing invented for the rest.
        assert_eq!(with_defaults(&schema, None)["note"], Value::Null);
        assert_eq!(with_defaults(&schema, None).as_object().unwrap().len(), 4);
        // A schema without properties leaves the content alone.
        assert_eq!(with_defaults(&serde_json::json!({}), None), serde_json::json!({}));
    }
}
