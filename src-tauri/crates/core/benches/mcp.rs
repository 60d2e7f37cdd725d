//! MCP figures, side by side in one run:
//! - tool-call round trip (p50, p99, calls per second): `demo.add` through Perch's manager, and
//!   the same server and tool called by the official Python `mcp` SDK client;
//! - start-up: five stdio servers (the bundled demo and filesystem, server-everything and
//!   server-filesystem from npm, mcp-server-time from PyPI) started concurrently until every
//!   one has listed its tools.
//!
//! `make bench` builds the bundled servers in release beside this binary and passes the Python
//! with the `mcp` package (`PERCH_BENCH_PYTHON`).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use perch_core::mcp::McpManager;
use perch_core::questions::Questions;
use serde_json::json;
use tokio_util::sync::CancellationToken;

mod common;

/// Round trips per client, and start-ups of five servers (fewer in a quick run).
fn calls() -> usize {
    common::scaled(2_000, 50)
}
fn start_runs() -> usize {
    common::scaled(5, 1)
}

const PYTHON_CLIENT: &str = r#"
import asyncio, json, sys, time
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

async def main(server, n):
    async with stdio_client(StdioServerParameters(command=server, args=[])) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for i in range(50):
                await session.call_tool("add", {"a": i, "b": 1})
            times = []
            start = time.perf_counter()
            for i in range(n):
                t = time.perf_counter()
                r = await session.call_tool("add", {"a": i, "b": 1})
                times.append(time.perf_counter() - t)
                assert r.content[0].text == str(i + 1), r
            total = time.perf_counter() - start
    print(json.dumps({"seconds": times, "total": total}))

asyncio.run(main(sys.argv[1], int(sys.argv[2])))
"#;

fn percentile(mut v: Vec<f64>, p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..").canonicalize().unwrap()
}

fn bundled(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().unwrap().parent().unwrap().join(name);
    assert!(path.exists(), "{} is missing: cargo build --release -p {name}", path.display());
    path
}

fn manager(dir: &Path, servers: serde_json::Value) -> Arc<McpManager> {
    std::fs::write(dir.join("mcp_servers.json"), json!({ "mcpServers": servers }).to_string()).unwrap();
    McpManager::new(dir, None, Arc::new(Questions::default()))
}

fn report(label: &str, seconds: &[f64], total: f64) {
    println!(
        "{label:<38} p50 {:>7.1} us   p99 {:>7.1} us   {:>7.0} calls/s",
        percentile(seconds.to_vec(), 0.5) * 1e6,
        percentile(seconds.to_vec(), 0.99) * 1e6,
        seconds.len() as f64 / total
    );
}

/// `n` sequential calls of `demo.add`: each call's time, and the whole run's.
async fn calls_through(m: Arc<McpManager>, n: usize) -> (Vec<f64>, f64) {
    let cancel = CancellationToken::new();
    let args = |i: usize| json!({ "a": i, "b": 1 }).as_object().cloned();
    let mut times = Vec::with_capacity(n);
    let start = Instant::now();
    for i in 0..n {
        let t = Instant::now();
        let out = m.call_tool("demo", "add", args(i), &cancel, None).await.unwrap();
        times.push(t.elapsed().as_secs_f64());
        assert_eq!(out.text, (i + 1).to_string());
    }
    (times, start.elapsed().as_secs_f64())
}

async fn round_trip(python: Option<&str>) {
    let tmp = tempfile::tempdir().unwrap();
    let m = manager(tmp.path(), json!({ "demo": { "command": bundled("perch-mcp-demo") } }));
    m.ensure_connected("demo", Duration::from_secs(30)).await.unwrap();
    // The calls run as a task on the runtime, as the agent's tool calls do (inside the turn's
    // task), not on the bench's main thread: from there every call also wakes a worker to send
    // it and is woken back across threads, about 3 of its 5 thread switches.
    tokio::spawn(calls_through(m.clone(), 50)).await.unwrap();
    let (times, total) = tokio::spawn(calls_through(m.clone(), calls())).await.unwrap();
    m.shutdown().await;
    println!("tool-call round trip, demo.add over stdio, {} sequential calls:", calls());
    report("  Perch (perch-core McpManager)", &times, total);

    let Some(python) = python else {
        println!("  Python mcp SDK: skipped (set PERCH_BENCH_PYTHON)");
        return;
    };
    let out = Command::new(python)
        .args(["-c", PYTHON_CLIENT, bundled("perch-mcp-demo").to_str().unwrap(), &calls().to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let times: Vec<f64> = v["seconds"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    report("  Python mcp SDK (ClientSession)", &times, v["total"].as_f64().unwrap());
}

async fn start_five() {
    let node = |bin: &str| repo().join("node_modules/.bin").join(bin);
    let venv = std::env::var("VENV")
        .map(PathBuf::from)
        .unwrap_or_else(|_| dirs::home_dir().unwrap().join(".cache/perch/venv"));
    let mut runs = Vec::new();
    for _ in 0..start_runs() {
        let tmp = tempfile::tempdir().unwrap();
        let files = tmp.path().join("files");
        std::fs::create_dir_all(&files).unwrap();
        let m = manager(
            tmp.path(),
            json!({
                "demo": { "command": bundled("perch-mcp-demo") },
                "filesystem": { "command": bundled("perch-mcp-filesystem"), "args": ["--root", files] },
                "everything": { "command": node("mcp-server-everything"), "args": ["stdio"] },
                "files": { "command": node("mcp-server-filesystem"), "args": [files] },
                "time": { "command": venv.join("bin/mcp-server-time") },
            }),
        );
        let names = ["demo", "filesystem", "everything", "files", "time"];
        let start = Instant::now();
        for name in names {
            m.start(name).unwrap();
        }
        let results =
            futures::future::join_all(names.iter().map(|n| m.ensure_connected(n, Duration::from_secs(60))))
                .await;
        let elapsed = start.elapsed().as_secs_f64();
        for (name, r) in names.iter().zip(results) {
            r.unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let tools: usize = m.list().iter().map(|s| s.tools.len()).sum();
        runs.push((elapsed, tools));
        m.shutdown().await;
    }
    let times: Vec<f64> = runs.iter().map(|r| r.0).collect();
    println!(
        "start five stdio servers concurrently and list their tools ({} tools): median {:.0} ms, min {:.0} ms, max {:.0} ms over {} runs",
        runs[0].1,
        percentile(times.clone(), 0.5) * 1e3,
        percentile(times.clone(), 0.0) * 1e3,
        percentile(times, 1.0) * 1e3,
        runs.len(),
    );
}

fn main() {
    let python = std::env::var("PERCH_BENCH_PYTHON").ok();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(async {
        round_trip(python.as_deref()).await;
        start_five().await;
    });
}
