//! Chat figures, side by side in one run:
//! - throughput: the fake Ollama emitting 50,000 tokens as fast as it can, read through the
//!   whole engine (turn, saving, sink) and by the official Python `ollama` client;
//! - time to first token: the engine against a raw HTTP client reading the same stream;
//! - history search latency (p50, p95) over 100,000 generated messages.
//!
//! `make bench` builds what it needs: the fake (`PERCH_FAKE_LLM`) and a Python with the
//! `ollama` package (`PERCH_BENCH_PYTHON`).
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use futures::StreamExt;
use perch_core::Engine;
use perch_core::agent::{TurnEvent, TurnKind, TurnRequest, TurnSink, run_turn};
use perch_core::paths::{DataDir, DataDirSource, Resolved};
use perch_core::settings::BaseUrl;
use perch_fake_llm::{Script, Step};
use serde_json::json;

mod common;

/// Tokens per answer, answers, time-to-first-token runs, messages searched (fewer when quick).
fn sizes() -> (usize, usize, usize, usize) {
    if common::quick() { (5_000, 1, 3, 5_000) } else { (50_000, 3, 25, 100_000) }
}

const PYTHON_CLIENT: &str = r#"
import json, sys, time, ollama
client = ollama.Client(host=sys.argv[1])
start = time.perf_counter(); first = None; n = 0
for chunk in client.chat(model="qwen3-vl:8b-instruct", messages=[{"role": "user", "content": "go"}], stream=True):
    if chunk.message.content:
        n += 1
        if first is None: first = time.perf_counter()
print(json.dumps({"tokens": n, "seconds": time.perf_counter() - start, "ttft": (first or start) - start}))
"#;

struct Count {
    texts: AtomicUsize,
    first: std::sync::Mutex<Option<Instant>>,
}

