//! Review socket figures: request round trip (p50/p99) with 1 and 10 concurrent clients, and
//! pushes per second. A real Unix socket and a real SQLite file; the clients are perch-ipc's.
//! Run: `cargo bench -p perch-core --bench review_socket`.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use perch_core::review::ReviewService;
use perch_core::review::server::{self, ServerConfig};
use perch_core::store::{Integrity, Store};
use perch_ipc::Client;
use serde_json::{Value, json};

const T: Duration = Duration::from_secs(10);

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

async fn round_trips(
    socket: &std::path::Path,
    clients: usize,
    per_client: usize,
    kind: &str,
    payload: Value,
) -> (Vec<Duration>, Duration) {
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..clients {
        let (socket, payload, kind) = (socket.to_path_buf(), payload.clone(), kind.to_owned());
        tasks.push(tokio::spawn(async move {
            let mut client = Client::connect(&socket, T).await.unwrap();
            let mut times = Vec::with_capacity(per_client);
            for _ in 0..per_client {
                let t = Instant::now();
                let r = client.request(&kind, payload.clone(), T).await.unwrap();
                assert!(r.success, "{r:?}");
                times.push(t.elapsed());
            }
            times
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all.sort();
    (all, started.elapsed())
}

mod common;

#[tokio::main]
async fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, _) = Store::open(&tmp.path().join("perch.db"), Integrity::Quick).await.unwrap();
    let service = Arc::new(ReviewService::new(store));
    let socket = tmp.path().join("review.sock");
    let _server = server::start(ServerConfig::new(socket.clone()), service).await.unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(repo.join("src/lib.rs"), "").unwrap();
    let review = json!({
        "content": format!("# Review\n\n{}", "A finding in [`src/lib.rs:1`][] with some words around it.\n".repeat(30)),
        "mode": "replace",
        "baseUri": repo,
    });

    println!("review socket ({} cores)", std::thread::available_parallelism().map_or(1, |n| n.get()));
    println!("{:<42}{:>10}{:>10}{:>12}", "", "p50", "p99", "per second");
    for (label, kind, payload, per_client) in [
        ("ping", "ping", Value::Null, common::scaled(4000, 100)),
        ("present_review (2 KB, stored)", "present_review", review, common::scaled(400, 20)),
    ] {
        let _ = round_trips(&socket, 1, 50, kind, payload.clone()).await; // warm up
        for clients in [1, 10] {
            let n = per_client / clients;
            let (times, wall) = round_trips(&socket, clients, n, kind, payload.clone()).await;
            println!(
                "{:<42}{:>10}{:>10}{:>12.0}",
                format!("{label}, {clients} client{}", if clients == 1 { "" } else { "s" }),
                format!("{:.0?}", percentile(&times, 0.5)),
                format!("{:.0?}", percentile(&times, 0.99)),
                times.len() as f64 / wall.as_secs_f64(),
            );
        }
    }
}
