//! Model capabilities by `provider:model`, looked up once and kept for ten minutes, so a turn
//! does not ask the provider for them every time.

use std::time::{Duration, Instant};

use super::{ModelId, ModelInfo, Provider, ProviderError};
use crate::Engine;

/// Model capabilities by `provider:model`, kept for ten minutes.
#[derive(Debug, Default)]
pub struct ModelCache {
    entries: std::sync::Mutex<std::collections::HashMap<String, (Instant, ModelInfo)>>,
}

impl ModelCache {
    const TTL: Duration = Duration::from_secs(600);

    fn get(&self, key: &str) -> Option<ModelInfo> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.get(key).filter(|(at, _)| at.elapsed() < Self::TTL).map(|(_, info)| info.clone())
    }

    fn put(&self, key: String, info: ModelInfo) {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).insert(key, (Instant::now(), info));
    }

    /// Forgets everything (after the user changes providers or keys).
    pub fn clear(&self) {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

/// The cache in use.
impl Engine {
    /// A model's capabilities, cached for ten minutes.
    pub async fn model_info(
        &self,
        provider: &dyn Provider,
        id: &ModelId,
    ) -> Result<ModelInfo, ProviderError> {
        let key = id.key();
        if let Some(info) = self.model_cache().get(&key) {
            return Ok(info);
        }
        let info = provider.model_info(&id.model).await?;
        self.model_cache().put(key, info.clone());
        Ok(info)
    }
}
