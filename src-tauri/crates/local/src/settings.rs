//! Settings -> Models -> Local.

use std::collections::BTreeMap;

pub use perch_llm_protocol::wire::GpuLayers;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct LocalSettings {
    /// Tokens of context a local model reads; 0 means as many as the model was trained with.
    /// The KV cache grows with it (about 110 KiB a token for Qwen3 0.6B), so the default keeps
    /// small machines comfortable.
    pub context_length: u32,
    /// CPU threads; 0 means one per physical core.
    pub threads: u32,
    /// Seconds a model stays loaded after its last answer (like Ollama's keep-alive).
    pub keep_alive_secs: u32,
    /// The most memory a local model may take, in MiB; 0 means whatever is free.
    pub memory_limit_mb: u32,
    /// The longest answer, in tokens; 0 means until the model stops or the context is full.
    pub max_answer_tokens: u32,
    /// How much of each model goes to the graphics card, by model name; a model not listed
    /// takes as many layers as fit the card's free memory.
    pub gpu_layers: BTreeMap<String, GpuLayers>,
}

impl Default for LocalSettings {
    fn default() -> Self {
        Self {
            context_length: 4096,
            threads: 0,
            keep_alive_secs: 300,
            memory_limit_mb: 0,
            max_answer_tokens: 0,
            gpu_layers: BTreeMap::new(),
        }
    }
}
