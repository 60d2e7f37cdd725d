#![allow(clippy::unwrap_used)]

use std::io::Write;

use super::*;

/// Writes a small GGUF: a few metadata values and one Q4_0 tensor of 64 elements (36 bytes).
fn gguf(version: u32, data_bytes: usize) -> Vec<u8> {
    let mut b = Vec::new();
    let string = |b: &mut Vec<u8>, s: &str| {
        b.extend((s.len() as u64).to_le_bytes());
        b.extend(s.as_bytes());
    };
    b.extend(b"GGUF");
    b.extend(version.to_le_bytes());
    b.extend(1u64.to_le_bytes()); // tensors
    b.extend(5u64.to_le_bytes()); // metadata
    string(&mut b, "general.architecture");
    b.extend(8u32.to_le_bytes());
    string(&mut b, "llama");
    string(&mut b, "llama.context_length");
    b.extend(4u32.to_le_bytes());
    b.extend(2048u32.to_le_bytes());
    string(&mut b, "llama.block_count");
    b.extend(4u32.to_le_bytes());
    b.extend(2u32.to_le_bytes());
    string(&mut b, "llama.attention.head_count_kv");
    b.extend(9u32.to_le_bytes()); // an array of u32, one per layer
    b.extend(4u32.to_le_bytes());
    b.extend(2u64.to_le_bytes());
    b.extend(1u32.to_le_bytes());
    b.extend(3u32.to_le_bytes());
    string(&mut b, "tokenizer.ggml.tokens");
    b.extend(9u32.to_le_bytes());
    b.extend(8u32.to_le_bytes());
    b.extend(2u64.to_le_bytes());
    string(&mut b, "<s>");
    string(&mut b, "hello");
    // The tensor: name, 1 dimension of 64, type Q4_0, offset 0.
    string(&mut b, "token_embd.weight");
    b.extend(1u32.to_le_bytes());
    b.extend(64u64.to_le_bytes());
    b.extend(2u32.to_le_bytes());
    b.extend(0u64.to_le_bytes());
    while b.len() % 32 != 0 {
        b.push(0);
    }
    b.extend(vec![0u8; data_bytes]);
    b
}

fn write(bytes: &[u8]) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(bytes).unwrap();
    f
}

#[test]
fn a_whole_file_is_read_with_its_metadata() {
    let f = write(&gguf(3, 36));
    let h = inspect(f.path()).unwrap();
    assert_eq!(h.architecture(), Some("llama"));
    assert_eq!(h.context_length(), Some(2048));
    assert_eq!(h.int("llama.attention.head_count_kv"), Some(3), "the largest per-layer value");
    assert_eq!(h.metadata.get("tokenizer.ggml.tokens"), Some(&Value::Array(2)));
    assert_eq!(h.data_bytes, 36);
    assert_eq!(h.file_size, h.data_offset + 36);
    assert!(inspect(write(&gguf(2, 36)).path()).is_ok(), "version 2 reads too");
}

#[test]
fn a_file_cut_short_is_refused_with_both_sizes() {
    let bytes = gguf(3, 36);
    let f = write(&bytes[..bytes.len() - 10]);
    match inspect(f.path()).unwrap_err() {
        GgufError::Truncated { expected, actual, .. } => assert_eq!(expected - actual, 10),
        other => panic!("{other:?}"),
    }
    // Cut inside the header: the message says where.
    let f = write(&bytes[..40]);
    let e = inspect(f.path()).unwrap_err();
    assert!(matches!(e, GgufError::Damaged { .. }), "{e:?}");
    assert!(e.to_string().contains("the file ends inside"), "{e}");
}

#[test]
fn other_files_and_damaged_headers_are_named_as_such() {
    let e = inspect(write(b"{\"not\": \"a model\"}").path()).unwrap_err();
    assert!(matches!(&e, GgufError::NotGguf { found, .. } if found == "{\"no"), "{e:?}");
    assert!(matches!(inspect(write(b"GG").path()).unwrap_err(), GgufError::NotGguf { .. }));
    assert!(matches!(
        inspect(write(&gguf(7, 36)).path()).unwrap_err(),
        GgufError::Version { version: 7, .. }
    ));

    // A key length overwritten with garbage.
    let mut bytes = gguf(3, 36);
    bytes[24..32].copy_from_slice(&u64::MAX.to_le_bytes());
    let e = inspect(write(&bytes).path()).unwrap_err();
    assert!(matches!(e, GgufError::Damaged { offset: 32, .. }), "{e:?}");

    // A metadata type that does not exist.
    let mut bytes = gguf(3, 36);
    bytes[52..56].copy_from_slice(&99u32.to_le_bytes());
    let e = inspect(write(&bytes).path()).unwrap_err();
    assert!(e.to_string().contains("unknown type 99"), "{e}");
}

