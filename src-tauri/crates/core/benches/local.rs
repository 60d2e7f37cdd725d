//! Local model figures, side by side in one run: Perch's `local` provider (the `perch-llm`
//! sidecar, llama.cpp through llama-cpp-2) against llama.cpp's own OpenAI-compatible server from
//! `llama-cpp-python[server]`, on the same GGUF (SmolLM2-135M Q4_1 from the test venv, or
//! `PERCH_BENCH_GGUF`), chat template, prompt, thread count (2), context (2048) and batch (512):
//! - time to first token and prompt evaluation rate (prompt tokens / time to first token), with
//!   a different first line per request so neither side reuses a cached prefix;
//! - generation rate (tokens after the first / time after the first);
//! - start-up: from nothing to a loaded model (Perch: the sidecar started and the model loaded by
//!   a one-token answer; the peer: process start to its first successful request);
//! - memory (PSS) of the process holding the loaded model.
//!
//! `make bench` builds the sidecar in release and installs the peer (built from source with
//! native tuning off) into the venv it passes as `PERCH_BENCH_PYTHON`; without the peer, only
//! Perch's figures are printed. Prompt token counts are Perch's: both sides apply the same
//! template with the same tokenizer.
#![allow(clippy::unwrap_used)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;
use perch_core::Engine;
use perch_core::local::LocalSettings;
use perch_core::paths::{DataDir, DataDirSource, Resolved};
use perch_core::providers::{ChatMessage, ChatRequest, Provider, StreamEvent};
use serde_json::{Value, json};

mod common;

const THREADS: u32 = 2;
const CONTEXT: u32 = 2048;
const PARAGRAPH: &str = "Perch is a small desktop assistant that floats beside the editor. It keeps \
    its history on the computer, runs local models in a separate process, and asks before it runs \
    any command. ";

fn prompt(i: usize) -> String {
    format!(
        "Request number {i}.\n{}\nRetell the text above as a long story with many details.",
        PARAGRAPH.repeat(8)
    )
}

struct Figures {
    ttft_ms: Vec<f64>,
    prompt_rate: Vec<f64>,
    generation_rate: Vec<f64>,
    tokens: Vec<f64>,
}

impl Figures {
    fn new() -> Self {
        Self { ttft_ms: Vec::new(), prompt_rate: Vec::new(), generation_rate: Vec::new(), tokens: Vec::new() }
    }

    fn add(&mut self, prompt_tokens: u64, started: Instant, first: Instant, last: Instant, tokens: u64) {
        let ttft = (first - started).as_secs_f64();
        self.ttft_ms.push(ttft * 1000.0);
        self.prompt_rate.push(prompt_tokens as f64 / ttft);
        if tokens > 1 {
            self.generation_rate.push((tokens - 1) as f64 / (last - first).as_secs_f64());
        }
        self.tokens.push(tokens as f64);
    }

    fn print(&self, name: &str) {
        println!(
            "    {name:<34} {:>8.1} ms {:>9.0} tok/s {:>9.1} tok/s {:>6.0}",
            median(&self.ttft_ms),
            median(&self.prompt_rate),
            median(&self.generation_rate),
            median(&self.tokens)
        );
    }
}

fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn gguf() -> PathBuf {
    std::env::var_os("PERCH_BENCH_GGUF")
        .map(PathBuf::from)
        .unwrap_or_else(perch_llm_protocol::test_support::smollm2_gguf)
}

/// One answer through the provider: (prompt tokens, started, first token, last token, tokens).
async fn perch_answer(
    provider: &dyn Provider,
    text: String,
    max: u32,
) -> (u64, Instant, Instant, Instant, u64) {
    let request = ChatRequest {
        model: "bench".into(),
        messages: vec![ChatMessage::user(text)],
        tools: Vec::new(),
        think: false,
        max_output_tokens: Some(max),
        context_window: None,
    };
    let started = Instant::now();
    let mut stream = provider.stream_chat(request).await.unwrap();
    let (mut first, mut last, mut usage) = (None, started, None);
    while let Some(event) = stream.next().await {
        match event.unwrap() {
            StreamEvent::Text(_) | StreamEvent::Thinking(_) => {
                last = Instant::now();
                first.get_or_insert(last);
            }
            StreamEvent::Usage(u) => usage = Some(u),
            _ => {}
        }
    }
    let usage = usage.expect("the local provider reports usage");
    (usage.input_tokens, started, first.unwrap_or(last), last, usage.output_tokens)
}

