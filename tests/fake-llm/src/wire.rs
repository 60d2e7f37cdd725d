//! Each service's wire format: streamed chunks, model listings and error bodies.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::signatures::{redacted, sign, sign_call};
use crate::{FakeModel, Step};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dialect {
    Ollama,
    OpenAi,
    Anthropic,
    Gemini,
}

impl std::str::FromStr for Dialect {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "ollama" => Ok(Self::Ollama),
            "openai" => Ok(Self::OpenAi),
            "anthropic" => Ok(Self::Anthropic),
            "gemini" => Ok(Self::Gemini),
            other => Err(format!("unknown dialect {other:?}")),
        }
    }
}

/// Which request is a chat, and for which model (Gemini names it in the path).
pub fn chat_model(dialect: Dialect, method: &str, path: &str, body: &Value) -> Option<String> {
    let from_body = || body["model"].as_str().map(str::to_owned);
    match (dialect, method) {
        (Dialect::Ollama, "POST") if path == "/api/chat" => from_body(),
        (Dialect::OpenAi, "POST") if path == "/v1/chat/completions" => from_body(),
        (Dialect::Anthropic, "POST") if path == "/v1/messages" => from_body(),
        (Dialect::Gemini, "POST") if path.contains(":streamGenerateContent") => {
            let name = path.trim_start_matches("/v1beta/models/");
            name.split(':').next().map(str::to_owned)
        }
        _ => None,
    }
}

/// Whether a requested name means an installed model. Ollama fills in a missing host
/// (`registry.ollama.ai`), namespace (`library`) and tag (`latest`) and ignores case; the
/// other services want the exact name.
pub fn names_model(dialect: Dialect, installed: &str, requested: &str) -> bool {
    if dialect != Dialect::Ollama {
        return installed == requested;
    }
    fn parts(name: &str) -> [String; 4] {
        let name = name.split('@').next().unwrap_or(name).to_lowercase();
        let slash = name.rfind('/').map_or(0, |i| i + 1);
        let (path, tag) = match name[slash..].split_once(':') {
            Some((model, tag)) => (format!("{}{model}", &name[..slash]), tag.to_owned()),
            None => (name.clone(), String::new()),
        };
        let mut segments: Vec<&str> = path.rsplitn(3, '/').collect();
        segments.resize(3, "");
        let or = |s: &str, d: &str| if s.is_empty() { d.to_owned() } else { s.to_owned() };
        [
            or(segments[2], "registry.ollama.ai"),
            or(segments[1], "library"),
            segments[0].to_owned(),
            or(&tag, "latest"),
        ]
    }
    parts(installed) == parts(requested)
}

/// Answers to the non-chat endpoints: model lists, Ollama's show and version.
pub fn listing(
    dialect: Dialect,
    method: &str,
    path: &str,
    body: &Value,
    models: &[FakeModel],
) -> Option<(u16, Value)> {
    let path = path.split('?').next().unwrap_or(path);
    Some(match (dialect, method, path) {
        (Dialect::Ollama, "GET", "/api/version") => (200, json!({ "version": "0.12.0-fake" })),
        (Dialect::Ollama, "GET", "/api/tags") => (
            200,
            json!({ "models": models.iter().map(|m| json!({
                "name": m.name, "model": m.name, "modified_at": "2026-11-01T00:00:00Z", "size": 1_000_000,
                "digest": "fake", "details": { "format": "gguf", "family": "fake" } })).collect::<Vec<_>>() }),
        ),
        (Dialect::Ollama, "POST", "/api/show") => {
            let name = body["model"].as_str().or(body["name"].as_str()).unwrap_or_default();
            match models.iter().find(|m| names_model(dialect, &m.name, name)) {
                Some(m) => (
                    200,
                    json!({ "capabilities": m.capabilities, "details": { "family": "fake" },
                            "model_info": { "general.architecture": "fake", "fake.context_length": m.context_length } }),
                ),
                None => (404, json!({ "error": format!("model '{name}' not found") })),
            }
        }
        (Dialect::OpenAi, "GET", "/v1/models") => (
            200,
            json!({ "object": "list", "data": models.iter().map(|m| json!({
                "id": m.name, "object": "model", "created": 1_700_000_000, "owned_by": "fake" })).collect::<Vec<_>>() }),
        ),
        (Dialect::Anthropic, "GET", "/v1/models") => (
            200,
            json!({ "data": models.iter().map(|m| json!({
                "type": "model", "id": m.name, "display_name": m.name, "created_at": "2025-09-29T00:00:00Z" })).collect::<Vec<_>>(),
                "has_more": false }),
        ),
        (Dialect::Gemini, "GET", "/v1beta/models") => (
            200,
            json!({ "models": models.iter().map(|m| json!({
                "name": format!("models/{}", m.name), "displayName": m.name, "inputTokenLimit": m.context_length,
                "outputTokenLimit": 65_536, "supportedGenerationMethods": ["generateContent", "countTokens"],
                "thinking": m.capabilities.iter().any(|c| c == "thinking") })).collect::<Vec<_>>() }),
        ),
        _ => return None,
    })
}

