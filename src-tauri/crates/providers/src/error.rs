//! What can go wrong talking to a model, in terms a person can act on.

use std::time::Duration;

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ProviderError {
    #[error("{provider} is not reachable at {url}. {hint}")]
    Unreachable { provider: String, url: String, hint: String },
    #[error("there is no API key for {provider}; add one in Settings -> Models, or set {env}")]
    MissingKey { provider: String, env: String },
    #[error("the key for {provider} was rejected; check it in Settings -> Models")]
    Auth { provider: String },
    #[error("{provider} is rate limiting requests{}", retry_hint(.retry_after))]
    RateLimited { provider: String, retry_after: Option<Duration> },
    #[error("{provider} has no model {model:?}{}", available_hint(.available))]
    ModelNotFound { provider: String, model: String, available: Vec<String> },
    #[error(
        "the conversation is longer than {model} can read; start a new chat or pick a model with a longer context"
    )]
    ContextTooLong { model: String },
    #[error("{model} cannot read images; pick a vision model or remove the images")]
    NoVision { model: String },
    #[error("{provider} refused the request: {message}")]
    BadRequest { provider: String, message: String },
    #[error("{provider} had a server error ({status}): {message}")]
    Server { provider: String, status: u16, message: String },
    #[error("the answer from {provider} broke off: {message}")]
    Stream { provider: String, message: String },
    #[error("{provider} sent nothing for {} s", .after.as_secs())]
    Stalled { provider: String, after: Duration },
    #[error(
        "unknown provider {0:?}; use ollama, local, openai, anthropic, gemini or one you added in Settings"
    )]
    UnknownProvider(String),
    /// A local model that cannot run here: a damaged file, too little memory, an architecture
    /// llama.cpp does not know. The reason says what to do.
    #[error("{reason}")]
    LocalModel { reason: String },
}

fn retry_hint(after: &Option<Duration>) -> String {
    match after {
        Some(d) => format!("; try again in {} s", d.as_secs().max(1)),
        None => "; wait a moment and try again".into(),
    }
}

fn available_hint(available: &[String]) -> String {
    match available {
        [] => String::new(),
        list if list.len() <= 12 => format!("; installed: {}", list.join(", ")),
        list => format!("; installed: {} and {} more", list[..12].join(", "), list.len() - 12),
    }
}

/// Which way a provider failed, for the UI to branch on (exported through the bindings, so
/// the UI's table of next steps cannot miss one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ProviderErrorKind {
    Unreachable,
    MissingKey,
    Auth,
    RateLimited,
    ModelNotFound,
    ContextTooLong,
    NoVision,
    BadRequest,
    Server,
    Stream,
    Stalled,
    UnknownProvider,
    LocalModel,
}

impl ProviderError {
    pub fn kind(&self) -> ProviderErrorKind {
        use ProviderErrorKind as K;
        match self {
            Self::Unreachable { .. } => K::Unreachable,
            Self::MissingKey { .. } => K::MissingKey,
            Self::Auth { .. } => K::Auth,
            Self::RateLimited { .. } => K::RateLimited,
            Self::ModelNotFound { .. } => K::ModelNotFound,
            Self::ContextTooLong { .. } => K::ContextTooLong,
            Self::NoVision { .. } => K::NoVision,
            Self::BadRequest { .. } => K::BadRequest,
            Self::Server { .. } => K::Server,
            Self::Stream { .. } => K::Stream,
            Self::Stalled { .. } => K::Stalled,
            Self::UnknownProvider(_) => K::UnknownProvider,
            Self::LocalModel { .. } => K::LocalModel,
        }
    }
}
