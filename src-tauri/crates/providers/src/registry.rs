//! Which providers exist here: the four built in, plus any OpenAI-compatible servers the user
//! added, with URLs from settings (or the providers' own environment variables) and keys from
//! the key store (or the environment).

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::http::{Clients, Timeouts};
use super::local::Local;
use super::{Anthropic, Gemini, ModelInfo, Ollama, OpenAi, Provider, ProviderError};
use crate::settings::{ProviderSettings, ollama_host_to_url};
use perch_foundation::keys::Keys;
use perch_local::{LocalModels, LocalSettings};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    Ollama,
    OpenAi,
    Anthropic,
    Gemini,
    /// Models on this machine, run by the `perch-llm` sidecar.
    Local,
}

/// A place models come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ProviderEndpoint {
    /// The prefix of its model names.
    pub name: String,
    pub kind: ProviderKind,
    pub url: String,
    /// The environment variable its own tools read the key from.
    pub key_env: Option<String>,
    pub needs_key: bool,
}

/// Ollama's base URL: `OLLAMA_HOST` when set, else the settings.
pub fn ollama_url(settings: &ProviderSettings) -> String {
    std::env::var("OLLAMA_HOST")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .and_then(|h| ollama_host_to_url(&h))
        .unwrap_or_else(|| settings.ollama_url.as_str().to_owned())
}

/// The built-in providers and the user's OpenAI-compatible servers, with environment overrides.
pub fn builtin_endpoints(settings: &ProviderSettings) -> Vec<ProviderEndpoint> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let ollama_url = ollama_url(settings);
    let openai_url = env("OPENAI_BASE_URL").unwrap_or_else(|| settings.openai_url.as_str().to_owned());
    let endpoint = |name: &str, kind, url: String, key_env: Option<&str>| ProviderEndpoint {
        name: name.into(),
        kind,
        url,
        key_env: key_env.map(str::to_owned),
        needs_key: key_env.is_some(),
    };
    let mut all = vec![
        endpoint("ollama", ProviderKind::Ollama, ollama_url, None),
        endpoint("openai", ProviderKind::OpenAi, openai_url, Some("OPENAI_API_KEY")),
        endpoint(
            "anthropic",
            ProviderKind::Anthropic,
            settings.anthropic_url.as_str().to_owned(),
            Some("ANTHROPIC_API_KEY"),
        ),
        endpoint(
            "gemini",
            ProviderKind::Gemini,
            settings.gemini_url.as_str().to_owned(),
            Some("GEMINI_API_KEY"),
        ),
    ];
    for server in &settings.compatible {
        let name = server.name.trim().to_ascii_lowercase();
        if name.is_empty() || all.iter().any(|e| e.name == name) {
            continue;
        }
        all.push(ProviderEndpoint {
            name,
            kind: ProviderKind::OpenAi,
            url: server.url.as_str().to_owned(),
            key_env: None,
            needs_key: server.needs_key,
        });
    }
    all
}

/// Models of one provider, or why they could not be listed.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct ProviderModels {
    pub provider: String,
    pub models: Vec<ModelInfo>,
    pub error: Option<String>,
}

impl ProviderEndpoint {
    /// Whether its client is given a key at all (Ollama and local models take none, so none is
    /// looked up).
    pub fn takes_key(&self) -> bool {
        !matches!(self.kind, ProviderKind::Ollama | ProviderKind::Local)
    }

    /// Whether what is sent to it stays on this computer: the built-in models, or a server at
    /// a loopback address (Ollama or an OpenAI-compatible server running here). Anything else,
    /// Ollama on another machine included, is a cloud as far as the user's data goes.
    pub fn on_this_machine(&self) -> bool {
        if self.kind == ProviderKind::Local {
            return true;
        }
        let Ok(url) = reqwest::Url::parse(&self.url) else { return false };
        let Some(host) = url.host_str() else { return false };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        host.eq_ignore_ascii_case("localhost")
            || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
    }
}

