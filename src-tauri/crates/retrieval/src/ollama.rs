//! Embeddings from an Ollama server (`POST /api/embed`).

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use crate::{Embedder, RetrievalError, RetrieverKind, normalize};

/// An embedding model served by Ollama, such as `nomic-embed-text` or `all-minilm`.
#[derive(Debug, Clone)]
pub struct OllamaEmbedder {
    client: reqwest::Client,
    base_url: String,
    model: String,
    timeout: Duration,
}

#[derive(Deserialize)]
struct EmbedResponse {
    embeddings: Vec<Vec<f32>>,
}

#[derive(Deserialize)]
struct ErrorBody {
    error: String,
}

impl OllamaEmbedder {
    /// `base_url` is Ollama's address, e.g. `http://127.0.0.1:11434`.
    pub fn new(client: reqwest::Client, base_url: &str, model: &str) -> Self {
        Self {
            client,
            base_url: base_url.trim_end_matches('/').to_owned(),
            model: model.to_owned(),
            timeout: Duration::from_secs(30),
        }
    }

    /// The limit for one request (default 30 s; the first one also loads the model).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    pub fn model(&self) -> &str {
        &self.model
    }
}

#[async_trait::async_trait]
impl Embedder for OllamaEmbedder {
    fn kind(&self) -> RetrieverKind {
        RetrieverKind::Ollama
    }

    fn model_id(&self) -> String {
        format!("ollama:{}", self.model)
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, RetrievalError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let url = format!("{}/api/embed", self.base_url);
        let response = self
            .client
            .post(&url)
            .timeout(self.timeout)
            .json(&json!({ "model": self.model, "input": texts }))
            .send()
            .await
            .map_err(|e| RetrievalError::Unreachable { url: self.base_url.clone(), message: describe(&e) })?;
        let status = response.status();
        let body = response
            .text()
            .await
            .map_err(|e| RetrievalError::Unreachable { url: self.base_url.clone(), message: describe(&e) })?;
        if !status.is_success() {
            let error = serde_json::from_str::<ErrorBody>(&body).ok().map(|b| b.error);
            return Err(match error {
                Some(message) if status == reqwest::StatusCode::NOT_FOUND => {
                    RetrievalError::ModelNotFound { model: self.model.clone(), message }
                }
                Some(message) => RetrievalError::Http { url, status: status.as_u16(), message },
                None => {
                    let mut message: String = body.trim().chars().take(300).collect();
                    if status == reqwest::StatusCode::NOT_FOUND {
                        message.push_str(" (this server has no /api/embed: Ollama 0.3 or newer is needed)");
                    }
                    RetrievalError::Http { url, status: status.as_u16(), message }
                }
            });
        }
        let parsed: EmbedResponse = serde_json::from_str(&body)
            .map_err(|e| RetrievalError::BadResponse { url: url.clone(), message: e.to_string() })?;
        if parsed.embeddings.len() != texts.len() {
            return Err(RetrievalError::BadResponse {
                url,
                message: format!("{} embeddings for {} texts", parsed.embeddings.len(), texts.len()),
            });
        }
        let mut vectors = parsed.embeddings;
        vectors.iter_mut().for_each(|v| normalize(v));
        Ok(vectors)
    }
}

/// reqwest's message with its causes ("error sending request: connection refused").
fn describe(e: &reqwest::Error) -> String {
    let mut text = if e.is_timeout() { "timed out".to_owned() } else { e.to_string() };
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}
