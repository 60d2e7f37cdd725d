//! The one error type that crosses the IPC boundary: a kind the UI can branch on and a message
//! a person can read. Built from the engine's domain errors by `From`.

use perch_core::StartError;
use perch_core::agent::ChatError;
use perch_core::providers::ProviderError;
use perch_core::review::ReviewError;
use perch_core::store::StoreError;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// What was asked for does not exist (any more).
    NotFound,
    /// The request itself was wrong: an empty title, a bad id.
    Invalid,
    /// The engine did not start (see the start-up screen).
    Unavailable,
    /// Saving or reading history failed.
    Storage,
    /// The window system refused.
    Window,
    /// A program Perch runs for the user (the editor, git) failed.
    External,
    /// The model provider failed; `provider_kind` on the message says how.
    Provider,
    /// The screen could not be captured (no display, a portal or permission refused, a black
    /// or oversized capture); the message says what to do.
    Capture,
}

#[derive(Debug, Clone, Serialize, specta::Type, thiserror::Error)]
#[error("{message}")]
pub struct CommandError {
    pub kind: ErrorKind,
    pub message: String,
}

impl CommandError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into() }
    }
}

impl From<StoreError> for CommandError {
    fn from(e: StoreError) -> Self {
        let kind = match &e {
            StoreError::NotFound(_) => ErrorKind::NotFound,
            StoreError::Invalid(_) => ErrorKind::Invalid,
            _ => ErrorKind::Storage,
        };
        Self::new(kind, e.to_string())
    }
}

impl From<ReviewError> for CommandError {
    fn from(e: ReviewError) -> Self {
        match e {
            ReviewError::Store(e) => e.into(),
            ReviewError::Reference(_) => Self::new(ErrorKind::Invalid, e.to_string()),
            _ => Self::new(ErrorKind::External, e.to_string()),
        }
    }
}

impl From<ProviderError> for CommandError {
    fn from(e: ProviderError) -> Self {
        Self::new(ErrorKind::Provider, e.to_string())
    }
}

impl From<ChatError> for CommandError {
    fn from(e: ChatError) -> Self {
        match e {
            ChatError::Invalid(m) => Self::new(ErrorKind::Invalid, m),
            ChatError::Provider(e) => e.into(),
            ChatError::Store(e) => e.into(),
            ChatError::File(e) => Self::new(ErrorKind::Invalid, e.to_string()),
            other => Self::new(ErrorKind::Storage, other.to_string()),
        }
    }
}

impl From<perch_core::capture::CaptureError> for CommandError {
    fn from(e: perch_core::capture::CaptureError) -> Self {
        use perch_core::capture::CaptureError as E;
        let kind = match &e {
            E::NotFound(_) => ErrorKind::NotFound,
            E::NotSelecting | E::EmptySelection => ErrorKind::Invalid,
            E::Io { .. } => ErrorKind::Storage,
            _ => ErrorKind::Capture,
        };
        Self::new(kind, e.to_string())
    }
}

impl From<perch_core::voice::VoiceError> for CommandError {
    fn from(e: perch_core::voice::VoiceError) -> Self {
        use perch_core::voice::VoiceErrorKind as Kind;
        let kind = match e.kind() {
            Kind::Model | Kind::Audio | Kind::Busy => ErrorKind::Invalid,
            Kind::Download => ErrorKind::External,
            _ => ErrorKind::External,
        };
        Self::new(kind, e.to_string())
    }
}

impl From<perch_core::local::LocalError> for CommandError {
    fn from(e: perch_core::local::LocalError) -> Self {
        use perch_core::local::LocalError as E;
        let kind = match &e {
            E::NotFound { .. } | E::UnknownCatalog { .. } => ErrorKind::NotFound,
            E::BadFile(_) | E::InvalidName { .. } | E::NameTaken { .. } | E::Unsupported { .. } => {
                ErrorKind::Invalid
            }
            E::Io { .. } => ErrorKind::Storage,
            _ => ErrorKind::External,
        };
        Self::new(kind, e.to_string())
    }
}

impl From<StartError> for CommandError {
    fn from(e: StartError) -> Self {
        Self::new(ErrorKind::Unavailable, e.to_string())
    }
}

impl From<tauri::Error> for CommandError {
    fn from(e: tauri::Error) -> Self {
        Self::new(ErrorKind::Window, e.to_string())
    }
}

pub type CommandResult<T> = Result<T, CommandError>;
