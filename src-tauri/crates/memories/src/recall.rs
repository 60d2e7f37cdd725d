//! Which memories a question is about. A question is given those only, never the whole list:
//! a long list costs every answer its tokens and drowns the one fact that matters.
//!
//! With the embedding model (all-MiniLM-L6-v2, shared with the tool picker and the knowledge
//! folders), a memory is related when its meaning is close to the question's or when they share
//! a word that says what they are about; without it, by shared words alone.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use perch_retrieval::{MiniLm, RetrievalError, cosine, tokenize};

use crate::Memory;

/// At most this many memories go with one question.
pub const MOST: usize = 5;

/// The cosine similarity (all-MiniLM-L6-v2) from which a memory counts as related to a
/// question. Measured in `tests/recall.rs`: a question about the same matter as a memory in
/// other words scores 0.27 to 0.53 against it (a snack and a peanut allergy 0.27), an
/// unrelated one -0.09 to 0.20.
pub const RELATED: f32 = 0.25;
/// With the model, a shared word counts only with some closeness of meaning too: "code" in a
/// question about deploying does not make a note about indenting code related (0.03).
const RELATED_BY_A_WORD: f32 = 0.1;

/// Words that say nothing about what a question or a memory is about (on top of the
/// tokenizer's own stopwords): question words, and the words every memory has.
const GENERIC: &[&str] = &[
    "where", "when", "which", "who", "why", "whom", "whose", "does", "did", "doe", "done", "we", "our", "us",
    "there", "was", "were", "have", "has", "had", "about", "into", "they", "them", "their", "not", "should",
    "would", "could", "will", "any", "all", "some", "user", "prefer", "like", "want", "always", "never",
    "use", "know", "tell", "remember", "think", "make", "get", "need", "one", "just", "he", "she", "his",
    "her", "am", "been", "being", "than", "then", "also", "very", "much", "more", "most", "now",
];

fn content_words(text: &str) -> HashSet<String> {
    // One letter is a possessive's `s` or an initial, not a subject.
    tokenize(text).into_iter().filter(|w| w.chars().count() > 1 && !GENERIC.contains(&w.as_str())).collect()
}

/// The memories' vectors, kept between questions (by text, so an edited memory is embedded
/// again and a forgotten one dropped).
#[derive(Default)]
pub struct Recall {
    vectors: Mutex<HashMap<String, Vec<f32>>>,
}

impl Recall {
    /// The memories `question` is about, the most related first, at most [`MOST`]. Blocking
    /// when `model` is given (it embeds): call it off the async threads.
    pub fn relevant(&self, question: &str, memories: &[Memory], model: Option<&MiniLm>) -> Vec<Memory> {
        if memories.is_empty() {
            return Vec::new();
        }
        let words = content_words(question);
        let similarities = model.and_then(|m| {
            self.similarities(m, question, memories)
                .inspect_err(|e| tracing::warn!(error = %e, "memories are recalled by their words only"))
                .ok()
        });
        let mut related: Vec<(f32, &Memory)> = memories
            .iter()
            .enumerate()
            .filter_map(|(i, memory)| {
                let shared = content_words(&memory.text).intersection(&words).count();
                let related = match &similarities {
                    Some(s) => s[i] >= RELATED || (shared > 0 && s[i] >= RELATED_BY_A_WORD),
                    None => shared > 0,
                };
                let similarity = similarities.as_ref().map_or(0.0, |s| s[i]);
                related.then_some((similarity + 0.1 * shared as f32, memory))
            })
            .collect();
        related.sort_by(|a, b| b.0.total_cmp(&a.0));
        related.into_iter().take(MOST).map(|(_, m)| m.clone()).collect()
    }

    fn similarities(
        &self,
        model: &MiniLm,
        question: &str,
        memories: &[Memory],
    ) -> Result<Vec<f32>, RetrievalError> {
        let mut vectors = self.vectors.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let kept: HashSet<&str> = memories.iter().map(|m| m.text.as_str()).collect();
        vectors.retain(|text, _| kept.contains(text.as_str()));
        let mut texts = vec![question.to_owned()];
        texts.extend(kept.iter().filter(|t| !vectors.contains_key(**t)).map(|t| (*t).to_owned()));
        let mut embedded = model.embed_blocking(&texts)?.into_iter();
        let question_vector = embedded.next().unwrap_or_default();
        for (text, vector) in texts.into_iter().skip(1).zip(embedded) {
            vectors.insert(text, vector);
        }
        Ok(memories
            .iter()
            .map(|m| vectors.get(&m.text).map_or(0.0, |v| cosine(&question_vector, v)))
            .collect())
    }
}