impl TurnSink for Count {
    fn send(&self, event: TurnEvent) {
        if let TurnEvent::Text(_) = event
            && self.texts.fetch_add(1, Ordering::Relaxed) == 0
        {
            *self.first.lock().unwrap() = Some(Instant::now());
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn percentile(mut v: Vec<f64>, p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

async fn queue(client: &reqwest::Client, url: &str, script: &Script) {
    let r = client.post(format!("{url}/__fake/script")).json(script).send().await.unwrap();
    assert!(r.status().is_success());
}

async fn engine_for(url: &str) -> (tempfile::TempDir, Engine) {
    let tmp = tempfile::tempdir().unwrap();
    let dir =
        DataDir::prepare(Resolved { path: tmp.path().join("data"), source: DataDirSource::Env }).unwrap();
    let engine = Engine::start(dir).await.unwrap();
    let url = BaseUrl::try_from(url.to_owned()).unwrap();
    engine.settings().update(|s| s.providers.ollama_url = url).await.unwrap();
    (tmp, engine)
}

fn ask() -> TurnRequest {
    TurnRequest {
        conversation_id: None,
        model: "ollama:qwen3-vl:8b-instruct".into(),
        kind: TurnKind::Ask {
            text: "go".into(),
            images: Vec::new(),
            files: Vec::new(),
            selections: Vec::new(),
        },
        run_id: None,
    }
}

/// One turn through the engine: (tokens, seconds, time to first token). The turn runs as a task
/// on the runtime, as in the app (Tauri runs each async command as one), not on the bench's
/// main thread: there every chunk would cross threads twice (the connection's task on a worker
/// hands it over, the turn asks for the next), which costs more than the engine's own work.
async fn through_engine(engine: &Engine) -> (usize, f64, f64) {
    let engine = engine.clone();
    tokio::spawn(async move {
        let sink = Count { texts: AtomicUsize::new(0), first: std::sync::Mutex::new(None) };
        let start = Instant::now();
        run_turn(engine.agent(), ask(), &sink).await.unwrap();
        let seconds = start.elapsed().as_secs_f64();
        let first = sink.first.lock().unwrap().map_or(seconds, |f| (f - start).as_secs_f64());
        (sink.texts.load(Ordering::Relaxed), seconds, first)
    })
    .await
    .unwrap()
}

/// Time to the first content byte with a plain HTTP client.
async fn raw_ttft(client: &reqwest::Client, url: &str) -> f64 {
    let start = Instant::now();
    let body = json!({ "model": "qwen3-vl:8b-instruct", "messages": [{ "role": "user", "content": "go" }], "stream": true });
    let response = client.post(format!("{url}/api/chat")).json(&body).send().await.unwrap();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        if chunk.unwrap().windows(9).any(|w| w == b"\"content\"") {
            break;
        }
    }
    let first = start.elapsed().as_secs_f64();
    while stream.next().await.is_some() {}
    first
}

fn python(python: &str, url: &str) -> Option<serde_json::Value> {
    let out = Command::new(python).args(["-c", PYTHON_CLIENT, url]).output().ok()?;
    if !out.status.success() {
        eprintln!("python client failed: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

async fn search_latency(messages: usize) -> (f64, f64, f64) {
    let (tmp, engine) = engine_for("http://127.0.0.1:1").await;
    // A vocabulary where a few words are in most messages and most words are rare, as in text.
    const COMMON: &[&str] = &[
        "the",
        "borrow",
        "checker",
        "lifetime",
        "async",
        "runtime",
        "socket",
        "window",
        "review",
        "database",
        "index",
        "migration",
        "stream",
        "token",
        "model",
        "provider",
        "thinking",
        "context",
        "summary",
        "history",
    ];
    let rare: Vec<String> = (0..5000).map(|i| format!("term{i}")).collect();
    let started = Instant::now();
    engine
        .store()
        .call(move |c| {
            let tx = c.transaction()?;
            let mut seed: u64 = 0x2545F4914F6CDD1D;
            let mut next = move || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed
            };
            for conv in 0..(messages / 20) {
                let id = format!("c{conv:06}");
                tx.execute(
                    "INSERT INTO conversations (id, title, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)",
                    rusqlite::params![id, format!("Conversation {conv}"), conv as i64],
                )?;
                for m in 0..20 {
                    let text: Vec<&str> = (0..40)
                        .map(|_| {
                            let r = next();
                            if r % 3 == 0 { rare[(r / 3 % rare.len() as u64) as usize].as_str() } else { COMMON[(r % COMMON.len() as u64) as usize] }
                        })
                        .collect();
                    let role = if m % 2 == 0 { "user" } else { "assistant" };
                    tx.execute(
                        "INSERT INTO messages (conversation_id, role, content, created_at) VALUES (?1, ?2, ?3, ?4)",
                        rusqlite::params![id, role, text.join(" "), (conv * 20 + m) as i64],
                    )?;
                }
            }
            tx.commit()?;
            Ok(())
        })
        .await
        .unwrap();
    let generate = started.elapsed().as_secs_f64();
    let mut times = Vec::new();
    // A third each: a common word, a rare word, a common word with a typed prefix.
    for i in 0..300 {
        let query = match i % 3 {
            0 => COMMON[i % COMMON.len()].to_owned(),
            1 => format!("term{}", (i * 37) % 5000),
            _ => format!("{} {}", COMMON[i % COMMON.len()], &COMMON[(i * 7) % COMMON.len()][..3]),
        };
        let t = Instant::now();
        let hits = engine.store().search(&query, 50).await.unwrap();
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        assert!(!hits.is_empty(), "{query}");
    }
    drop(tmp);
    (percentile(times.clone(), 0.5), percentile(times, 0.95), generate)
}

#[tokio::main]
async fn main() {
    let fake_bin = std::env::var("PERCH_FAKE_LLM")
        .expect("set PERCH_FAKE_LLM to the perch-fake-llm binary (make bench does)");
    let py = std::env::var("PERCH_BENCH_PYTHON").unwrap_or_else(|_| "python3".into());
    let mut server = Command::new(&fake_bin).arg("ollama").stdout(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url = line.trim().trim_start_matches("listening ").to_owned();
    let (tokens, runs, ttft_runs, messages) = sizes();
    let client = perch_core::providers::http::client_builder().build().unwrap();
    let (_tmp, engine) = engine_for(&url).await;

    // Throughput.
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        queue(&client, &url, &Script::tokens(tokens)).await;
        let (n, secs, _) = through_engine(&engine).await;
        assert_eq!(n, tokens);
        ours.push(n as f64 / secs);
        queue(&client, &url, &Script::tokens(tokens)).await;
        if let Some(r) = python(&py, &url) {
            theirs.push(r["tokens"].as_f64().unwrap() / r["seconds"].as_f64().unwrap());
        }
    }

    // Time to first token: a short answer, after a pause the model "thinks" for.
    let short = Script {
        steps: vec![
            Step::Sleep { ms: 20 },
            Step::Text { text: "first".into() },
            Step::Finish { reason: None },
        ],
        token_delay_ms: 0,
    };
    let (mut engine_ttft, mut raw) = (Vec::new(), Vec::new());
    for _ in 0..ttft_runs {
        queue(&client, &url, &short).await;
        // A task too, like the engine's turn.
        let (raw_client, raw_url) = (client.clone(), url.clone());
        raw.push(tokio::spawn(async move { raw_ttft(&raw_client, &raw_url).await }).await.unwrap() * 1000.0);
        queue(&client, &url, &short).await;
        engine_ttft.push(through_engine(&engine).await.2 * 1000.0);
    }
    let _ = server.kill();
    let _ = server.wait();

    let (p50, p95, generated) = search_latency(messages).await;

    println!(
        "chat ({} cores; fake Ollama in its own process)",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!("  throughput, {tokens} tokens, median of {runs}:");
    println!("    perch engine (turn + saving + sink)   {:>9.0} tokens/s", median(ours));
    if theirs.is_empty() {
        println!("    python ollama client                  (not run: no `ollama` package for {py})");
    } else {
        println!("    python ollama client {:<16} {:>9.0} tokens/s", "", median(theirs));
    }
    println!("  time to first token, median of {ttft_runs} (the fake waits 20 ms):");
    let (e, r) = (median(engine_ttft), median(raw));
    println!("    raw HTTP client                       {r:>9.1} ms");
    println!("    perch engine                          {e:>9.1} ms  (+{:.1} ms)", e - r);
    println!("  history search over {messages} messages ({generated:.1} s to generate), 300 queries:");
    println!("    p50 {p50:.2} ms   p95 {p95:.2} ms");
}
