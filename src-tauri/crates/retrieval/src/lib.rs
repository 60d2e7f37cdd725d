//! Top-K tool retrieval: of the many tools the MCP servers offer, pick the few that fit the
//! user's message, so the prompt stays short.
//!
//! Three retrievers rank tools: [`MiniLm`] (all-MiniLM-L6-v2 sentence embeddings on the CPU
//! with candle), [`OllamaEmbedder`] (an embedding model served by Ollama), and [`Bm25`]
//! (lexical, needs nothing). [`ToolIndex`] holds the tool descriptions and their embeddings
//! (kept across restarts by [`EmbeddingCache`]) and falls back to BM25 whenever an embedder
//! is missing or fails. [`download`] fetches the MiniLM files with checksums.

mod bm25;
mod cache;
pub mod download;
mod error;
mod index;
mod minilm;
mod ollama;
#[cfg(feature = "test-support")]
pub mod test_support;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use bm25::{Bm25, tokenize};
pub use cache::EmbeddingCache;
pub use error::{CacheFault, RetrievalError};
pub use index::{Selection, ToolIndex};
pub use minilm::{MiniLm, MiniLmSlot};
pub use ollama::OllamaEmbedder;

/// One tool as the retrievers see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolDoc {
    /// The qualified tool id, `server__tool` (e.g. `demo__add`).
    pub id: String,
    /// What is ranked: the tool's name, description and argument names.
    pub text: String,
}

impl ToolDoc {
    pub fn new(id: impl Into<String>, text: impl Into<String>) -> Self {
        Self { id: id.into(), text: text.into() }
    }

    /// The usual text for a tool: its name, its description, then its argument names.
    pub fn from_parts(id: impl Into<String>, name: &str, description: &str, args: &[&str]) -> Self {
        let mut text = format!("{name}: {}", description.trim());
        if !args.is_empty() {
            text.push_str(" (arguments: ");
            text.push_str(&args.join(", "));
            text.push(')');
        }
        Self { id: id.into(), text }
    }
}

/// Which retriever ranked (or would rank) the tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RetrieverKind {
    MiniLm,
    Ollama,
    Bm25,
}

impl fmt::Display for RetrieverKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::MiniLm => "minilm",
            Self::Ollama => "ollama",
            Self::Bm25 => "bm25",
        })
    }
}

impl std::str::FromStr for RetrieverKind {
    type Err = RetrievalError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "minilm" => Ok(Self::MiniLm),
            "ollama" => Ok(Self::Ollama),
            "bm25" => Ok(Self::Bm25),
            other => Err(RetrievalError::UnknownRetriever(other.to_owned())),
        }
    }
}

/// Turns texts into sentence embeddings.
#[async_trait::async_trait]
pub trait Embedder: Send + Sync {
    fn kind(&self) -> RetrieverKind;

    /// Names the model, as part of the embedding cache's key: two embedders with the same
    /// id must give the same vectors.
    fn model_id(&self) -> String;

    /// One L2-normalised vector per text, in order.
    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, RetrievalError>;
}

/// Cosine similarity; 0 when either vector is zero or their lengths differ.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 { 0.0 } else { dot / (na.sqrt() * nb.sqrt()) }
}

/// Scales `v` to unit length in place (a zero vector stays zero).
pub(crate) fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_round_trip_in_lowercase() {
        for kind in [RetrieverKind::MiniLm, RetrieverKind::Ollama, RetrieverKind::Bm25] {
            let json = serde_json::to_string(&kind).unwrap_or_default();
            assert_eq!(json, format!("\"{kind}\""));
            assert_eq!(kind.to_string().parse::<RetrieverKind>().ok(), Some(kind));
        }
        assert!("bert".parse::<RetrieverKind>().is_err());
    }

    #[test]
    fn tool_text_names_the_arguments() {
        let doc = ToolDoc::from_parts("demo__add", "add", " Add two numbers. ", &["a", "b"]);
        assert_eq!(doc.text, "add: Add two numbers. (arguments: a, b)");
    }

    #[test]
    fn cosine_of_parallel_and_orthogonal_vectors() {
        assert!((cosine(&[1.0, 1.0], &[2.0, 2.0]) - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 3.0]), 0.0);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
        assert_eq!(cosine(&[1.0], &[1.0, 0.0]), 0.0);
    }
}
