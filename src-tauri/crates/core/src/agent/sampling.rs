//! Sampling: an MCP server asks Perch's model for a completion. The user sees what would be
//! sent and to which model, and nothing is sent unless they allow it.
// Sampling is deprecated by the 2026-07-28 protocol; servers on 2025-11-25 still use it.
#![allow(deprecated)]

use futures::future::BoxFuture;
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, Role, SamplingMessage, SamplingMessageContentBlock,
};
use tokio_util::sync::CancellationToken;

use std::sync::Arc;

use crate::keys::Keys;
use crate::local::LocalModels;
use crate::mcp::handler::{Sampler, SamplingError};
use crate::providers::http::Clients;
use crate::providers::{ChatMessage, ChatRequest, ModelId, Registry};
use crate::questions::{Answer, Question, Questions, SamplingQuestion};
use crate::settings::SettingsHandle;

/// Answers servers' sampling requests with the user's default model, once the user allows it.
/// It holds what it needs (each also the engine's), not the engine.
pub struct ModelSampler {
    pub settings: Arc<SettingsHandle>,
    pub questions: Arc<Questions>,
    pub keys: Arc<Keys>,
    pub http: Clients,
    pub local: Arc<LocalModels>,
}

fn text_of(message: &SamplingMessage) -> String {
    message
        .content
        .clone()
        .into_vec()
        .iter()
        .filter_map(|block| match block {
            SamplingMessageContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Sampler for ModelSampler {
    fn create_message(
        &self,
        server: String,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'static, Result<CreateMessageResult, SamplingError>> {
        let (sources, questions) =
            ((self.keys.clone(), self.http.clone(), self.local.clone()), self.questions.clone());
        let handle = self.settings.clone();
        Box::pin(async move {
            let settings = handle.get().await;
            let model = settings.models.default_model.clone().ok_or(SamplingError::NoDefaultModel)?;
            let id: ModelId = model
                .parse()
                .map_err(|e: crate::providers::NotAModelId| SamplingError::Model(e.to_string()))?;
            let shown: Vec<String> = params
                .messages
                .iter()
                .map(|m| {
                    format!("{}: {}", if m.role == Role::User { "user" } else { "assistant" }, text_of(m))
                })
                .collect();
            let question = Question::Sampling(SamplingQuestion {
                server: server.clone(),
                messages: shown,
                system_prompt: params.system_prompt.clone(),
                max_tokens: params.max_tokens,
                model: model.clone(),
            });
            match questions.ask(question, &CancellationToken::new()).await {
                Some(Answer::Sampling { approve: true }) => {}
                _ => return Err(SamplingError::Declined),
            }
            let mut messages = Vec::new();
            if let Some(system) = params.system_prompt {
                messages.push(ChatMessage::System(system));
            }
            for m in &params.messages {
                messages.push(if m.role == Role::User {
                    ChatMessage::user(text_of(m))
                } else {
                    ChatMessage::assistant(text_of(m))
                });
            }
            let (keys, http, local) = sources;
            let registry = Registry::with_local(&settings.providers, &settings.local, keys, http, local);
            let provider =
                registry.provider(&id.provider).await.map_err(|e| SamplingError::Model(e.to_string()))?;
            let request = ChatRequest {
                model: id.model.clone(),
                messages,
                tools: Vec::new(),
                think: false,
                max_output_tokens: Some(params.max_tokens),
                context_window: None,
            };
            let answer = provider.complete(request).await.map_err(|e| SamplingError::Model(e.to_string()))?;
            Ok(CreateMessageResult::new(SamplingMessage::assistant_text(answer.text), model)
                .with_stop_reason("endTurn"))
        })
    }
}
