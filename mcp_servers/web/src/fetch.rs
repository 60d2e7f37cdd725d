//! Fetching one page under limits: the SSRF guard on every hop, a total time limit, a byte
//! cap checked while streaming (a 2 GB download stops at the cap), a redirect limit, and
//! only the content types the reader understands (a PDF also when served as a generic binary).

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use reqwest::Url;
use reqwest::header::CONTENT_TYPE;

use crate::MAX_REDIRECTS;
use crate::error::WebError;
use crate::guard::{GuardedResolver, Policy};

/// The limits for one fetch (from the command line).
#[derive(Debug, Clone)]
pub struct Limits {
    pub timeout_secs: u64,
    pub max_bytes: u64,
}

/// A fetched page: its final URL after redirects and its body.
#[derive(Debug)]
pub struct Page {
    pub url: Url,
    pub body: Body,
}

/// A page's body: decoded text of a kind the reader understands, or a PDF's bytes.
#[derive(Debug)]
pub enum Body {
    Html(String),
    Plain(String),
    Json(String),
    Pdf(Vec<u8>),
}

/// What the Content-Type header says the body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Html,
    Plain,
    Json,
    Pdf,
    /// A generic binary type, read only if the body turns out to be a PDF.
    Binary,
}

pub struct Fetcher {
    client: reqwest::Client,
    policy: Arc<Policy>,
    limits: Limits,
}

impl Fetcher {
    pub fn new(policy: Policy, limits: Limits) -> Result<Self, WebError> {
        let policy = Arc::new(policy);
        let redirect_policy = policy.clone();
        let client = reqwest::Client::builder()
            .user_agent(concat!("Mozilla/5.0 (compatible; perch-mcp-web/", env!("CARGO_PKG_VERSION"), ")"))
            // Proxies from the environment would connect on our behalf to unchecked addresses.
            .no_proxy()
            .dns_resolver(GuardedResolver { policy: policy.clone() })
            .redirect(reqwest::redirect::Policy::custom(move |attempt| {
                if attempt.previous().len() > MAX_REDIRECTS || attempt.previous().contains(attempt.url()) {
                    return attempt.error(WebError::TooManyRedirects(MAX_REDIRECTS));
                }
                match redirect_policy.check_url(attempt.url()) {
                    Ok(()) => attempt.follow(),
                    Err(refused) => attempt.error(refused),
                }
            }))
            .connect_timeout(Duration::from_secs(limits.timeout_secs.min(10)))
            .timeout(Duration::from_secs(limits.timeout_secs))
            .build()
            .map_err(|e| WebError::Network(e.to_string()))?;
        Ok(Self { client, policy, limits })
    }

    pub async fn fetch(&self, raw_url: &str) -> Result<Page, WebError> {
        let url = Url::parse(raw_url.trim()).map_err(|_| WebError::BadUrl(raw_url.to_owned()))?;
        self.policy.check_url(&url)?;
        let timeout = self.limits.timeout_secs;
        let response = self
            .client
            .get(url)
            .header(
                "Accept",
                "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.8,application/pdf;q=0.8,*/*;q=0.5",
            )
            .send()
            .await
            .map_err(|e| WebError::from_reqwest(e, timeout))?;
        if !response.status().is_success() {
            return Err(WebError::Status { status: response.status().as_u16() });
        }
        let final_url = response.url().clone();
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("text/html")
            .to_owned();
        let kind = kind_of(&content_type)?;
        if response.content_length().is_some_and(|len| len > self.limits.max_bytes) {
            return Err(WebError::TooLarge { limit: self.limits.max_bytes });
        }
        let mut body = Vec::new();
        let mut stream = response.bytes_stream();
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| WebError::from_reqwest(e, timeout))?;
            if (body.len() + chunk.len()) as u64 > self.limits.max_bytes {
                return Err(WebError::TooLarge { limit: self.limits.max_bytes });
            }
            body.extend_from_slice(&chunk);
        }
        let body = match kind {
            Kind::Pdf => Body::Pdf(body),
            Kind::Binary if body.starts_with(PDF_MAGIC) => Body::Pdf(body),
            Kind::Binary => return Err(WebError::ContentType(media_type(&content_type))),
            Kind::Html => Body::Html(decode(&body, &content_type, kind)),
            Kind::Plain => Body::Plain(decode(&body, &content_type, kind)),
            Kind::Json => Body::Json(decode(&body, &content_type, kind)),
        };
        Ok(Page { url: final_url, body })
    }
}

