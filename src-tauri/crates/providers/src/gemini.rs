//! Google Gemini through its native API: `streamGenerateContent?alt=sse`.
//!
//! Native rather than the OpenAI-compatible endpoint because the native API marks reasoning as
//! separate `thought` parts (the compatible one mixes it into the text), reports each model's
//! context length in `models.list`, and puts the retry delay in rate-limit errors.
//!
//! Thinking models put a `thoughtSignature` on the first function call of each step; the API
//! refuses the next request of the turn unless that part comes back with it, so the signature
//! travels on the [`ToolCall`] and is written back onto its `functionCall` part.

use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};

use super::http::{self, Http, SseEvent, Timeouts};
use super::{
    Capabilities, ChatMessage, ChatRequest, EventStream, ModelInfo, Provider, ProviderError, StopReason,
    StreamEvent, ToolCall, Usage,
};

pub struct Gemini {
    endpoint: http::Endpoint,
    api_key: String,
    client: reqwest::Client,
    timeouts: Timeouts,
}

impl Gemini {
    pub fn new(base_url: &str, api_key: String, client: impl Into<Http>) -> Self {
        let Http { client, timeouts } = client.into();
        Self {
            endpoint: http::Endpoint::new("Gemini", base_url, "Check your connection."),
            api_key,
            client,
            timeouts,
        }
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, format!("{}{path}", self.endpoint.url))
            .header("x-goog-api-key", &self.api_key)
    }

    fn body(request: &ChatRequest) -> Value {
        let mut system = Vec::new();
        let mut contents: Vec<Value> = Vec::new();
        for m in &request.messages {
            let (role, parts): (&str, Vec<Value>) = match m {
                ChatMessage::System(t) => {
                    system.push(json!({ "text": t }));
                    continue;
                }
                ChatMessage::User { text, images } => {
                    let mut parts: Vec<Value> = images
                        .iter()
                        .map(|i| json!({ "inlineData": { "mimeType": i.mime, "data": i.base64 } }))
                        .collect();
                    parts.push(json!({ "text": text }));
                    ("user", parts)
                }
                ChatMessage::Assistant { text, tool_calls, .. } => {
                    let mut parts = Vec::new();
                    if !text.is_empty() {
                        parts.push(json!({ "text": text }));
                    }
                    parts.extend(tool_calls.iter().map(|c| {
                        let mut part = json!({ "functionCall": { "name": c.name, "args": c.arguments } });
                        if let Some(signature) = &c.signature {
                            part["thoughtSignature"] = json!(signature);
                        }
                        part
                    }));
                    ("model", parts)
                }
                ChatMessage::Tool { name, content, .. } => {
                    let response = serde_json::from_str::<Value>(content)
                        .ok()
                        .filter(Value::is_object)
                        .unwrap_or_else(|| json!({ "result": content }));
                    ("user", vec![json!({ "functionResponse": { "name": name, "response": response } })])
                }
            };
            match contents.last_mut() {
                Some(last) if last["role"] == role => {
                    if let Some(existing) = last["parts"].as_array_mut() {
                        existing.extend(parts);
                    }
                }
                _ => contents.push(json!({ "role": role, "parts": parts })),
            }
        }
        let mut body = json!({ "contents": contents });
        if !system.is_empty() {
            body["systemInstruction"] = json!({ "parts": system });
        }
        let mut config = json!({});
        if request.think {
            config["thinkingConfig"] = json!({ "includeThoughts": true });
        }
        if let Some(max) = request.max_output_tokens {
            config["maxOutputTokens"] = json!(max);
        }
        if config != json!({}) {
            body["generationConfig"] = config;
        }
        if !request.tools.is_empty() {
            // MCP servers publish JSON Schema (`$schema`, `additionalProperties`, `$defs`/`$ref`,
            // `type: ["integer", "null"]`), which `parameters` (Gemini's OpenAPI subset) refuses
            // with a 400; `parametersJsonSchema` takes it as it is.
            body["tools"] = json!([{ "functionDeclarations": request.tools.iter()
                .map(|t| json!({ "name": t.name, "description": t.description, "parametersJsonSchema": t.input_schema }))
                .collect::<Vec<_>>() }]);
        }
        body
    }
}

#[derive(Default)]
struct Decoder {
    calls: usize,
    usage: Option<Usage>,
    finish: Option<String>,
}

