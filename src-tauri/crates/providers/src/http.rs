//! What every HTTP provider shares: clients with sensible timeouts, mapping HTTP failures to
//! [`ProviderError`], and reading a streamed body as lines (NDJSON) or server-sent events.
//!
//! Bodies are split into lines as bytes and decoded afterwards, so a character split across
//! two network chunks arrives whole. A quiet stream is cut after an idle timeout.
//! (Over 500 lines with its tests; the code is about 400.)

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use futures::FutureExt;
use futures::stream::{BoxStream, StreamExt};
use reqwest::{Response, StatusCode};

use super::ProviderError;

/// How long to wait for the first byte (models can take a while to load) and between bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Timeouts {
    pub connect: Duration,
    pub first_byte: Duration,
    pub idle: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect: perch_foundation::http::CONNECT_TIMEOUT,
            first_byte: Duration::from_secs(300),
            idle: Duration::from_secs(60),
        }
    }
}

pub use perch_foundation::http::{client_builder, install_tls_provider};

/// A new client for a model service, with its connect timeout. Building one loads the TLS
/// roots and starts an empty connection pool, so the engine reuses its clients ([`Clients`]).
pub fn client(timeouts: &Timeouts) -> reqwest::Client {
    client_builder().connect_timeout(timeouts.connect).build().unwrap_or_default()
}

/// A client and the timeouts its streams are read with: what a provider talks through.
#[derive(Debug, Clone)]
pub struct Http {
    pub client: reqwest::Client,
    pub timeouts: Timeouts,
}

impl From<Timeouts> for Http {
    /// A client of its own (tests, one-off use); the engine's come from [`Clients`].
    fn from(timeouts: Timeouts) -> Self {
        Self { client: client(&timeouts), timeouts }
    }
}

/// The clients a process reuses, one per timeout configuration (clones share the cache). A
/// turn that built its own client spent milliseconds loading the TLS roots before its first
/// byte, and could not reuse a kept-alive connection.
#[derive(Debug, Clone, Default)]
pub struct Clients(Arc<Mutex<HashMap<Timeouts, reqwest::Client>>>);

impl Clients {
    pub fn get(&self, timeouts: Timeouts) -> Http {
        let mut clients = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let client = clients.entry(timeouts).or_insert_with(|| client(&timeouts)).clone();
        Http { client, timeouts }
    }
}

/// A provider's address, and how to talk about failing to reach it.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub provider: String,
    pub url: String,
    /// What to do when it cannot be reached.
    pub hint: &'static str,
}

impl Endpoint {
    pub fn new(provider: &str, url: &str, hint: &'static str) -> Self {
        Self { provider: provider.to_owned(), url: url.trim_end_matches('/').to_owned(), hint }
    }

    /// A failed send: unreachable (refused, timed out) or broken; an HTTPS address on a
    /// system without root certificates, with what to install.
    pub fn send_error(&self, e: reqwest::Error) -> ProviderError {
        if self.url.starts_with("https:") && !perch_foundation::http::system_has_root_certificates() {
            ProviderError::Stream {
                provider: self.provider.clone(),
                message: perch_foundation::http::NO_ROOT_CERTIFICATES.to_owned(),
            }
        } else if e.is_connect() || e.is_timeout() {
            ProviderError::Unreachable {
                provider: self.provider.clone(),
                url: self.url.clone(),
                hint: self.hint.to_owned(),
            }
        } else {
            ProviderError::Stream { provider: self.provider.clone(), message: e.to_string() }
        }
    }

    /// Sends a request and checks its status; `model` names the model in a 404.
    pub async fn send(
        &self,
        request: reqwest::RequestBuilder,
        model: &str,
    ) -> Result<Response, ProviderError> {
        let response = request.send().await.map_err(|e| self.send_error(e))?;
        check(response, &self.provider, model).await
    }

