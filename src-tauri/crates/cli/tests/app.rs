#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! `perch screenshot | show | toggle` against a real socket served by the engine's handler,
//! with a stand-in for the window answering the app requests.
#![cfg(unix)]

use std::path::Path;
use std::process::Output;
use std::sync::{Arc, Mutex};

use perch_core::review::ReviewService;
use perch_core::review::server::{self, ServerConfig};
use perch_core::socket_requests::{AppControl, SocketHandler};
use perch_core::store::{Integrity, Store};
use perch_ipc::AppCommand;
use serde_json::json;

async fn perch(tmp: &Path, socket: &Path, args: &[&str]) -> Output {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_perch"))
        .args(args)
        .env("PERCH_IPC_PATH", socket)
        .env("PERCH_DATA_DIR", tmp.join("data"))
        .env("XDG_RUNTIME_DIR", tmp.join("no-runtime"))
        .output()
        .await
        .unwrap()
}

/// The engine's socket handler served at `config.path`, app requests going to the returned
/// control (attach a stand-in window to answer them).
async fn serve(tmp: &Path, config: ServerConfig) -> (Arc<AppControl>, server::ReviewServer) {
    let (store, _) = Store::open(&tmp.join("perch.db"), Integrity::Quick).await.unwrap();
    let control = Arc::new(AppControl::default());
    let handler = SocketHandler {
        reviews: Arc::new(ReviewService::new(store)),
        control: control.clone(),
        connections_changed: Arc::new(|| Box::pin(async {})),
    };
    (control, server::start(config, Arc::new(handler)).await.unwrap())
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test]
async fn app_requests_reach_the_window_and_bad_ones_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let socket = tmp.path().join("s/review.sock");
    let (control, _server) = serve(tmp.path(), ServerConfig::new(socket.clone())).await;

    // Before a window attaches (the engine under the CLI), app requests are refused.
    let out = perch(tmp.path(), &socket, &["show"]).await;
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("no window"), "{}", text(&out.stderr));

    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut window = control.attach();
    let log = seen.clone();
    tokio::spawn(async move {
        while let Some(request) = window.recv().await {
            log.lock().unwrap().push(request.command);
            let answer = match request.command {
                AppCommand::Screenshot { .. } => {
                    json!({ "message": "Captured Monitor screen (1280 x 800)." })
                }
                _ => json!({ "message": "shown" }),
            };
            let _ = request.reply.send(Ok(answer));
        }
    });

    let out = perch(tmp.path(), &socket, &["screenshot", "--mode", "precision"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "Captured Monitor screen (1280 x 800).");
    let out = perch(tmp.path(), &socket, &["screenshot", "--json"]).await;
    assert!(text(&out.stdout).contains("\"message\""));
    assert!(perch(tmp.path(), &socket, &["show"]).await.status.success());
    assert!(perch(tmp.path(), &socket, &["toggle"]).await.status.success());
    assert!(perch(tmp.path(), &socket, &["selection"]).await.status.success());
    assert!(perch(tmp.path(), &socket, &["dictate", "--toggle"]).await.status.success());

    // A mode that does not exist never leaves the terminal.
    let out = perch(tmp.path(), &socket, &["screenshot", "--mode", "region"]).await;
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("unknown screenshot mode \"region\""), "{}", text(&out.stderr));

    use perch_ipc::ScreenshotMode::Precision;
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            AppCommand::Screenshot { mode: Some(Precision) },
            AppCommand::Screenshot { mode: None },
            AppCommand::Show,
            AppCommand::Toggle,
            AppCommand::ActOnSelection,
            AppCommand::DictateToggle
        ]
    );
}

#[tokio::test]
async fn without_perch_running_it_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let out = perch(tmp.path(), &tmp.path().join("nothing.sock"), &["screenshot"]).await;
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("Perch is not running"), "{}", text(&out.stderr));
}

#[tokio::test]
async fn updates_are_asked_of_the_running_app() {
    let tmp = tempfile::tempdir().unwrap();
    let out = perch(tmp.path(), &tmp.path().join("nothing.sock"), &["update", "check"]).await;
    assert!(!out.status.success());
    let said = text(&out.stderr);
    assert!(
        said.contains("Perch is not running") && said.contains("start Perch, then run this again"),
        "{said}"
    );

    // An update check outlasts the socket's usual answer limit (200 ms here, 5 s in the app).
    let socket = tmp.path().join("s/review.sock");
    let mut config = ServerConfig::new(socket.clone());
    config.request_timeout = std::time::Duration::from_millis(200);
    let (control, _server) = serve(tmp.path(), config).await;
    let mut window = control.attach();
    tokio::spawn(async move {
        while let Some(request) = window.recv().await {
            tokio::time::sleep(std::time::Duration::from_millis(600)).await;
            let answer = match request.command {
                AppCommand::UpdateCheck => json!({ "message": "Perch 9.9.9 is available (this is 0.1.0)." }),
                AppCommand::UpdateApply => {
                    json!({ "message": "Perch 9.9.9 is installed. Restart Perch to use it." })
                }
                other => json!({ "message": format!("unexpected {other:?}") }),
            };
            let _ = request.reply.send(Ok(answer));
        }
    });
    let out = perch(tmp.path(), &socket, &["update", "check"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "Perch 9.9.9 is available (this is 0.1.0).");
    let out = perch(tmp.path(), &socket, &["update", "apply", "--json"]).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("\"Perch 9.9.9 is installed. Restart Perch to use it.\""));
}
