//! Okapi BM25 over tool descriptions: the retriever that needs no model.

use std::collections::HashMap;

const K1: f32 = 1.2;
const B: f32 = 0.75;

/// Words too common to tell tools apart.
const STOPWORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "for", "from", "how", "i", "if", "in",
    "is", "it", "me", "my", "of", "on", "or", "please", "so", "that", "the", "this", "to", "what", "with",
    "you", "your",
];

/// Lowercase words of letters and digits, `snake_case` and `camelCase` split into their parts,
/// stopwords dropped and a plural `s` taken off (`files` and `file` match).
pub fn tokenize(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    for run in text.split(|c: char| !c.is_alphanumeric()) {
        let chars: Vec<char> = run.chars().collect();
        let mut start = 0;
        for i in 1..=chars.len() {
            let boundary = i == chars.len() || {
                let (prev, cur) = (chars[i - 1], chars[i]);
                let next_lower = chars.get(i + 1).is_some_and(|c| c.is_lowercase());
                // fooBar | HTTPServer -> HTTP Server
                (prev.is_lowercase() && cur.is_uppercase())
                    || (prev.is_uppercase() && cur.is_uppercase() && next_lower)
            };
            if boundary {
                let word: String = chars[start..i].iter().collect::<String>().to_lowercase();
                start = i;
                if !word.is_empty() && !STOPWORDS.contains(&word.as_str()) {
                    words.push(stem(word));
                }
            }
        }
    }
    words
}

fn stem(mut word: String) -> String {
    if word.len() > 4 && word.ends_with("ies") {
        word.truncate(word.len() - 3);
        word.push('y');
    } else if word.len() > 3 && word.ends_with('s') && !word.ends_with("ss") && !word.ends_with("us") {
        word.pop();
    }
    word
}

/// A BM25 index (k1 = 1.2, b = 0.75) over a fixed list of documents.
#[derive(Debug, Clone, Default)]
pub struct Bm25 {
    /// Term frequencies per document.
    docs: Vec<HashMap<String, u32>>,
    lengths: Vec<f32>,
    avg_length: f32,
    /// Documents containing each term.
    df: HashMap<String, u32>,
}

impl Bm25 {
    pub fn new<S: AsRef<str>>(docs: &[S]) -> Self {
        let mut index = Self::default();
        for doc in docs {
            let mut tf: HashMap<String, u32> = HashMap::new();
            let tokens = tokenize(doc.as_ref());
            index.lengths.push(tokens.len() as f32);
            for t in tokens {
                *tf.entry(t).or_default() += 1;
            }
            for term in tf.keys() {
                *index.df.entry(term.clone()).or_default() += 1;
            }
            index.docs.push(tf);
        }
        let total: f32 = index.lengths.iter().sum();
        index.avg_length = if docs.is_empty() { 0.0 } else { total / docs.len() as f32 };
        index
    }

    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The score of every document for `query`, in document order (0 when nothing matches).
    pub fn scores(&self, query: &str) -> Vec<f32> {
        let mut terms = tokenize(query);
        terms.sort();
        terms.dedup();
        let n = self.docs.len() as f32;
        let mut scores = vec![0.0; self.docs.len()];
        for term in &terms {
            let Some(&df) = self.df.get(term) else { continue };
            let idf = ((n - df as f32 + 0.5) / (df as f32 + 0.5) + 1.0).ln();
            for (i, doc) in self.docs.iter().enumerate() {
                if let Some(&tf) = doc.get(term) {
                    let tf = tf as f32;
                    let norm = 1.0 - B + B * self.lengths[i] / self.avg_length.max(1.0);
                    scores[i] += idf * tf * (K1 + 1.0) / (tf + K1 * norm);
                }
            }
        }
        scores
    }

    /// The `k` best documents as (index, score), best first; ties keep document order.
    pub fn top_k(&self, query: &str, k: usize) -> Vec<(usize, f32)> {
        let mut ranked: Vec<(usize, f32)> = self.scores(query).into_iter().enumerate().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
        ranked.truncate(k);
        ranked
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_snake_and_camel_case() {
        assert_eq!(tokenize("list_directory"), ["list", "directory"]);
        assert_eq!(tokenize("getTinyImage"), ["get", "tiny", "image"]);
        assert_eq!(tokenize("HTTPServer v2"), ["http", "server", "v2"]);
        assert_eq!(tokenize("get-current-time"), ["get", "current", "time"]);
        assert_eq!(tokenize("What are the files in my Folders?"), ["file", "folder"]);
        assert_eq!(tokenize("directories process"), ["directory", "process"]);
    }

    #[test]
    fn ranks_the_matching_tool_first() {
        let docs = [
            "add: Add two numbers and return the sum.",
            "list_directory: List the files and folders in a directory.",
            "get_current_time: Get current time in a specific timezone.",
            "read_file: Read a text file and return its contents.",
        ];
        let bm25 = Bm25::new(&docs);
        assert_eq!(bm25.top_k("which files are in this folder", 1)[0].0, 1);
        assert_eq!(bm25.top_k("what time is it in Tokyo", 1)[0].0, 2);
        assert_eq!(bm25.top_k("add 2 and 3", 1)[0].0, 0);
        assert_eq!(bm25.top_k("open the file notes.txt and read it", 1)[0].0, 3);
        let scores = bm25.scores("zebra");
        assert!(scores.iter().all(|s| *s == 0.0));
    }

    #[test]
    fn rare_terms_weigh_more_and_long_documents_less() {
        let docs = ["file file", "file timezone", "file timezone and a great many other words besides"];
        let bm25 = Bm25::new(&docs);
        let s = bm25.scores("file timezone");
        assert!(s[1] > s[0], "the rare term decides: {s:?}");
        assert!(s[1] > s[2], "the shorter document wins: {s:?}");
        assert!(Bm25::new::<&str>(&[]).scores("x").is_empty());
    }
}
