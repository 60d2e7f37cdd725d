#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! The review socket over a real Unix socket: the protocol, limits, hostile clients, many
//! clients at once, and the socket's own safety (permissions, stale and live sockets).
#![cfg(unix)]

use perch_test_support::poll;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use perch_ipc::Client;
use perch_review::ReviewService;
use perch_review::server::{self, ReviewServer, ServerConfig, ServerError};
use perch_store::{Integrity, Store};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

const T: Duration = Duration::from_secs(5);

struct Fixture {
    _tmp: tempfile::TempDir,
    socket: PathBuf,
    repo: PathBuf,
    service: Arc<ReviewService>,
    server: ReviewServer,
}

async fn fixture(tune: impl FnOnce(&mut ServerConfig)) -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let (store, _) = Store::open(&tmp.path().join("perch.db"), Integrity::Quick).await.unwrap();
    let service = Arc::new(ReviewService::new(store));
    let socket = tmp.path().join("run/perch/review.sock");
    let mut config = ServerConfig::new(socket.clone());
    tune(&mut config);
    let server = server::start(config, service.clone()).await.unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(repo.join("src/auth.rs"), "fn login() {}\n").unwrap();
    Fixture { _tmp: tmp, socket, repo, service, server }
}

impl Fixture {
    async fn client(&self) -> Client {
        Client::connect(&self.socket, T).await.unwrap()
    }
    fn review(&self, content: &str, mode: &str, section: Option<&str>) -> Value {
        let mut p = json!({ "content": content, "mode": mode, "baseUri": self.repo });
        if let Some(s) = section {
            p["section"] = json!(s);
        }
        p
    }
}

/// Sends raw bytes and reads one response line (None when the server closed the connection).
async fn raw(socket: &Path, bytes: &[u8]) -> Option<Value> {
    let stream = UnixStream::connect(socket).await.unwrap();
    let (read, mut write) = stream.into_split();
    write.write_all(bytes).await.unwrap();
    let mut line = String::new();
    let n = tokio::time::timeout(T, BufReader::new(read).read_line(&mut line)).await.unwrap().unwrap_or(0);
    (n > 0).then(|| serde_json::from_str(&line).unwrap())
}

#[tokio::test]
async fn ping_present_and_selection_round_trip() {
    let f = fixture(|_| {}).await;
    let mut c = f.client().await;
    let pong = c.request("ping", Value::Null, T).await.unwrap();
    assert!(pong.success);
    assert_eq!(pong.data.unwrap()["pong"], true);

    let r = c
        .request(
            "present_review",
            f.review("# Auth\n\nSee [`src/auth.rs:1`][] and [`src/gone.rs:3`][].", "replace", None),
            T,
        )
        .await
        .unwrap();
    assert!(r.success, "{r:?}");
    let data = r.data.unwrap();
    assert_eq!(data["references"], 2);
    assert_eq!(data["broken"][0]["reference"], "src/gone.rs:3", "broken references are reported back");

    let doc = f.service.latest().await.unwrap().unwrap();
    assert!(doc.content.starts_with("# Auth"));
    assert!(doc.references[0].is_ok());

    let none = c.request("get_selection", json!({}), T).await.unwrap();
    assert_eq!(none.data.unwrap_or_default(), Value::Null, "no selection is null");
    f.service.set_selection(Some("fn login()".into()));
    let some = c.request("get_selection", json!({}), T).await.unwrap();
    assert_eq!(some.data, Some(json!("fn login()")));
}

#[tokio::test]
async fn append_and_update_section_build_on_the_latest_version() {
    let f = fixture(|_| {}).await;
    let mut c = f.client().await;
    for (content, mode, section) in [
        ("# Review\n\n## Summary\n\nfirst\n\n## Risks\n\nnone", "replace", None),
        ("## Follow-up\n\nmore", "append", None),
        ("rewritten", "update-section", Some("Summary")),
        ("found one", "update-section", Some("Security")),
    ] {
        let r = c.request("present_review", f.review(content, mode, section), T).await.unwrap();
        assert!(r.success, "{r:?}");
    }
    let doc = f.service.latest().await.unwrap().unwrap();
    assert_eq!(
        doc.content,
        "# Review\n\n## Summary\nrewritten\n\n## Risks\n\nnone\n\n## Follow-up\n\nmore\n\n## Security\n\nfound one"
    );
    assert_eq!(f.service.versions(10).await.unwrap().len(), 4, "every version is kept");
}

