//! A minimal HTTP/1.1 server: enough to answer reqwest, with full control over how streamed
//! bytes are chunked (a character split across chunks, stalls, dropped connections).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::wire::{self, Encoder};
use crate::{Recorded, Script, State, Step};

pub(crate) async fn serve(listener: TcpListener, state: Arc<Mutex<State>>) {
    while let Ok((socket, _)) = listener.accept().await {
        tokio::spawn(handle(socket, state.clone()));
    }
}

struct Request {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Value,
}

async fn read_request(socket: &mut TcpStream) -> Option<Request> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(pos) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos;
        }
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, path) = (first.next()?.to_owned(), first.next()?.to_owned());
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize =
        headers.iter().find(|(k, _)| k == "content-length").and_then(|(_, v)| v.parse().ok()).unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Some(Request { method, path, headers, body })
}

async fn respond(socket: &mut TcpStream, status: u16, body: &Value, extra: &[(&str, String)]) {
    let text = body.to_string();
    let mut head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
        reason(status),
        text.len()
    );
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = socket.write_all(head.as_bytes()).await;
    let _ = socket.write_all(text.as_bytes()).await;
    let _ = socket.shutdown().await;
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        529 => "Overloaded",
        _ => "Status",
    }
}

async fn chunk(socket: &mut TcpStream, bytes: &[u8]) -> bool {
    if bytes.is_empty() {
        return true;
    }
    let mut frame = format!("{:x}\r\n", bytes.len()).into_bytes();
    frame.extend_from_slice(bytes);
    frame.extend_from_slice(b"\r\n");
    socket.write_all(&frame).await.is_ok() && socket.flush().await.is_ok()
}

async fn handle(mut socket: TcpStream, state: Arc<Mutex<State>>) {
    let Some(request) = read_request(&mut socket).await else { return };
    let lock = || state.lock().unwrap_or_else(|p| p.into_inner());

    // The control API, for tests that run the fake as a separate program.
    match (request.method.as_str(), request.path.as_str()) {
        ("POST", "/__fake/script") => {
            let accepted =
                serde_json::from_value::<Script>(request.body.clone()).map(|s| lock().scripts.push_back(s));
            let status = if accepted.is_ok() { 200 } else { 400 };
            return respond(&mut socket, status, &json!({ "queued": accepted.is_ok() }), &[]).await;
        }
        ("GET", "/__fake/requests") => {
            let requests = serde_json::to_value(&lock().requests).unwrap_or_default();
            return respond(&mut socket, 200, &requests, &[]).await;
        }
        _ => {}
    }

    let (dialect, models, key) = {
        let mut s = lock();
        let ollama_chat = s.dialect == wire::Dialect::Ollama && request.path == "/api/chat";
        s.requests.push(Recorded {
            method: request.method.clone(),
            path: request.path.clone(),
            headers: request.headers.clone(),
            body: request.body.clone(),
            seen: ollama_chat.then(|| crate::rules::ollama_window(&request.body)),
        });
        (s.dialect, s.models.clone(), s.api_key.clone())
    };
    if let Some(key) = key
        && !wire::has_key(dialect, &request.headers, &request.path, &key)
    {
        let (status, body) = wire::bad_key(dialect);
        return respond(&mut socket, status, &body, &[]).await;
    }
    if let Some((status, body)) =
        wire::listing(dialect, &request.method, &request.path, &request.body, &models)
    {
        return respond(&mut socket, status, &body, &[]).await;
    }
    if dialect == wire::Dialect::Ollama && request.method == "POST" && request.path == "/api/embed" {
        let (status, body) = embed(&request.body, &models);
        return respond(&mut socket, status, &body, &[]).await;
    }
    let Some(model) = wire::chat_model(dialect, &request.method, &request.path, &request.body) else {
        return respond(&mut socket, 404, &json!({ "error": "no such endpoint" }), &[]).await;
    };
    if !models.iter().any(|m| wire::names_model(dialect, &m.name, &model)) {
        let (status, body) = wire::model_not_found(dialect, &model);
        return respond(&mut socket, status, &body, &[]).await;
    }
    if let Err((status, body)) = crate::rules::check(dialect, &request.body) {
        return respond(&mut socket, status, &body, &[]).await;
    }
    if dialect == wire::Dialect::Ollama {
        let capabilities = models
            .iter()
            .find(|m| wire::names_model(dialect, &m.name, &model))
            .map(|m| m.capabilities.clone())
            .unwrap_or_default();
        if let Err((status, body)) = crate::rules::ollama_thinking(&request.body, &model, &capabilities) {
            return respond(&mut socket, status, &body, &[]).await;
        }
    }
    let script = {
        let mut s = lock();
        let delay = s.default_delay_ms;
        s.scripts.pop_front().unwrap_or_else(|| echo(&request.body, delay))
    };
    stream(socket, dialect, &model, script).await;
}

