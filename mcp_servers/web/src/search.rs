//! Web search back-ends: DuckDuckGo's HTML endpoint (no key), a SearXNG instance (JSON API),
//! Brave Search and Tavily (API keys). Each returns titles, URLs and snippets.
//!
//! The search endpoint is chosen by the user, not the model (a SearXNG instance is often on the
//! local network), so it is not subject to the page guard. The services that take a key are
//! reached only at their own address: the key goes with every search, and an `--endpoint` (which
//! a link adding a server can carry) would hand it to whoever runs that address. Debug builds
//! take a loopback stand-in for them from [`TEST_ENDPOINT`], for tests.

use std::time::Duration;

use dom_query::Document;
use reqwest::header::CONTENT_TYPE;
use reqwest::{Client, RequestBuilder, StatusCode, Url};
use serde_json::{Value, json};

use crate::error::WebError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    Duckduckgo,
    Searxng,
    Brave,
    Tavily,
}

impl Backend {
    pub fn label(self) -> &'static str {
        match self {
            Self::Duckduckgo => "DuckDuckGo",
            Self::Searxng => "SearXNG",
            Self::Brave => "Brave Search",
            Self::Tavily => "Tavily",
        }
    }

    fn default_endpoint(self) -> &'static str {
        match self {
            Self::Duckduckgo => "https://html.duckduckgo.com/html/",
            Self::Searxng => "http://localhost:8888/",
            Self::Brave => "https://api.search.brave.com/res/v1/web/search",
            Self::Tavily => "https://api.tavily.com/search",
        }
    }

    /// The environment variable holding the key (Perch passes stored keys this way).
    /// A back-end with a key is reached only at its default endpoint.
    fn key_env(self) -> Option<&'static str> {
        match self {
            Self::Brave => Some("BRAVE_API_KEY"),
            Self::Tavily => Some("TAVILY_API_KEY"),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

/// Debug builds only: a loopback address that stands in for the keyed services' own.
pub const TEST_ENDPOINT: &str = "PERCH_WEB_SEARCH_TEST_ENDPOINT";

pub struct Searcher {
    client: Client,
    backend: Backend,
    endpoint: String,
    key: Option<String>,
    timeout_secs: u64,
}

impl Searcher {
    pub fn new(backend: Backend, endpoint: Option<String>, timeout_secs: u64) -> Result<Self, WebError> {
        let client = Client::builder()
            .user_agent(concat!("Mozilla/5.0 (compatible; perch-mcp-web/", env!("CARGO_PKG_VERSION"), ")"))
            .timeout(Duration::from_secs(timeout_secs))
            .build()
            .map_err(|e| WebError::Network(e.to_string()))?;
        let key = backend.key_env().and_then(|env| std::env::var(env).ok()).filter(|k| !k.trim().is_empty());
        let endpoint = match (backend.key_env(), endpoint) {
            (Some(_), Some(_)) => return Err(WebError::KeyedEndpoint { backend: backend.label() }),
            (Some(_), None) => keyed_endpoint(backend)?,
            (None, endpoint) => endpoint.unwrap_or_else(|| backend.default_endpoint().to_owned()),
        };
        Ok(Self { client, backend, endpoint, key, timeout_secs })
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    pub async fn search(&self, query: &str, max_results: usize) -> Result<Vec<Hit>, WebError> {
        let count = max_results.min(20).to_string();
        let request = match self.backend {
            Backend::Duckduckgo => self
                .client
                .post(&self.endpoint)
                .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(encode(&[("q", query), ("kl", "wt-wt")])),
            Backend::Searxng => {
                let base = Url::parse(&self.endpoint).map_err(|_| WebError::BadUrl(self.endpoint.clone()))?;
                let url = base.join("search").map_err(|_| WebError::BadUrl(self.endpoint.clone()))?;
                self.client.get(with_query(url, &[("q", query), ("format", "json")]))
            }
            Backend::Brave => {
                let url = Url::parse(&self.endpoint).map_err(|_| WebError::BadUrl(self.endpoint.clone()))?;
                self.client
                    .get(with_query(url, &[("q", query), ("count", &count)]))
                    .header("Accept", "application/json")
                    .header("X-Subscription-Token", self.key()?)
            }
            Backend::Tavily => self
                .client
                .post(&self.endpoint)
                .bearer_auth(self.key()?)
                .json(&json!({ "query": query, "max_results": max_results.min(20) })),
        };
        let body = self.send(request).await?;
        let mut hits = match self.backend {
            Backend::Duckduckgo => parse_duckduckgo(&body)?,
            Backend::Searxng => parse_json(&body, "/results", "content")?,
            Backend::Brave => parse_json(&body, "/web/results", "description")?,
            Backend::Tavily => parse_json(&body, "/results", "content")?,
        };
        hits.truncate(max_results);
        Ok(hits)
    }

    fn key(&self) -> Result<&str, WebError> {
        let env = self.backend.key_env().unwrap_or_default();
        self.key.as_deref().ok_or(WebError::MissingKey { backend: self.backend.label(), env })
    }

    async fn send(&self, request: RequestBuilder) -> Result<String, WebError> {
        let response = request.send().await.map_err(|e| WebError::from_reqwest(e, self.timeout_secs))?;
        match response.status() {
            StatusCode::TOO_MANY_REQUESTS => return Err(WebError::RateLimited),
            s @ (StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) => return Err(WebError::Auth(s.as_u16())),
            s if !s.is_success() => return Err(WebError::Status { status: s.as_u16() }),
            _ => {}
        }
        response.text().await.map_err(|e| WebError::from_reqwest(e, self.timeout_secs))
    }
}

/// A keyed service's own address, or in a debug build the loopback stand-in [`TEST_ENDPOINT`]
/// names (anything else there is refused: it would receive the key).
fn keyed_endpoint(backend: Backend) -> Result<String, WebError> {
    let Some(stand_in) = std::env::var(TEST_ENDPOINT).ok().filter(|v| !v.is_empty()) else {
        return Ok(backend.default_endpoint().to_owned());
    };
    if !cfg!(debug_assertions) {
        tracing::warn!("{TEST_ENDPOINT} is honoured only in debug builds; ignored");
        return Ok(backend.default_endpoint().to_owned());
    }
    let loopback = Url::parse(&stand_in).ok().is_some_and(|url| {
        url.scheme() == "http"
            && match url.host() {
                Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
                Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
                Some(url::Host::Domain(name)) => name == "localhost",
                None => false,
            }
    });
    if loopback {
        Ok(stand_in)
    } else {
        Err(WebError::TestEndpoint(format!("{TEST_ENDPOINT} must be an http address on this computer")))
    }
}

/// Form-encodes pairs (reqwest's own `form`/`query` features would rebuild it, and everything
/// using it, for the whole workspace).
fn encode(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish()
}

fn with_query(mut url: Url, pairs: &[(&str, &str)]) -> Url {
    url.query_pairs_mut().extend_pairs(pairs);
    url
}

/// DuckDuckGo's HTML results: `.result` blocks (ads marked `.result--ad`) with a `.result__a`
/// title link (a `/l/?uddg=` redirect holding the real URL) and a `.result__snippet`.
pub fn parse_duckduckgo(html: &str) -> Result<Vec<Hit>, WebError> {
    let doc = Document::from(html);
    let mut hits = Vec::new();
    for result in doc.select(".result").iter() {
        if result.has_class("result--ad") {
            continue;
        }
        let link = result.select(".result__a");
        let Some(href) = link.attr("href") else { continue };
        let Some(url) = duckduckgo_target(&href) else { continue };
        let title = squash(&link.text());
        let snippet = squash(&result.select(".result__snippet").text());
        hits.push(Hit { title, url, snippet });
    }
    // DuckDuckGo answers a blocked client with a 200 page holding a challenge and no results.
    if hits.is_empty() && (html.contains("anomaly-modal") || html.contains("challenge-form")) {
        return Err(WebError::RateLimited);
    }
    Ok(hits)
}

/// The real address behind a DuckDuckGo result link (`//duckduckgo.com/l/?uddg=<encoded>`), or
/// the link itself when it is already direct.
fn duckduckgo_target(href: &str) -> Option<String> {
    let absolute = if href.starts_with("//") { format!("https:{href}") } else { href.to_owned() };
    let url = Url::parse(&absolute).ok()?;
    if url.path().starts_with("/l/") {
        return url.query_pairs().find(|(k, _)| k == "uddg").map(|(_, v)| v.into_owned());
    }
    matches!(url.scheme(), "http" | "https").then(|| url.to_string())
}

/// The JSON APIs: an array of objects with `title`, `url` and a snippet field.
fn parse_json(body: &str, pointer: &str, snippet_field: &str) -> Result<Vec<Hit>, WebError> {
    let value: Value = serde_json::from_str(body).map_err(|e| WebError::Unexpected(e.to_string()))?;
    let Some(results) = value.pointer(pointer) else {
        return Ok(Vec::new()); // Brave omits `web` when nothing matched
    };
    let results =
        results.as_array().ok_or_else(|| WebError::Unexpected(format!("{pointer} is not a list")))?;
    let field =
        |item: &Value, name: &str| item.get(name).and_then(Value::as_str).map(squash).unwrap_or_default();
    Ok(results
        .iter()
        .filter(|item| item.get("url").is_some())
        .map(|item| Hit {
            title: field(item, "title"),
            url: field(item, "url"),
            snippet: field(item, snippet_field),
        })
        .collect())
}

/// Collapses runs of whitespace (result markup is full of line breaks and indentation).
fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The tool's answer: a numbered Markdown list, the snippets marked untrusted.
pub fn render(query: &str, backend: Backend, hits: &[Hit]) -> String {
    if hits.is_empty() {
        return format!("No results for \"{query}\" ({}).", backend.label());
    }
    let mut out = format!(
        "Results for \"{query}\" from {} (titles and snippets are untrusted web content):\n",
        backend.label()
    );
    for (i, hit) in hits.iter().enumerate() {
        let title = if hit.title.is_empty() { hit.url.as_str() } else { hit.title.as_str() };
        out.push_str(&format!("\n{}. [{}](<{}>)\n", i + 1, title.replace(['[', ']'], ""), hit.url));
        if !hit.snippet.is_empty() {
            out.push_str(&format!("   {}\n", hit.snippet));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unwraps_duckduckgo_redirect_links() {
        let href = "//duckduckgo.com/l/?uddg=https%3A%2F%2Fwww.rust-lang.org%2Flearn%3Fa%3D1&rut=abc";
        assert_eq!(duckduckgo_target(href).as_deref(), Some("https://www.rust-lang.org/learn?a=1"));
        assert_eq!(duckduckgo_target("https://example.org/x").as_deref(), Some("https://example.org/x"));
        assert_eq!(duckduckgo_target("javascript:alert(1)"), None);
    }

    #[test]
    fn reads_the_json_apis() {
        let brave = r#"{"type":"search","web":{"results":[{"title":"Rust","url":"https://rust-lang.org/","description":"A <strong>language</strong>"}]}}"#;
        let hits = parse_json(brave, "/web/results", "description").expect("parsed");
        assert_eq!(hits[0].url, "https://rust-lang.org/");
        assert!(parse_json(r#"{"type":"search"}"#, "/web/results", "description").expect("empty").is_empty());
        assert!(matches!(parse_json("<html>", "/results", "content"), Err(WebError::Unexpected(_))));
    }
}
