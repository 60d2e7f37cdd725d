//! Shared by the integration tests: the MiniLM files from the venv, the evaluation data,
//! a counting embedder.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use perch_retrieval::{Embedder, RetrievalError, RetrieverKind, ToolDoc};
use serde::Deserialize;

#[allow(unused_imports)] // not every test binary loads the model
pub use perch_retrieval::test_support::minilm_dir;

#[derive(Deserialize)]
struct Tool {
    server: String,
    name: String,
    description: String,
    args: Vec<String>,
}

#[derive(Deserialize)]
pub struct Query {
    pub query: String,
    pub relevant: Vec<String>,
}

fn data(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The evaluation tools (tests/data/tools.json) as the index sees them.
pub fn tools() -> Vec<ToolDoc> {
    let tools: Vec<Tool> = serde_json::from_str(&data("tools.json")).unwrap();
    tools
        .iter()
        .map(|t| {
            let args: Vec<&str> = t.args.iter().map(String::as_str).collect();
            ToolDoc::from_parts(format!("{}__{}", t.server, t.name), &t.name, &t.description, &args)
        })
        .collect()
}

pub fn queries() -> Vec<Query> {
    serde_json::from_str(&data("queries.json")).unwrap()
}

pub fn doc<'a>(docs: &'a [ToolDoc], id: &str) -> &'a ToolDoc {
    docs.iter().find(|d| d.id == id).unwrap_or_else(|| panic!("no tool {id}"))
}

/// A toy embedder: one dimension per keyword, counting how many texts it was asked to embed.
/// With `fail` set it errors like an Ollama that went away.
#[derive(Clone, Default)]
pub struct Counting {
    pub embedded: Arc<AtomicUsize>,
    pub calls: Arc<AtomicUsize>,
    pub fail: bool,
}

pub const KEYWORDS: &[&str] = &["file", "folder", "time", "number", "review", "image"];

impl Counting {
    pub fn embedded(&self) -> usize {
        self.embedded.load(Ordering::SeqCst)
    }
}

#[async_trait::async_trait]
impl Embedder for Counting {
    fn kind(&self) -> RetrieverKind {
        RetrieverKind::Ollama
    }

    fn model_id(&self) -> String {
        "counting".into()
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, RetrievalError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if self.fail {
            return Err(RetrievalError::Unreachable {
                url: "http://127.0.0.1:9".into(),
                message: "connection refused".into(),
            });
        }
        self.embedded.fetch_add(texts.len(), Ordering::SeqCst);
        Ok(texts
            .iter()
            .map(|t| {
                let t = t.to_lowercase();
                let mut v: Vec<f32> = KEYWORDS.iter().map(|k| t.matches(k).count() as f32).collect();
                v.push(0.01); // never the zero vector
                let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                v.into_iter().map(|x| x / n).collect()
            })
            .collect())
    }
}
