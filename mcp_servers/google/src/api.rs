//! One client for both APIs: the bearer token on every request (marked sensitive), a time limit,
//! answers read up to a byte cap, Google's error bodies turned into [`GoogleError`]s, and one
//! retry for rate limits (when Google asks for at most 10 s) and for server errors on requests
//! that are safe to repeat.

use std::time::Duration;

use futures::StreamExt;
use reqwest::header::{AUTHORIZATION, HeaderValue, RETRY_AFTER};
use reqwest::{Method, StatusCode};
use serde::Deserialize;
use serde_json::Value;
use url::Url;

use crate::config::{AccessToken, Roots};
use crate::error::GoogleError;

/// The largest answer read for ordinary calls; a whole message (with its bodies) may be larger.
pub const JSON_LIMIT: usize = 4 * 1024 * 1024;
/// The largest `format=full` message read: Gmail takes messages up to 25 MB of attachments, base64
/// in JSON grows them by a third, and the bodies are cut later, after parsing.
pub const MESSAGE_LIMIT: usize = 48 * 1024 * 1024;
/// The longest wait on a `Retry-After` before retrying rather than reporting.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy)]
pub enum Api {
    Gmail,
    Calendar,
}

/// One request: where, what, and what a refusal means.
pub struct Request<'a> {
    pub method: Method,
    pub api: Api,
    /// Path segments under the API's root, each percent-encoded on its own (an id cannot climb).
    pub path: &'a [&'a str],
    pub query: Vec<(&'static str, String)>,
    pub body: Option<Value>,
    /// The permission a 403 asks the user to add.
    pub need: &'static str,
    /// Whether repeating it after a server error is harmless (reads, label changes, deletes).
    pub repeatable: bool,
    pub limit: usize,
}

impl<'a> Request<'a> {
    pub fn get(api: Api, path: &'a [&'a str], need: &'static str) -> Self {
        Self {
            method: Method::GET,
            api,
            path,
            query: Vec::new(),
            body: None,
            need,
            repeatable: true,
            limit: JSON_LIMIT,
        }
    }

    pub fn post(api: Api, path: &'a [&'a str], body: Value, need: &'static str) -> Self {
        Self { method: Method::POST, body: Some(body), repeatable: false, ..Self::get(api, path, need) }
    }

    pub fn query(mut self, key: &'static str, value: impl Into<String>) -> Self {
        self.query.push((key, value.into()));
        self
    }

    pub fn method(mut self, method: Method) -> Self {
        self.method = method;
        self
    }

    pub fn repeatable(mut self) -> Self {
        self.repeatable = true;
        self
    }

    pub fn limit(mut self, bytes: usize) -> Self {
        self.limit = bytes;
        self
    }
}

pub struct Google {
    http: reqwest::Client,
    token: AccessToken,
    roots: Roots,
    timeout_secs: u64,
}

/// Google's error body: `{"error": {"code", "message", "status", "errors": [{"reason"}]}}`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ErrorBody {
    error: ErrorDetail,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ErrorDetail {
    message: String,
    status: String,
    errors: Vec<ErrorReason>,
    details: Vec<ErrorReason>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ErrorReason {
    reason: String,
}

/// One attempt's failure, and whether (and after how long) a second attempt may succeed.
struct Failed {
    error: GoogleError,
    retry_after: Option<Duration>,
}

impl Google {
    pub fn new(token: AccessToken, roots: Roots, timeout_secs: u64) -> Result<Self, GoogleError> {
        // reqwest is built without a default TLS provider; the workspace uses ring.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .user_agent(concat!("perch-mcp-google/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(timeout_secs.min(10)))
            .timeout(Duration::from_secs(timeout_secs))
            // The token must never follow a redirect to another host; Google's APIs do not redirect.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| GoogleError::from_reqwest(&e, timeout_secs))?;
        Ok(Self { http, token, roots, timeout_secs })
    }

    /// Sends `request`, retrying once where that is safe and worth it; the answer's JSON (`null`
    /// for an empty answer, as deletes give).
    pub async fn call(&self, request: Request<'_>) -> Result<Value, GoogleError> {
        match self.attempt(&request).await {
            Ok(value) => Ok(value),
            Err(Failed { retry_after: Some(wait), error }) => {
                tracing::info!(%error, wait_ms = wait.as_millis() as u64, "retrying once");
                tokio::time::sleep(wait).await;
                self.attempt(&request).await.map_err(|failed| failed.error)
            }
            Err(failed) => Err(failed.error),
        }
    }

    fn url(&self, request: &Request<'_>) -> Url {
        let mut url = match request.api {
            Api::Gmail => self.roots.gmail.clone(),
            Api::Calendar => self.roots.calendar.clone(),
        };
        if let Ok(mut segments) = url.path_segments_mut() {
            segments.pop_if_empty().extend(request.path);
        }
        if !request.query.is_empty() {
            url.query_pairs_mut().extend_pairs(request.query.iter().map(|(k, v)| (*k, v.as_str())));
        }
        url
    }

    async fn attempt(&self, request: &Request<'_>) -> Result<Value, Failed> {
        let fail = |error| Failed { error, retry_after: None };
        let mut bearer = HeaderValue::from_str(&format!("Bearer {}", self.token.secret()))
            .map_err(|_| fail(GoogleError::Unauthorized))?;
        bearer.set_sensitive(true);
        let mut builder =
            self.http.request(request.method.clone(), self.url(request)).header(AUTHORIZATION, bearer);
        if let Some(body) = &request.body {
            builder = builder.json(body);
        }
        let response = builder.send().await.map_err(|e| {
            let error = GoogleError::from_reqwest(&e, self.timeout_secs);
            // A request that never reached Google is safe to send again; a timeout may have.
            let retry = (request.repeatable && e.is_connect()).then_some(Duration::from_secs(1));
            Failed { error, retry_after: retry }
        })?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok());
        let body = read_capped(response, request.limit, self.timeout_secs).await.map_err(fail)?;
        if status.is_success() {
            if body.iter().all(u8::is_ascii_whitespace) {
                return Ok(Value::Null);
            }
            return serde_json::from_slice(&body)
                .map_err(|e| fail(GoogleError::Malformed(format!("not valid JSON: {e}"))));
        }
        Err(classify(status, &body, retry_after, request))
    }
}

