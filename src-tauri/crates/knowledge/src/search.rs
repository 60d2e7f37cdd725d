//! A search: the passages that name the query's words (BM25 over FTS5) and the passages that
//! mean it (cosine over the embeddings, a flat scan of 8-bit vectors held in memory), the two
//! rankings fused by reciprocal rank (each list contributes 1 / (60 + rank)), which needs no
//! weights tuned to either score's scale.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use crate::{Knowledge, KnowledgeError};

/// Candidates taken from each ranking before they are fused.
const CANDIDATES: usize = 50;
/// Reciprocal rank fusion's constant (Cormack et al.'s 60, the usual choice).
const RRF_K: f64 = 60.0;

/// One passage found, with where it is.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Passage {
    pub path: PathBuf,
    pub start: usize,
    pub end: usize,
    pub heading: String,
    pub text: String,
    pub score: f64,
}

impl Passage {
    /// `path:start-end`, how the passage is cited.
    pub fn citation(&self) -> String {
        if self.start == self.end {
            format!("{}:{}", self.path.display(), self.start)
        } else {
            format!("{}:{}-{}", self.path.display(), self.start, self.end)
        }
    }

    /// A page of a PDF: its lines are the page's number.
    pub fn is_pdf(&self) -> bool {
        crate::kind_of(&self.path) == Some(crate::Kind::Pdf)
    }

    /// Where it is, in words: `path:start-end`, or `path, page N` for a PDF (no line to open).
    pub fn place(&self) -> String {
        if self.is_pdf() { format!("{}, page {}", self.path.display(), self.start) } else { self.citation() }
    }
}

/// How a search ranked.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", content = "reason", rename_all = "lowercase")]
pub enum Retrieval {
    /// Words and meaning together.
    Hybrid,
    /// Words only, and why (no embedding model, or it failed).
    Lexical(String),
}

/// What a search found.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Search {
    pub passages: Vec<Passage>,
    pub retrieval: Retrieval,
}

/// The stored embeddings, in memory for the scan: row `i` of `bytes` is passage `ids[i]`.
#[derive(Default)]
pub(crate) struct Vectors {
    generation: u64,
    dimensions: usize,
    ids: Vec<i64>,
    scales: Vec<f32>,
    bytes: Vec<i8>,
}

impl Vectors {
    fn load(&mut self, knowledge: &Knowledge, generation: u64) -> Result<(), KnowledgeError> {
        self.ids.clear();
        self.scales.clear();
        self.bytes.clear();
        self.dimensions = 0;
        let mut dimensions = 0;
        knowledge.db().vectors(|id, blob, scale| {
            if dimensions == 0 {
                dimensions = blob.len();
            }
            if blob.len() == dimensions {
                self.ids.push(id);
                self.scales.push(scale);
                self.bytes.extend(blob.iter().map(|&b| b as i8));
            }
        })?;
        self.dimensions = dimensions;
        self.generation = generation;
        self.ids.shrink_to_fit();
        self.scales.shrink_to_fit();
        self.bytes.shrink_to_fit();
        Ok(())
    }

    /// The `limit` passages nearest `query` (a unit vector), best first. The query is
    /// quantised as the passages are, so each row is an integer dot product (exact, and
    /// vectorised by the compiler; a float sum is kept in order and is not): 5x faster at
    /// 100,000 passages. Its scale is the same for every row, so it leaves the ranking alone.
    fn nearest(&self, query: &[f32], limit: usize) -> Vec<i64> {
        if self.dimensions == 0 || query.len() != self.dimensions {
            return Vec::new();
        }
        let (query, _) = crate::db::quantize(query);
        let query: Vec<i8> = query.into_iter().map(|b| b as i8).collect();
        let mut scored: Vec<(f32, i64)> = self
            .bytes
            .chunks_exact(self.dimensions)
            .zip(&self.ids)
            .zip(&self.scales)
            .map(|((row, &id), &scale)| (dot(row, &query) as f32 * scale, id))
            .collect();
        let keep = limit.min(scored.len());
        if keep == 0 {
            return Vec::new();
        }
        scored.select_nth_unstable_by(keep - 1, |a, b| b.0.total_cmp(&a.0));
        scored.truncate(keep);
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        scored.into_iter().map(|(_, id)| id).collect()
    }
}

/// The dot product of two rows of signed bytes (at most 384 x 127 x 127: no overflow).
fn dot(a: &[i8], b: &[i8]) -> i32 {
    a.iter().zip(b).map(|(&x, &y)| i32::from(x) * i32::from(y)).sum()
}

/// The words FTS5 indexes for a text: split at camelCase and snake_case, lowercased, stemmed,
/// stop words dropped (the same tokenizer as the query's).
pub(crate) fn words(text: &str) -> String {
    perch_retrieval::tokenize(text).join(" ")
}

/// An FTS5 query that matches any of the query's words, each quoted (so no word is read as
/// an FTS5 operator). Only the tokenizer's stop words are dropped: BM25's weight for a word
/// already falls with the passages that hold it, and a list of "question words" dropped on top
/// (where, should, will, they, into...) lost words that the prose of an answer shares with the
/// question (the bench's labelled sets: see ARCHITECTURE, the knowledge folders' figures).
fn fts_query(query: &str) -> Option<String> {
    let mut terms = perch_retrieval::tokenize(query);
    terms.sort();
    terms.dedup();
    (!terms.is_empty())
        .then(|| terms.iter().map(|t| format!("\"{}\"", t.replace('"', ""))).collect::<Vec<_>>().join(" OR "))
}