#[tokio::test]
async fn every_bad_request_gets_a_clear_error_and_the_server_carries_on() {
    let f = fixture(|c| c.limits.max_content_chars = 50).await;
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"this is not json\n".to_vec(), "invalid JSON"),
        (b"{\"id\": 1, \"type\": \"format_disk\"}\n".to_vec(), "unknown request type"),
        (b"{\"id\": 2, \"type\": \"present_review\", \"payload\": {\"baseUri\": \"/\"}}\n".to_vec(), "needs \"content\""),
        (b"{\"id\": 3, \"type\": \"present_review\", \"payload\": {\"content\": \"\", \"baseUri\": \"/\"}}\n".to_vec(), "empty"),
        (
            b"{\"id\": 4, \"type\": \"present_review\", \"payload\": {\"content\": \"x\", \"baseUri\": \"/\", \"mode\": \"merge\"}}\n".to_vec(),
            "unknown mode",
        ),
        (
            b"{\"id\": 5, \"type\": \"present_review\", \"payload\": {\"content\": \"x\", \"baseUri\": \"/\", \"mode\": \"update-section\"}}\n".to_vec(),
            "needs \"section\"",
        ),
        (
            format!("{{\"id\": 6, \"type\": \"present_review\", \"payload\": {{\"content\": \"{}\", \"baseUri\": \"/\"}}}}\n", "y".repeat(51)).into_bytes(),
            "the limit is 50",
        ),
    ];
    for (bytes, expected) in cases {
        let response = raw(&f.socket, &bytes).await.expect("an error response, not a dropped connection");
        assert_eq!(response["success"], false, "{response}");
        let error = response["error"].as_str().unwrap();
        assert!(error.contains(expected), "{error:?} should mention {expected:?}");
    }
    // Nothing bad was stored, and the server still answers.
    assert!(f.service.latest().await.unwrap().is_none());
    assert!(f.client().await.request("ping", Value::Null, T).await.unwrap().success);
}

#[tokio::test]
async fn an_oversized_line_is_refused_and_the_connection_closed() {
    let f = fixture(|c| c.limits.max_line_bytes = 4096).await;
    let stream = UnixStream::connect(&f.socket).await.unwrap();
    let (read, mut write) = stream.into_split();
    // No newline: the server must stop reading at the limit rather than buffer forever.
    let _ = write.write_all(&vec![b'a'; 64 * 1024]).await;
    let mut reader = BufReader::new(read);
    let mut line = String::new();
    tokio::time::timeout(T, reader.read_line(&mut line)).await.unwrap().unwrap();
    let response: Value = serde_json::from_str(&line).unwrap();
    assert!(response["error"].as_str().unwrap().contains("longer than 4096 bytes"));
    line.clear();
    let n = tokio::time::timeout(T, reader.read_line(&mut line)).await.unwrap().unwrap_or(0);
    assert_eq!(n, 0, "the connection is closed");
    assert!(f.client().await.request("ping", Value::Null, T).await.unwrap().success);
}

#[tokio::test]
async fn a_silent_client_is_dropped_without_holding_up_others() {
    let f = fixture(|c| c.idle_timeout = Duration::from_millis(300)).await;
    let mut silent = UnixStream::connect(&f.socket).await.unwrap();
    let mut slow = UnixStream::connect(&f.socket).await.unwrap();
    slow.write_all(b"{\"id\": 1, \"ty").await.unwrap(); // half a request, then nothing

    // Others are served meanwhile.
    for _ in 0..5 {
        assert!(f.client().await.request("ping", Value::Null, T).await.unwrap().success);
    }
    for stream in [&mut silent, &mut slow] {
        let mut buf = [0u8; 16];
        let n = tokio::time::timeout(Duration::from_secs(3), tokio::io::AsyncReadExt::read(stream, &mut buf))
            .await
            .expect("closed by the server, not left hanging")
            .unwrap_or(0);
        assert_eq!(n, 0);
    }
}

