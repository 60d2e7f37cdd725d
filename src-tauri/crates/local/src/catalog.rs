//! The curated local models: small enough for a laptop's CPU, each one file from its publisher
//! (or ggml-org, llama.cpp's own conversions) on Hugging Face, pinned by size and SHA-256.
//! The smallest good one is offered on first start.

use perch_download::RemoteFile;
use serde::Serialize;

pub struct CatalogEntry {
    /// The model's name in Perch (`local:qwen3-0.6b`).
    pub id: &'static str,
    pub title: &'static str,
    pub file: RemoteFile,
    pub licence: &'static str,
    pub licence_url: &'static str,
    /// KV cache bytes a token of context costs (f16; layers x KV heads x (key + value) x 2).
    pub kv_bytes_per_token: u64,
    pub tools: bool,
    pub thinking: bool,
    pub note: &'static str,
}

/// Smallest first; the first is what a new user is offered.
pub const CATALOG: &[CatalogEntry] = &[
    CatalogEntry {
        id: "qwen3-0.6b",
        title: "Qwen3 0.6B",
        file: RemoteFile::fixed(
            "Qwen3-0.6B-Q8_0.gguf",
            "https://huggingface.co/Qwen/Qwen3-0.6B-GGUF/resolve/main/Qwen3-0.6B-Q8_0.gguf",
            "9465e63a22add5354d9bb4b99e90117043c7124007664907259bd16d043bb031",
            639_446_688,
        ),
        licence: "Apache-2.0",
        licence_url: "https://huggingface.co/Qwen/Qwen3-0.6B-GGUF",
        kv_bytes_per_token: 28 * 8 * (128 + 128) * 2,
        tools: true,
        thinking: true,
        note: "Small and quick, reasons before it answers",
    },
    CatalogEntry {
        id: "gemma3-1b",
        title: "Gemma 3 1B",
        file: RemoteFile::fixed(
            "gemma-3-1b-it-Q4_K_M.gguf",
            "https://huggingface.co/ggml-org/gemma-3-1b-it-GGUF/resolve/main/gemma-3-1b-it-Q4_K_M.gguf",
            "8ccc5cd1f1b3602548715ae25a66ed73fd5dc68a210412eea643eb20eb75a135",
            806_058_240,
        ),
        licence: "Gemma Terms of Use",
        licence_url: "https://ai.google.dev/gemma/terms",
        kv_bytes_per_token: 26 * (256 + 256) * 2,
        tools: false,
        thinking: false,
        note: "Google's small model; good at writing",
    },
    CatalogEntry {
        id: "llama3.2-1b",
        title: "Llama 3.2 1B",
        file: RemoteFile::fixed(
            "Llama-3.2-1B-Instruct-Q4_K_M.gguf",
            "https://huggingface.co/bartowski/Llama-3.2-1B-Instruct-GGUF/resolve/main/Llama-3.2-1B-Instruct-Q4_K_M.gguf",
            "6f85a640a97cf2bf5b8e764087b1e83da0fdb51d7c9fab7d0fece9385611df83",
            807_694_464,
        ),
        licence: "Llama 3.2 Community License",
        licence_url: "https://www.llama.com/llama3_2/license/",
        kv_bytes_per_token: 16 * 8 * (64 + 64) * 2,
        tools: true,
        thinking: false,
        note: "Meta's small model; light on memory",
    },
    CatalogEntry {
        id: "smollm2-1.7b",
        title: "SmolLM2 1.7B",
        file: RemoteFile::fixed(
            "smollm2-1.7b-instruct-q4_k_m.gguf",
            "https://huggingface.co/HuggingFaceTB/SmolLM2-1.7B-Instruct-GGUF/resolve/main/smollm2-1.7b-instruct-q4_k_m.gguf",
            "decd2598bc2c8ed08c19adc3c8fdd461ee19ed5708679d1c54ef54a5a30d4f33",
            1_055_609_536,
        ),
        licence: "Apache-2.0",
        licence_url: "https://huggingface.co/HuggingFaceTB/SmolLM2-1.7B-Instruct",
        kv_bytes_per_token: 24 * 32 * (64 + 64) * 2,
        tools: false,
        thinking: false,
        note: "Hugging Face's model, trained on open data",
    },
    CatalogEntry {
        id: "qwen3-1.7b",
        title: "Qwen3 1.7B",
        file: RemoteFile::fixed(
            "Qwen3-1.7B-Q4_K_M.gguf",
            "https://huggingface.co/ggml-org/Qwen3-1.7B-GGUF/resolve/main/Qwen3-1.7B-Q4_K_M.gguf",
            "d2387ca2dbfee2ffabce7120d3770dadca0b293052bc2f0e138fdc940d9bc7b5",
            1_282_439_264,
        ),
        licence: "Apache-2.0",
        licence_url: "https://huggingface.co/ggml-org/Qwen3-1.7B-GGUF",
        kv_bytes_per_token: 28 * 8 * (128 + 128) * 2,
        tools: true,
        thinking: true,
        note: "Noticeably better answers, still quick",
    },
    CatalogEntry {
        id: "llama3.2-3b",
        title: "Llama 3.2 3B",
        file: RemoteFile::fixed(
            "Llama-3.2-3B-Instruct-Q4_K_M.gguf",
            "https://huggingface.co/bartowski/Llama-3.2-3B-Instruct-GGUF/resolve/main/Llama-3.2-3B-Instruct-Q4_K_M.gguf",
            "6c1a2b41161032677be168d354123594c0e6e67d2b9227c84f296ad037c728ff",
            2_019_377_696,
        ),
        licence: "Llama 3.2 Community License",
        licence_url: "https://www.llama.com/llama3_2/license/",
        kv_bytes_per_token: 28 * 8 * (128 + 128) * 2,
        tools: true,
        thinking: false,
        note: "The strongest here; wants 8 GB of memory or more",
    },
];

pub fn find(id: &str) -> Option<&'static CatalogEntry> {
    CATALOG.iter().find(|e| e.id == id)
}

/// The catalogue entry a downloaded file came from.
pub fn by_file(file: &str) -> Option<&'static CatalogEntry> {
    CATALOG.iter().find(|e| e.file.name == file)
}

/// A catalogue entry as Settings shows it.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct CatalogModel {
    pub id: String,
    pub title: String,
    pub file: String,
    pub size: u64,
    /// Memory it needs with the current context length setting.
    pub memory: u64,
    pub licence: String,
    pub licence_url: String,
    pub tools: bool,
    pub thinking: bool,
    pub note: String,
    pub installed: bool,
    /// Bytes of an interrupted download that the next attempt resumes from.
    pub partial: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_unique_pinned_and_smallest_first() {
        let mut ids: Vec<_> = CATALOG.iter().map(|e| e.id).collect();
        ids.dedup();
        assert_eq!(ids.len(), CATALOG.len());
        assert!(CATALOG.windows(2).all(|w| w[0].file.size <= w[1].file.size));
        for e in CATALOG {
            assert_eq!(e.file.sha256.len(), 64, "{}", e.id);
            assert!(e.file.sha256.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
            assert!(
                e.file.url.starts_with("https://huggingface.co/") && e.file.url.ends_with(&*e.file.name),
                "{}",
                e.id
            );
        }
    }
}