    /// A small JSON answer (a model list), within 15 seconds.
    pub async fn get_json<T: serde::de::DeserializeOwned>(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<T, ProviderError> {
        let response = self.send(request.timeout(Duration::from_secs(15)), "").await?;
        response.json().await.map_err(|e| self.send_error(e))
    }
}

/// Turns a non-success response into the matching error; `provider` names the provider.
pub async fn check(response: Response, provider: &str, model: &str) -> Result<Response, ProviderError> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let retry_after = retry_after(&response);
    let body = response.text().await.unwrap_or_default();
    let message = error_message(&body).unwrap_or_else(|| body.trim().chars().take(300).collect());
    let provider = provider.to_owned();
    // Gemini answers a bad key with 400 INVALID_ARGUMENT and says so only in the body.
    let bad_key = body.contains("API_KEY_INVALID") || message.contains("API key not valid");
    Err(match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => ProviderError::Auth { provider },
        StatusCode::BAD_REQUEST if bad_key => ProviderError::Auth { provider },
        StatusCode::TOO_MANY_REQUESTS => ProviderError::RateLimited {
            provider,
            retry_after: retry_after.or_else(|| gemini_retry_delay(&body)),
        },
        StatusCode::NOT_FOUND
            if message.contains("model") || message.is_empty() || message.contains("not found") =>
        {
            ProviderError::ModelNotFound { provider, model: model.to_owned(), available: Vec::new() }
        }
        s if s.is_client_error() && looks_like_context_overflow(&message) => {
            ProviderError::ContextTooLong { model: model.to_owned() }
        }
        s if s.is_client_error() => ProviderError::BadRequest { provider, message },
        s => ProviderError::Server { provider, status: s.as_u16(), message },
    })
}

fn looks_like_context_overflow(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    ["context length", "context_length", "too many tokens", "prompt is too long", "maximum context"]
        .iter()
        .any(|needle| m.contains(needle))
}

/// `Retry-After` as seconds or an HTTP date.
fn retry_after(response: &Response) -> Option<Duration> {
    let value = response.headers().get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return Some(Duration::from_secs_f64(seconds.max(0.0)));
    }
    let when = httpdate(value)?;
    Some(when.duration_since(SystemTime::now()).unwrap_or_default())
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the only form servers send today.
fn httpdate(value: &str) -> Option<SystemTime> {
    let t = chrono::DateTime::parse_from_rfc2822(value).ok()?;
    let secs = u64::try_from(t.timestamp()).ok()?;
    Some(SystemTime::UNIX_EPOCH + Duration::from_secs(secs))
}

/// Gemini puts the delay in the body: `{"error":{"details":[{"retryDelay":"37s"}]}}`.
fn gemini_retry_delay(body: &str) -> Option<Duration> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    let details = v.pointer("/error/details")?.as_array()?;
    let delay = details.iter().find_map(|d| d.get("retryDelay")?.as_str())?;
    delay.trim_end_matches('s').parse::<f64>().ok().map(Duration::from_secs_f64)
}

/// The human message inside the error bodies providers send.
pub fn error_message(body: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    let candidates = ["/error/message", "/error", "/message", "/detail"];
    candidates.iter().find_map(|p| v.pointer(p)?.as_str().map(str::to_owned))
}

/// The body as lines (without the newline), with idle timeouts. Carriage returns are dropped.
pub fn lines(
    response: Response,
    provider: &str,
    timeouts: Timeouts,
) -> BoxStream<'static, Result<Vec<u8>, ProviderError>> {
    /// `buf[start..]` is not handed out yet, and its first `scanned` bytes hold no newline. A
    /// network chunk carries hundreds of short lines when a model is fast: each is copied out
    /// once, and the buffer is compacted once per chunk, not once per line.
    struct State<B> {
        body: B,
        buf: Vec<u8>,
        start: usize,
        scanned: usize,
        first: bool,
        ended: bool,
        provider: String,
    }
    let state = State {
        body: response.bytes_stream(),
        buf: Vec::new(),
        start: 0,
        scanned: 0,
        first: true,
        ended: false,
        provider: provider.to_owned(),
    };
    futures::stream::unfold(state, move |mut st| async move {
        loop {
            let from = st.start + st.scanned;
            if let Some(at) = st.buf[from..].iter().position(|&b| b == b'\n') {
                let mut line = &st.buf[st.start..from + at];
                if line.last() == Some(&b'\r') {
                    line = &line[..line.len() - 1];
                }
                let line = line.to_vec();
                (st.start, st.scanned) = (from + at + 1, 0);
                return Some((Ok(line), st));
            }
            st.scanned = st.buf.len() - st.start;
            if st.ended {
                if st.scanned == 0 {
                    return None;
                }
                let line = st.buf[st.start..].to_vec();
                (st.start, st.scanned) = (st.buf.len(), 0);
                return Some((Ok(line), st));
            }
            st.buf.drain(..st.start);
            st.start = 0;
            let wait = if st.first { timeouts.first_byte } else { timeouts.idle };
            // A chunk that is already here needs no timer: a fast model sends a chunk per
            // token, and arming a timer for each cost more than the rest of the token's path.
            let next = match st.body.next().now_or_never() {
                Some(next) => Ok(next),
                None => tokio::time::timeout(wait, st.body.next()).await,
            };
            let failure = match next {
                Err(_) => ProviderError::Stalled { provider: st.provider.clone(), after: wait },
                Ok(None) => {
                    st.ended = true;
                    continue;
                }
                Ok(Some(Ok(chunk))) => {
                    st.first = false;
                    st.buf.extend_from_slice(&chunk);
                    continue;
                }
                // A body cut mid-chunk reads as a decoding error; say what happened.
                Ok(Some(Err(e))) => ProviderError::Stream {
                    provider: st.provider.clone(),
                    message: if e.is_body() || e.is_decode() {
                        "the connection closed before the answer was complete".to_owned()
                    } else {
                        e.to_string()
                    },
                },
            };
            st.buf.clear();
            (st.start, st.scanned, st.ended) = (0, 0, true);
            return Some((Err(failure), st));
        }
    })
    .boxed()
}

