//! The one error type that crosses the IPC boundary: a kind the UI can branch on and a message
//! a person can read. Built from the engine's domain errors by `From`.

use perch_core::StartError;
use perch_core::agent::ChatError;
use perch_core::mcp::CallError;
use perch_core::mcp::manager::SignInFailure;
use perch_core::mcp::{ConfigError, EditError};
use perch_core::providers::{ProviderError, ProviderErrorKind};
use perch_core::questions::AnswerError;
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
    /// The model provider failed; `provider_kind` says how.
    Provider,
    /// The screen could not be captured (no display, a portal or permission refused, a black
    /// or oversized capture); the message says what to do.
    Capture,
    /// A server or service did not answer in time; trying again may work.
    Timeout,
    /// Stopped on purpose (a Stop, a cancelled download); nothing is wrong.
    Cancelled,
    /// The MCP server is not running: start it (Settings -> MCP servers).
    NotRunning,
    /// The MCP server went away while working (it crashed or was closed).
    Closed,
    /// The MCP server wants the user to sign in (or to allow more) first: offer Sign in.
    NeedsSignIn,
}

#[derive(Debug, Clone, Serialize, specta::Type, thiserror::Error)]
#[error("{message}")]
pub struct CommandError {
    pub kind: ErrorKind,
    pub message: String,
    /// How the provider failed, when `kind` is `provider` (a missing key, a rate limit...).
    pub provider_kind: Option<ProviderErrorKind>,
}

impl CommandError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into(), provider_kind: None }
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
        Self { provider_kind: Some(e.kind()), ..Self::new(ErrorKind::Provider, e.to_string()) }
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

impl From<perch_core::speech::SpeechError> for CommandError {
    fn from(e: perch_core::speech::SpeechError) -> Self {
        use perch_core::speech::SpeechError as E;
        let kind = match &e {
            E::UnknownVoice { .. } | E::OutputNotFound { .. } => ErrorKind::NotFound,
            E::BadVoice { .. } | E::UnknownEspeakVoice { .. } => ErrorKind::Invalid,
            E::Io { .. } => ErrorKind::Storage,
            _ => ErrorKind::External,
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
            E::NotFound { .. } | E::UnknownCatalog { .. } | E::NoSuchFile(_) => ErrorKind::NotFound,
            E::BadFile(_) | E::InvalidName { .. } | E::NameTaken { .. } | E::Unsupported { .. } => {
                ErrorKind::Invalid
            }
            E::Io { .. } => ErrorKind::Storage,
            _ => ErrorKind::External,
        };
        Self::new(kind, e.to_string())
    }
}

impl From<&StartError> for CommandError {
    fn from(e: &StartError) -> Self {
        Self::new(ErrorKind::Unavailable, e.to_string())
    }
}

impl From<CallError> for CommandError {
    fn from(e: CallError) -> Self {
        let kind = match &e {
            CallError::UnknownServer(_) | CallError::UnknownTool { .. } => ErrorKind::NotFound,
            CallError::Misconfigured { .. } => ErrorKind::Invalid,
            CallError::NotRunning { .. } => ErrorKind::NotRunning,
            CallError::Timeout { .. } => ErrorKind::Timeout,
            CallError::Cancelled => ErrorKind::Cancelled,
            CallError::Closed { .. } => ErrorKind::Closed,
            CallError::Protocol { .. } => ErrorKind::External,
            CallError::NeedsSignIn { .. } => ErrorKind::NeedsSignIn,
        };
        Self::new(kind, e.to_string())
    }
}

impl From<SignInFailure> for CommandError {
    fn from(e: SignInFailure) -> Self {
        use perch_core::mcp::sign_in::SignInError as E;
        use perch_core::oauth::loopback::CallbackError;
        match e {
            SignInFailure::Server(e) => e.into(),
            SignInFailure::SignIn(E::Browser(CallbackError::Cancelled)) => {
                Self::new(ErrorKind::Cancelled, e.to_string())
            }
            SignInFailure::SignIn(E::Browser(CallbackError::TimedOut(_))) => {
                Self::new(ErrorKind::Timeout, e.to_string())
            }
            SignInFailure::SignIn(E::NotHttp(_) | E::InsecureEndpoint { .. }) => {
                Self::new(ErrorKind::Invalid, e.to_string())
            }
            SignInFailure::NoKeyStore | SignInFailure::Store(_) | SignInFailure::SignIn(E::Store { .. }) => {
                Self::new(ErrorKind::Storage, e.to_string())
            }
            _ => Self::new(ErrorKind::External, e.to_string()),
        }
    }
}

