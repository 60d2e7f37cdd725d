//! Ollama: `/api/chat` streamed as NDJSON, `/api/tags` and `/api/show` for models.
//!
//! Why not ollama-rs: its stream reader drops both chunks when a multi-byte character is split
//! across them, skips lines it cannot parse (including Ollama's own `{"error": ...}` lines)
//! with nothing but a print to stderr, and hides `done_reason`. This reader decodes lines as
//! bytes first and reports every failure.

pub mod name;

use futures::StreamExt;
use futures::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};

use super::http::{self, Http, Timeouts};
use super::{
    Capabilities, ChatMessage, ChatRequest, EventStream, ModelInfo, Provider, ProviderError, StopReason,
    StreamEvent, ToolCall, ToolSpec, Usage,
};

/// The context window Perch runs Ollama models at by default: well past Ollama's own 4k
/// default (which cuts a long prompt's start without a word), small enough for the model's
/// cache to fit beside it in memory on an ordinary machine.
pub const DEFAULT_CONTEXT: u32 = 16_384;

pub struct Ollama {
    endpoint: http::Endpoint,
    client: reqwest::Client,
    timeouts: Timeouts,
    /// The largest window a model runs at (Settings -> Models).
    context_cap: u32,
}

impl Ollama {
    pub fn new(base_url: &str, client: impl Into<Http>) -> Self {
        let Http { client, timeouts } = client.into();
        Self {
            endpoint: http::Endpoint::new(
                "Ollama",
                base_url,
                "Start it with `ollama serve`, or change its URL in Settings (or OLLAMA_HOST).",
            ),
            client,
            timeouts,
            context_cap: DEFAULT_CONTEXT,
        }
    }

    /// Runs models at no more than `cap` tokens of context.
    #[must_use]
    pub fn with_context_cap(mut self, cap: u32) -> Self {
        self.context_cap = cap.max(512);
        self
    }

    async fn tags(&self) -> Result<Vec<String>, ProviderError> {
        #[derive(Deserialize)]
        struct Tags {
            models: Vec<Tag>,
        }
        #[derive(Deserialize)]
        struct Tag {
            name: String,
        }
        let tags: Tags =
            self.endpoint.get_json(self.client.get(format!("{}/api/tags", self.endpoint.url))).await?;
        Ok(tags.models.into_iter().map(|t| t.name).collect())
    }

    /// `/api/show` for one model; unknown capabilities when Ollama does not say.
    async fn show(&self, model: &str) -> ModelInfo {
        #[derive(Deserialize, Default)]
        struct Show {
            #[serde(default)]
            capabilities: Vec<String>,
            #[serde(default)]
            model_info: serde_json::Map<String, Value>,
        }
        let shown: Show = async {
            let r = self
                .client
                .post(format!("{}/api/show", self.endpoint.url))
                .json(&json!({ "model": model }))
                .send()
                .await
                .ok()?;
            r.error_for_status().ok()?.json().await.ok()
        }
        .await
        .unwrap_or_default();
        let has = |c: &str| shown.capabilities.iter().any(|x| x == c);
        // The window Perch runs it at: what it was trained for, up to the cap.
        let trained = shown
            .model_info
            .iter()
            .find(|(k, _)| k.ends_with(".context_length"))
            .and_then(|(_, v)| v.as_u64())
            .and_then(|n| u32::try_from(n).ok());
        let context_length = Some(trained.map_or(self.context_cap, |n| n.min(self.context_cap)));
        let capabilities =
            Capabilities { vision: has("vision"), tools: has("tools"), thinking: has("thinking") };
        ModelInfo::new("ollama", model.to_owned(), capabilities, context_length)
    }

    fn body(&self, request: &ChatRequest) -> Value {
        let messages: Vec<Value> = request
            .messages
            .iter()
            .map(|m| match m {
                ChatMessage::System(text) => json!({ "role": "system", "content": text }),
                ChatMessage::User { text, images } => {
                    let mut v = json!({ "role": "user", "content": text });
                    if !images.is_empty() {
                        v["images"] = json!(images.iter().map(|i| &i.base64).collect::<Vec<_>>());
                    }
                    v
                }
                ChatMessage::Assistant { text, tool_calls, .. } => {
                    let mut v = json!({ "role": "assistant", "content": text });
                    if !tool_calls.is_empty() {
                        v["tool_calls"] =
                            json!(tool_calls
                            .iter()
                            .map(|c| json!({ "function": { "name": c.name, "arguments": c.arguments } }))
                            .collect::<Vec<_>>());
                    }
                    v
                }
                ChatMessage::Tool { name, content, .. } => {
                    json!({ "role": "tool", "content": content, "tool_name": name })
                }
            })
            .collect();
        let mut body = json!({ "model": request.model, "messages": messages, "stream": true });
        // Always said: a thinking model left to its default reasons anyway, and (with Settings'
        // "show the reasoning" off) its thinking would arrive as the answer's text. Ollama
        // refuses `true` for a model that cannot think, never `false`.
        body["think"] = json!(request.think);
        if !request.tools.is_empty() {
            body["tools"] = request.tools.iter().map(ToolSpec::as_function).collect();
        }
        // Always the window the prompt was built for: Ollama's own default is small, and it cuts
        // the start of a longer prompt (the system prompt, attached files) without a word.
        let window = request.context_window.unwrap_or(self.context_cap).min(self.context_cap);
        body["options"] = json!({ "num_ctx": window });
        if let Some(max) = request.max_output_tokens {
            body["options"]["num_predict"] = json!(max);
        }
        body
    }
}

