//! Model capabilities by `provider:model`, looked up once and kept for ten minutes, so a turn
//! does not ask the provider for them every time.

use std::time::{Duration, Instant};

use super::{ModelId, ModelInfo, Provider, ProviderError};

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

    /// A model's capabilities, from the cache when it has them.
    pub async fn model_info(
        &self,
        provider: &dyn Provider,
        id: &ModelId,
    ) -> Result<ModelInfo, ProviderError> {
        let key = id.key();
        if let Some(info) = self.get(&key) {
            return Ok(info);
        }
        let info = provider.model_info(&id.model).await?;
        self.put(key, info.clone());
        Ok(info)
    }
}