/// How every PDF file begins (ISO 32000-1, 7.5.2).
const PDF_MAGIC: &[u8] = b"%PDF-";

fn media_type(content_type: &str) -> String {
    content_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase()
}

fn kind_of(content_type: &str) -> Result<Kind, WebError> {
    let media = media_type(content_type);
    match media.as_str() {
        "text/html" | "application/xhtml+xml" | "" => Ok(Kind::Html),
        "text/plain" | "text/markdown" | "text/x-markdown" | "text/csv" => Ok(Kind::Plain),
        "application/json" => Ok(Kind::Json),
        m if m.ends_with("+json") => Ok(Kind::Json),
        "application/pdf" | "application/x-pdf" => Ok(Kind::Pdf),
        // Servers that do not know a file's type send one of these; the body decides.
        "application/octet-stream" | "binary/octet-stream" | "application/download" => Ok(Kind::Binary),
        _ => Err(WebError::ContentType(media)),
    }
}

/// Decodes by the header's charset, else an HTML page's `<meta charset>`, else UTF-8 (invalid
/// bytes replaced, never dropped silently: the replacement character marks them).
fn decode(body: &[u8], content_type: &str, kind: Kind) -> String {
    let declared =
        charset_param(content_type).or_else(|| (kind == Kind::Html).then(|| meta_charset(body)).flatten());
    let encoding = declared
        .and_then(|label| encoding_rs::Encoding::for_label(label.as_bytes()))
        .unwrap_or(encoding_rs::UTF_8);
    let (text, _, _) = encoding.decode(body);
    text.into_owned()
}

fn charset_param(content_type: &str) -> Option<String> {
    content_type.split(';').skip(1).find_map(|param| {
        let (key, value) = param.split_once('=')?;
        key.trim().eq_ignore_ascii_case("charset").then(|| value.trim().trim_matches('"').to_owned())
    })
}

/// Finds `charset=...` in the first 2 KiB, where HTML requires the declaration to be.
fn meta_charset(body: &[u8]) -> Option<String> {
    let head = String::from_utf8_lossy(&body[..body.len().min(2048)]).to_ascii_lowercase();
    let at = head.find("charset=")? + "charset=".len();
    let value: String = head[at..]
        .trim_start_matches(['"', '\''])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect();
    (!value.is_empty()).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_declared_and_sniffed_charsets() {
        let latin1 = b"caf\xe9";
        assert_eq!(decode(latin1, "text/plain; charset=ISO-8859-1", Kind::Plain), "caf\u{e9}");
        let html = b"<html><head><meta charset=\"windows-1252\"></head><body>\x93hi\x94</body></html>";
        assert!(decode(html, "text/html", Kind::Html).contains("\u{201c}hi\u{201d}"));
        assert_eq!(decode(b"ok \xff", "text/plain", Kind::Plain), "ok \u{fffd}");
    }

    #[test]
    fn accepts_only_readable_types() {
        assert_eq!(kind_of("text/html; charset=utf-8").ok(), Some(Kind::Html));
        assert_eq!(kind_of("application/ld+json").ok(), Some(Kind::Json));
        assert_eq!(kind_of("application/pdf").ok(), Some(Kind::Pdf));
        assert_eq!(kind_of("Application/Octet-Stream").ok(), Some(Kind::Binary));
        assert!(matches!(kind_of("image/png"), Err(WebError::ContentType(_))));
    }
}