#[tokio::test]
async fn many_clients_at_once_are_all_answered_in_order() {
    let f = Arc::new(fixture(|_| {}).await);
    let mut tasks = Vec::new();
    for client_no in 0..20 {
        let f = f.clone();
        tasks.push(tokio::spawn(async move {
            let mut c = f.client().await;
            for i in 0..10 {
                let line = format!("- client {client_no} push {i}");
                let r = c.request("present_review", f.review(&line, "append", None), T).await.unwrap();
                assert!(r.success, "{r:?}");
                assert!(c.request("ping", Value::Null, T).await.unwrap().success);
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let doc = f.service.latest().await.unwrap().unwrap();
    for client_no in 0..20 {
        let positions: Vec<usize> = (0..10)
            .map(|i| {
                doc.content
                    .find(&format!("- client {client_no} push {i}\n"))
                    .or_else(|| doc.content.find(&format!("- client {client_no} push {i}")))
                    .unwrap()
            })
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "each client's pushes stay in order");
    }
    assert_eq!(f.service.versions(1000).await.unwrap().len(), 200);
}

#[tokio::test]
async fn the_socket_is_private_and_removed_on_stop() {
    let f = fixture(|_| {}).await;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(f.socket.parent().unwrap()), 0o700);
    assert_eq!(mode(&f.socket), 0o600);
    let Fixture { server, socket, _tmp, .. } = f;
    server.stop().await;
    assert!(!socket.exists(), "the socket file is removed");
    let err = Client::connect(&socket, T).await.err().unwrap();
    assert!(err.to_string().contains("Perch is not running"), "{err}");
}

#[tokio::test]
async fn a_stale_socket_is_replaced_but_a_live_one_is_not_taken() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, _) = Store::open(&tmp.path().join("perch.db"), Integrity::Quick).await.unwrap();
    let service = Arc::new(ReviewService::new(store));
    let socket = tmp.path().join("sock/review.sock");
    std::fs::create_dir_all(socket.parent().unwrap()).unwrap();
    // A crash leaves the socket file behind with nobody listening.
    drop(std::os::unix::net::UnixListener::bind(&socket).unwrap());
    assert!(socket.exists());

    let first = server::start(ServerConfig::new(socket.clone()), service.clone()).await.unwrap();
    assert!(
        Client::connect(&socket, T).await.unwrap().request("ping", Value::Null, T).await.unwrap().success
    );

    let second = server::start(ServerConfig::new(socket.clone()), service.clone()).await;
    assert!(matches!(second, Err(ServerError::AlreadyServing(_))), "{second:?}");
    // The first one still serves.
    assert!(
        Client::connect(&socket, T).await.unwrap().request("ping", Value::Null, T).await.unwrap().success
    );
    // Stopping and starting again at once works: the old server's cleanup cannot remove the
    // new server's socket.
    first.stop().await;
    let again = server::start(ServerConfig::new(socket.clone()), service.clone()).await.unwrap();
    poll::until("the new server to answer", Duration::from_secs(10), || async {
        let mut client = Client::connect(&socket, T).await.ok()?;
        client.request("ping", Value::Null, T).await.ok().filter(|r| r.success)
    })
    .await;
    drop(again);
    assert!(!socket.exists());
}

#[tokio::test]
async fn connections_beyond_the_limit_are_told_so() {
    let f = fixture(|c| c.max_connections = 2).await;
    let _a = UnixStream::connect(&f.socket).await.unwrap();
    let _b = UnixStream::connect(&f.socket).await.unwrap();
    // Until the server has accepted both, a third may still be answered; then it must be refused.
    let refusal =
        poll::until("a connection past the limit to be refused", Duration::from_secs(10), || async {
            let response = raw(&f.socket, b"{\"id\": 1, \"type\": \"ping\"}\n").await?;
            response["error"].as_str().map(str::to_owned)
        })
        .await;
    assert!(refusal.contains("too many connections"), "{refusal}");
}
