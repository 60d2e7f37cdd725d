//! Reads a GGUF file's header (metadata and tensor table) without loading any weights, and checks
//! that the file holds every byte its tensor table promises. The engine runs this before it
//! registers or loads a model, so a file that is not a GGUF, a damaged header or a download cut
//! short is refused with a message a person can act on, instead of a crash in native code.
//!
//! Format: the GGUF specification (magic, version 2 or 3, counts, typed key/value pairs, tensor
//! infos, then tensor data aligned to `general.alignment`).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

/// A sanity bound on strings in the header (chat templates are a few KiB; token texts short).
const MAX_STRING: u64 = 16 << 20;
/// Vocabularies have a few hundred thousand entries; anything far beyond is damage.
const MAX_ARRAY: u64 = 64 << 20;
const MAX_TENSORS: u64 = 1 << 20;
const MAX_KEYS: u64 = 1 << 16;
const MAX_DIMS: u32 = 4;
/// `general.alignment` above this is damage (llama.cpp's files use 32).
const MAX_ALIGNMENT: i64 = 1 << 20;
/// Arrays inside arrays deeper than this are damage (real files nest none); each level is a
/// recursion, so a crafted file could otherwise exhaust the stack.
const MAX_NESTING: usize = 4;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum GgufError {
    #[error("{path} could not be read: {message}")]
    Unreadable { path: String, message: String },
    #[error("{path} is not a GGUF model file (it starts with {found:?}, not \"GGUF\")")]
    NotGguf { path: String, found: String },
    #[error(
        "{path} is GGUF version {version}, which this version of Perch cannot read (it reads versions 2 and 3)"
    )]
    Version { path: String, version: u32 },
    #[error("{path} is damaged: {what} at byte {offset}")]
    Damaged { path: String, what: String, offset: u64 },
    #[error(
        "{path} is cut short: its tensors need {expected} bytes but the file has {actual}; if it was downloaded, download it again"
    )]
    Truncated { path: String, expected: u64, actual: u64 },
}

/// A metadata value, as much of it as Perch reads.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    /// Arrays of numbers are kept (per-layer head counts); other arrays only by length.
    Ints(Vec<i64>),
    Array(u64),
}

/// What a GGUF header says.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub version: u32,
    pub metadata: BTreeMap<String, Value>,
    pub tensor_count: u64,
    /// Where tensor data starts, and the bytes the tensors need after it.
    pub data_offset: u64,
    pub data_bytes: u64,
    pub file_size: u64,
}

