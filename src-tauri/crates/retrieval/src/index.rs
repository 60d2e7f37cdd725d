//! The tool index: picks the tools for one message with an embedder, or BM25 without one.

use std::collections::HashSet;

use crate::{Bm25, Embedder, EmbeddingCache, RetrievalError, RetrieverKind, ToolDoc, cosine};

/// How many texts go to the embedder in one call.
const BATCH: usize = 64;

/// The tools chosen for one message.
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// The always-on tools first (in the order asked for), then the best of the rest, best first.
    pub ids: Vec<String>,
    /// The retriever that ranked them: the embedder's kind, or BM25 when there was no embedder
    /// or it failed. When every tool fits (nothing to rank) it names the retriever asked for.
    pub used: RetrieverKind,
    /// Why the embedder was not used, when it failed.
    pub fallback_reason: Option<String>,
}

/// Tool descriptions with their embeddings (per model, in an [`EmbeddingCache`]) and a BM25
/// index for the fallback.
#[derive(Debug, Clone)]
pub struct ToolIndex {
    docs: Vec<ToolDoc>,
    bm25: Bm25,
    cache: EmbeddingCache,
}

impl ToolIndex {
    pub fn new(docs: Vec<ToolDoc>) -> Self {
        Self::with_cache(docs, EmbeddingCache::new())
    }

    /// An index that reuses embeddings computed before (loaded with [`EmbeddingCache::load`]).
    pub fn with_cache(docs: Vec<ToolDoc>, cache: EmbeddingCache) -> Self {
        let bm25 = Bm25::new(&docs.iter().map(|d| d.text.as_str()).collect::<Vec<_>>());
        Self { docs, bm25, cache }
    }

    /// Replaces the tools (the catalog changed), keeping the cached embeddings.
    pub fn set_docs(&mut self, docs: Vec<ToolDoc>) {
        self.bm25 = Bm25::new(&docs.iter().map(|d| d.text.as_str()).collect::<Vec<_>>());
        self.docs = docs;
    }

    pub fn docs(&self) -> &[ToolDoc] {
        &self.docs
    }

    pub fn cache(&self) -> &EmbeddingCache {
        &self.cache
    }

    /// For saving: `index.cache_mut().save(path)` once [`EmbeddingCache::is_dirty`].
    pub fn cache_mut(&mut self) -> &mut EmbeddingCache {
        &mut self.cache
    }

    pub fn into_cache(self) -> EmbeddingCache {
        self.cache
    }

    /// Embeds every tool description the cache lacks (for warming up in the background, so the
    /// first message does not wait). Returns how many were embedded.
    pub async fn warm(&mut self, embedder: &dyn Embedder) -> Result<usize, RetrievalError> {
        let all: Vec<usize> = (0..self.docs.len()).collect();
        self.embed_missing(embedder, &all).await
    }

    /// The tools for `query`: every `always_on` tool that exists, plus the `k` best of the rest.
    /// When the rest number `k` or fewer, all tools are returned without ranking. Without an
    /// embedder, or when it fails, BM25 ranks instead (and the selection says why).
    pub async fn select(
        &mut self,
        retriever: Option<&dyn Embedder>,
        query: &str,
        k: usize,
        always_on: &[String],
    ) -> Result<Selection, RetrievalError> {
        let mut ids: Vec<String> = Vec::new();
        for id in always_on {
            if !ids.contains(id) && self.docs.iter().any(|d| &d.id == id) {
                ids.push(id.clone());
            }
        }
        let pinned: HashSet<&str> = ids.iter().map(String::as_str).collect();
        let rest: Vec<usize> =
            (0..self.docs.len()).filter(|&i| !pinned.contains(self.docs[i].id.as_str())).collect();
        let asked = retriever.map_or(RetrieverKind::Bm25, |r| r.kind());
        if rest.len() <= k || k == 0 {
            ids.extend(rest.iter().take(k).map(|&i| self.docs[i].id.clone()));
            return Ok(Selection { ids, used: asked, fallback_reason: None });
        }

        let (scores, used, fallback_reason) = match retriever {
            None => (self.bm25.scores(query), RetrieverKind::Bm25, None),
            Some(embedder) => match self.embedding_scores(embedder, query, &rest).await {
                Ok(scores) => (scores, asked, None),
                Err(e) => {
                    tracing::warn!(retriever = %asked, "tool retrieval falls back to BM25: {e}");
                    let reason = format!("{asked} retrieval failed: {e}");
                    (self.bm25.scores(query), RetrieverKind::Bm25, Some(reason))
                }
            },
        };
        let mut ranked: Vec<(usize, f32)> = rest.iter().map(|&i| (i, scores[i])).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
        ids.extend(ranked.into_iter().take(k).map(|(i, _)| self.docs[i].id.clone()));
        Ok(Selection { ids, used, fallback_reason })
    }

    /// Cosine similarity of the query to each document in `rest` (0 for the others).
    async fn embedding_scores(
        &mut self,
        embedder: &dyn Embedder,
        query: &str,
        rest: &[usize],
    ) -> Result<Vec<f32>, RetrievalError> {
        self.embed_missing(embedder, rest).await?;
        let query_vec =
            embedder.embed(&[query.to_owned()]).await?.pop().ok_or_else(|| RetrievalError::BadResponse {
                url: embedder.model_id(),
                message: "no embedding for the message".into(),
            })?;
        let model = embedder.model_id();
        let mut scores = vec![0.0; self.docs.len()];
        for &i in rest {
            let doc = self
                .cache
                .get(&model, &self.docs[i].text)
                .ok_or_else(|| RetrievalError::Model(format!("no embedding for {}", self.docs[i].id)))?;
            if doc.len() != query_vec.len() {
                return Err(RetrievalError::Model(format!(
                    "the message has {} dimensions and {} has {}",
                    query_vec.len(),
                    self.docs[i].id,
                    doc.len()
                )));
            }
            scores[i] = cosine(&query_vec, doc);
        }
        Ok(scores)
    }

    async fn embed_missing(
        &mut self,
        embedder: &dyn Embedder,
        which: &[usize],
    ) -> Result<usize, RetrievalError> {
        let model = embedder.model_id();
        let mut missing: Vec<String> = which
            .iter()
            .map(|&i| &self.docs[i].text)
            .filter(|t| self.cache.get(&model, t).is_none())
            .cloned()
            .collect();
        missing.sort();
        missing.dedup();
        for batch in missing.chunks(BATCH) {
            let vectors = embedder.embed(batch).await?;
            if vectors.len() != batch.len() {
                return Err(RetrievalError::BadResponse {
                    url: model.clone(),
                    message: format!("{} embeddings for {} texts", vectors.len(), batch.len()),
                });
            }
            for (text, vector) in batch.iter().zip(vectors) {
                self.cache.insert(&model, text, vector);
            }
        }
        Ok(missing.len())
    }
}
