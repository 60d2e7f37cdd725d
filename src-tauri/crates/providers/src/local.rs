//! `local:NAME`: models on this machine, answered by the `perch-llm` sidecar (see `perch_local`)
//! through the same trait, events and agent loop as every other provider. Tokens cost nothing.

use std::sync::Arc;

use futures::StreamExt;
use futures::future::BoxFuture;
use perch_llm_protocol::wire::{self, ChatParams, ErrorKind, Reply, Role};

use super::{
    Capabilities, ChatMessage, ChatRequest, EventStream, ModelInfo, Provider, ProviderError, StopReason,
    StreamEvent, ToolCall, ToolSpec, Usage,
};
use perch_local::runtime::effective_context;
use perch_local::{Answer, LocalError, LocalModel, LocalModels, LocalSettings};

pub const NAME: &str = "local";

pub struct Local {
    models: Arc<LocalModels>,
    settings: LocalSettings,
}

impl Local {
    pub fn new(models: Arc<LocalModels>, settings: LocalSettings) -> Self {
        Self { models, settings }
    }

    fn info(&self, m: &LocalModel) -> ModelInfo {
        let capabilities = Capabilities { vision: false, tools: m.tools, thinking: m.thinking };
        ModelInfo::new(NAME, m.name.clone(), capabilities, Some(effective_context(m, &self.settings)))
    }
}

impl From<LocalError> for ProviderError {
    fn from(e: LocalError) -> Self {
        match e {
            LocalError::NotFound { name, available } if !available.is_empty() => {
                ProviderError::ModelNotFound { provider: NAME.into(), model: name, available }
            }
            LocalError::Crashed { message } => ProviderError::Stream { provider: NAME.into(), message },
            other => ProviderError::LocalModel { reason: other.to_string() },
        }
    }
}

impl Provider for Local {
    fn name(&self) -> &str {
        NAME
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<ModelInfo>, ProviderError>> {
        Box::pin(async move {
            let models = self.models.list().await;
            Ok(models.iter().filter(|m| m.problem.is_none()).map(|m| self.info(m)).collect())
        })
    }

    fn model_info(&self, model: &str) -> BoxFuture<'_, Result<ModelInfo, ProviderError>> {
        let model = model.to_owned();
        Box::pin(async move { Ok(self.info(&self.models.get(&model).await?)) })
    }

    fn stream_chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<EventStream, ProviderError>> {
        Box::pin(async move {
            let model = self.models.get(&request.model).await?;
            let params = ChatParams {
                messages: messages(&request.messages),
                tools: request.tools.iter().map(ToolSpec::as_function).collect(),
                think: request.think,
                max_tokens: request
                    .max_output_tokens
                    .or((self.settings.max_answer_tokens > 0).then_some(self.settings.max_answer_tokens)),
                temperature: None,
                seed: None,
            };
            let answer = self.models.runtime().chat(&model, &self.settings, params).await?;
            Ok(events(answer, request.model))
        })
    }
}

/// The answer's replies as stream events; the stream ends after `Done` or an error.
fn events(answer: Answer, model: String) -> EventStream {
    futures::stream::unfold(Some(answer), move |answer| {
        let model = model.clone();
        async move {
            let mut answer = answer?;
            let events: Vec<Result<StreamEvent, ProviderError>> = match answer.next().await? {
                Ok(Reply::Thinking { text, .. }) => vec![Ok(StreamEvent::Thinking(text))],
                Ok(Reply::Text { text, .. }) => vec![Ok(StreamEvent::Text(text))],
                Ok(Reply::ToolCall { call, .. }) => {
                    vec![Ok(StreamEvent::ToolCall(ToolCall {
                        id: call.id,
                        name: call.name,
                        arguments: call.arguments,
                        signature: None,
                    }))]
                }
                Ok(Reply::Done { stop, usage, .. }) => {
                    let usage =
                        Usage { input_tokens: usage.prompt_tokens, output_tokens: usage.output_tokens };
                    vec![Ok(StreamEvent::Usage(usage)), Ok(StreamEvent::Done(stop_reason(stop)))]
                }
                Ok(Reply::Error { kind: ErrorKind::ContextTooLong, .. }) => {
                    vec![Err(ProviderError::ContextTooLong { model: format!("{NAME}:{model}") })]
                }
                Ok(Reply::Error { message, .. }) => vec![Err(ProviderError::LocalModel { reason: message })],
                Ok(_) => Vec::new(),
                Err(e) => vec![Err(e.into())],
            };
            Some((futures::stream::iter(events), Some(answer)))
        }
    })
    .flatten()
    .boxed()
}

fn stop_reason(stop: wire::Stop) -> StopReason {
    match stop {
        wire::Stop::EndTurn => StopReason::EndTurn,
        wire::Stop::MaxTokens | wire::Stop::ContextFull => StopReason::MaxTokens,
        wire::Stop::ToolUse => StopReason::ToolUse,
        wire::Stop::Cancelled => StopReason::Other("cancelled".into()),
    }
}

/// The conversation as chat templates accept it: every system note in one leading system
/// message (many templates allow only one, first), and neighbouring messages of the same role
/// joined (several refuse two user turns in a row).
fn messages(chat: &[ChatMessage]) -> Vec<wire::Message> {
    let system: Vec<&str> = chat
        .iter()
        .filter_map(|m| if let ChatMessage::System(t) = m { Some(t.as_str()) } else { None })
        .collect();
    let mut out: Vec<wire::Message> = Vec::new();
    if !system.is_empty() {
        out.push(wire::Message::new(Role::System, system.join("\n\n")));
    }
    for m in chat {
        let next = match m {
            ChatMessage::System(_) => continue,
            ChatMessage::User { text, .. } => wire::Message::new(Role::User, text.clone()),
            ChatMessage::Assistant { text, tool_calls, .. } => {
                let mut a = wire::Message::new(Role::Assistant, text.clone());
                a.tool_calls = tool_calls
                    .iter()
                    .map(|c| wire::ToolCall {
                        id: c.id.clone(),
                        name: c.name.clone(),
                        arguments: c.arguments.clone(),
                    })
                    .collect();
                a
            }
            ChatMessage::Tool { call_id, name, content, .. } => {
                let mut t = wire::Message::new(Role::Tool, content.clone());
                t.tool_call_id = Some(call_id.clone());
                t.name = Some(name.clone());
                t
            }
        };
        match out.last_mut() {
            Some(last)
                if last.role == next.role
                    && matches!(next.role, Role::User | Role::Assistant)
                    && last.tool_calls.is_empty()
                    && next.tool_calls.is_empty() =>
            {
                last.content.push_str("\n\n");
                last.content.push_str(&next.content);
            }
            _ => out.push(next),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_notes_lead_and_neighbours_of_a_role_are_joined() {
        let chat = vec![
            ChatMessage::System("Be brief.".into()),
            ChatMessage::System("Earlier: file a.rs".into()),
            ChatMessage::user("one"),
            ChatMessage::user("two"),
            ChatMessage::assistant("ok"),
            ChatMessage::System("Answer now.".into()),
        ];
        let m = messages(&chat);
        assert_eq!(m.len(), 3);
        assert_eq!(
            (m[0].role, m[0].content.as_str()),
            (Role::System, "Be brief.\n\nEarlier: file a.rs\n\nAnswer now.")
        );
        assert_eq!(m[1].content, "one\n\ntwo");
        assert_eq!(m[2].role, Role::Assistant);
    }
}