#[test]
fn kv_cache_cost_follows_the_attention_shape() {
    let mut h = inspect(write(&gguf(3, 36)).path()).unwrap();
    assert_eq!(h.kv_bytes_per_token(), None, "no embedding length or heads");
    h.metadata.insert("llama.embedding_length".into(), Value::Int(576));
    h.metadata.insert("llama.attention.head_count".into(), Value::Int(9));
    // 2 layers x 3 KV heads x (64 + 64) x 2 bytes.
    assert_eq!(h.kv_bytes_per_token(), Some(2 * 3 * 128 * 2));
}

/// A GGUF with no tensors and only `entries` (key, type, encoded value) as metadata.
fn with_metadata(entries: &[(&str, u32, Vec<u8>)]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend(b"GGUF");
    b.extend(3u32.to_le_bytes());
    b.extend(0u64.to_le_bytes());
    b.extend((entries.len() as u64).to_le_bytes());
    for (key, kind, value) in entries {
        b.extend((key.len() as u64).to_le_bytes());
        b.extend(key.as_bytes());
        b.extend(kind.to_le_bytes());
        b.extend(value);
    }
    // The (empty) tensor data starts at the next multiple of the default alignment.
    b.resize(b.len().div_ceil(32) * 32, 0);
    b
}

#[test]
fn header_values_that_would_overflow_are_damage_not_wrapped_numbers() {
    // A tensor said to start near the end of the address space.
    let mut bytes = gguf(3, 36);
    // The tensor's offset follows its name, dimension count, one dimension and type.
    let at = bytes.windows(17).position(|w| w == b"token_embd.weight").unwrap() + 17 + 4 + 8 + 4;
    bytes[at..at + 8].copy_from_slice(&(u64::MAX - 8).to_le_bytes());
    let e = inspect(write(&bytes).path()).unwrap_err();
    assert!(e.to_string().contains("beyond any possible file"), "{e}");

    // An alignment that is not a power of two, or absurdly large.
    for alignment in [48u64, 1 << 40, 0] {
        let bytes = with_metadata(&[("general.alignment", 10, alignment.to_le_bytes().to_vec())]);
        let e = inspect(write(&bytes).path()).unwrap_err();
        assert!(e.to_string().contains("general.alignment"), "{alignment}: {e}");
    }
    let mut fine = with_metadata(&[("general.alignment", 4, 64u32.to_le_bytes().to_vec())]);
    fine.resize(fine.len().div_ceil(64) * 64, 0);
    assert_eq!(inspect(write(&fine).path()).unwrap().data_offset % 64, 0);

    // Attention sizes whose product overflows: no cost, rather than a wrapped small one.
    let int = |key: &'static str, n: i64| (key, 11u32, n.to_le_bytes().to_vec());
    let bytes = with_metadata(&[
        ("general.architecture", 8, [5u64.to_le_bytes().to_vec(), b"llama".to_vec()].concat()),
        int("llama.block_count", i64::MAX / 2),
        int("llama.embedding_length", 4096),
        int("llama.attention.head_count", 32),
    ]);
    let h = inspect(write(&bytes).path()).unwrap();
    assert_eq!(h.kv_bytes_per_token(), None);
}

#[test]
fn arrays_nested_too_deep_are_refused_before_they_exhaust_the_stack() {
    // 100,000 arrays each holding one array: a recursion per level if it were followed.
    let mut value = Vec::new();
    for _ in 0..100_000 {
        value.extend(9u32.to_le_bytes());
        value.extend(1u64.to_le_bytes());
    }
    let bytes = with_metadata(&[("tokenizer.deep", 9, value)]);
    let e = inspect(write(&bytes).path()).unwrap_err();
    assert!(e.to_string().contains("nests arrays more than 4 deep"), "{e}");
}