async fn read_capped(
    response: reqwest::Response,
    limit: usize,
    timeout_secs: u64,
) -> Result<Vec<u8>, GoogleError> {
    if response.content_length().is_some_and(|len| len as usize > limit) {
        return Err(GoogleError::TooLarge { limit });
    }
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| GoogleError::from_reqwest(&e, timeout_secs))?;
        if body.len() + chunk.len() > limit {
            return Err(GoogleError::TooLarge { limit });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Google's error answer as an error the user can act on, and whether to try once more.
fn classify(status: StatusCode, body: &[u8], retry_after: Option<u64>, request: &Request<'_>) -> Failed {
    let detail = serde_json::from_slice::<ErrorBody>(body).map(|b| b.error).unwrap_or_default();
    let reasons: Vec<&str> = detail.errors.iter().chain(&detail.details).map(|r| r.reason.as_str()).collect();
    let has = |reason: &str| reasons.iter().any(|r| r.eq_ignore_ascii_case(reason));
    let message = if detail.message.is_empty() {
        status.canonical_reason().unwrap_or("no reason given").to_owned()
    } else {
        detail.message.clone()
    };
    let rate_limited = status == StatusCode::TOO_MANY_REQUESTS
        || (status == StatusCode::FORBIDDEN
            && (has("rateLimitExceeded")
                || has("userRateLimitExceeded")
                || detail.status == "RESOURCE_EXHAUSTED"));
    let none = |error| Failed { error, retry_after: None };
    if rate_limited {
        // Google refused the request without doing it, so repeating it is safe even for a send.
        let wait = retry_after.map_or(Duration::from_secs(2), Duration::from_secs);
        let error = GoogleError::RateLimited { retry_after_secs: retry_after };
        return Failed { error, retry_after: (wait <= MAX_RETRY_WAIT).then_some(wait) };
    }
    match status.as_u16() {
        401 => none(GoogleError::Unauthorized),
        403 if has("insufficientPermissions")
            || has("ACCESS_TOKEN_SCOPE_INSUFFICIENT")
            || detail.status == "PERMISSION_DENIED" && message.to_ascii_lowercase().contains("scope") =>
        {
            none(GoogleError::MissingPermission { need: request.need })
        }
        403 => none(GoogleError::Forbidden { message }),
        404 | 410 => none(GoogleError::NotFound { message }),
        400 => none(GoogleError::BadRequest { message }),
        code @ 500..=599 if request.repeatable => Failed {
            error: GoogleError::Unavailable { status: code },
            retry_after: Some(Duration::from_secs(1)),
        },
        code @ 500..=599 => none(GoogleError::MaybeDone { status: code }),
        code => none(GoogleError::Status { status: code, message }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> Request<'static> {
        Request::get(Api::Gmail, &["users", "me", "messages"], crate::scopes::need::READ_MAIL)
    }

    #[test]
    fn reads_google_error_bodies() {
        let body = br#"{"error":{"code":403,"message":"Request had insufficient authentication scopes.",
            "status":"PERMISSION_DENIED","errors":[{"reason":"insufficientPermissions"}]}}"#;
        let failed = classify(StatusCode::FORBIDDEN, body, None, &request());
        assert!(failed.error.to_string().contains("\"Read mail\""), "{}", failed.error);
        let limited = br#"{"error":{"code":403,"errors":[{"reason":"userRateLimitExceeded"}]}}"#;
        let failed = classify(StatusCode::FORBIDDEN, limited, Some(3), &request());
        assert_eq!(failed.retry_after, Some(Duration::from_secs(3)));
        let failed = classify(StatusCode::TOO_MANY_REQUESTS, b"", Some(60), &request());
        assert!(failed.retry_after.is_none() && failed.error.to_string().contains("60 s"));
        let failed = classify(StatusCode::BAD_GATEWAY, b"<html>oops", None, &request());
        assert!(
            matches!(failed.error, GoogleError::Unavailable { status: 502 }) && failed.retry_after.is_some()
        );
        let send = Request::post(Api::Gmail, &["users", "me", "messages", "send"], Value::Null, "send");
        let failed = classify(StatusCode::INTERNAL_SERVER_ERROR, b"", None, &send);
        assert!(matches!(failed.error, GoogleError::MaybeDone { .. }) && failed.retry_after.is_none());
    }

    #[test]
    fn ids_are_one_path_segment_each() {
        let google = Google::new(AccessToken::new("t"), Roots::default(), 5).unwrap();
        let request = Request::get(Api::Gmail, &["users", "me", "messages", "../../x?y"], "read");
        let url = google.url(&request.query("q", "from:ann is:unread"));
        assert_eq!(
            url.as_str(),
            "https://gmail.googleapis.com/gmail/v1/users/me/messages/..%2F..%2Fx%3Fy?q=from%3Aann+is%3Aunread"
        );
    }
}