/// Ollama's `/api/embed`: a hashed bag of words per input (64 dimensions, unit length), so texts
/// sharing words score higher. Embedding models are the usual names or any model with the
/// `embedding` capability.
fn embed(body: &Value, models: &[crate::FakeModel]) -> (u16, Value) {
    let model = body["model"].as_str().unwrap_or_default();
    let known = crate::EMBEDDING_MODELS.contains(&model)
        || models.iter().any(|m| m.name == model && m.capabilities.iter().any(|c| c == "embedding"));
    if !known {
        return wire::model_not_found(wire::Dialect::Ollama, model);
    }
    let inputs: Vec<&str> = match &body["input"] {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
        _ => return (400, json!({ "error": "invalid input type" })),
    };
    (200, json!({ "model": model, "embeddings": inputs.iter().map(|t| bag_of_words(t)).collect::<Vec<_>>() }))
}

fn bag_of_words(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; 64];
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| w.len() > 2) {
        let word = word.to_lowercase();
        let word = word.strip_suffix('s').unwrap_or(&word);
        // FNV-1a
        let hash = word
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
        v[(hash % 64) as usize] += 1.0;
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

/// With nothing queued the fake answers "You said: ..." with the last user message.
fn echo(body: &Value, delay: u64) -> Script {
    let last_text = |v: &Value| -> Option<String> {
        match v {
            Value::String(s) => Some(s.clone()),
            Value::Array(parts) => parts.iter().find_map(|p| p["text"].as_str().map(str::to_owned)),
            _ => None,
        }
    };
    let question = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .and_then(|m| last_text(&m["content"]))
        .or_else(|| {
            body["contents"].as_array().and_then(|c| c.iter().rev().find(|c| c["role"] == "user")).and_then(
                |c| c["parts"].as_array()?.iter().find_map(|p| p["text"].as_str().map(str::to_owned)),
            )
        })
        .unwrap_or_default();
    let mut script = Script::answer(&format!("You said: {question}"));
    script.token_delay_ms = delay;
    script
}

async fn stream(mut socket: TcpStream, dialect: wire::Dialect, model: &str, script: Script) {
    if let Some(Step::HttpError { status, body, retry_after }) = script.steps.first() {
        let body = serde_json::from_str(body).unwrap_or_else(|_| wire::error_body(dialect, *status, body));
        let extra: Vec<(&str, String)> = retry_after.iter().map(|r| ("Retry-After", r.clone())).collect();
        return respond(&mut socket, *status, &body, &extra).await;
    }
    let usage = script
        .steps
        .iter()
        .find_map(|s| if let Step::Usage { input, output } = s { Some((*input, *output)) } else { None })
        .unwrap_or((0, 0));
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        wire::content_type(dialect)
    );
    if socket.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    let mut encoder = Encoder::new(dialect, model, usage);
    for payload in encoder.begin() {
        if !chunk(&mut socket, &payload).await {
            return;
        }
    }
    let mut split_next = false;
    for step in &script.steps {
        match step {
            Step::Sleep { ms } => tokio::time::sleep(Duration::from_millis(*ms)).await,
            Step::SplitNext => split_next = true,
            Step::Disconnect => return,
            Step::Stall => {
                tokio::time::sleep(Duration::from_secs(3600)).await;
                return;
            }
            _ => {
                if script.token_delay_ms > 0 && matches!(step, Step::Text { .. } | Step::Thinking { .. }) {
                    tokio::time::sleep(Duration::from_millis(script.token_delay_ms)).await;
                }
                for payload in encoder.step(step) {
                    let sent = if std::mem::take(&mut split_next) {
                        split_inside_a_character(&mut socket, &payload).await
                    } else {
                        chunk(&mut socket, &payload).await
                    };
                    if !sent {
                        return; // the client went away (stopped)
                    }
                }
            }
        }
    }
    let _ = socket.write_all(b"0\r\n\r\n").await;
    let _ = socket.shutdown().await;
}

/// Sends `payload` as two chunks, cut after the first byte of its first multi-byte character.
async fn split_inside_a_character(socket: &mut TcpStream, payload: &[u8]) -> bool {
    let cut = payload.iter().position(|b| *b >= 0xC0).map_or(payload.len() / 2, |i| i + 1);
    let ok = chunk(socket, &payload[..cut]).await;
    tokio::time::sleep(Duration::from_millis(30)).await;
    ok && chunk(socket, &payload[cut..]).await
}
