#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! How the MCP manager meets servers that are odd or failing, each a real process or socket:
//! one that answers `server/discover` with `{}`, HTTP servers that want authorization, and one
//! that keeps crashing (its errors must stay short, human and unnested across restarts).
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use perch_core::mcp::{McpManager, ServerStatus, ServerView};
use perch_core::questions::Questions;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(30);

fn manager(dir: &Path, servers: Value) -> Arc<McpManager> {
    std::fs::write(dir.join("mcp_servers.json"), json!({ "mcpServers": servers }).to_string()).unwrap();
    McpManager::new(dir, Some(dir.join("logs")), Arc::new(Questions::default()))
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/servers").join(name)
}

/// Polls until `done` holds for the server's view (or fails after 30 s).
async fn until(m: &McpManager, name: &str, done: impl Fn(&ServerView) -> bool) -> ServerView {
    for _ in 0..300 {
        let v = m.server(name).unwrap();
        if done(&v) {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{name} never got there: {:?}", m.server(name));
}

#[tokio::test]
async fn a_server_answering_discover_with_an_empty_result_falls_back_to_initialize() {
    let tmp = tempfile::tempdir().unwrap();
    let m = manager(
        tmp.path(),
        json!({ "odd": { "command": "python3", "args": [script("empty_result_server.py")] } }),
    );
    m.ensure_connected("odd", WAIT).await.unwrap();
    let view = m.server("odd").unwrap();
    assert_eq!(view.protocol_version.as_deref(), Some("2025-11-25"));
    assert_eq!(view.server_info.as_deref(), Some("empty-result-server 1.0.0"));
    let log = m.logs("odd").unwrap();
    assert!(
        log.iter().any(|l| l == "request: server/discover") && log.iter().any(|l| l == "request: initialize"),
        "it was asked the new way first, then the old: {log:?}"
    );
    let args = json!({ "text": "hello" }).as_object().cloned();
    let out = m.call_tool("odd", "shout", args, &CancellationToken::new(), None).await.unwrap();
    assert_eq!(out.text, "HELLO");
    m.shutdown().await;
}

/// A Streamable HTTP endpoint that answers every request with 401, with or without a
/// `WWW-Authenticate` challenge; returns its URL and how many requests it saw.
async fn unauthorized_server(challenge: bool) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let seen = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut buf = vec![0u8; 65536];
            let _ = socket.read(&mut buf).await;
            let header = if challenge { "WWW-Authenticate: Bearer realm=\"mcp\"\r\n" } else { "" };
            let body = r#"{"error":"unauthorized"}"#;
            let response = format!(
                "HTTP/1.1 401 Unauthorized\r\n{header}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = socket.write_all(response.as_bytes()).await;
        }
    });
    (url, seen)
}

#[tokio::test]
async fn a_server_answering_401_needs_sign_in_and_is_not_retried() {
    for challenge in [true, false] {
        let (url, seen) = unauthorized_server(challenge).await;
        let tmp = tempfile::tempdir().unwrap();
        let m = manager(tmp.path(), json!({ "private": { "type": "http", "url": url } }));
        let error = m.ensure_connected("private", WAIT).await.unwrap_err().to_string();
        assert!(error.contains("private needs you to sign in"), "challenge {challenge}: {error}");
        let view = m.server("private").unwrap();
        assert_eq!(view.status, ServerStatus::NeedsSignIn, "not a passing fault: no restarts are scheduled");
        assert_eq!(view.restarts, 0);
        let requests = seen.load(std::sync::atomic::Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(1500)).await; // past the first backoff (0.5 s)
        assert_eq!(seen.load(std::sync::atomic::Ordering::SeqCst), requests, "nothing more was tried");
        m.shutdown().await;
    }
}

