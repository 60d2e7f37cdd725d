//! Settings -> Models -> Providers: where each provider lives. The engine's settings hold
//! these as their `providers` row.

use serde::{Deserialize, Serialize};

/// An http(s) base URL; anything else is rejected at load time and replaced by the default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(try_from = "String", into = "String")]
pub struct BaseUrl(String);

impl BaseUrl {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Why a text is not a [`BaseUrl`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not an http:// or https:// URL")]
pub struct NotAnHttpUrl(String);

impl TryFrom<String> for BaseUrl {
    type Error = NotAnHttpUrl;
    fn try_from(value: String) -> Result<Self, NotAnHttpUrl> {
        let trimmed = value.trim().trim_end_matches('/');
        let rest = trimmed.strip_prefix("http://").or_else(|| trimmed.strip_prefix("https://"));
        match rest {
            Some(host) if !host.is_empty() && !host.contains(char::is_whitespace) => {
                Ok(Self(trimmed.to_owned()))
            }
            _ => Err(NotAnHttpUrl(value)),
        }
    }
}

impl From<BaseUrl> for String {
    fn from(url: BaseUrl) -> String {
        url.0
    }
}

pub const DEFAULT_OLLAMA_URL: &str = "http://127.0.0.1:11434";

/// Where each provider lives. The providers' usual environment variables (`OLLAMA_HOST`,
/// `OPENAI_BASE_URL`) override these at run time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct ProviderSettings {
    pub ollama_url: BaseUrl,
    pub openai_url: BaseUrl,
    pub anthropic_url: BaseUrl,
    pub gemini_url: BaseUrl,
    /// More OpenAI-compatible servers (llama.cpp, LM Studio, vLLM, DeepSeek, OpenRouter).
    pub compatible: Vec<CompatibleServer>,
    /// The largest context window (tokens) Perch runs an Ollama model at; a model trained for
    /// less runs at its own. Memory grows with it (the model's cache), so it is capped.
    pub ollama_context: u32,
}

impl Default for ProviderSettings {
    fn default() -> Self {
        let url = |u: &str| BaseUrl(u.to_owned());
        Self {
            ollama_url: url(DEFAULT_OLLAMA_URL),
            openai_url: url("https://api.openai.com/v1"),
            anthropic_url: url("https://api.anthropic.com"),
            gemini_url: url("https://generativelanguage.googleapis.com"),
            compatible: Vec::new(),
            ollama_context: crate::ollama::DEFAULT_CONTEXT,
        }
    }
}

/// An OpenAI-compatible server; its models are named `NAME:model`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct CompatibleServer {
    pub name: String,
    pub url: BaseUrl,
    pub needs_key: bool,
}

/// `OLLAMA_HOST` accepts `host`, `host:port` or a URL; `0.0.0.0` means "this machine".
pub fn ollama_host_to_url(host: &str) -> Option<String> {
    let host = host.trim().trim_end_matches('/');
    if host.is_empty() {
        return None;
    }
    let (scheme, rest) = match host.split_once("://") {
        Some((scheme, rest)) => (scheme, rest),
        None => ("http", host),
    };
    let rest = rest.replacen("0.0.0.0", "127.0.0.1", 1);
    let has_port = rest.rsplit_once(':').is_some_and(|(_, p)| p.chars().all(|c| c.is_ascii_digit()));
    let port = if has_port || scheme == "https" { "" } else { ":11434" };
    Some(format!("{scheme}://{rest}{port}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_url_is_normalised_and_checked() {
        assert_eq!(BaseUrl::try_from("http://host:1/".to_owned()).unwrap().as_str(), "http://host:1");
        assert!(BaseUrl::try_from("localhost:11434".to_owned()).is_err());
        assert!(BaseUrl::try_from("http://".to_owned()).is_err());
    }

    #[test]
    fn ollama_host_forms_become_urls() {
        assert_eq!(ollama_host_to_url("0.0.0.0").as_deref(), Some("http://127.0.0.1:11434"));
        assert_eq!(ollama_host_to_url("box:8080").as_deref(), Some("http://box:8080"));
        assert_eq!(
            ollama_host_to_url("https://ollama.example.com/").as_deref(),
            Some("https://ollama.example.com")
        );
        assert_eq!(ollama_host_to_url("  "), None);
    }
}
