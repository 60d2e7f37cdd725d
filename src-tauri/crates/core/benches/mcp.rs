//! MCP figures, side by side in one run:
//! - tool-call round trip (p50, p99, calls per second): `demo.add` through Perch's manager, and
//!   the same server and tool called by the official Python `mcp` SDK client, beside what lies
//!   under both: the request line echoed by `cat` (the pipes alone) and the server called by a
//!   raw client that writes a line and reads a line (the server's own cost);
//! - start-up: five stdio servers (the bundled demo and filesystem, server-everything and
//!   server-filesystem from npm, mcp-server-time from PyPI) started concurrently until every
//!   one has listed its tools.
//!
//! `make bench` builds the bundled servers in release beside this binary and passes the Python
//! with the `mcp` package (`PERCH_BENCH_PYTHON`).
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use perch_core::mcp::McpManager;
use perch_core::questions::Questions;
use serde_json::{Value, json};
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

fn manager(dir: &Path, servers: Value) -> Arc<McpManager> {
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

/// `n` blocking round trips of `demo.add` request lines through a child's stdin and stdout,
/// after `warm_up` (lines sent first, each answered by one line). Through `cat`, no client or
/// server code runs, only the kernel's pipes and two processes waking each other: the floor
/// under any client over stdio. Through the demo server with a client of a few lines (write a
/// line, read a line), it is the server's own cost on top.
fn blocking_round_trips(program: &Path, warm_up: &[Value], n: usize) -> (Vec<f64>, f64) {
    let mut child = Command::new(program).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let mut send = |message: &Value, answered: bool| {
        input.write_all(format!("{message}\n").as_bytes()).unwrap();
        if answered {
            line.clear();
            output.read_line(&mut line).unwrap();
            assert!(!line.is_empty(), "{} closed its output", program.display());
        }
    };
    for message in warm_up {
        send(message, message.get("id").is_some());
    }
    let add = |i: usize| {
        json!({
            "jsonrpc": "2.0", "id": 1000 + i, "method": "tools/call",
            "params": { "name": "add", "arguments": { "a": i, "b": 1 } },
        })
    };
    (0..50).for_each(|i| send(&add(i), true));
    let mut times = Vec::with_capacity(n);
    let start = Instant::now();
    for i in 0..n {
        let t = Instant::now();
        send(&add(i), true);
        times.push(t.elapsed().as_secs_f64());
    }
    let total = start.elapsed().as_secs_f64();
    drop(input);
    child.wait().unwrap();
    (times, total)
}

/// The handshake a raw client sends the demo server before calling tools.
fn handshake() -> Vec<Value> {
    vec![
        json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": { "name": "bench", "version": "1" },
            },
        }),
        json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }),
    ]
}

fn p50(seconds: &[f64]) -> f64 {
    percentile(seconds.to_vec(), 0.5)
}

async fn round_trip(python: Option<&str>) {
    let tmp = tempfile::tempdir().unwrap();
    let m = manager(tmp.path(), json!({ "demo": { "command": bundled("perch-mcp-demo") } }));
    m.ensure_connected("demo", Duration::from_secs(30)).await.unwrap();
    // The calls run as a task on the runtime, as the agent's tool calls do (inside the turn's
    // task), not on the bench's main thread: from there every call also wakes a worker to send
    // it and is woken back across threads, about 3 of its 5 thread switches.
    tokio::spawn(calls_through(m.clone(), 50)).await.unwrap();
    let (perch_times, total) = tokio::spawn(calls_through(m.clone(), calls())).await.unwrap();
    m.shutdown().await;
    let (floor, floor_total) =
        tokio::task::spawn_blocking(|| blocking_round_trips(Path::new("cat"), &[], calls())).await.unwrap();
    let (raw, raw_total) = tokio::task::spawn_blocking(|| {
        blocking_round_trips(&bundled("perch-mcp-demo"), &handshake(), calls())
    })
    .await
    .unwrap();
    println!("tool-call round trip, demo.add over stdio, {} sequential calls:", calls());
    report("  floor: the request echoed by cat", &floor, floor_total);
    report("  server: a raw client, line by line", &raw, raw_total);
    report("  Perch (perch-core McpManager)", &perch_times, total);

    let Some(python) = python else {
        println!("  Python mcp SDK: skipped (set PERCH_BENCH_PYTHON)");
        return;
    };
    let out = Command::new(python)
        .args(["-c", PYTHON_CLIENT, bundled("perch-mcp-demo").to_str().unwrap(), &calls().to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let python_times: Vec<f64> =
        v["seconds"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    report("  Python mcp SDK (ClientSession)", &python_times, v["total"].as_f64().unwrap());
    // What each client adds to the server's own round trip (the raw client's), which both
    // pay: the ratio of whole round trips mixes the clients with the server they share.
    let (ours, theirs) = ((p50(&perch_times) - p50(&raw)) * 1e6, (p50(&python_times) - p50(&raw)) * 1e6);
    println!(
        "  p50 ratio Python / Perch {:.2}x; above the raw client: Perch {ours:.1} us, Python {theirs:.1} us ({:.1}x)",
        p50(&python_times) / p50(&perch_times),
        theirs / ours.max(1.0),
    );
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
