//! What the Perch engine and its `perch-llm` sidecar share. The engine must not link llama.cpp
//! (whisper.cpp in perch-core vendors its own ggml), so everything both sides need to agree on
//! lives here, in plain Rust: the NDJSON messages on the sidecar's stdio (`wire`), reading a
//! GGUF file's header (`gguf`), and what a chat template can do (`template`).

pub mod gguf;
pub mod template;
pub mod wire;

#[cfg(feature = "test-support")]
pub mod test_support;
