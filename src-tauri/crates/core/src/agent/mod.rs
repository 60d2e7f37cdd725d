//! The agent: a turn saves the question, builds the context, streams the answer to a sink while
//! saving it as it grows, and finishes it as complete, stopped or failed (`turn`). One loop for
//! every provider (`rounds`): when the stream ends with tool calls they run (see `tools`) and the
//! model is asked again. What a turn reports goes to a `TurnSink` as `TurnEvent`s (`events`).

pub mod app_calls;
pub mod attachments;
pub mod context;
mod events;
pub mod live;
pub mod picker;
pub mod references;
mod rounds;
pub mod runs;
pub mod sampling;
mod stream;
pub mod thread;
pub mod tools;
mod turn;

use serde::{Deserialize, Serialize};

pub use events::{TurnError, TurnEvent, TurnFinished, TurnSink, TurnStarted};
use rounds::Outcome;
pub use turn::{run_turn, run_turn_with, title_from};

use crate::providers::ProviderError;
use crate::store::StoreError;

/// The longest message Perch accepts; a bigger paste is refused with this number.
pub const MAX_MESSAGE_CHARS: usize = 1_000_000;

/// An image attached to a question, as the UI or the CLI read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ImageInput {
    pub name: String,
    pub mime: String,
    pub base64: String,
    /// A capture on the shelf to attach instead of `base64` (which is then empty).
    #[serde(default)]
    pub capture: Option<String>,
}

/// Text selected in another application and brought into Perch with the selection shortcut: the
/// model reads it as content to work on, marked as coming from that application
/// (`perch_typing::selection_block`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct SelectionInput {
    pub text: String,
    /// The application's window title.
    pub app: String,
}

/// A text file attached to a question (`@` in the composer, `perch ask --file`), read when the
/// question is sent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct FileInput {
    pub path: String,
    /// Only the first lines (the offer made when the whole file is too large).
    #[serde(default)]
    pub first_lines: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TurnKind {
    /// A new question, with images and text files attached.
    Ask {
        text: String,
        images: Vec<ImageInput>,
        #[serde(default)]
        files: Vec<FileInput>,
        #[serde(default)]
        selections: Vec<SelectionInput>,
    },
    /// A new answer to the same question; the old answer is kept as an alternative.
    Regenerate { message_id: i64 },
    /// The last question, edited and sent again; the old one is kept as an alternative.
    Edit { message_id: i64, text: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct TurnRequest {
    /// Continue this conversation; a new one starts when absent.
    pub conversation_id: Option<String>,
    /// `provider:model`.
    pub model: String,
    pub kind: TurnKind,
    /// The id under which the run can be stopped (the UI picks it so Stop works at once).
    pub run_id: Option<String>,
}

impl TurnRequest {
    /// A question in words alone (no pictures, files or selections), to `model`, in
    /// `conversation` or a new one.
    pub fn ask(model: &str, conversation: Option<&str>, text: &str) -> Self {
        let kind = TurnKind::Ask {
            text: text.into(),
            images: Vec::new(),
            files: Vec::new(),
            selections: Vec::new(),
        };
        Self { conversation_id: conversation.map(str::to_owned), model: model.into(), kind, run_id: None }
    }
}

/// A turn that could not start. Nothing was saved; the UI keeps what the user typed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChatError {
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Provider(#[from] ProviderError),
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An attached file cannot be sent (missing, binary, too large...).
    #[error(transparent)]
    File(#[from] crate::files::FilesError),
}

/// How a turn may differ from the app's settings.
#[derive(Debug, Clone, Default)]
pub struct TurnOptions {
    /// Rules for this turn only, checked before the saved ones (`perch ask --approve demo:*`).
    pub extra_rules: Vec<crate::settings::ToolRule>,
    /// Offer no tools this time.
    pub no_tools: bool,
}