impl From<perch_core::google::ConnectError> for CommandError {
    fn from(e: perch_core::google::ConnectError) -> Self {
        use perch_core::google::ConnectError as E;
        let kind = match &e {
            E::Cancelled => ErrorKind::Cancelled,
            E::TimedOut(_) => ErrorKind::Timeout,
            E::NoClient | E::NothingChosen => ErrorKind::Invalid,
            E::Store(_) => ErrorKind::Storage,
            _ => ErrorKind::External,
        };
        Self::new(kind, e.to_string())
    }
}

impl From<perch_core::google::ClientError> for CommandError {
    fn from(e: perch_core::google::ClientError) -> Self {
        Self::new(ErrorKind::Invalid, e.to_string())
    }
}

impl From<perch_core::oauth::store::StoreError> for CommandError {
    fn from(e: perch_core::oauth::store::StoreError) -> Self {
        Self::new(ErrorKind::Storage, e.to_string())
    }
}

impl From<ConfigError> for CommandError {
    fn from(e: ConfigError) -> Self {
        let kind = match &e {
            ConfigError::NotInUserFile(_) => ErrorKind::NotFound,
            ConfigError::Io { .. } => ErrorKind::Storage,
            _ => ErrorKind::Invalid,
        };
        Self::new(kind, e.to_string())
    }
}

impl From<EditError> for CommandError {
    fn from(e: EditError) -> Self {
        match e {
            EditError::Config(e) => e.into(),
            EditError::Server(e) => e.into(),
            other => Self::new(ErrorKind::Invalid, other.to_string()),
        }
    }
}

impl From<AnswerError> for CommandError {
    fn from(e: AnswerError) -> Self {
        // The question went away (answered elsewhere, or its turn ended).
        Self::new(ErrorKind::NotFound, e.to_string())
    }
}

impl From<perch_download::DownloadError> for CommandError {
    fn from(e: perch_download::DownloadError) -> Self {
        use perch_download::DownloadError as E;
        let kind = match &e {
            E::Cancelled => ErrorKind::Cancelled,
            E::Io { .. } => ErrorKind::Storage,
            _ => ErrorKind::External,
        };
        Self::new(kind, e.to_string())
    }
}

impl From<perch_update::UpdateError> for CommandError {
    fn from(e: perch_update::UpdateError) -> Self {
        use perch_update::UpdateError as E;
        let kind = match &e {
            E::NothingToDownload | E::NotDownloaded | E::CannotInstallHere(_) => ErrorKind::Invalid,
            _ => ErrorKind::External,
        };
        Self::new(kind, e.to_string())
    }
}

impl From<tauri::Error> for CommandError {
    fn from(e: tauri::Error) -> Self {
        Self::new(ErrorKind::Window, e.to_string())
    }
}

pub type CommandResult<T> = Result<T, CommandError>;

/// `text` with its first letter made a capital (an engine message used as a sentence).
pub(crate) fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mcp_failures_keep_their_kind_across_the_boundary() {
        let kind = |e: CallError| CommandError::from(e).kind;
        assert_eq!(kind(CallError::Timeout { server: "s".into(), secs: 60 }), ErrorKind::Timeout);
        assert_eq!(kind(CallError::Closed { server: "s".into() }), ErrorKind::Closed);
        assert_eq!(
            kind(CallError::NotRunning { server: "s".into(), status: "stopped".into() }),
            ErrorKind::NotRunning
        );
        assert_eq!(kind(CallError::UnknownServer("s".into())), ErrorKind::NotFound);
        assert_eq!(kind(CallError::Cancelled), ErrorKind::Cancelled);
        let edit = CommandError::from(EditError::Config(ConfigError::NotInUserFile("s".into())));
        assert_eq!(edit.kind, ErrorKind::NotFound);
        let edit = CommandError::from(EditError::Config(ConfigError::Paste("paste a JSON object".into())));
        assert_eq!((edit.kind, edit.message.as_str()), (ErrorKind::Invalid, "paste a JSON object"));
    }

    #[test]
    fn a_provider_failure_says_how_it_failed() {
        let e =
            CommandError::from(ProviderError::MissingKey { provider: "anthropic".into(), env: "X".into() });
        assert_eq!((e.kind, e.provider_kind), (ErrorKind::Provider, Some(ProviderErrorKind::MissingKey)));
        assert_eq!(CommandError::from(AnswerError::NotOpen(3)).kind, ErrorKind::NotFound);
    }
}
