//! OpenAI and every server that speaks its Chat Completions API (llama.cpp, LM Studio, vLLM,
//! DeepSeek, OpenRouter): `POST {base}/chat/completions` streamed as server-sent events.
//!
//! Why not async-openai: its client retries 429s on its own, sleeping for whatever
//! `Retry-After` says with no cap and then hiding the header; its typed stream drops the
//! `reasoning_content` these servers send, and rejects chunks with finish reasons it does not
//! know. Here every field is read leniently and every failure reaches the user.

use std::collections::BTreeMap;

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};

use super::http::{self, Http, SseEvent, Timeouts};
use super::{
    Capabilities, ChatMessage, ChatRequest, EventStream, ModelInfo, Provider, ProviderError, StopReason,
    StreamEvent, ToolCall, ToolSpec, Usage,
};

pub struct OpenAi {
    endpoint: http::Endpoint,
    api_key: Option<String>,
    client: reqwest::Client,
    timeouts: Timeouts,
}

impl OpenAi {
    pub fn new(name: &str, base_url: &str, api_key: Option<String>, client: impl Into<Http>) -> Self {
        let Http { client, timeouts } = client.into();
        let hint = "Check the server is running and its URL in Settings -> Models.";
        Self { endpoint: http::Endpoint::new(name, base_url, hint), api_key, client, timeouts }
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let mut r = self.client.request(method, format!("{}{path}", self.endpoint.url));
        if let Some(key) = &self.api_key {
            r = r.bearer_auth(key);
        }
        r
    }

    fn body(request: &ChatRequest) -> Value {
        let messages: Vec<Value> = request.messages.iter().map(message).collect();
        let mut body = json!({
            "model": request.model,
            "messages": messages,
            "stream": true,
            "stream_options": { "include_usage": true },
        });
        if !request.tools.is_empty() {
            body["tools"] = request.tools.iter().map(ToolSpec::as_function).collect();
        }
        if let Some(max) = request.max_output_tokens {
            body["max_completion_tokens"] = json!(max);
        }
        body
    }
}

fn message(m: &ChatMessage) -> Value {
    match m {
        ChatMessage::System(text) => json!({ "role": "system", "content": text }),
        ChatMessage::User { text, images } if images.is_empty() => json!({ "role": "user", "content": text }),
        ChatMessage::User { text, images } => {
            let mut parts = vec![json!({ "type": "text", "text": text })];
            parts.extend(images.iter().map(|i| {
                json!({ "type": "image_url", "image_url": { "url": format!("data:{};base64,{}", i.mime, i.base64) } })
            }));
            json!({ "role": "user", "content": parts })
        }
        ChatMessage::Assistant { text, tool_calls, .. } => {
            let mut v = json!({ "role": "assistant", "content": text });
            if !tool_calls.is_empty() {
                v["tool_calls"] = json!(
                    tool_calls
                        .iter()
                        .map(|c| json!({ "id": c.id, "type": "function",
                        "function": { "name": c.name, "arguments": c.arguments.to_string() } }))
                        .collect::<Vec<_>>()
                );
            }
            v
        }
        ChatMessage::Tool { call_id, content, .. } => {
            json!({ "role": "tool", "tool_call_id": call_id, "content": content })
        }
    }
}

#[derive(Deserialize, Default)]
struct Chunk {
    #[serde(default)]
    choices: Vec<Choice>,
    #[serde(default)]
    usage: Option<ChunkUsage>,
    #[serde(default)]
    error: Option<Value>,
}