/// The providers of the current settings. Cheap to build per request: the HTTP clients come
/// from `clients`, which the engine keeps for the life of the process.
pub struct Registry {
    endpoints: Vec<ProviderEndpoint>,
    ollama_context: u32,
    keys: Arc<Keys>,
    clients: Clients,
    local: Option<(Arc<LocalModels>, LocalSettings)>,
}

impl Registry {
    /// Every key Perch keeps, by stored name with the environment variable that overrides it:
    /// the model providers that take one, then the web search services.
    pub fn keys_kept(&self) -> Vec<(String, Option<String>)> {
        let providers = self.endpoints().iter().filter(|e| e.needs_key || e.key_env.is_some());
        providers
            .map(|e| (e.name.clone(), e.key_env.clone()))
            .chain(
                perch_foundation::keys::WEB_SEARCH_KEYS
                    .iter()
                    .map(|(name, env)| ((*name).to_owned(), Some((*env).to_owned()))),
            )
            .collect()
    }

    pub fn new(settings: &ProviderSettings, keys: Arc<Keys>, clients: Clients) -> Self {
        Self {
            endpoints: builtin_endpoints(settings),
            ollama_context: settings.ollama_context,
            keys,
            clients,
            local: None,
        }
    }

    /// Every provider the engine offers for these settings, with its keys and its clients: the
    /// built-in and added ones, and local models (listed right after Ollama, so a machine with a
    /// local model and no Ollama starts with it).
    /// (`Engine::registry` passes the engine's own.)
    pub fn with_local(
        settings: &ProviderSettings,
        local_settings: &LocalSettings,
        keys: Arc<Keys>,
        clients: Clients,
        local: Arc<LocalModels>,
    ) -> Self {
        let mut registry = Self::new(settings, keys, clients);
        let endpoint = ProviderEndpoint {
            name: super::local::NAME.into(),
            kind: ProviderKind::Local,
            url: local.dir().display().to_string(),
            key_env: None,
            needs_key: false,
        };
        registry.endpoints.insert(1, endpoint);
        registry.local = Some((local, local_settings.clone()));
        registry
    }

    pub fn endpoints(&self) -> &[ProviderEndpoint] {
        &self.endpoints
    }

    pub fn endpoint(&self, name: &str) -> Result<&ProviderEndpoint, ProviderError> {
        self.endpoints
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| ProviderError::UnknownProvider(name.to_owned()))
    }

    /// A client for `name`, with its key.
    pub async fn provider(&self, name: &str) -> Result<Arc<dyn Provider>, ProviderError> {
        let endpoint = self.endpoint(name)?.clone();
        let key = if endpoint.takes_key() { self.key(&endpoint).await } else { None };
        let missing = || ProviderError::MissingKey {
            provider: endpoint.name.clone(),
            env: endpoint.key_env.clone().unwrap_or_else(|| "a key in Settings".into()),
        };
        let http = self.clients.get(Timeouts::default());
        Ok(match endpoint.kind {
            ProviderKind::Ollama => {
                Arc::new(Ollama::new(&endpoint.url, http).with_context_cap(self.ollama_context))
            }
            ProviderKind::OpenAi if endpoint.needs_key && key.is_none() => return Err(missing()),
            ProviderKind::OpenAi => Arc::new(OpenAi::new(&endpoint.name, &endpoint.url, key, http)),
            ProviderKind::Anthropic => {
                Arc::new(Anthropic::new(&endpoint.url, key.ok_or_else(missing)?, http))
            }
            ProviderKind::Gemini => Arc::new(Gemini::new(&endpoint.url, key.ok_or_else(missing)?, http)),
            ProviderKind::Local => match &self.local {
                Some((models, settings)) => Arc::new(Local::new(models.clone(), settings.clone())),
                None => return Err(ProviderError::UnknownProvider(endpoint.name)),
            },
        })
    }

    async fn key(&self, endpoint: &ProviderEndpoint) -> Option<String> {
        let (keys, name, env) = (self.keys.clone(), endpoint.name.clone(), endpoint.key_env.clone());
        let found = tokio::task::spawn_blocking(move || keys.get(&name, env.as_deref())).await.ok()?;
        match found {
            Ok(found) => found.map(|(secret, _)| secret.expose().to_owned()),
            Err(e) => {
                tracing::warn!(provider = %endpoint.name, error = %e, "could not read the API key");
                None
            }
        }
    }

    /// Every provider's models, listed concurrently. Providers without a key are skipped
    /// quietly unless `include_unconfigured`.
    pub async fn list_models(&self, include_unconfigured: bool) -> Vec<ProviderModels> {
        let listings = self.endpoints.iter().map(|endpoint| async move {
            let result = match self.provider(&endpoint.name).await {
                Ok(provider) => provider.list_models().await,
                Err(e) => Err(e),
            };
            match result {
                Ok(models) => Some(ProviderModels { provider: endpoint.name.clone(), models, error: None }),
                Err(ProviderError::MissingKey { .. }) if !include_unconfigured => None,
                Err(e) => Some(ProviderModels {
                    provider: endpoint.name.clone(),
                    models: Vec::new(),
                    error: Some(e.to_string()),
                }),
            }
        });
        futures::future::join_all(listings).await.into_iter().flatten().collect()
    }
}

