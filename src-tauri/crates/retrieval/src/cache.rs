//! Embeddings of tool descriptions, kept so each description is embedded once per model,
//! across restarts too.
//!
//! The file is little-endian binary: the magic `PERCHEMB`, a u32 format version (1), a u32
//! entry count, then per entry: u16 model-id length, the model id (UTF-8), the 32-byte
//! sha256 of the text, a u32 dimension and that many f32s.

use std::collections::HashMap;
use std::path::Path;

use sha2::{Digest, Sha256};

use crate::RetrievalError;
use crate::error::CacheFault;

const MAGIC: &[u8; 8] = b"PERCHEMB";
const VERSION: u32 = 1;

/// (model id, sha256 of the text) -> embedding, in memory.
#[derive(Debug, Clone, Default)]
pub struct EmbeddingCache {
    entries: HashMap<(String, [u8; 32]), Vec<f32>>,
    dirty: bool,
}

/// The sha256 of a text, as the cache keys it.
pub(crate) fn text_hash(text: &str) -> [u8; 32] {
    Sha256::digest(text.as_bytes()).into()
}

impl EmbeddingCache {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn get(&self, model_id: &str, text: &str) -> Option<&[f32]> {
        self.entries.get(&(model_id.to_owned(), text_hash(text))).map(Vec::as_slice)
    }

    pub fn insert(&mut self, model_id: &str, text: &str, embedding: Vec<f32>) {
        self.entries.insert((model_id.to_owned(), text_hash(text)), embedding);
        self.dirty = true;
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether anything changed since the cache was loaded or last saved.
    pub fn is_dirty(&self) -> bool {
        self.dirty
    }

    /// Drops every entry whose text is not among `texts` (tools that are gone), for any model.
    pub fn retain_texts<S: AsRef<str>>(&mut self, texts: &[S]) {
        let keep: std::collections::HashSet<[u8; 32]> = texts.iter().map(|t| text_hash(t.as_ref())).collect();
        let before = self.entries.len();
        self.entries.retain(|(_, hash), _| keep.contains(hash));
        self.dirty |= self.entries.len() != before;
    }

    /// Reads a cache file; a file that does not exist gives an empty cache.
    /// Blocking I/O (the file is small: about 1.5 KB per tool and model).
    pub fn load(path: &Path) -> Result<Self, RetrievalError> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => return Err(RetrievalError::io("reading", path, e)),
        };
        decode(&bytes).map_err(|fault| RetrievalError::Cache { path: path.to_owned(), fault })
    }

    /// Like [`load`](Self::load), but an unreadable or corrupt file gives an empty cache
    /// (with a warning in the log): the embeddings are simply computed again.
    pub fn load_or_default(path: &Path) -> Self {
        Self::load(path).unwrap_or_else(|e| {
            tracing::warn!("starting with an empty embedding cache: {e}");
            Self::default()
        })
    }

    /// Writes the cache (to a temporary file beside it, then renamed into place).
    pub fn save(&mut self, path: &Path) -> Result<(), RetrievalError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| RetrievalError::io("creating", dir, e))?;
        }
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, self.encode()).map_err(|e| RetrievalError::io("writing", &tmp, e))?;
        std::fs::rename(&tmp, path).map_err(|e| RetrievalError::io("replacing", path, e))?;
        self.dirty = false;
        Ok(())
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + self.entries.values().map(|v| 40 + 4 * v.len()).sum::<usize>());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        let entries: Vec<_> =
            self.entries.iter().filter(|((model, _), _)| model.len() <= u16::MAX as usize).collect();
        out.extend_from_slice(&(entries.len() as u32).to_le_bytes());
        for ((model, hash), vector) in entries {
            out.extend_from_slice(&(model.len() as u16).to_le_bytes());
            out.extend_from_slice(model.as_bytes());
            out.extend_from_slice(hash);
            out.extend_from_slice(&(vector.len() as u32).to_le_bytes());
            for x in vector {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        out
    }
}

fn decode(bytes: &[u8]) -> Result<EmbeddingCache, CacheFault> {
    let mut r = Reader { bytes, at: 0 };
    if r.take(8)? != MAGIC {
        return Err(CacheFault::NotACache);
    }
    let version = r.u32()?;
    if version != VERSION {
        return Err(CacheFault::Version { found: version, expected: VERSION });
    }
    let count = r.u32()?;
    let mut entries = HashMap::new();
    for _ in 0..count {
        let len = u16::from_le_bytes(r.array()?) as usize;
        let model = std::str::from_utf8(r.take(len)?).map_err(|_| CacheFault::ModelName)?.to_owned();
        let hash: [u8; 32] = r.array()?;
        let dim = r.u32()? as usize;
        let raw = r.take(dim.checked_mul(4).ok_or(CacheFault::Dimension)?)?;
        let vector = raw.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        entries.insert((model, hash), vector);
    }
    if r.at != bytes.len() {
        return Err(CacheFault::TrailingBytes);
    }
    Ok(EmbeddingCache { entries, dirty: false })
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], CacheFault> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.bytes.len()).ok_or(CacheFault::Truncated)?;
        let slice = &self.bytes[self.at..end];
        self.at = end;
        Ok(slice)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], CacheFault> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }

    fn u32(&mut self) -> Result<u32, CacheFault> {
        Ok(u32::from_le_bytes(self.array()?))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn survives_a_save_and_load() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/embeddings.bin");
        let mut cache = EmbeddingCache::new();
        cache.insert("minilm", "add two numbers", vec![0.6, -0.8]);
        cache.insert("ollama:nomic", "add two numbers", vec![1.0; 5]);
        assert!(cache.is_dirty());
        cache.save(&path).unwrap();
        assert!(!cache.is_dirty());

        let loaded = EmbeddingCache::load(&path).unwrap();
        assert_eq!(loaded.len(), 2);
        assert_eq!(loaded.get("minilm", "add two numbers"), Some(&[0.6, -0.8][..]));
        assert_eq!(loaded.get("ollama:nomic", "add two numbers").map(<[f32]>::len), Some(5));
        assert_eq!(loaded.get("minilm", "divide"), None);
        assert!(!loaded.is_dirty());
    }

    #[test]
    fn a_missing_file_is_empty_and_a_corrupt_one_an_error() {
        let dir = tempfile::tempdir().unwrap();
        assert!(EmbeddingCache::load(&dir.path().join("none.bin")).unwrap().is_empty());
        let mut cache = EmbeddingCache::new();
        cache.insert("m", "t", vec![1.0, 2.0]);
        let path = dir.path().join("c.bin");
        cache.save(&path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        let err = EmbeddingCache::load(&path).unwrap_err();
        assert!(err.to_string().contains("truncated"), "{err}");
        assert!(EmbeddingCache::load_or_default(&path).is_empty());
        std::fs::write(&path, b"hello").unwrap();
        assert!(matches!(EmbeddingCache::load(&path), Err(RetrievalError::Cache { .. })));
    }

    #[test]
    fn retain_drops_texts_that_are_gone() {
        let mut cache = EmbeddingCache::new();
        cache.insert("m", "keep", vec![1.0]);
        cache.insert("m", "drop", vec![1.0]);
        cache.insert("n", "keep", vec![1.0]);
        cache.retain_texts(&["keep"]);
        assert_eq!(cache.len(), 2);
        assert!(cache.get("m", "drop").is_none());
    }
}
