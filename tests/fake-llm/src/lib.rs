//! A scripted stand-in for model services on loopback: Ollama (NDJSON), OpenAI-compatible,
//! Anthropic and Gemini (server-sent events), each in its documented wire format, so the
//! production clients are what gets tested. Scripts decide what a chat request gets: text,
//! thinking, tool calls, usage, HTTP errors, errors mid-stream, malformed lines, a character
//! split across network chunks, a stall, or a dropped connection. Ollama's `/api/embed` answers
//! with deterministic bag-of-words vectors. Chat requests the real service would refuse are
//! refused the same way (see [`rules`]).

mod http;
pub mod rules;
pub mod signatures;
mod wire;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use wire::Dialect;

/// One thing the fake does while answering.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Step {
    Thinking {
        text: String,
    },
    /// Anthropic's `redacted_thinking` block: encrypted reasoning (other services: nothing).
    RedactedThinking {
        payload: String,
    },
    Text {
        text: String,
    },
    ToolCall {
        name: String,
        arguments: Value,
    },
    Usage {
        input: u64,
        output: u64,
    },
    /// The normal end, with the dialect's stop reason (default: a plain stop).
    Finish {
        #[serde(default)]
        reason: Option<String>,
    },
    Sleep {
        ms: u64,
    },
    /// Answer with an HTTP error instead of a stream (only as the first step).
    HttpError {
        status: u16,
        body: String,
        #[serde(default)]
        retry_after: Option<String>,
    },
    /// The service's own error event, mid-stream.
    StreamError {
        message: String,
    },
    /// Bytes sent as they are (a malformed line, say).
    Raw {
        data: String,
    },
    /// The next payload goes out in two network chunks, split inside a multi-byte character.
    SplitNext,
    /// Close the connection without finishing.
    Disconnect,
    /// Send nothing more and keep the connection open.
    Stall,
}

/// What one chat request gets.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Script {
    pub steps: Vec<Step>,
    /// A pause before each text or thinking step.
    #[serde(default)]
    pub token_delay_ms: u64,
}

impl Script {
    /// Text in word-sized pieces, then usage and a normal finish.
    pub fn answer(text: &str) -> Self {
        let mut steps: Vec<Step> = words(text).map(|w| Step::Text { text: w }).collect();
        steps.push(Step::Usage { input: 12, output: steps.len() as u64 });
        steps.push(Step::Finish { reason: None });
        Self { steps, token_delay_ms: 0 }
    }

    /// `n` one-word tokens as fast as possible (throughput benchmarks).
    pub fn tokens(n: usize) -> Self {
        let mut steps: Vec<Step> = (0..n).map(|i| Step::Text { text: format!("t{} ", i % 10) }).collect();
        steps.push(Step::Usage { input: 8, output: n as u64 });
        steps.push(Step::Finish { reason: None });
        Self { steps, token_delay_ms: 0 }
    }

    pub fn with_delay(mut self, ms: u64) -> Self {
        self.token_delay_ms = ms;
        self
    }
}

/// Splits text into pieces that keep their trailing space, like a tokenizer's output.
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split_inclusive(' ').map(str::to_owned)
}

/// Ollama embedding models `/api/embed` accepts besides any model with the `embedding` capability.
pub const EMBEDDING_MODELS: &[&str] = &["nomic-embed-text", "all-minilm", "mxbai-embed-large"];

/// A model the fake offers, and what it can do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FakeModel {
    pub name: String,
    /// Ollama capability names: completion, vision, tools, thinking.
    pub capabilities: Vec<String>,
    pub context_length: u32,
}

impl FakeModel {
    pub fn new(name: &str, capabilities: &[&str], context_length: u32) -> Self {
        Self {
            name: name.into(),
            capabilities: capabilities.iter().map(|c| (*c).to_owned()).collect(),
            context_length,
        }
    }
}

/// A request the fake received.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    /// What an Ollama model reads of a chat request: the messages that fit its context window
    /// (`rules::ollama_window`).
    #[serde(default)]
    pub seen: Option<Vec<Value>>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

#[derive(Debug)]
struct State {
    dialect: Dialect,
    scripts: VecDeque<Script>,
    requests: Vec<Recorded>,
    models: Vec<FakeModel>,
    /// When set, requests must carry this key (as each service expects it).
    api_key: Option<String>,
    /// Used when no script is queued: echo the question, word by word, this slowly.
    default_delay_ms: u64,
}

/// A running fake. It stops when dropped.
pub struct FakeLlm {
    addr: SocketAddr,
    state: Arc<Mutex<State>>,
    task: tokio::task::JoinHandle<()>,
}

impl FakeLlm {
    pub async fn start(dialect: Dialect) -> std::io::Result<Self> {
        Self::start_on(dialect, "127.0.0.1:0").await
    }

    pub async fn start_on(dialect: Dialect, address: &str) -> std::io::Result<Self> {
        let listener = tokio::net::TcpListener::bind(address).await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(Mutex::new(State {
            dialect,
            scripts: VecDeque::new(),
            requests: Vec::new(),
            models: default_models(dialect),
            api_key: None,
            default_delay_ms: 0,
        }));
        let task = tokio::spawn(http::serve(listener, state.clone()));
        Ok(Self { addr, state, task })
    }

    /// The base URL a client is configured with (OpenAI's includes `/v1`).
    pub fn url(&self) -> String {
        match self.lock().dialect {
            Dialect::OpenAi => format!("http://{}/v1", self.addr),
            _ => format!("http://{}", self.addr),
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Queues the answer to the next chat request.
    pub fn push(&self, script: Script) {
        self.lock().scripts.push_back(script);
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.lock().requests.clone()
    }

    /// The chat requests only (not model listings or embeddings).
    pub fn chat_requests(&self) -> Vec<Recorded> {
        let chat =
            |r: &Recorded| r.method == "POST" && !r.path.contains("/api/show") && r.path != "/api/embed";
        self.requests().into_iter().filter(chat).collect()
    }

    pub fn set_models(&self, models: Vec<FakeModel>) {
        self.lock().models = models;
    }

    pub fn require_key(&self, key: &str) {
        self.lock().api_key = Some(key.to_owned());
    }

    pub fn set_default_delay(&self, ms: u64) {
        self.lock().default_delay_ms = ms;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn default_models(dialect: Dialect) -> Vec<FakeModel> {
    match dialect {
        Dialect::Ollama => vec![
            FakeModel::new("qwen3-vl:8b-instruct", &["completion", "vision", "tools", "thinking"], 32_768),
            FakeModel::new("llama3.2:3b", &["completion", "tools"], 8_192),
        ],
        Dialect::OpenAi => vec![FakeModel::new("gpt-4.1", &["completion", "vision", "tools"], 1_047_576)],
        Dialect::Anthropic => {
            vec![FakeModel::new("claude-sonnet-4-5", &["completion", "vision", "tools", "thinking"], 200_000)]
        }
        Dialect::Gemini => vec![FakeModel::new(
            "gemini-2.5-flash",
            &["completion", "vision", "tools", "thinking"],
            1_048_576,
        )],
    }
}
