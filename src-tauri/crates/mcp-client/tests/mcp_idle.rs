#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! Servers that stop when idle (`stopWhenIdle`), as the bundled ones do: stopped after a quiet
//! spell with their tools still offered, started again by a call, never stopped under a call,
//! and at the next launch left idle until used. Real servers: the bundled demo and
//! `@modelcontextprotocol/server-everything` from npm.
#![cfg(unix)]

use perch_test_support::poll;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use perch_mcp_client::{McpManager, ServerStatus, ServerView};
use perch_tools::questions::Questions;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(30);

/// A manager whose user file holds `servers`; the other bundled servers are off.
fn manager(dir: &Path, servers: Value) -> Arc<McpManager> {
    let mut all = json!({ "filesystem": { "enabled": false }, "google": { "enabled": false }, "web": { "enabled": false } });
    all.as_object_mut().unwrap().extend(servers.as_object().unwrap().clone());
    std::fs::write(dir.join("mcp_servers.json"), json!({ "mcpServers": all }).to_string()).unwrap();
    McpManager::new(dir, Some(dir.join("logs")), Arc::new(Questions::default()))
}

fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default().contains(") Z ")
}

async fn until(m: &McpManager, name: &str, what: &str, done: impl Fn(&ServerView) -> bool) -> ServerView {
    poll::until(what, WAIT, || {
        let view = m.server(name).unwrap();
        let reached = done(&view);
        async move { reached.then_some(view) }
    })
    .await
}

async fn add(m: &Arc<McpManager>, a: i64, b: i64) -> String {
    let args = json!({ "a": a, "b": b }).as_object().cloned();
    m.call_tool("demo", "add", args, &CancellationToken::new(), None).await.unwrap().text
}

fn offered(m: &McpManager, server: &str) -> Vec<String> {
    m.tools().into_iter().filter(|(s, _)| s == server).map(|(_, t)| t.name).collect()
}

fn npm_bin(name: &str) -> String {
    let repo: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..").canonicalize().unwrap();
    let path = repo.join("node_modules/.bin").join(name);
    assert!(path.exists(), "{} is missing: run `make deps` (npm install)", path.display());
    path.to_string_lossy().into_owned()
}

#[tokio::test]
async fn an_idle_server_stops_keeps_offering_its_tools_and_a_call_starts_it_again() {
    let tmp = tempfile::tempdir().unwrap();
    let quiet = json!({ "demo": { "stopWhenIdle": 1 } });
    let m = manager(tmp.path(), quiet.clone());
    m.start_auto();
    let first = until(&m, "demo", "the first start", |v| v.status == ServerStatus::Connected).await;
    let first_pid = first.pid.unwrap();

    let idle = until(&m, "demo", "the quiet spell to stop it", |v| v.status == ServerStatus::Idle).await;
    assert!(!alive(first_pid), "an idle server's process is gone");
    assert_eq!(idle.pid, None);
    assert_eq!(offered(&m, "demo"), ["add", "divide"], "its tools are still offered");

    assert_eq!(add(&m, 2, 3).await, "5", "a call starts it and gets the answer");
    let woken = m.server("demo").unwrap();
    assert_eq!(woken.status, ServerStatus::Connected);
    assert!(woken.pid.is_some_and(|p| p != first_pid && alive(p)));
    m.shutdown().await;

    // The next launch: idle from the lists saved last time, no process until a call.
    let m = manager(tmp.path(), quiet.clone());
    m.start_auto();
    let view = m.server("demo").unwrap();
    assert_eq!((view.status, view.pid), (ServerStatus::Idle, None), "not started at launch");
    assert_eq!(offered(&m, "demo"), ["add", "divide"]);
    assert!(view.server_info.as_deref().unwrap().starts_with("perch-demo"), "{:?}", view.server_info);
    assert_eq!(add(&m, 20, 22).await, "42");

    // Turned off while idle: its tools go with it.
    until(&m, "demo", "idle again", |v| v.status == ServerStatus::Idle).await;
    m.set_enabled("demo", false).await.unwrap();
    assert_eq!(m.server("demo").unwrap().status, ServerStatus::Stopped);
    assert!(offered(&m, "demo").is_empty(), "a server turned off offers nothing");
    m.shutdown().await;

    // Another command (here its environment): the saved lists may not hold, so it starts.
    let m = manager(tmp.path(), json!({ "demo": { "stopWhenIdle": 1, "env": { "PERCH_TEST": "1" } } }));
    m.start_auto();
    assert_ne!(m.server("demo").unwrap().status, ServerStatus::Idle);
    until(&m, "demo", "the start with the new command", |v| v.status == ServerStatus::Connected).await;
    m.shutdown().await;
}