/// Turns a stream of lines or events into stream events with `parse`, which is called with
/// `None` once the body ends (to flush anything held back). The stream stops after `Done`; a
/// body that ends without one is reported as broken, since the answer may be cut short.
pub fn events_from<T, F>(
    source: BoxStream<'static, Result<T, ProviderError>>,
    provider: &str,
    parse: F,
) -> super::EventStream
where
    T: Send + 'static,
    F: FnMut(Option<T>) -> Result<Vec<super::StreamEvent>, ProviderError> + Send + 'static,
{
    use std::collections::VecDeque;
    struct State<T, F> {
        source: BoxStream<'static, Result<T, ProviderError>>,
        parse: F,
        pending: VecDeque<super::StreamEvent>,
        finished: bool,
        provider: String,
    }
    let state =
        State { source, parse, pending: VecDeque::new(), finished: false, provider: provider.to_owned() };
    futures::stream::unfold(state, |mut st| async move {
        loop {
            if let Some(event) = st.pending.pop_front() {
                if matches!(event, super::StreamEvent::Done(_)) {
                    st.pending.clear();
                    st.finished = true;
                }
                return Some((Ok(event), st));
            }
            if st.finished {
                return None;
            }
            let item = match st.source.next().await {
                Some(Ok(item)) => Some(item),
                Some(Err(e)) => {
                    st.finished = true;
                    return Some((Err(e), st));
                }
                None => None,
            };
            let at_end = item.is_none();
            match (st.parse)(item) {
                Ok(events) => st.pending.extend(events),
                Err(e) => {
                    st.finished = true;
                    return Some((Err(e), st));
                }
            }
            if at_end && !st.pending.iter().any(|e| matches!(e, super::StreamEvent::Done(_))) {
                st.finished = true;
                st.pending.clear();
                let message = "the connection closed before the answer was complete".to_owned();
                return Some((Err(ProviderError::Stream { provider: st.provider.clone(), message }), st));
            }
        }
    })
    .boxed()
}

/// One server-sent event: its `event:` name (empty when absent) and its joined `data:` lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: String,
    pub data: String,
}

