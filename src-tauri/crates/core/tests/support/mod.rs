//! What engine tests share: an engine in a temporary data folder (with MCP servers of the
//! test's own, and a fake Ollama), the sandbox launcher built beside the test binaries, and a
//! look at the process table.
#![allow(dead_code, clippy::unwrap_used)]

pub mod terminal;

use std::path::Path;

use perch_core::Engine;
use perch_core::paths::{DataDir, DataDirSource, Resolved};
use perch_test_support::sandbox::ensure_launcher;

pub async fn engine(root: &Path) -> Engine {
    ensure_launcher();
    // No MCP servers: only the built-in terminal.
    engine_with_servers(root, serde_json::json!({})).await
}

/// An engine on a data folder under `root` whose MCP servers are `servers` (the value of
/// `mcpServers`); nothing started yet.
pub async fn engine_with_servers(root: &Path, servers: serde_json::Value) -> Engine {
    let data = root.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let file = serde_json::json!({ "mcpServers": servers }).to_string();
    std::fs::write(data.join("mcp_servers.json"), file).unwrap();
    let dir = DataDir::prepare(Resolved { path: data, source: DataDirSource::Env }).unwrap();
    Engine::start(dir).await.unwrap()
}

/// A fake Ollama, made the engine's.
pub async fn fake_ollama(engine: &Engine) -> perch_fake_llm::FakeLlm {
    let fake = perch_fake_llm::FakeLlm::start(perch_fake_llm::Dialect::Ollama).await.unwrap();
    let url = perch_core::settings::BaseUrl::try_from(fake.url()).unwrap();
    engine.settings().update(|s| s.providers.ollama_url = url).await.unwrap();
    fake
}

/// Processes whose process group is `pgid`, from /proc.
pub fn group_members(pgid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
        // pid (comm) state ppid pgrp ...; comm may hold spaces, so split after the last ')'.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else { continue };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let state = fields.first().copied().unwrap_or("");
        if fields.get(2).and_then(|g| g.parse::<u32>().ok()) == Some(pgid) && state != "Z" {
            found.push(pid);
        }
    }
    found
}

/// Waits (polling) until `check` holds, or panics after `secs`.
pub async fn eventually(secs: u64, what: &str, mut check: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while !check() {
        assert!(std::time::Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// A "user" who answers every question `engine` asks with `answer`, which sees it first; the
/// questions asked, in order.
pub fn answer_questions(
    engine: &Engine,
    answer: impl Fn(&perch_core::questions::Question) -> perch_core::questions::Answer + Send + 'static,
) -> std::sync::Arc<std::sync::Mutex<Vec<perch_core::questions::Question>>> {
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut changes = engine.questions().subscribe();
    let (questions, log) = (engine.questions().clone(), asked.clone());
    tokio::spawn(async move {
        while let Ok(event) = changes.recv().await {
            if let perch_core::questions::QuestionChange::Asked(ask) = event {
                log.lock().unwrap_or_else(|p| p.into_inner()).push(ask.question.clone());
                let _ = questions.answer(ask.id, answer(&ask.question));
            }
        }
    });
    asked
}
