//! perch-providers: model providers behind one trait: list models with their capabilities, and stream a chat
//! as typed events. Each provider is a thin client over reqwest that speaks its service's own
//! wire format (Ollama's NDJSON; OpenAI's, Anthropic's and Gemini's server-sent events).
//! Dropping a stream cancels the request.

mod anthropic;
mod error;
mod gemini;
pub mod http;
pub mod local;
mod model_cache;
pub mod ollama;
mod openai;
mod registry;
pub mod settings;
mod types;

use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::BoxStream;

pub use anthropic::Anthropic;
pub use error::{ProviderError, ProviderErrorKind};
pub use gemini::Gemini;
pub use model_cache::ModelCache;
pub use ollama::Ollama;
pub use openai::OpenAi;
pub use registry::{
    ProviderEndpoint, ProviderKind, ProviderModels, Registry, builtin_endpoints, ollama_url, pick_default,
};
pub use types::*;

pub type EventStream = BoxStream<'static, Result<StreamEvent, ProviderError>>;

/// A collected answer, for callers that do not stream.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Completion {
    pub thinking: String,
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
    pub usage: Option<Usage>,
    pub stop: Option<StopReason>,
}

pub trait Provider: Send + Sync {
    /// The name models are prefixed with (`ollama`, `openai`, or a custom endpoint's name).
    fn name(&self) -> &str;

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<ModelInfo>, ProviderError>>;

    /// One model's capabilities and context length (from the full list unless the provider
    /// can ask about one model).
    fn model_info(&self, model: &str) -> BoxFuture<'_, Result<ModelInfo, ProviderError>> {
        let model = model.to_owned();
        Box::pin(async move {
            let all = self.list_models().await?;
            let names = all.iter().map(|m| m.name.clone()).collect();
            all.into_iter().find(|m| m.name == model).ok_or_else(|| ProviderError::ModelNotFound {
                provider: self.name().to_owned(),
                model,
                available: names,
            })
        })
    }

    /// Starts a streamed chat. The stream ends after `Done`, or with an error.
    fn stream_chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<EventStream, ProviderError>>;

    /// The whole answer at once: the same stream, collected.
    fn complete(&self, request: ChatRequest) -> BoxFuture<'_, Result<Completion, ProviderError>> {
        Box::pin(async move {
            let mut stream = self.stream_chat(request).await?;
            let mut out = Completion::default();
            while let Some(event) = stream.next().await {
                match event? {
                    StreamEvent::Thinking(t) => out.thinking.push_str(&t),
                    StreamEvent::SignedThinking(_) => {}
                    StreamEvent::Text(t) => out.text.push_str(&t),
                    StreamEvent::ToolCall(call) => out.tool_calls.push(call),
                    StreamEvent::Usage(u) => out.usage = Some(u),
                    StreamEvent::Done(reason) => out.stop = Some(reason),
                }
            }
            Ok(out)
        })
    }
}
