//! The provider-neutral shapes of a chat: messages in, typed events out.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `provider:model`, split at the first colon: `ollama:qwen3-vl:8b-instruct`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ModelId {
    pub provider: String,
    pub model: String,
}

/// Text that names no model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not a model name; write provider:model, e.g. ollama:qwen3-vl:8b-instruct")]
pub struct NotAModelId(pub String);

impl FromStr for ModelId {
    type Err = NotAModelId;
    fn from_str(s: &str) -> Result<Self, NotAModelId> {
        match s.trim().split_once(':') {
            Some((provider, model)) if !provider.is_empty() && !model.is_empty() => {
                Ok(Self { provider: provider.to_ascii_lowercase(), model: model.to_owned() })
            }
            _ => Err(NotAModelId(s.to_owned())),
        }
    }
}

impl ModelId {
    /// What identifies the model when comparing names or caching by name: Ollama's names in
    /// their full form (a missing tag is `latest`, case does not matter), others as written.
    pub fn key(&self) -> String {
        if self.provider == "ollama" {
            format!("ollama:{}", super::ollama::name::canonical(&self.model))
        } else {
            self.to_string()
        }
    }
}

/// [`ModelId::key`] of a `provider:model` string (the string itself when it is not one).
pub fn model_key(id: &str) -> String {
    id.parse::<ModelId>().map_or_else(|_| id.to_owned(), |id| id.key())
}

impl fmt::Display for ModelId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.provider, self.model)
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Capabilities {
    pub vision: bool,
    pub tools: bool,
    pub thinking: bool,
}

/// A model a provider offers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ModelInfo {
    /// `provider:model`.
    pub id: String,
    /// What matches other spellings of the same model (see [`model_key`]).
    pub key: String,
    pub provider: String,
    pub name: String,
    pub capabilities: Capabilities,
    /// Tokens the model reads at once, when the provider says.
    pub context_length: Option<u32>,
}

impl ModelInfo {
    pub fn new(
        provider: &str,
        name: String,
        capabilities: Capabilities,
        context_length: Option<u32>,
    ) -> Self {
        let id = format!("{provider}:{name}");
        Self { key: model_key(&id), id, provider: provider.to_owned(), name, capabilities, context_length }
    }
}

/// An image for a vision model, already encoded.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageData {
    pub mime: String,
    pub base64: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: Value,
    /// Gemini's `thoughtSignature` on the call: its reasoning, encrypted, which must go back
    /// with the call in the next request of the turn or the API refuses it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

impl ToolCall {
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        Self { id: id.into(), name: name.into(), arguments, signature: None }
    }
}

/// Reasoning a provider signed, kept with the answer so it can be sent back unchanged: Anthropic
/// requires the thinking blocks before the tool calls they led to when the tool results go
/// back, and refuses them if a byte differs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SignedThinking {
    /// A `thinking` block: the text as it streamed and the signature over it.
    Thinking { thinking: String, signature: String },
    /// A `redacted_thinking` block: reasoning the provider encrypted, opaque to Perch.
    Redacted { data: String },
}

/// A tool the model may call: a name, what it does, and a JSON schema for its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

impl ToolSpec {
    /// The `{"type": "function", ...}` form OpenAI's API and Ollama's both take.
    pub fn as_function(&self) -> Value {
        serde_json::json!({ "type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": self.input_schema } })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum ChatMessage {
    System(String),
    User {
        text: String,
        images: Vec<ImageData>,
    },
    Assistant {
        text: String,
        tool_calls: Vec<ToolCall>,
        /// Signed reasoning that came before the text and the calls, in the order it came.
        thinking: Vec<SignedThinking>,
    },
    Tool {
        call_id: String,
        name: String,
        content: String,
        is_error: bool,
    },
}

impl ChatMessage {
    pub fn user(text: impl Into<String>) -> Self {
        Self::User { text: text.into(), images: Vec::new() }
    }
    pub fn assistant(text: impl Into<String>) -> Self {
        Self::Assistant { text: text.into(), tool_calls: Vec::new(), thinking: Vec::new() }
    }
    /// Characters of text, for estimating tokens.
    pub fn text_len(&self) -> usize {
        match self {
            Self::System(t) | Self::User { text: t, .. } | Self::Assistant { text: t, .. } => t.len(),
            Self::Tool { content, .. } => content.len(),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChatRequest {
    /// The provider's own name for the model (without the `provider:` prefix).
    pub model: String,
    pub messages: Vec<ChatMessage>,
    pub tools: Vec<ToolSpec>,
    /// Ask for the model's reasoning, where it can show it.
    pub think: bool,
    pub max_output_tokens: Option<u32>,
    /// The context window the request was built for (Ollama runs the model at it; without it
    /// Ollama uses its own small default and silently cuts the start of the prompt).
    pub context_window: Option<u32>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn,
    MaxTokens,
    ToolUse,
    ContentFilter,
    Other(String),
}

/// What a provider's stream yields, in order: thinking and text as they come, tool calls
/// whole, usage once known, and done last.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "event", content = "data", rename_all = "snake_case")]
pub enum StreamEvent {
    Thinking(String),
    /// A reasoning block ended; the provider wants it back with the tool calls that follow.
    SignedThinking(SignedThinking),
    Text(String),
    ToolCall(ToolCall),
    Usage(Usage),
    Done(StopReason),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_ids_split_at_the_first_colon() {
        let id: ModelId = "ollama:qwen3-vl:8b-instruct".parse().unwrap();
        assert_eq!((id.provider.as_str(), id.model.as_str()), ("ollama", "qwen3-vl:8b-instruct"));
        assert_eq!(id.to_string(), "ollama:qwen3-vl:8b-instruct");
        assert_eq!("OpenAI:gpt-4.1".parse::<ModelId>().unwrap().provider, "openai");
        for bad in ["gpt-4.1", ":x", "ollama:", ""] {
            assert!(bad.parse::<ModelId>().is_err(), "{bad}");
        }
    }
}