/// The body a service sends with an HTTP error.
pub fn error_body(dialect: Dialect, status: u16, message: &str) -> Value {
    match dialect {
        Dialect::Ollama => json!({ "error": message }),
        Dialect::OpenAi => {
            let code = match status {
                401 => "invalid_api_key",
                404 => "model_not_found",
                429 => "rate_limit_exceeded",
                _ => "server_error",
            };
            json!({ "error": { "message": message, "type": "invalid_request_error", "param": null, "code": code } })
        }
        Dialect::Anthropic => {
            let kind = match status {
                401 => "authentication_error",
                404 => "not_found_error",
                429 => "rate_limit_error",
                529 => "overloaded_error",
                400 => "invalid_request_error",
                _ => "api_error",
            };
            json!({ "type": "error", "error": { "type": kind, "message": message } })
        }
        Dialect::Gemini => {
            let status_name = match status {
                400 => "INVALID_ARGUMENT",
                403 => "PERMISSION_DENIED",
                404 => "NOT_FOUND",
                429 => "RESOURCE_EXHAUSTED",
                _ => "INTERNAL",
            };
            json!({ "error": { "code": status, "message": message, "status": status_name } })
        }
    }
}

/// Whether the request carries `key` the way the service expects.
pub fn has_key(dialect: Dialect, headers: &[(String, String)], path: &str, key: &str) -> bool {
    let header =
        |name: &str| headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str());
    match dialect {
        Dialect::Ollama => true,
        Dialect::OpenAi => header("authorization") == Some(&format!("Bearer {key}")),
        Dialect::Anthropic => header("x-api-key") == Some(key),
        Dialect::Gemini => header("x-goog-api-key") == Some(key) || path.contains(&format!("key={key}")),
    }
}

