//! What a turn reports while it runs, and where it goes.

use serde::Serialize;

use crate::providers::{ProviderError, ProviderErrorKind, Usage};
use crate::store::{Conversation, Message};

/// Why an answer failed, for the error card.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct TurnError {
    pub kind: ProviderErrorKind,
    pub message: String,
}

/// What a turn reports while it runs.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "event", content = "data", rename_all = "snake_case")]
pub enum TurnEvent {
    Started(Box<TurnStarted>),
    Thinking(String),
    Text(String),
    Usage(Usage),
    /// A tool call appeared or changed (status, result); the UI replaces its card by id.
    ToolCall(Box<crate::store::tool_calls::ToolCallRecord>),
    /// A running tool reported progress.
    ToolProgress {
        id: String,
        progress: crate::mcp::Progress,
    },
    Finished(Box<TurnFinished>),
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct TurnStarted {
    pub run_id: String,
    pub conversation: Conversation,
    pub user_message: Option<Message>,
    pub assistant_message: Message,
    /// Older messages left out of the model's context (summarised instead).
    pub omitted: u32,
    pub context_length: Option<u32>,
    /// The memories the answer was given (shown with it).
    pub memories: Vec<crate::memories::Memory>,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct TurnFinished {
    pub message: Message,
    pub error: Option<TurnError>,
}

/// Where a turn's events go: a Tauri channel in the app, stdout in the CLI, a Vec in tests.
pub trait TurnSink: Send + Sync {
    fn send(&self, event: TurnEvent);
}

impl From<ProviderError> for TurnError {
    fn from(e: ProviderError) -> Self {
        Self { kind: e.kind(), message: e.to_string() }
    }
}
