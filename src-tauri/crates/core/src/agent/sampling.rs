//! Sampling: an MCP server asks Perch's model for a completion. The user sees what would be
//! sent and to which model, and nothing is sent unless they allow it.
// Sampling is deprecated by the 2026-07-28 protocol; servers on 2025-11-25 still use it.
#![allow(deprecated)]

use futures::future::BoxFuture;
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, Role, SamplingMessage, SamplingMessageContentBlock,
};
use tokio_util::sync::CancellationToken;

use crate::engine::WeakEngine;
use crate::mcp::handler::Sampler;
use crate::providers::{ChatMessage, ChatRequest, ModelId, Registry};
use crate::questions::{Answer, Question, SamplingQuestion};

pub struct EngineSampler(pub WeakEngine);

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

impl Sampler for EngineSampler {
    fn create_message(
        &self,
        server: String,
        params: CreateMessageRequestParams,
    ) -> BoxFuture<'static, Result<CreateMessageResult, String>> {
        let weak = self.0.clone();
        Box::pin(async move {
            let engine = weak.upgrade().ok_or("Perch is closing")?;
            let settings = engine.settings().get().await;
            let model = settings
                .models
                .default_model
                .clone()
                .ok_or("the user has not chosen a default model for Perch, so it cannot sample")?;
            let id: ModelId = model.parse()?;
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
            match engine.questions().ask(question, &CancellationToken::new()).await {
                Some(Answer::Sampling { approve: true }) => {}
                _ => return Err("the user declined the sampling request".into()),
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
            let registry = Registry::of(&engine, &settings);
            let provider = registry.provider(&id.provider).await.map_err(|e| e.to_string())?;
            let request = ChatRequest {
                model: id.model.clone(),
                messages,
                tools: Vec::new(),
                think: false,
                max_output_tokens: Some(params.max_tokens),
                context_window: None,
            };
            let answer = provider.complete(request).await.map_err(|e| e.to_string())?;
            Ok(CreateMessageResult::new(SamplingMessage::assistant_text(answer.text), model)
                .with_stop_reason("endTurn"))
        })
    }
}