/// The rejection of a bad key, as each service sends it.
pub fn bad_key(dialect: Dialect) -> (u16, Value) {
    match dialect {
        // Gemini answers a bad key with 400, and says why in the details.
        Dialect::Gemini => (
            400,
            json!({ "error": { "code": 400, "message": "API key not valid. Please pass a valid API key.",
                "status": "INVALID_ARGUMENT", "details": [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID" }] } }),
        ),
        d => (401, error_body(d, 401, "Incorrect API key provided")),
    }
}

pub fn model_not_found(dialect: Dialect, model: &str) -> (u16, Value) {
    let message = match dialect {
        Dialect::Ollama => format!("model \"{model}\" not found, try pulling it first"),
        Dialect::OpenAi => format!("The model `{model}` does not exist or you do not have access to it."),
        Dialect::Anthropic => format!("model: {model}"),
        Dialect::Gemini => format!("models/{model} is not found for API version v1beta"),
    };
    (404, error_body(dialect, 404, &message))
}

pub fn content_type(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Ollama => "application/x-ndjson",
        _ => "text/event-stream",
    }
}

/// Turns steps into the bytes of one streamed answer, keeping the per-stream state each
/// format needs (open content blocks, tool call indexes, usage).
pub struct Encoder {
    dialect: Dialect,
    model: String,
    usage: (u64, u64),
    calls: usize,
    /// Anthropic: the open content block's index and type.
    block: Option<(usize, &'static str)>,
    next_block: usize,
    /// Anthropic: the open thinking block's text, which its signature covers.
    thinking: String,
}

impl Encoder {
    pub fn new(dialect: Dialect, model: &str, usage: (u64, u64)) -> Self {
        Self {
            dialect,
            model: model.to_owned(),
            usage,
            calls: 0,
            block: None,
            next_block: 0,
            thinking: String::new(),
        }
    }

    fn ollama(&self, message: Value, done: bool, extra: Value) -> Vec<u8> {
        let mut line = json!({ "model": self.model, "created_at": "2026-11-21T10:00:00.000000001Z", "message": message, "done": done });
        if let (Some(line), Some(extra)) = (line.as_object_mut(), extra.as_object()) {
            line.extend(extra.clone());
        }
        let mut bytes = serde_json::to_vec(&line).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }

    fn data(value: &Value) -> Vec<u8> {
        format!("data: {value}\n\n").into_bytes()
    }

    fn event(name: &str, value: &Value) -> Vec<u8> {
        format!("event: {name}\ndata: {value}\n\n").into_bytes()
    }

    fn openai_delta(&self, delta: Value, finish: Option<&str>) -> Vec<u8> {
        Self::data(
            &json!({ "id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1_700_000_000,
            "model": self.model, "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }] }),
        )
    }

    fn gemini_parts(&self, parts: Value, finish: Option<&str>) -> Vec<u8> {
        let mut candidate = json!({ "content": { "parts": parts, "role": "model" }, "index": 0 });
        if let Some(reason) = finish {
            candidate["finishReason"] = json!(reason);
        }
        let mut chunk = json!({ "candidates": [candidate], "modelVersion": self.model });
        if finish.is_some() {
            let (input, output) = self.usage;
            chunk["usageMetadata"] = json!({ "promptTokenCount": input, "candidatesTokenCount": output, "totalTokenCount": input + output });
        }
        Self::data(&chunk)
    }

    /// Anthropic: close the open block (with a signature after thinking) and maybe open another.
    fn switch_block(&mut self, kind: &'static str, start: Value) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        if let Some((index, open)) = self.block {
            if open == kind && kind != "tool_use" && kind != "redacted_thinking" {
                return out;
            }
            if open == "thinking" {
                out.push(Self::event(
                    "content_block_delta",
                    &json!({ "type": "content_block_delta", "index": index,
                    "delta": { "type": "signature_delta", "signature": sign(&std::mem::take(&mut self.thinking)) } }),
                ));
            }
            out.push(Self::event(
                "content_block_stop",
                &json!({ "type": "content_block_stop", "index": index }),
            ));
            self.block = None;
        }
        if kind != "none" {
            let index = self.next_block;
            self.next_block += 1;
            out.push(Self::event(
                "content_block_start",
                &json!({ "type": "content_block_start", "index": index, "content_block": start }),
            ));
            self.block = Some((index, kind));
        }
        out
    }

    /// What starts the stream.
    pub fn begin(&mut self) -> Vec<Vec<u8>> {
        match self.dialect {
            Dialect::OpenAi => vec![self.openai_delta(json!({ "role": "assistant", "content": "" }), None)],
            Dialect::Anthropic => vec![
                Self::event(
                    "message_start",
                    &json!({ "type": "message_start", "message": {
                    "id": "msg_fake", "type": "message", "role": "assistant", "model": self.model, "content": [],
                    "stop_reason": null, "stop_sequence": null, "usage": { "input_tokens": self.usage.0, "output_tokens": 1 } } }),
                ),
                Self::event("ping", &json!({ "type": "ping" })),
            ],
            _ => Vec::new(),
        }
    }

    /// The payloads for one step (sleeps, splits and connection tricks are the server's).
    pub fn step(&mut self, step: &Step) -> Vec<Vec<u8>> {
        match step {
            Step::Thinking { text } => match self.dialect {
                Dialect::Ollama => vec![self.ollama(
                    json!({ "role": "assistant", "content": "", "thinking": text }),
                    false,
                    json!({}),
                )],
                Dialect::OpenAi => vec![self.openai_delta(json!({ "reasoning_content": text }), None)],
                Dialect::Anthropic => {
                    let mut out =
                        self.switch_block("thinking", json!({ "type": "thinking", "thinking": "" }));
                    let index = self.block.map_or(0, |b| b.0);
                    self.thinking.push_str(text);
                    out.push(Self::event(
                        "content_block_delta",
                        &json!({ "type": "content_block_delta", "index": index,
                        "delta": { "type": "thinking_delta", "thinking": text } }),
                    ));
                    out
                }
                Dialect::Gemini => vec![self.gemini_parts(json!([{ "text": text, "thought": true }]), None)],
            },
            Step::Text { text } => match self.dialect {
                Dialect::Ollama => {
                    vec![self.ollama(json!({ "role": "assistant", "content": text }), false, json!({}))]
                }
                Dialect::OpenAi => vec![self.openai_delta(json!({ "content": text }), None)],
                Dialect::Anthropic => {
                    let mut out = self.switch_block("text", json!({ "type": "text", "text": "" }));
                    let index = self.block.map_or(0, |b| b.0);
                    out.push(Self::event(
                        "content_block_delta",
                        &json!({ "type": "content_block_delta", "index": index,
                        "delta": { "type": "text_delta", "text": text } }),
                    ));
                    out
                }
                Dialect::Gemini => vec![self.gemini_parts(json!([{ "text": text }]), None)],
            },
            Step::ToolCall { name, arguments } => {
                self.calls += 1;
                let id = format!("call_{}", self.calls);
                let args = arguments.to_string();
                let (head, tail) = args.split_at(args.len() / 2);
                match self.dialect {
                    Dialect::Ollama => vec![self.ollama(
                        json!({ "role": "assistant", "content": "", "tool_calls": [{ "id": id,
                            "function": { "index": self.calls - 1, "name": name, "arguments": arguments } }] }),
                        false,
                        json!({}),
                    )],
                    Dialect::OpenAi => {
                        let index = self.calls - 1;
                        vec![
                            self.openai_delta(json!({ "tool_calls": [{ "index": index, "id": id, "type": "function",
                                "function": { "name": name, "arguments": "" } }] }), None),
                            self.openai_delta(json!({ "tool_calls": [{ "index": index, "function": { "arguments": head } }] }), None),
                            self.openai_delta(json!({ "tool_calls": [{ "index": index, "function": { "arguments": tail } }] }), None),
                        ]
                    }
                    Dialect::Anthropic => {
                        let mut out = self.switch_block("tool_use", json!({ "type": "tool_use", "id": id, "name": name, "input": {} }));
                        let index = self.block.map_or(0, |b| b.0);
                        for piece in [head, tail] {
                            out.push(Self::event("content_block_delta", &json!({ "type": "content_block_delta", "index": index,
                                "delta": { "type": "input_json_delta", "partial_json": piece } })));
                        }
                        out
                    }
                    Dialect::Gemini => {
                        // Thinking models sign the first call of each step.
                        let mut part = json!({ "functionCall": { "name": name, "args": arguments } });
                        if self.calls == 1 {
                            part["thoughtSignature"] = json!(sign_call(name, arguments));
                        }
                        vec![self.gemini_parts(json!([part]), None)]
                    }
                }
            }
            Step::RedactedThinking { payload } => match self.dialect {
                Dialect::Anthropic => self.switch_block(
                    "redacted_thinking",
                    json!({ "type": "redacted_thinking", "data": redacted(payload) }),
                ),
                _ => Vec::new(),
            },
            Step::Usage { input, output } => {
                self.usage = (*input, *output);
                Vec::new()
            }
            Step::Finish { reason } => self.finish(reason.as_deref()),
            Step::StreamError { message } => vec![match self.dialect {
                Dialect::Ollama => format!("{}\n", json!({ "error": message })).into_bytes(),
                Dialect::OpenAi => {
                    Self::data(&json!({ "error": { "message": message, "type": "server_error" } }))
                }
                Dialect::Anthropic => Self::event(
                    "error",
                    &json!({ "type": "error", "error": { "type": "overloaded_error", "message": message } }),
                ),
                Dialect::Gemini => {
                    Self::data(&json!({ "error": { "code": 500, "message": message, "status": "INTERNAL" } }))
                }
            }],
            Step::Raw { data } => vec![data.clone().into_bytes()],
            _ => Vec::new(),
        }
    }

    fn finish(&mut self, reason: Option<&str>) -> Vec<Vec<u8>> {
        let (input, output) = self.usage;
        let used_tools = self.calls > 0;
        match self.dialect {
            Dialect::Ollama => vec![self.ollama(
                json!({ "role": "assistant", "content": "" }),
                true,
                json!({ "done_reason": reason.unwrap_or("stop"), "total_duration": 1_000_000, "load_duration": 1000,
                        "prompt_eval_count": input, "prompt_eval_duration": 1000, "eval_count": output, "eval_duration": 1000 }),
            )],
            Dialect::OpenAi => vec![
                self.openai_delta(json!({}), Some(reason.unwrap_or(if used_tools { "tool_calls" } else { "stop" }))),
                Self::data(&json!({ "id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1_700_000_000,
                    "model": self.model, "choices": [],
                    "usage": { "prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output } })),
                b"data: [DONE]\n\n".to_vec(),
            ],
            Dialect::Anthropic => {
                let mut out = self.switch_block("none", Value::Null);
                let stop = reason.unwrap_or(if used_tools { "tool_use" } else { "end_turn" });
                out.push(Self::event("message_delta", &json!({ "type": "message_delta",
                    "delta": { "stop_reason": stop, "stop_sequence": null }, "usage": { "output_tokens": output } })));
                out.push(Self::event("message_stop", &json!({ "type": "message_stop" })));
                out
            }
            Dialect::Gemini => vec![self.gemini_parts(json!([{ "text": "" }]), Some(reason.unwrap_or("STOP")))],
        }
    }
}
