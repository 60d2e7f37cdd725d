use std::path::PathBuf;

/// What can go wrong while retrieving tools, loading a model or fetching its files.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RetrievalError {
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error(
        "the MiniLM model is not installed: {path} is missing (download it in Settings, or run `make deps` in a checkout)"
    )]
    ModelMissing { path: PathBuf },

    #[error("the embedding model could not be loaded or run: {0}")]
    Model(String),

    #[error("Ollama is not reachable at {url}: {message}")]
    Unreachable { url: String, message: String },

    #[error("Ollama has no embedding model {model:?} ({message}); pull it with `ollama pull {model}`")]
    ModelNotFound { model: String, message: String },

    #[error("{url} answered HTTP {status}: {message}")]
    Http { url: String, status: u16, message: String },

    #[error("unexpected answer from {url}: {message}")]
    BadResponse { url: String, message: String },

    #[error("the embedding cache {path} is unreadable: {fault}")]
    Cache { path: PathBuf, fault: CacheFault },

    #[error("unknown retriever {0:?}; use minilm, ollama or bm25")]
    UnknownRetriever(String),

    #[error("the embedding task stopped unexpectedly: {0}")]
    Task(String),
}

impl RetrievalError {
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io { action, path: path.into(), source }
    }

    pub(crate) fn model(e: impl std::fmt::Display) -> Self {
        Self::Model(e.to_string())
    }
}

/// What is wrong with a cache file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum CacheFault {
    #[error("not an embedding cache")]
    NotACache,
    #[error("format version {found}, expected {expected}")]
    Version { found: u32, expected: u32 },
    #[error("truncated")]
    Truncated,
    #[error("a model name is not UTF-8")]
    ModelName,
    #[error("dimension too large")]
    Dimension,
    #[error("trailing bytes")]
    TrailingBytes,
}