impl Header {
    pub fn str(&self, key: &str) -> Option<&str> {
        match self.metadata.get(key)? {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn int(&self, key: &str) -> Option<i64> {
        match self.metadata.get(key)? {
            Value::Int(n) => Some(*n),
            // Per-layer values (some models vary the KV heads by layer): the largest bounds memory.
            Value::Ints(v) => v.iter().copied().max(),
            _ => None,
        }
    }

    pub fn architecture(&self) -> Option<&str> {
        self.str("general.architecture")
    }

    /// `{architecture}.{key}`, e.g. `llama.context_length`.
    pub fn arch_int(&self, key: &str) -> Option<i64> {
        self.int(&format!("{}.{key}", self.architecture()?))
    }

    /// The context length the model was trained with.
    pub fn context_length(&self) -> Option<u32> {
        self.arch_int("context_length").and_then(|n| u32::try_from(n).ok())
    }

    pub fn chat_template(&self) -> Option<&str> {
        self.str("tokenizer.chat_template")
    }

    /// Bytes of KV cache one token of context costs (f16 keys and values, every layer).
    pub fn kv_bytes_per_token(&self) -> Option<u64> {
        let layers = self.arch_int("block_count")?;
        let embd = self.arch_int("embedding_length")?;
        let heads = self.arch_int("attention.head_count").filter(|h| *h > 0)?;
        let kv_heads = self.arch_int("attention.head_count_kv").unwrap_or(heads);
        let key = self.arch_int("attention.key_length").unwrap_or(embd / heads);
        let value = self.arch_int("attention.value_length").unwrap_or(embd / heads);
        // Header values are the file's word: a damaged one must not wrap into a small cost.
        let per_layer = kv_heads.checked_mul(key.checked_add(value)?)?.checked_mul(2)?;
        u64::try_from(layers.checked_mul(per_layer)?).ok()
    }
}

/// Reads and checks the header of the GGUF at `path`.
pub fn inspect(path: &Path) -> Result<Header, GgufError> {
    let shown = path.display().to_string();
    let unreadable =
        |e: std::io::Error| GgufError::Unreadable { path: shown.clone(), message: e.to_string() };
    let file = File::open(path).map_err(unreadable)?;
    let file_size = file.metadata().map_err(unreadable)?.len();
    let mut r = Reader { inner: BufReader::with_capacity(1 << 16, file), offset: 0, path: shown.clone() };

    let mut magic = [0u8; 4];
    let got = r.fill(&mut magic).map_err(unreadable)?;
    if got < 4 || &magic != b"GGUF" {
        let found = String::from_utf8_lossy(&magic[..got]).into_owned();
        return Err(GgufError::NotGguf { path: shown, found });
    }
    let version = r.u32("the version")?;
    if !(2..=3).contains(&version) {
        return Err(GgufError::Version { path: shown, version });
    }
    let tensor_count = r.bounded_u64("the tensor count", MAX_TENSORS)?;
    let key_count = r.bounded_u64("the metadata count", MAX_KEYS)?;
    let mut metadata = BTreeMap::new();
    for _ in 0..key_count {
        let key = r.string("a metadata key")?;
        let kind = r.u32("a metadata type")?;
        let value = r.value(kind, &key, 0)?;
        metadata.insert(key, value);
    }
    let mut data_bytes = 0u64;
    for _ in 0..tensor_count {
        let name = r.string("a tensor name")?;
        let dims = r.u32("a tensor's dimension count")?;
        if dims == 0 || dims > MAX_DIMS {
            return Err(r.damaged(format!("tensor {name} has {dims} dimensions")));
        }
        let mut elements = 1u64;
        for _ in 0..dims {
            let n = r.u64("a tensor dimension")?;
            elements = elements
                .checked_mul(n)
                .ok_or_else(|| r.damaged(format!("tensor {name} is impossibly large")))?;
        }
        let kind = r.u32("a tensor type")?;
        let offset = r.u64("a tensor offset")?;
        let (block, size) =
            tensor_type(kind).ok_or_else(|| r.damaged(format!("tensor {name} has unknown type {kind}")))?;
        let bytes = (elements / block)
            .checked_mul(size)
            .ok_or_else(|| r.damaged(format!("tensor {name} is impossibly large")))?;
        data_bytes = data_bytes.max(offset.saturating_add(bytes));
    }
    let alignment = match metadata.get("general.alignment") {
        None => 32,
        // The format asks for a power of two; a larger one than this is damage, not layout.
        Some(Value::Int(n)) if (1..=MAX_ALIGNMENT).contains(n) && n.count_ones() == 1 => *n as u64,
        Some(other) => return Err(r.damaged(format!("general.alignment is {other:?}"))),
    };
    let too_large = || r.damaged("its tensors end beyond any possible file".into());
    let data_offset = r.offset.div_ceil(alignment).checked_mul(alignment).ok_or_else(too_large)?;
    let expected = data_offset.checked_add(data_bytes).ok_or_else(too_large)?;
    if file_size < expected {
        return Err(GgufError::Truncated { path: shown, expected, actual: file_size });
    }
    Ok(Header { version, metadata, tensor_count, data_offset, data_bytes, file_size })
}

/// (elements per block, bytes per block) of each ggml tensor type (ggml.c's type traits).
fn tensor_type(kind: u32) -> Option<(u64, u64)> {
    Some(match kind {
        0 => (1, 4),           // F32
        1 | 30 => (1, 2),      // F16, BF16
        2 | 20 => (32, 18),    // Q4_0, IQ4_NL
        3 => (32, 20),         // Q4_1
        6 => (32, 22),         // Q5_0
        7 => (32, 24),         // Q5_1
        8 => (32, 34),         // Q8_0
        9 => (32, 36),         // Q8_1
        10 => (256, 84),       // Q2_K
        11 | 21 => (256, 110), // Q3_K, IQ3_S
        12 => (256, 144),      // Q4_K
        13 => (256, 176),      // Q5_K
        14 => (256, 210),      // Q6_K
        15 => (256, 292),      // Q8_K
        16 | 35 => (256, 66),  // IQ2_XXS, TQ2_0
        17 => (256, 74),       // IQ2_XS
        18 => (256, 98),       // IQ3_XXS
        19 => (256, 50),       // IQ1_S
        22 => (256, 82),       // IQ2_S
        23 => (256, 136),      // IQ4_XS
        24 => (1, 1),          // I8
        25 => (1, 2),          // I16
        26 => (1, 4),          // I32
        27 | 28 => (1, 8),     // I64, F64
        29 => (256, 56),       // IQ1_M
        34 => (256, 54),       // TQ1_0
        39 => (32, 17),        // MXFP4
        40 => (64, 36),        // NVFP4
        41 => (128, 18),       // Q1_0
        42 => (64, 18),        // Q2_0
        _ => return None,
    })
}

struct Reader {
    inner: BufReader<File>,
    offset: u64,
    path: String,
}

impl Reader {
    /// Reads as much of `buf` as the file has; returns how much that was.
    fn fill(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut got = 0;
        while got < buf.len() {
            match self.inner.read(&mut buf[got..])? {
                0 => break,
                n => got += n,
            }
        }
        self.offset += got as u64;
        Ok(got)
    }

    fn damaged(&self, what: String) -> GgufError {
        GgufError::Damaged { path: self.path.clone(), what, offset: self.offset }
    }

    fn exact<const N: usize>(&mut self, what: &str) -> Result<[u8; N], GgufError> {
        let mut buf = [0u8; N];
        let got = self.fill(&mut buf).map_err(|e| self.damaged(format!("reading {what} failed ({e})")))?;
        if got < N {
            return Err(self.damaged(format!("the file ends inside {what}")));
        }
        Ok(buf)
    }

    fn u32(&mut self, what: &str) -> Result<u32, GgufError> {
        self.exact::<4>(what).map(u32::from_le_bytes)
    }

    fn u64(&mut self, what: &str) -> Result<u64, GgufError> {
        self.exact::<8>(what).map(u64::from_le_bytes)
    }

    fn bounded_u64(&mut self, what: &str, max: u64) -> Result<u64, GgufError> {
        let n = self.u64(what)?;
        if n > max {
            return Err(self.damaged(format!("{what} is {n}")));
        }
        Ok(n)
    }

    fn string(&mut self, what: &str) -> Result<String, GgufError> {
        let len = self.bounded_u64(&format!("the length of {what}"), MAX_STRING)?;
        let mut buf = vec![0u8; len as usize];
        let got = self.fill(&mut buf).map_err(|e| self.damaged(format!("reading {what} failed ({e})")))?;
        if got < buf.len() {
            return Err(self.damaged(format!("the file ends inside {what}")));
        }
        String::from_utf8(buf).map_err(|_| self.damaged(format!("{what} is not UTF-8 text")))
    }

    fn value(&mut self, kind: u32, key: &str, depth: usize) -> Result<Value, GgufError> {
        let what = format!("the value of {key}");
        Ok(match kind {
            0 => Value::Int(self.exact::<1>(&what)?[0].into()),
            1 => Value::Int(i8::from_le_bytes(self.exact::<1>(&what)?).into()),
            2 => Value::Int(u16::from_le_bytes(self.exact::<2>(&what)?).into()),
            3 => Value::Int(i16::from_le_bytes(self.exact::<2>(&what)?).into()),
            4 => Value::Int(self.u32(&what)?.into()),
            5 => Value::Int(i32::from_le_bytes(self.exact::<4>(&what)?).into()),
            6 => Value::Float(f32::from_le_bytes(self.exact::<4>(&what)?).into()),
            7 => Value::Bool(self.exact::<1>(&what)?[0] != 0),
            8 => Value::Str(self.string(&what)?),
            9 if depth >= MAX_NESTING => {
                return Err(self.damaged(format!("{key} nests arrays more than {MAX_NESTING} deep")));
            }
            9 => {
                let element = self.u32(&what)?;
                let count = self.bounded_u64(&format!("the length of {what}"), MAX_ARRAY)?;
                let mut ints = Vec::new();
                for _ in 0..count {
                    match self.value(element, key, depth + 1)? {
                        Value::Int(n) if ints.len() < 4096 => ints.push(n),
                        _ => {}
                    }
                }
                if ints.len() as u64 == count && count > 0 { Value::Ints(ints) } else { Value::Array(count) }
            }
            10 => Value::Int(i64::try_from(self.u64(&what)?).unwrap_or(i64::MAX)),
            11 => Value::Int(i64::from_le_bytes(self.exact::<8>(&what)?)),
            12 => Value::Float(f64::from_le_bytes(self.exact::<8>(&what)?)),
            other => return Err(self.damaged(format!("{key} has unknown type {other}"))),
        })
    }
}

#[cfg(test)]
mod tests;
