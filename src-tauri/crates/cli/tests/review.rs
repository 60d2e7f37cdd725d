#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! `perch review` against a real review socket served by the engine.
#![cfg(unix)]

use std::path::Path;
use std::process::Output;
use std::sync::Arc;

use perch_core::review::ReviewService;
use perch_core::review::server::{self, ServerConfig};
use perch_core::store::{Integrity, Store};

async fn perch(tmp: &Path, socket: &Path, args: &[&str]) -> Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_perch"))
        .args(args)
        .current_dir(tmp)
        .env("PERCH_IPC_PATH", socket)
        .env("PERCH_DATA_DIR", tmp.join("data"))
        .env("XDG_RUNTIME_DIR", tmp.join("no-runtime"))
        .output()
        .await
        .unwrap()
}

#[tokio::test]
async fn push_and_selection_reach_the_running_app() {
    let tmp = tempfile::tempdir().unwrap();
    let (store, _) = Store::open(&tmp.path().join("perch.db"), Integrity::Quick).await.unwrap();
    let service = Arc::new(ReviewService::new(store));
    let socket = tmp.path().join("s/review.sock");
    let _server = server::start(ServerConfig::new(socket.clone()), service.clone()).await.unwrap();
    std::fs::create_dir_all(tmp.path().join("src")).unwrap();
    std::fs::write(tmp.path().join("src/lib.rs"), "pub fn f() {}\n").unwrap();
    std::fs::write(
        tmp.path().join("review.md"),
        "# Review\n\n## Summary\n\nok [`src/lib.rs:1`][] [`src/nope.rs:2`][]\n",
    )
    .unwrap();

    let out = perch(tmp.path(), &socket, &["review", "push", "review.md"]).await;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("(2 references)"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("broken reference \"src/nope.rs:2\""));
    let doc = service.latest().await.unwrap().unwrap();
    assert_eq!(
        doc.base_uri,
        tmp.path().canonicalize().unwrap().to_str().unwrap(),
        "the base defaults to the current folder"
    );

    std::fs::write(tmp.path().join("summary.md"), "all good").unwrap();
    let out = perch(
        tmp.path(),
        &socket,
        &["review", "push", "summary.md", "--mode", "update-section", "--section", "Summary"],
    )
    .await;
    assert!(out.status.success());
    assert_eq!(service.latest().await.unwrap().unwrap().content, "# Review\n\n## Summary\nall good");

    let out = perch(tmp.path(), &socket, &["review", "push", "summary.md", "--mode", "sideways"]).await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown mode \"sideways\""));

    service.set_selection(Some("pub fn f()".into()));
    let out = perch(tmp.path(), &socket, &["review", "selection"]).await;
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "pub fn f()");
}

#[tokio::test]
async fn without_perch_running_it_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("r.md"), "# x").unwrap();
    let out = perch(tmp.path(), &tmp.path().join("nothing.sock"), &["review", "push", "r.md"]).await;
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("Perch is not running, or its review socket is turned off"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