#[tokio::test]
async fn a_server_without_stop_when_idle_keeps_running() {
    let tmp = tempfile::tempdir().unwrap();
    let m = manager(tmp.path(), json!({ "demo": { "stopWhenIdle": 0 } }));
    m.start_auto();
    let view = until(&m, "demo", "the start", |v| v.status == ServerStatus::Connected).await;
    // Longer than the shortest quiet spell; the process must still be the same one.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let later = m.server("demo").unwrap();
    assert_eq!((later.status, later.pid), (ServerStatus::Connected, view.pid));
    m.shutdown().await;
    assert!(!tmp.path().join("mcp_lists").exists(), "only idle-stopping servers' lists are saved");
}

#[tokio::test]
async fn a_long_call_is_never_cut_by_the_quiet_spell() {
    let tmp = tempfile::tempdir().unwrap();
    let m = manager(
        tmp.path(),
        json!({ "everything": { "command": npm_bin("mcp-server-everything"), "args": ["stdio"], "stopWhenIdle": 1 } }),
    );
    m.ensure_connected("everything", WAIT).await.unwrap();
    let pid = m.server("everything").unwrap().pid.unwrap();
    // Three seconds of work against a one-second quiet spell.
    let args = json!({ "duration": 3, "steps": 3 }).as_object().cloned();
    let long = m
        .call_tool("everything", "trigger-long-running-operation", args, &CancellationToken::new(), None)
        .await
        .unwrap();
    assert!(long.text.contains("completed"), "{long:?}");
    assert_eq!(m.server("everything").unwrap().pid, Some(pid), "the same process answered");
    until(&m, "everything", "the stop after the call", |v| v.status == ServerStatus::Idle).await;
    assert!(!alive(pid));
    m.shutdown().await;
}

#[tokio::test]
async fn a_server_whose_secrets_run_out_rests_before_and_starts_again_with_new_ones() {
    use perch_mcp_client::manager::{Freshness, ServerSecrets};
    use std::sync::atomic::{AtomicUsize, Ordering};
    let tmp = tempfile::tempdir().unwrap();
    // No quiet spell: only the secrets' end may stop it.
    let m = manager(tmp.path(), json!({ "demo": { "stopWhenIdle": 0 } }));
    let asked = Arc::new(AtomicUsize::new(0));
    let count = asked.clone();
    // Secrets good for five minutes and a second (the margin is five minutes): a token about to
    // run out. It rests once the grace after a start (10 s) has passed.
    m.set_secret_env(Arc::new(move |_, freshness| {
        assert_eq!(freshness, Freshness::AsStored);
        let n = count.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            ServerSecrets {
                env: vec![("PERCH_TEST_SECRET".into(), format!("token-{n}"))],
                valid_until: Some(std::time::SystemTime::now() + Duration::from_secs(301)),
            }
        })
    }));
    m.start("demo").unwrap();
    let first = until(&m, "demo", "the start", |v| v.status == ServerStatus::Connected).await;
    let rested =
        until(&m, "demo", "the rest before the secrets run out", |v| v.status == ServerStatus::Idle).await;
    assert!(!rested.tools.is_empty(), "its tools stay offered while it rests");
    assert!(!alive(first.pid.unwrap()));
    assert_eq!(add(&m, 2, 3).await, "5", "a call starts it again");
    assert_eq!(asked.load(Ordering::SeqCst), 2, "with secrets asked for again");
    m.shutdown().await;
}