impl Decoder {
    fn feed(&mut self, event: Option<SseEvent>) -> Result<Vec<StreamEvent>, ProviderError> {
        let Some(event) = event else {
            // Gemini ends the body after the chunk with the finish reason; there is no sentinel.
            return Ok(match self.finish.take() {
                Some(reason) => self.finish_events(&reason),
                None => Vec::new(),
            });
        };
        let v: Value = serde_json::from_str(&event.data).map_err(|e| ProviderError::Stream {
            provider: "Gemini".into(),
            message: format!("a malformed chunk in the stream ({e})"),
        })?;
        if let Some(message) = v.pointer("/error/message").and_then(Value::as_str) {
            return Err(ProviderError::Stream { provider: "Gemini".into(), message: message.to_owned() });
        }
        let mut out = Vec::new();
        let candidate = &v["candidates"][0];
        for part in candidate.pointer("/content/parts").and_then(Value::as_array).into_iter().flatten() {
            if let Some(text) = part["text"].as_str().filter(|t| !t.is_empty()) {
                if part["thought"].as_bool() == Some(true) {
                    out.push(StreamEvent::Thinking(text.to_owned()));
                } else {
                    out.push(StreamEvent::Text(text.to_owned()));
                }
            }
            if let Some(call) = part.get("functionCall") {
                self.calls += 1;
                out.push(StreamEvent::ToolCall(ToolCall {
                    id: call["id"].as_str().map_or_else(|| format!("call_{}", self.calls), str::to_owned),
                    name: call["name"].as_str().unwrap_or_default().to_owned(),
                    arguments: call.get("args").cloned().unwrap_or_else(|| json!({})),
                    signature: part["thoughtSignature"].as_str().map(str::to_owned),
                }));
            }
        }
        if let Some(meta) = v.get("usageMetadata") {
            let n = |k: &str| meta[k].as_u64().unwrap_or(0);
            self.usage = Some(Usage {
                input_tokens: n("promptTokenCount"),
                output_tokens: n("candidatesTokenCount") + n("thoughtsTokenCount"),
            });
        }
        if let Some(reason) = candidate["finishReason"].as_str() {
            self.finish = Some(reason.to_owned());
        }
        Ok(out)
    }

    fn finish_events(&mut self, reason: &str) -> Vec<StreamEvent> {
        let mut out = Vec::new();
        if let Some(usage) = self.usage {
            out.push(StreamEvent::Usage(usage));
        }
        out.push(StreamEvent::Done(match reason {
            "MAX_TOKENS" => StopReason::MaxTokens,
            "SAFETY" | "RECITATION" | "BLOCKLIST" | "PROHIBITED_CONTENT" => StopReason::ContentFilter,
            _ if self.calls > 0 => StopReason::ToolUse,
            "STOP" => StopReason::EndTurn,
            other => StopReason::Other(other.to_owned()),
        }));
        out
    }
}

impl Provider for Gemini {
    fn name(&self) -> &str {
        "gemini"
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<ModelInfo>, ProviderError>> {
        Box::pin(async move {
            #[derive(Deserialize)]
            #[serde(rename_all = "camelCase")]
            struct List {
                #[serde(default)]
                models: Vec<Item>,
            }
            #[derive(Deserialize)]
            #[serde(rename_all = "camelCase")]
            struct Item {
                name: String,
                #[serde(default)]
                input_token_limit: Option<u32>,
                #[serde(default)]
                supported_generation_methods: Vec<String>,
                #[serde(default)]
                thinking: bool,
            }
            let list: List = self
                .endpoint
                .get_json(self.request(reqwest::Method::GET, "/v1beta/models?pageSize=1000"))
                .await?;
            Ok(list
                .models
                .into_iter()
                .filter(|m| m.supported_generation_methods.iter().any(|g| g == "generateContent"))
                .map(|m| {
                    let name = m.name.trim_start_matches("models/").to_owned();
                    let capabilities = Capabilities { vision: true, tools: true, thinking: m.thinking };
                    ModelInfo::new("gemini", name, capabilities, m.input_token_limit)
                })
                .collect())
        })
    }

    fn stream_chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<EventStream, ProviderError>> {
        Box::pin(async move {
            let path = format!("/v1beta/models/{}:streamGenerateContent?alt=sse", request.model);
            let post = self.request(reqwest::Method::POST, &path).json(&Self::body(&request));
            let response = self.endpoint.send(post, &request.model).await?;
            let events = http::sse(http::lines(response, "Gemini", self.timeouts));
            let mut decoder = Decoder::default();
            Ok(http::events_from(events, "Gemini", move |event| decoder.feed(event)))
        })
    }
}
