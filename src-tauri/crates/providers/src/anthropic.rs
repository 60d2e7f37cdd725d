//! Anthropic's Messages API: `POST /v1/messages` streamed as server-sent events with typed
//! content blocks (text, thinking, tool_use).
//!
//! Thinking blocks end with a signature (`signature_delta`), and some arrive whole as
//! `redacted_thinking`. With thinking on, the API refuses tool results unless the assistant
//! message before them starts with those blocks exactly as they came, so the decoder hands each
//! finished block on as [`StreamEvent::SignedThinking`] and the request puts them back first.

use std::collections::HashMap;

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};

use super::http::{self, Http, SseEvent, Timeouts};
use super::{
    Capabilities, ChatMessage, ChatRequest, EventStream, ModelInfo, Provider, ProviderError, SignedThinking,
    StopReason, StreamEvent, ToolCall, Usage,
};

const API_VERSION: &str = "2023-06-01";
/// Answers are capped here unless the request says otherwise; the API requires a cap.
const DEFAULT_MAX_TOKENS: u32 = 16_000;
const THINKING_BUDGET: u32 = 8_000;

pub struct Anthropic {
    endpoint: http::Endpoint,
    api_key: String,
    client: reqwest::Client,
    timeouts: Timeouts,
}

impl Anthropic {
    pub fn new(base_url: &str, api_key: String, client: impl Into<Http>) -> Self {
        let Http { client, timeouts } = client.into();
        Self {
            endpoint: http::Endpoint::new("Anthropic", base_url, "Check your connection."),
            api_key,
            client,
            timeouts,
        }
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, format!("{}{path}", self.endpoint.url))
            .header("x-api-key", &self.api_key)
            .header("anthropic-version", API_VERSION)
    }

    fn body(request: &ChatRequest) -> Value {
        let system: Vec<&str> = request
            .messages
            .iter()
            .filter_map(|m| if let ChatMessage::System(t) = m { Some(t.as_str()) } else { None })
            .collect();
        let mut messages: Vec<Value> = Vec::new();
        for m in &request.messages {
            let (role, block) = match m {
                ChatMessage::System(_) => continue,
                ChatMessage::User { text, images } => {
                    let mut blocks: Vec<Value> = images
                        .iter()
                        .map(|i| json!({ "type": "image", "source": { "type": "base64", "media_type": i.mime, "data": i.base64 } }))
                        .collect();
                    blocks.push(json!({ "type": "text", "text": text }));
                    ("user", blocks)
                }
                ChatMessage::Assistant { text, tool_calls, thinking } => {
                    let mut blocks: Vec<Value> = thinking
                        .iter()
                        .map(|t| match t {
                            SignedThinking::Thinking { thinking, signature } => {
                                json!({ "type": "thinking", "thinking": thinking, "signature": signature })
                            }
                            SignedThinking::Redacted { data } => {
                                json!({ "type": "redacted_thinking", "data": data })
                            }
                        })
                        .collect();
                    if !text.is_empty() {
                        blocks.push(json!({ "type": "text", "text": text }));
                    }
                    blocks.extend(tool_calls.iter().map(
                        |c| json!({ "type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments }),
                    ));
                    ("assistant", blocks)
                }
                ChatMessage::Tool { call_id, content, is_error, .. } => (
                    "user",
                    vec![
                        json!({ "type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": is_error }),
                    ],
                ),
            };
            // Consecutive turns of one role (tool results after each other) merge into one message.
            match messages.last_mut() {
                Some(last) if last["role"] == role => {
                    if let Some(content) = last["content"].as_array_mut() {
                        content.extend(block);
                    }
                }
                _ => messages.push(json!({ "role": role, "content": block })),
            }
        }
        let max_tokens = request.max_output_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
        let mut body =
            json!({ "model": request.model, "messages": messages, "max_tokens": max_tokens, "stream": true });
        if !system.is_empty() {
            body["system"] = json!(system.join("\n\n"));
        }
        if request.think && max_tokens > THINKING_BUDGET {
            body["thinking"] = json!({ "type": "enabled", "budget_tokens": THINKING_BUDGET });
        }
        if !request.tools.is_empty() {
            body["tools"] = json!(request
                .tools
                .iter()
                .map(|t| json!({ "name": t.name, "description": t.description, "input_schema": t.input_schema }))
                .collect::<Vec<_>>());
        }
        body
    }
}

#[derive(Default)]
struct Decoder {
    /// tool_use blocks by index: id, name, partial JSON.
    tools: HashMap<u64, (String, String, String)>,
    /// thinking blocks by index: the text and the signature so far.
    thinking: HashMap<u64, (String, String)>,
    usage: Usage,
    stop: Option<StopReason>,
}

impl Decoder {
    fn feed(&mut self, event: Option<SseEvent>) -> Result<Vec<StreamEvent>, ProviderError> {
        let Some(event) = event else { return Ok(Vec::new()) };
        let v: Value = serde_json::from_str(&event.data).map_err(|e| ProviderError::Stream {
            provider: "Anthropic".into(),
            message: format!("a malformed event in the stream ({e})"),
        })?;
        let kind = v["type"].as_str().unwrap_or(event.event.as_str());
        let index = v["index"].as_u64().unwrap_or(0);
        let mut out = Vec::new();
        match kind {
            "message_start" => {
                self.usage.input_tokens =
                    v.pointer("/message/usage/input_tokens").and_then(Value::as_u64).unwrap_or(0);
            }
            "content_block_start" if v.pointer("/content_block/type") == Some(&json!("tool_use")) => {
                let id =
                    v.pointer("/content_block/id").and_then(Value::as_str).unwrap_or_default().to_owned();
                let name =
                    v.pointer("/content_block/name").and_then(Value::as_str).unwrap_or_default().to_owned();
                self.tools.insert(index, (id, name, String::new()));
            }
            "content_block_start" if v.pointer("/content_block/type") == Some(&json!("thinking")) => {
                self.thinking.insert(index, (String::new(), String::new()));
            }
            "content_block_start"
                if v.pointer("/content_block/type") == Some(&json!("redacted_thinking")) =>
            {
                let data = v.pointer("/content_block/data").and_then(Value::as_str).unwrap_or_default();
                out.push(StreamEvent::SignedThinking(SignedThinking::Redacted { data: data.to_owned() }));
            }
            "content_block_delta" => match v.pointer("/delta/type").and_then(Value::as_str) {
                Some("text_delta") => {
                    out.push(StreamEvent::Text(v["delta"]["text"].as_str().unwrap_or("").to_owned()))
                }
                Some("thinking_delta") => {
                    let text = v["delta"]["thinking"].as_str().unwrap_or("");
                    if let Some(block) = self.thinking.get_mut(&index) {
                        block.0.push_str(text);
                    }
                    out.push(StreamEvent::Thinking(text.to_owned()))
                }
                Some("signature_delta") => {
                    if let Some(block) = self.thinking.get_mut(&index) {
                        block.1.push_str(v["delta"]["signature"].as_str().unwrap_or(""));
                    }
                }
                Some("input_json_delta") => {
                    if let Some(tool) = self.tools.get_mut(&index) {
                        tool.2.push_str(v["delta"]["partial_json"].as_str().unwrap_or(""));
                    }
                }
                _ => {}
            },
            "content_block_stop" => {
                if let Some((id, name, json)) = self.tools.remove(&index) {
                    let arguments = serde_json::from_str(if json.trim().is_empty() { "{}" } else { &json })
                        .unwrap_or(Value::String(json));
                    out.push(StreamEvent::ToolCall(ToolCall::new(id, name, arguments)));
                }
                if let Some((thinking, signature)) = self.thinking.remove(&index) {
                    out.push(StreamEvent::SignedThinking(SignedThinking::Thinking { thinking, signature }));
                }
            }
            "message_delta" => {
                if let Some(n) = v.pointer("/usage/output_tokens").and_then(Value::as_u64) {
                    self.usage.output_tokens = n;
                }
                self.stop = v.pointer("/delta/stop_reason").and_then(Value::as_str).map(|r| match r {
                    "end_turn" | "stop_sequence" => StopReason::EndTurn,
                    "max_tokens" => StopReason::MaxTokens,
                    "tool_use" => StopReason::ToolUse,
                    "refusal" => StopReason::ContentFilter,
                    other => StopReason::Other(other.to_owned()),
                });
            }
            "message_stop" => {
                out.push(StreamEvent::Usage(self.usage));
                out.push(StreamEvent::Done(self.stop.clone().unwrap_or(StopReason::EndTurn)));
            }
            "error" => {
                let message =
                    v.pointer("/error/message").and_then(Value::as_str).unwrap_or("unknown error").to_owned();
                return Err(ProviderError::Stream { provider: "Anthropic".into(), message });
            }
            _ => {} // ping, text block starts
        }
        Ok(out)
    }
}

/// Every current Claude model reads images and calls tools; thinking arrived with 3.7.
fn capabilities(name: &str) -> (Capabilities, Option<u32>) {
    let old = ["claude-3-haiku", "claude-3-sonnet", "claude-3-opus", "claude-3-5"]
        .iter()
        .any(|p| name.starts_with(p));
    (Capabilities { vision: true, tools: true, thinking: !old }, Some(200_000))
}

impl Provider for Anthropic {
    fn name(&self) -> &str {
        "anthropic"
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<ModelInfo>, ProviderError>> {
        Box::pin(async move {
            #[derive(Deserialize)]
            struct List {
                data: Vec<Item>,
            }
            #[derive(Deserialize)]
            struct Item {
                id: String,
            }
            let list: List =
                self.endpoint.get_json(self.request(reqwest::Method::GET, "/v1/models?limit=100")).await?;
            Ok(list
                .data
                .into_iter()
                .map(|m| {
                    let (capabilities, context_length) = capabilities(&m.id);
                    ModelInfo::new("anthropic", m.id, capabilities, context_length)
                })
                .collect())
        })
    }

    fn stream_chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<EventStream, ProviderError>> {
        Box::pin(async move {
            let post = self.request(reqwest::Method::POST, "/v1/messages").json(&Self::body(&request));
            let response = self.endpoint.send(post, &request.model).await?;
            let events = http::sse(http::lines(response, "Anthropic", self.timeouts));
            let mut decoder = Decoder::default();
            Ok(http::events_from(events, "Anthropic", move |event| decoder.feed(event)))
        })
    }
}