/// llama-cpp-python's server, when the venv has it.
struct Peer {
    child: Child,
    url: String,
    started_in: Duration,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn start_peer(python: &str, client: &reqwest::Client) -> Result<Peer, String> {
    let has = Command::new(python).args(["-c", "import llama_cpp.server"]).output();
    if !has.is_ok_and(|o| o.status.success()) {
        return Err(format!("no llama-cpp-python[server] for {python}; `make bench` installs it"));
    }
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let started = Instant::now();
    let child = Command::new(python)
        .args(["-m", "llama_cpp.server", "--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["--model", gguf().to_str().unwrap()])
        .args(["--n_threads", &THREADS.to_string(), "--n_threads_batch", &THREADS.to_string()])
        .args(["--n_ctx", &CONTEXT.to_string(), "--n_batch", "512", "--verbose", "false"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut peer = Peer { child, url: format!("http://127.0.0.1:{port}"), started_in: Duration::ZERO };
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Ok(r) = client.get(format!("{}/v1/models", peer.url)).send().await
            && r.status().is_success()
        {
            peer.started_in = started.elapsed();
            return Ok(peer);
        }
        if Instant::now() > deadline || peer.child.try_wait().ok().flatten().is_some() {
            return Err("llama-cpp-python's server did not start".into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// One streamed answer from the peer: (started, first token, last token, tokens).
async fn peer_answer(
    client: &reqwest::Client,
    url: &str,
    text: String,
    max: u32,
) -> (Instant, Instant, Instant, u64) {
    let body = json!({
        "messages": [{"role": "user", "content": text}],
        "max_tokens": max,
        "stream": true,
    });
    let started = Instant::now();
    let response = client.post(format!("{url}/v1/chat/completions")).json(&body).send().await.unwrap();
    assert!(response.status().is_success(), "{}", response.status());
    let mut bytes = response.bytes_stream();
    let (mut buffer, mut first, mut last, mut tokens) = (String::new(), None, started, 0u64);
    while let Some(chunk) = bytes.next().await {
        buffer.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
        while let Some(end) = buffer.find('\n') {
            let line: String = buffer.drain(..=end).collect();
            let Some(data) = line.trim().strip_prefix("data:").map(str::trim) else { continue };
            if data == "[DONE]" {
                continue;
            }
            let event: Value = serde_json::from_str(data).unwrap();
            let content = &event["choices"][0]["delta"]["content"];
            if content.as_str().is_some_and(|c| !c.is_empty()) {
                tokens += 1;
                last = Instant::now();
                first.get_or_insert(last);
            }
        }
    }
    (started, first.unwrap_or(last), last, tokens)
}

fn pss_mib(pid: u32) -> f64 {
    perch_core::local::machine::process_memory(pid).map_or(f64::NAN, |b| b as f64 / (1u64 << 20) as f64)
}

#[tokio::main]
async fn main() {
    let python = std::env::var("PERCH_BENCH_PYTHON").unwrap_or_else(|_| "python3".into());
    let (runs, generate) = if common::quick() { (1, 16) } else { (7, 128) };
    let client = perch_core::providers::http::client_builder().build().unwrap();

    let tmp = tempfile::tempdir().unwrap();
    let dir =
        DataDir::prepare(Resolved { path: tmp.path().join("data"), source: DataDirSource::Env }).unwrap();
    let engine = Engine::start(dir).await.unwrap();
    let local = LocalSettings { context_length: CONTEXT, threads: THREADS, ..LocalSettings::default() };
    engine.settings().update(|s| s.local = local).await.unwrap();
    engine.local().add(&gguf(), Some("bench")).await.unwrap();
    let settings = engine.settings().get().await;
    let provider = engine.registry(&settings).provider("local").await.unwrap();

    // Start-up: the sidecar and the model, made ready by a one-token answer.
    let cold = Instant::now();
    perch_answer(&*provider, "Hi".into(), 1).await;
    let perch_start = cold.elapsed();

    let mut ours = Figures::new();
    for i in 0..runs {
        let (prompt_tokens, started, first, last, tokens) =
            perch_answer(&*provider, prompt(i), generate).await;
        ours.add(prompt_tokens, started, first, last, tokens);
    }
    let prompt_tokens = perch_answer(&*provider, prompt(runs), 1).await.0;
    let perch_memory = engine.local().runtime().status().pid.map_or(f64::NAN, pss_mib);
    engine.local().runtime().stop().await;

    let mut theirs = Figures::new();
    let peer = match start_peer(&python, &client).await {
        Ok(peer) => {
            for i in 0..runs {
                let (started, first, last, tokens) =
                    peer_answer(&client, &peer.url, prompt(i), generate).await;
                theirs.add(prompt_tokens, started, first, last, tokens);
            }
            Ok(peer)
        }
        Err(why) => Err(why),
    };

    println!(
        "local models ({} cores; {}; {THREADS} threads, context {CONTEXT}, {runs} answers of up to {generate} tokens, prompt {prompt_tokens} tokens)",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        gguf().file_name().unwrap().to_string_lossy(),
    );
    println!("    {:<34} {:>11} {:>15} {:>15} {:>6}", "", "first token", "prompt", "generation", "tokens");
    ours.print("perch local provider (perch-llm)");
    match &peer {
        Ok(peer) => {
            theirs.print("llama-cpp-python server");
            println!("  start-up to a loaded model:");
            println!("    perch (sidecar + load + 1 token)   {:>8.0} ms", perch_start.as_secs_f64() * 1000.0);
            println!(
                "    llama-cpp-python server            {:>8.0} ms",
                peer.started_in.as_secs_f64() * 1000.0
            );
            println!("  memory with the model loaded (PSS):");
            println!("    perch-llm                          {perch_memory:>8.1} MiB");
            println!("    llama-cpp-python server            {:>8.1} MiB", pss_mib(peer.child.id()));
        }
        Err(why) => {
            println!("    llama-cpp-python server            (not run: {why})");
            println!("  start-up to a loaded model: perch {:.0} ms", perch_start.as_secs_f64() * 1000.0);
            println!("  memory with the model loaded (PSS): perch-llm {perch_memory:.1} MiB");
        }
    }
}