/// Server-sent events from a body's lines.
pub fn sse(
    lines: BoxStream<'static, Result<Vec<u8>, ProviderError>>,
) -> BoxStream<'static, Result<SseEvent, ProviderError>> {
    futures::stream::unfold(
        (lines, SseEvent { event: String::new(), data: String::new() }, false),
        |(mut lines, mut pending, mut done)| async move {
            if done {
                return None;
            }
            loop {
                match lines.next().await {
                    None => {
                        done = true;
                        let has_data = !pending.data.is_empty();
                        let event = std::mem::replace(
                            &mut pending,
                            SseEvent { event: String::new(), data: String::new() },
                        );
                        return has_data.then_some((Ok(event), (lines, pending, done)));
                    }
                    Some(Err(e)) => return Some((Err(e), (lines, pending, true))),
                    Some(Ok(line)) => {
                        let line = String::from_utf8_lossy(&line).into_owned();
                        if line.is_empty() {
                            if !pending.data.is_empty() {
                                let event = std::mem::replace(
                                    &mut pending,
                                    SseEvent { event: String::new(), data: String::new() },
                                );
                                return Some((Ok(event), (lines, pending, done)));
                            }
                            pending.event.clear();
                            continue;
                        }
                        if line.starts_with(':') {
                            continue;
                        }
                        let (field, value) = line.split_once(':').unwrap_or((line.as_str(), ""));
                        let value = value.strip_prefix(' ').unwrap_or(value);
                        match field {
                            "event" => pending.event = value.to_owned(),
                            "data" => {
                                if !pending.data.is_empty() {
                                    pending.data.push('\n');
                                }
                                pending.data.push_str(value);
                            }
                            _ => {}
                        }
                    }
                }
            }
        },
    )
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from_lines(lines: &[&str]) -> BoxStream<'static, Result<Vec<u8>, ProviderError>> {
        let owned: Vec<Result<Vec<u8>, ProviderError>> =
            lines.iter().map(|l| Ok(l.as_bytes().to_vec())).collect();
        futures::stream::iter(owned).boxed()
    }

    #[tokio::test]
    async fn sse_joins_data_lines_and_skips_comments() {
        let events: Vec<SseEvent> = sse(from_lines(&[
            ": keep-alive",
            "event: message_start",
            "data: {\"a\":",
            "data: 1}",
            "",
            "data: [DONE]",
            "",
        ]))
        .map(Result::unwrap)
        .collect()
        .await;
        assert_eq!(
            events,
            [
                SseEvent { event: "message_start".into(), data: "{\"a\":\n1}".into() },
                SseEvent { event: String::new(), data: "[DONE]".into() }
            ]
        );
    }

    /// A loopback HTTP/1.1 server that keeps connections open; counts the ones it accepted.
    async fn keep_alive_server() -> (String, Arc<std::sync::atomic::AtomicUsize>) {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = accepted.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    while let Ok(n @ 1..) = socket.read(&mut buf).await {
                        if buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
                            let reply = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";
                            if socket.write_all(reply).await.is_err() {
                                return;
                            }
                        }
                    }
                });
            }
        });
        (url, accepted)
    }

    #[tokio::test]
    async fn clients_are_reused_with_their_connections() {
        let (url, accepted) = keep_alive_server().await;
        let clients = Clients::default();
        for _ in 0..3 {
            let http = clients.get(Timeouts::default());
            http.client.get(&url).send().await.unwrap().bytes().await.unwrap();
        }
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 1, "one kept-alive connection");
        // Clients of their own open a connection each.
        for _ in 0..2 {
            let http = Http::from(Timeouts::default());
            http.client.get(&url).send().await.unwrap().bytes().await.unwrap();
        }
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 3);
        // Another timeout configuration gets another client.
        let quick = Timeouts { connect: Duration::from_millis(500), ..Timeouts::default() };
        clients.get(quick).client.get(&url).send().await.unwrap().bytes().await.unwrap();
        assert_eq!(accepted.load(std::sync::atomic::Ordering::SeqCst), 4);
    }

    #[tokio::test]
    async fn lines_are_split_across_chunks_and_within_them() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 4096];
            let _ = socket.read(&mut buf).await;
            let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
            socket.write_all(head.as_bytes()).await.unwrap();
            // Many lines in one chunk, a line across two chunks, CRLF, no newline at the end.
            for part in ["a\nbb\r\nccc\n\nd", "d\ne", "e\n", "last"] {
                let frame = format!("{:x}\r\n{part}\r\n", part.len());
                socket.write_all(frame.as_bytes()).await.unwrap();
                socket.flush().await.unwrap();
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            socket.write_all(b"0\r\n\r\n").await.unwrap();
        });
        let response = client(&Timeouts::default()).get(&url).send().await.unwrap();
        let got: Vec<String> = lines(response, "test", Timeouts::default())
            .map(|l| String::from_utf8(l.unwrap()).unwrap())
            .collect()
            .await;
        assert_eq!(got, ["a", "bb", "ccc", "", "dd", "ee", "last"]);
    }

    #[test]
    fn error_messages_are_found_in_each_providers_shape() {
        assert_eq!(
            error_message(r#"{"error":{"message":"bad key","type":"x"}}"#).as_deref(),
            Some("bad key")
        );
        assert_eq!(
            error_message(r#"{"error":"model \"x\" not found"}"#).as_deref(),
            Some("model \"x\" not found")
        );
        assert_eq!(error_message("plain"), None);
    }

    #[test]
    fn gemini_retry_delays_are_read_from_the_body() {
        let body = r#"{"error":{"code":429,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}"#;
        assert_eq!(gemini_retry_delay(body), Some(Duration::from_secs(37)));
    }
}
