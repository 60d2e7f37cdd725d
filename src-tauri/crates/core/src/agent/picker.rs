//! Top-K tool retrieval for the turn: when more tools are enabled than K, offer the model the
//! K that fit the message best, plus the always-on ones. Ranked by the embedded MiniLM model
//! when it is downloaded, else Ollama's embeddings, else BM25 (see `perch-retrieval`).
//! Embeddings of tool descriptions are cached in the data dir across restarts.

use std::path::{Path, PathBuf};

use perch_retrieval::download::{self, MINILM_FILES};
use perch_retrieval::{
    Embedder, EmbeddingCache, MiniLmSlot, OllamaEmbedder, RetrieverKind, ToolDoc, ToolIndex,
};
use serde::Serialize;
use tokio::sync::Mutex;

use super::tools::OfferedTool;
use crate::providers::http::{Clients, Timeouts};
use crate::settings::{RetrieverChoice, ToolSettings};

const CACHE_FILE: &str = "tool-embeddings.bin";

/// Whether the embedded model is here, and where.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct ModelStatus {
    pub present: bool,
    pub path: String,
    /// Bytes to download when absent.
    pub download_bytes: u64,
}

/// Download progress, in bytes.
#[derive(Debug, Clone, Copy, Serialize, specta::Type)]
pub struct DownloadProgress {
    pub done: u64,
    pub total: u64,
}

/// What the last pick did, for logs and the CLI.
#[derive(Debug, Clone, PartialEq)]
pub struct Picked {
    pub used: RetrieverKind,
    pub fallback_reason: Option<String>,
}

pub struct ToolPicker {
    index: Mutex<ToolIndex>,
    cache_path: PathBuf,
    model_dir: PathBuf,
    minilm: MiniLmSlot,
    clients: Clients,
}

impl std::fmt::Debug for ToolPicker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolPicker").field("model_dir", &self.model_dir).finish_non_exhaustive()
    }
}

impl ToolPicker {
    /// `PERCH_MINILM_DIR` points at an existing copy of the model (tests use the PyPI one).
    pub fn new(data_dir: &Path, clients: Clients) -> Self {
        let cache_path = data_dir.join(CACHE_FILE);
        let model_dir = std::env::var_os("PERCH_MINILM_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| data_dir.join("models").join("all-MiniLM-L6-v2"));
        Self {
            index: Mutex::new(ToolIndex::with_cache(
                Vec::new(),
                EmbeddingCache::load_or_default(&cache_path),
            )),
            cache_path,
            minilm: MiniLmSlot::new(model_dir.clone()),
            model_dir,
            clients,
        }
    }

    pub fn model_status(&self) -> ModelStatus {
        let missing = download::missing(MINILM_FILES, &self.model_dir);
        ModelStatus {
            present: missing.is_empty(),
            path: self.model_dir.display().to_string(),
            download_bytes: missing.iter().map(|f| f.size).sum(),
        }
    }

    /// Downloads the model (checked against its sha256), reporting progress.
    pub async fn download_model(
        &self,
        mut progress: impl FnMut(u64, u64) + Send,
    ) -> Result<(), download::DownloadError> {
        let client = self.clients.get(Timeouts::default()).client;
        download::fetch(&client, MINILM_FILES, &self.model_dir, download::Fetch::default(), |p| {
            progress(p.done, p.total)
        })
        .await
    }

    /// The embedded model, shared.
    pub fn minilm(&self) -> &MiniLmSlot {
        &self.minilm
    }

    async fn embedder(&self, settings: &ToolSettings, ollama_url: &str) -> Option<Box<dyn Embedder>> {
        let ollama = || {
            let client = self.clients.get(Timeouts::default()).client;
            Box::new(OllamaEmbedder::new(client, ollama_url, &settings.ollama_embedding_model))
                as Box<dyn Embedder>
        };
        match settings.retriever {
            RetrieverChoice::Bm25 => None,
            RetrieverChoice::Ollama => Some(ollama()),
            RetrieverChoice::MiniLm => {
                self.minilm.get().await.map(|m| Box::new((*m).clone()) as Box<dyn Embedder>)
            }
            RetrieverChoice::Auto => match self.minilm.get().await {
                Some(m) => Some(Box::new((*m).clone())),
                None => Some(ollama()),
            },
        }
    }

    /// The tools to offer for `query`: all of them when they are few, else the always-on ones
    /// and the `top_k` best of the rest.
    pub async fn pick(
        &self,
        settings: &ToolSettings,
        ollama_url: &str,
        offered: Vec<OfferedTool>,
        always_on: &[String],
        query: &str,
    ) -> (Vec<OfferedTool>, Option<Picked>) {
        let k = settings.top_k.max(1) as usize;
        let pinned = offered.iter().filter(|t| always_on.contains(&t.name)).count();
        if offered.len() <= k + pinned {
            return (offered, None);
        }
        let docs: Vec<ToolDoc> = offered.iter().map(doc).collect();
        let embedder = self.embedder(settings, ollama_url).await;
        let mut index = self.index.lock().await;
        index.set_docs(docs);
        let selection = match index.select(embedder.as_deref(), query, k, always_on).await {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!(error = %e, "tool retrieval failed; offering every tool");
                return (offered, None);
            }
        };
        if index.cache().is_dirty()
            && let Err(e) = index.cache_mut().save(&self.cache_path)
        {
            tracing::warn!(error = %e, "could not save the tool embeddings");
        }
        drop(index);
        let picked =
            selection.ids.iter().filter_map(|id| offered.iter().find(|t| &t.name == id).cloned()).collect();
        (picked, Some(Picked { used: selection.used, fallback_reason: selection.fallback_reason }))
    }
}

/// What retrieval ranks: the tool's name, description and argument names.
fn doc(tool: &OfferedTool) -> ToolDoc {
    let args: Vec<&str> = tool
        .tool
        .input_schema
        .get("properties")
        .and_then(|p| p.as_object())
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    ToolDoc::from_parts(&tool.name, &tool.tool.name, &tool.tool.description, &args)
}