/// The model to use when none is chosen: the configured default if available (as the listing
/// names it), else Ollama's qwen3-vl:8b-instruct, else the first installed model.
pub fn pick_default(configured: Option<&str>, available: &[ModelInfo]) -> Option<String> {
    let find = |id: &str| {
        let key = super::model_key(id);
        available.iter().find(|m| m.key == key)
    };
    configured
        .and_then(find)
        .or_else(|| find("ollama:qwen3-vl:8b-instruct"))
        .or_else(|| available.iter().find(|m| m.provider == "ollama"))
        .or_else(|| available.first())
        .map(|m| m.id.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Capabilities;

    fn model(id: &str) -> ModelInfo {
        let (provider, name) = id.split_once(':').unwrap();
        ModelInfo::new(provider, name.into(), Capabilities::default(), None)
    }

    #[test]
    fn the_default_model_follows_the_documented_order() {
        let installed =
            [model("openai:gpt-4.1"), model("ollama:llama3.2:3b"), model("ollama:qwen3-vl:8b-instruct")];
        assert_eq!(pick_default(None, &installed).as_deref(), Some("ollama:qwen3-vl:8b-instruct"));
        assert_eq!(pick_default(Some("openai:gpt-4.1"), &installed).as_deref(), Some("openai:gpt-4.1"));
        assert_eq!(pick_default(Some("openai:gone"), &installed[..2]).as_deref(), Some("ollama:llama3.2:3b"));
        assert_eq!(pick_default(None, &[]), None);
        // Ollama's spellings of one model: a saved `llama3.2` is the installed `llama3.2:latest`.
        let tagged = [model("openai:gpt-4.1"), model("ollama:llama3.2:latest")];
        assert_eq!(pick_default(Some("ollama:Llama3.2"), &tagged).as_deref(), Some("ollama:llama3.2:latest"));
    }

    #[test]
    fn only_the_built_in_models_and_servers_at_a_loopback_address_keep_data_on_this_machine() {
        let at = |kind, url: &str| ProviderEndpoint {
            name: "x".into(),
            kind,
            url: url.into(),
            key_env: None,
            needs_key: false,
        };
        assert!(at(ProviderKind::Local, "").on_this_machine());
        assert!(at(ProviderKind::Ollama, "http://127.0.0.1:11434").on_this_machine());
        assert!(at(ProviderKind::Ollama, "http://LOCALHOST:11434/").on_this_machine());
        assert!(at(ProviderKind::OpenAi, "http://[::1]:8080/v1").on_this_machine());
        assert!(!at(ProviderKind::Ollama, "http://192.168.1.20:11434").on_this_machine());
        assert!(!at(ProviderKind::OpenAi, "https://api.openai.com/v1").on_this_machine());
        assert!(!at(ProviderKind::OpenAi, "http://localhost.evil.example/v1").on_this_machine());
        assert!(!at(ProviderKind::Anthropic, "not a url").on_this_machine());
    }
}
