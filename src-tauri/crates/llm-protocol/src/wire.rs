//! The sidecar's protocol: one JSON object a line, requests on its stdin and replies on its
//! stdout (its logs go to stderr). Every reply names the request it answers; a chat streams
//! `thinking`, `text` and `tool_call` replies and ends with `done` or `error`.
//!
//! Requests run one at a time in arrival order, except `cancel`, which takes effect at once.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::template::TemplateFeatures;

pub type RequestId = u64;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// Loads a model with a fresh context, replacing any model loaded before.
    Load {
        id: RequestId,
        #[serde(flatten)]
        params: LoadParams,
    },
    Chat {
        id: RequestId,
        #[serde(flatten)]
        params: ChatParams,
    },
    /// Stops request `id`: a chat ends with `done` and stop `cancelled` before its next token.
    Cancel { id: RequestId },
    /// Frees the model; the process keeps running.
    Unload { id: RequestId },
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadParams {
    pub path: String,
    /// Tokens of context; 0 means the length the model was trained with.
    pub context_length: u32,
    pub threads: u32,
    /// Tokens evaluated at once while reading a prompt.
    pub batch: u32,
    /// Layers to put on the graphics card: 0 keeps the model on the CPU, more than the model
    /// has puts all of it there; absent, as many as fit the card's free memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_layers: Option<u32>,
    /// Bytes of the card's memory to leave for what else Perch keeps there (the whisper model).
    #[serde(default)]
    pub gpu_reserved: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatParams {
    pub messages: Vec<Message>,
    /// OpenAI-style function specs (`{"type": "function", "function": {...}}`), as chat
    /// templates expect them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Value>,
    /// Let models that can reason do so (`enable_thinking` in their template).
    #[serde(default)]
    pub think: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// 0 picks the most likely token every time (reproducible answers for benchmarks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a tool result: the call it answers, and the tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Message {
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        Self { role, content: content.into(), tool_calls: Vec::new(), tool_call_id: None, name: None }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Reply {
    /// The first line, once the process can take requests.
    Ready {
        version: String,
        system_info: String,
        /// The Vulkan devices llama.cpp will use, first the one models go to.
        #[serde(default)]
        devices: Vec<GpuDevice>,
        /// Why there is none, in words for Settings and `perch doctor`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        no_gpu: Option<String>,
    },
    Loaded {
        id: RequestId,
        model: ModelReport,
    },
    Unloaded {
        id: RequestId,
    },
    /// The graphics card failed in the middle of chat `id`: the model is loaded again on the
    /// CPU and the answer goes on from the token it had reached (nothing already sent is sent
    /// again). Every later chat with this model runs on the CPU.
    MovedToCpu {
        id: RequestId,
        reason: String,
    },
    Thinking {
        id: RequestId,
        text: String,
    },
    Text {
        id: RequestId,
        text: String,
    },
    ToolCall {
        id: RequestId,
        call: ToolCall,
    },
    Done {
        id: RequestId,
        stop: Stop,
        usage: Usage,
    },
    /// A request failed; `id` is absent when a line could not be read as a request.
    Error {
        id: Option<RequestId>,
        kind: ErrorKind,
        message: String,
    },
}

impl Reply {
    /// The request this reply answers.
    pub fn request(&self) -> Option<RequestId> {
        match self {
            Self::Ready { .. } => None,
            Self::Error { id, .. } => *id,
            Self::Loaded { id, .. }
            | Self::Unloaded { id }
            | Self::MovedToCpu { id, .. }
            | Self::Thinking { id, .. }
            | Self::Text { id, .. }
            | Self::ToolCall { id, .. }
            | Self::Done { id, .. } => Some(*id),
        }
    }
}

/// What was loaded, and how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelReport {
    pub architecture: String,
    /// Tokens of context in use, and the length the model was trained with.
    pub context_length: u32,
    pub trained_context_length: u32,
    pub threads: u32,
    pub batch: u32,
    /// Whether the model's own chat template is used, or a generic one (ChatML) because the
    /// file has none.
    pub template: TemplateSource,
    pub features: TemplateFeatures,
    pub load_ms: u64,
    /// Where the model runs.
    #[serde(default)]
    pub placement: Placement,
}

/// A graphics card as llama.cpp's Vulkan backend sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuDevice {
    /// ggml's name for it (`Vulkan0`).
    pub name: String,
    /// The driver's (`AMD Radeon RX 7600 (RADV NAVI33)`).
    pub description: String,
    pub memory_total: u64,
    pub memory_free: u64,
}

/// Where a loaded model's layers are.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placement {
    /// The card's description; `None` when the model runs on the CPU only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Layers on the card, of those the model has to offload.
    pub gpu_layers: u32,
    pub layers: u32,
    /// Why not all on the card (no card, not enough free memory, the user's setting, or the
    /// card failed to load it and the model fell back to the CPU), in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TemplateSource {
    Model,
    ChatMl,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// The model ended its turn.
    EndTurn,
    /// The answer reached `max_tokens`.
    MaxTokens,
    /// The context is full.
    ContextFull,
    /// The model asked for tools.
    ToolUse,
    Cancelled,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens of the rendered prompt, and how many of them were already in the KV cache from
    /// the previous request (a shared prefix is not evaluated again).
    pub prompt_tokens: u64,
    pub cached_tokens: u64,
    pub output_tokens: u64,
    /// Milliseconds spent evaluating the prompt, and generating after it.
    pub prompt_ms: f64,
    pub generation_ms: f64,
    /// Tokens generated after the cancel arrived (0 or 1: the check runs before every token).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_after_cancel: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// A chat arrived with no model loaded.
    NotLoaded,
    /// llama.cpp could not load the file (the message says why).
    LoadFailed,
    /// The file is a model llama.cpp does not know how to run.
    UnsupportedArchitecture,
    /// The prompt does not fit the context.
    ContextTooLong,
    /// The chat template failed on these messages.
    Template,
    /// Evaluating the model failed.
    Generation,
    /// The line was not a request this sidecar understands.
    BadRequest,
}

/// One line of the protocol: the value as JSON, and a newline.
pub fn line<T: Serialize>(value: &T) -> String {
    let mut text = serde_json::to_string(value).unwrap_or_else(|e| {
        let error = Reply::Error { id: None, kind: ErrorKind::BadRequest, message: e.to_string() };
        serde_json::to_string(&error).unwrap_or_default()
    });
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_and_replies_read_back_as_written() {
        let chat = Request::Chat {
            id: 7,
            params: ChatParams {
                messages: vec![Message::new(Role::User, "hi")],
                max_tokens: Some(8),
                ..ChatParams::default()
            },
        };
        let text = line(&chat);
        assert!(text.ends_with('\n') && !text.trim_end().contains('\n'));
        assert!(text.contains(r#""op":"chat""#) && text.contains(r#""id":7"#), "{text}");
        assert_eq!(serde_json::from_str::<Request>(&text).unwrap(), chat);

        let done = Reply::Done { id: 7, stop: Stop::Cancelled, usage: Usage::default() };
        assert_eq!(serde_json::from_str::<Reply>(&line(&done)).unwrap().request(), Some(7));
        let cancel: Request = serde_json::from_str(r#"{"op":"cancel","id":7}"#).unwrap();
        assert_eq!(cancel, Request::Cancel { id: 7 });
    }
}