impl Knowledge {
    /// The passage stored at exactly these lines of `path` (as a search gave it), with its text
    /// as indexed now; `None` when the file changed since and the passage is gone.
    pub fn passage(&self, path: &Path, start: usize, end: usize) -> Result<Option<Passage>, KnowledgeError> {
        Ok(self.db().chunk_at(path, start, end)?.map(|c| Passage {
            path: c.path,
            start: c.start,
            end: c.end,
            heading: c.heading,
            text: c.text,
            score: 0.0,
        }))
    }

    /// The `k` passages that answer `query` best.
    pub fn search(&self, query: &str, k: usize) -> Result<Search, KnowledgeError> {
        let lexical = match fts_query(query) {
            Some(q) => self.db().lexical(&q, CANDIDATES)?,
            None => Vec::new(),
        };
        let (semantic, retrieval) = match self.embedder() {
            None => (Vec::new(), Retrieval::Lexical("the embedding model is not downloaded".into())),
            Some(embedder) => match embedder.embed(&[query.to_owned()]) {
                Ok(mut v) if !v.is_empty() => {
                    let query_vector = v.swap_remove(0);
                    let generation = self.generation.load(Ordering::Relaxed);
                    let mut vectors = self.vectors.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                    if vectors.generation != generation {
                        vectors.load(self, generation)?;
                    }
                    (vectors.nearest(&query_vector, CANDIDATES), Retrieval::Hybrid)
                }
                Ok(_) => (Vec::new(), Retrieval::Lexical("the embedding model returned nothing".into())),
                Err(e) => {
                    tracing::warn!(error = %e, "the embedding model failed a knowledge search");
                    (Vec::new(), Retrieval::Lexical(format!("the embedding model failed: {e}")))
                }
            },
        };
        let fused = fuse(&[&lexical, &semantic], k);
        let ids: Vec<i64> = fused.iter().map(|(id, _)| *id).collect();
        let mut passages: Vec<Passage> = self
            .db()
            .chunks(&ids)?
            .into_iter()
            .map(|c| Passage {
                score: fused.iter().find(|(id, _)| *id == c.id).map_or(0.0, |(_, s)| *s),
                path: c.path,
                start: c.start,
                end: c.end,
                heading: c.heading,
                text: c.text,
            })
            .collect();
        passages.sort_by(|a, b| b.score.total_cmp(&a.score));
        Ok(Search { passages, retrieval })
    }
}

/// Reciprocal rank fusion of rankings (best first) into the best `k`, with their scores.
fn fuse(rankings: &[&[i64]], k: usize) -> Vec<(i64, f64)> {
    let mut scores: Vec<(i64, f64)> = Vec::new();
    for ranking in rankings {
        for (rank, id) in ranking.iter().enumerate() {
            let add = 1.0 / (RRF_K + rank as f64 + 1.0);
            match scores.iter_mut().find(|(i, _)| i == id) {
                Some((_, s)) => *s += add,
                None => scores.push((*id, add)),
            }
        }
    }
    // Ties (one list each, same rank) keep the lexical list's order: it came first.
    scores.sort_by(|a, b| b.1.total_cmp(&a.1));
    scores.truncate(k);
    scores
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_integer_scan_ranks_as_cosine_does() {
        // Three unit vectors at known angles to the query.
        let unit = |v: Vec<f32>| {
            let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
            v.into_iter().map(|x| x / n).collect::<Vec<f32>>()
        };
        let query = unit((0..384).map(|i| (i % 7) as f32 - 3.0).collect());
        let rows: Vec<Vec<f32>> = [0.2f32, 0.9, 0.5]
            .iter()
            .map(|&w| {
                unit(
                    query
                        .iter()
                        .enumerate()
                        .map(|(i, q)| w * q + (1.0 - w) * ((i % 5) as f32 - 2.0) / 20.0)
                        .collect(),
                )
            })
            .collect();
        let mut vectors = Vectors { generation: 0, dimensions: 384, ..Vectors::default() };
        for (id, row) in rows.iter().enumerate() {
            let (bytes, scale) = crate::db::quantize(row);
            vectors.ids.push(id as i64);
            vectors.scales.push(scale as f32);
            vectors.bytes.extend(bytes.into_iter().map(|b| b as i8));
        }
        let mut by_cosine: Vec<(f32, i64)> =
            rows.iter().enumerate().map(|(i, r)| (perch_retrieval::cosine(r, &query), i as i64)).collect();
        by_cosine.sort_by(|a, b| b.0.total_cmp(&a.0));
        let expected: Vec<i64> = by_cosine.into_iter().map(|(_, id)| id).collect();
        assert_eq!(vectors.nearest(&query, 3), expected);
        assert_eq!(expected, vec![1, 2, 0]);
        assert_eq!(vectors.nearest(&query, 1), vec![1]);
    }

    #[test]
    fn fusion_rewards_agreement() {
        let lexical = [1, 2, 3];
        let semantic = [3, 4, 1];
        let fused: Vec<i64> = fuse(&[&lexical, &semantic], 4).into_iter().map(|(id, _)| id).collect();
        // 1 is first and third, 3 third and first: both above 2 and 4, found once each.
        assert_eq!(fused, vec![1, 3, 2, 4]);
    }

    #[test]
    fn queries_are_words_never_operators() {
        let q = fts_query("Where do we handle tokenRefresh?").unwrap_or_default();
        assert!(q.contains("\"token\"") && q.contains("\"refresh\"") && q.contains(" OR "), "{q}");
        assert!(!q.contains("\"do\""), "stop words are not searched: {q}");
        let q = fts_query("NEAR(\"a\" OR b) AND NOT c*").unwrap_or_default();
        assert!(!q.contains('('), "{q}");
        assert_eq!(fts_query("the of"), None);
    }
}
