//! Settings -> Models -> Local.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// How much of a model goes to the graphics card (Settings -> Models -> On this computer).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case", tag = "mode", content = "layers")]
pub enum GpuLayers {
    /// As many layers as fit the card's free memory.
    #[default]
    Auto,
    /// Every layer, even where the card says they do not fit (the load fails there, and the
    /// model falls back to the CPU).
    All,
    /// The CPU only.
    None,
    /// This many layers (more than the model has means all of them).
    Count(u32),
}

impl GpuLayers {
    /// The layers asked of the runtime (`LoadParams::gpu_layers`).
    pub fn asked(self) -> Option<u32> {
        match self {
            Self::Auto => None,
            Self::All => Some(u32::MAX),
            Self::None => Some(0),
            Self::Count(n) => Some(n),
        }
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_graphics_card_choice_reads_as_written_and_asks_the_runtime() {
        for layers in [GpuLayers::Auto, GpuLayers::All, GpuLayers::None, GpuLayers::Count(12)] {
            let json = serde_json::to_string(&layers).unwrap_or_default();
            assert_eq!(serde_json::from_str::<GpuLayers>(&json).ok(), Some(layers), "{json}");
        }
        assert_eq!(
            serde_json::to_string(&GpuLayers::Count(3)).unwrap_or_default(),
            r#"{"mode":"count","layers":3}"#
        );
        let asked: Vec<_> = [GpuLayers::Auto, GpuLayers::All, GpuLayers::None, GpuLayers::Count(7)]
            .map(GpuLayers::asked)
            .into();
        assert_eq!(asked, [None, Some(u32::MAX), Some(0), Some(7)]);
    }
}