#[derive(Deserialize)]
struct Line {
    #[serde(default)]
    message: Option<LineMessage>,
    #[serde(default)]
    done: bool,
    #[serde(default)]
    done_reason: Option<String>,
    #[serde(default)]
    prompt_eval_count: Option<u64>,
    #[serde(default)]
    eval_count: Option<u64>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Deserialize)]
struct LineMessage {
    #[serde(default)]
    content: String,
    #[serde(default)]
    thinking: Option<String>,
    #[serde(default)]
    tool_calls: Vec<LineToolCall>,
}

#[derive(Deserialize)]
struct LineToolCall {
    #[serde(default)]
    id: Option<String>,
    function: LineFunction,
}

#[derive(Deserialize)]
struct LineFunction {
    name: String,
    #[serde(default, alias = "parameters")]
    arguments: Value,
}

/// The events one NDJSON line carries.
fn events_of(line: &[u8], calls_so_far: &mut usize) -> Result<Vec<StreamEvent>, ProviderError> {
    let malformed = |e: serde_json::Error| ProviderError::Stream {
        provider: "Ollama".into(),
        message: format!("a malformed line in the stream ({e})"),
    };
    let line: Line = serde_json::from_slice(line).map_err(malformed)?;
    if let Some(message) = line.error {
        return Err(ProviderError::Stream { provider: "Ollama".into(), message });
    }
    let mut out = Vec::new();
    if let Some(m) = line.message {
        if let Some(thinking) = m.thinking.filter(|t| !t.is_empty()) {
            out.push(StreamEvent::Thinking(thinking));
        }
        if !m.content.is_empty() {
            out.push(StreamEvent::Text(m.content));
        }
        for call in m.tool_calls {
            *calls_so_far += 1;
            let id = call.id.unwrap_or_else(|| format!("call_{calls_so_far}"));
            out.push(StreamEvent::ToolCall(ToolCall::new(id, call.function.name, call.function.arguments)));
        }
    }
    if line.done {
        out.push(StreamEvent::Usage(Usage {
            input_tokens: line.prompt_eval_count.unwrap_or(0),
            output_tokens: line.eval_count.unwrap_or(0),
        }));
        let reason = match line.done_reason.as_deref() {
            Some("length") => StopReason::MaxTokens,
            _ if *calls_so_far > 0 => StopReason::ToolUse,
            None | Some("stop") => StopReason::EndTurn,
            Some(other) => StopReason::Other(other.to_owned()),
        };
        out.push(StreamEvent::Done(reason));
    }
    Ok(out)
}

impl Provider for Ollama {
    fn name(&self) -> &str {
        "ollama"
    }

    fn list_models(&self) -> BoxFuture<'_, Result<Vec<ModelInfo>, ProviderError>> {
        Box::pin(async move {
            let names = self.tags().await?;
            Ok(futures::stream::iter(names)
                .map(|n| async move { self.show(&n).await })
                .buffered(4)
                .collect()
                .await)
        })
    }

    fn model_info(&self, model: &str) -> BoxFuture<'_, Result<ModelInfo, ProviderError>> {
        let model = model.to_owned();
        Box::pin(async move {
            let installed = self.tags().await?;
            match name::find(&installed, &model) {
                Some(found) => Ok(self.show(found).await),
                None => Err(ProviderError::ModelNotFound {
                    provider: "Ollama".into(),
                    model,
                    available: installed,
                }),
            }
        })
    }

    fn stream_chat(&self, request: ChatRequest) -> BoxFuture<'_, Result<EventStream, ProviderError>> {
        Box::pin(async move {
            let post = self.client.post(format!("{}/api/chat", self.endpoint.url)).json(&self.body(&request));
            let response = match self.endpoint.send(post, &request.model).await {
                Err(ProviderError::ModelNotFound { provider, model, .. }) => {
                    let available = self.tags().await.unwrap_or_default();
                    return Err(ProviderError::ModelNotFound { provider, model, available });
                }
                other => other?,
            };
            let mut calls = 0usize;
            let lines = http::lines(response, "Ollama", self.timeouts);
            Ok(http::events_from(lines, "Ollama", move |line| match line {
                Some(line) if line.iter().all(u8::is_ascii_whitespace) => Ok(Vec::new()),
                Some(line) => events_of(&line, &mut calls),
                None => Ok(Vec::new()),
            }))
        })
    }
}