#[derive(Deserialize, Default)]
struct Choice {
    #[serde(default)]
    delta: Delta,
    #[serde(default)]
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
struct Delta {
    #[serde(default)]
    content: Option<String>,
    /// DeepSeek and llama.cpp send `reasoning_content`; OpenRouter and newer vLLM `reasoning`.
    #[serde(default, alias = "reasoning")]
    reasoning_content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ToolCallDelta>,
}

#[derive(Deserialize)]
struct ToolCallDelta {
    #[serde(default)]
    index: u32,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<FunctionDelta>,
}

#[derive(Deserialize, Default)]
struct FunctionDelta {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct ChunkUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

/// Accumulates a stream's deltas: tool calls arrive in fragments keyed by index, the finish
/// reason before the usage, and `[DONE]` (or the end of the body) last.
#[derive(Default)]
struct Decoder {
    provider: String,
    calls: BTreeMap<u32, (String, String, String)>,
    finish: Option<String>,
    done: bool,
}

impl Decoder {
    fn feed(&mut self, event: Option<SseEvent>) -> Result<Vec<StreamEvent>, ProviderError> {
        let Some(event) = event else {
            // Some servers end without `[DONE]`; a finish reason already seen is an answer.
            return Ok(if self.finish.is_some() && !self.done { self.finish_events() } else { Vec::new() });
        };
        if event.data.trim() == "[DONE]" {
            return Ok(self.finish_events());
        }
        let chunk: Chunk = serde_json::from_str(&event.data).map_err(|e| ProviderError::Stream {
            provider: self.provider.clone(),
            message: format!("a malformed chunk in the stream ({e})"),
        })?;
        if let Some(error) = chunk.error {
            let message =
                error.get("message").and_then(Value::as_str).map_or_else(|| error.to_string(), str::to_owned);
            return Err(ProviderError::Stream { provider: self.provider.clone(), message });
        }
        let mut out = Vec::new();
        for choice in chunk.choices {
            if let Some(t) = choice.delta.reasoning_content.filter(|t| !t.is_empty()) {
                out.push(StreamEvent::Thinking(t));
            }
            if let Some(t) = choice.delta.content.filter(|t| !t.is_empty()) {
                out.push(StreamEvent::Text(t));
            }
            for call in choice.delta.tool_calls {
                let entry = self.calls.entry(call.index).or_default();
                if let Some(id) = call.id {
                    entry.0 = id;
                }
                if let Some(f) = call.function {
                    if let Some(name) = f.name {
                        entry.1.push_str(&name);
                    }
                    if let Some(args) = f.arguments {
                        entry.2.push_str(&args);
                    }
                }
            }
            if let Some(reason) = choice.finish_reason {
                self.finish = Some(reason);
            }
        }
        if let Some(u) = chunk.usage {
            out.push(StreamEvent::Usage(Usage {
                input_tokens: u.prompt_tokens,
                output_tokens: u.completion_tokens,
            }));
        }
        Ok(out)
    }

    fn finish_events(&mut self) -> Vec<StreamEvent> {
        self.done = true;
        let mut out = Vec::new();
        for (index, (id, name, args)) in std::mem::take(&mut self.calls) {
            // Arguments that are not JSON go to the model's tool gate as a string, to be refused there.
            let arguments = serde_json::from_str(if args.trim().is_empty() { "{}" } else { &args })
                .unwrap_or(Value::String(args));
            let id = if id.is_empty() { format!("call_{index}") } else { id };
            out.push(StreamEvent::ToolCall(ToolCall::new(id, name, arguments)));
        }
        let reason = match self.finish.as_deref() {
            Some("length") => StopReason::MaxTokens,
            Some("tool_calls" | "function_call") => StopReason::ToolUse,
            Some("content_filter") => StopReason::ContentFilter,
            None | Some("stop" | "eos") => {
                if out.is_empty() {
                    StopReason::EndTurn
                } else {
                    StopReason::ToolUse
                }
            }
            Some(other) => StopReason::Other(other.to_owned()),
        };
        out.push(StreamEvent::Done(reason));
        out
    }
}

/// What is known of well-known models that `/models` does not say.
fn known_model(name: &str) -> (Capabilities, Option<u32>) {
    let n = name.to_ascii_lowercase();
    let reasoning = n.starts_with("o1")
        || n.starts_with("o3")
        || n.starts_with("o4")
        || n.starts_with("gpt-5")
        || n.contains("reasoner")
        || n.contains("r1");
    let vision = n.starts_with("gpt-4o")
        || n.starts_with("gpt-4.1")
        || n.starts_with("gpt-5")
        || n.starts_with("o3")
        || n.starts_with("o4")
        || n.contains("vision")
        || n.contains("-vl");
    let context = match () {
        _ if n.starts_with("gpt-4.1") => Some(1_047_576),
        _ if n.starts_with("gpt-5") => Some(400_000),
        _ if n.starts_with("o1") || n.starts_with("o3") || n.starts_with("o4") => Some(200_000),
        _ if n.starts_with("gpt-4o") || n.starts_with("deepseek") => Some(128_000),
        _ => None,
    };
    (Capabilities { vision, tools: true, thinking: reasoning }, context)
}

impl Provider for OpenAi {
    fn name(&self) -> &str {
        &self.endpoint.provider
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
            let list: List = self.endpoint.get_json(self.request(reqwest::Method::GET, "/models")).await?;
            Ok(list
                .data
                .into_iter()
                .map(|m| {
                    let (capabilities, context_length) = known_model(&m.id);
                    ModelInfo::new(&self.endpoint.provider, m.id, capabilities, context_length)
                })
                .collect())
        })
    }

    fn stream_chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<EventStream, ProviderError>> {
        Box::pin(async move {
            let post = self.request(reqwest::Method::POST, "/chat/completions").json(&Self::body(&request));
            let response = self.endpoint.send(post, &request.model).await?;
            let name = &self.endpoint.provider;
            let events = http::sse(http::lines(response, name, self.timeouts));
            let mut decoder = Decoder { provider: name.clone(), ..Decoder::default() };
            Ok(http::events_from(events, name, move |event| decoder.feed(event)))
        })
    }
}