#[tokio::test]
async fn a_token_header_the_server_refuses_is_the_users_to_fix_not_a_sign_in() {
    let (url, _) = unauthorized_server(true).await;
    let tmp = tempfile::tempdir().unwrap();
    let m = manager(
        tmp.path(),
        json!({ "private": { "type": "http", "url": url, "headers": { "Authorization": "Bearer wrong" } } }),
    );
    let error = m.ensure_connected("private", WAIT).await.unwrap_err().to_string();
    assert!(error.contains("refused the token in its \"Authorization\" header"), "{error}");
    assert_eq!(m.server("private").unwrap().status, ServerStatus::Error);
    m.shutdown().await;
}

#[tokio::test]
async fn a_crashing_servers_error_stays_short_and_quotes_its_stderr_once() {
    let tmp = tempfile::tempdir().unwrap();
    let crash = tmp.path().join("crash.sh");
    std::fs::write(
        &crash,
        "#!/bin/sh\necho 'starting up' >&2\necho 'fatal: MY_TOKEN is not set' >&2\nexit 3\n",
    )
    .unwrap();
    std::fs::set_permissions(&crash, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let m = manager(tmp.path(), json!({ "crash": { "command": crash } }));
    m.start("crash").unwrap();
    let view = until(&m, "crash", |v| v.restarts >= 3 && v.status != ServerStatus::Starting).await;
    let error = view.last_error.unwrap();
    assert_eq!(error.matches("fatal: MY_TOKEN is not set").count(), 1, "{error}");
    assert!(error.contains("exited") && error.len() < 400, "{error}");
    assert!(!error.contains("[perch]") && !error.contains('<') && !error.contains("::"), "{error}");
    // The log keeps the whole story, one note of Perch's per failure.
    let notes = m.logs("crash").unwrap().iter().filter(|l| l.starts_with("[perch]")).count();
    assert!(notes >= 3, "{:?}", m.logs("crash"));
    m.shutdown().await;
}

#[tokio::test]
async fn a_broken_servers_file_fixed_in_an_editor_is_read_again_without_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mcp_servers.json");
    let fixed = json!({ "mcpServers": { "fixed": { "command": script("empty_result_server.py"), "autoStart": false } } });
    // A trailing comma, as a hand edit leaves it.
    std::fs::write(&file, fixed.to_string().replace("}}}", "},}}")).unwrap();
    let m = McpManager::new(dir.path(), None, Arc::new(Questions::default()));
    assert!(!m.problems().is_empty(), "the broken file is reported");
    assert!(m.server("fixed").is_err());
    let mut events = m.subscribe();

    std::fs::write(&file, serde_json::to_string_pretty(&fixed).unwrap()).unwrap();
    for _ in 0..100 {
        if m.server("fixed").is_ok() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(m.server("fixed").is_ok(), "the fixed file was read again: {:?}", m.problems());
    assert!(m.problems().is_empty(), "{:?}", m.problems());
    assert!(events.try_recv().is_ok(), "the window heard of the change");
}

#[tokio::test]
async fn a_broken_servers_file_is_announced_at_start_not_only_in_settings() {
    use perch_core::paths::{DataDir, DataDirSource, Resolved};
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mcp_servers.json"), "{\"mcpServers\": {\"a\": {\"command\": \"x\"},}}")
        .unwrap();
    let data =
        DataDir::prepare(Resolved { path: dir.path().to_path_buf(), source: DataDirSource::Env }).unwrap();
    let engine = perch_core::Engine::start(data).await.unwrap();
    let notices = engine.startup_notices();
    let notice = notices.iter().find(|n| n.section.as_deref() == Some("MCP")).expect("a notice for the file");
    assert_eq!(notice.title, "Your MCP servers file has a problem");
    assert!(notice.detail.contains("mcp_servers.json, line 1: not valid JSON"), "{}", notice.detail);
    assert!(notice.detail.ends_with("save the fixed file and Perch reads it again."), "{}", notice.detail);
    engine.shutdown(Duration::from_secs(1)).await;
}
