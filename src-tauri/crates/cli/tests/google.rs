//! `perch google connect|status|disconnect` against the loopback fake of Google
//! (`tests/fake-google`): with `--no-browser` Google's address alone goes to stdout, a person
//! opens it (here an HTTP client that consents and follows it back to the loopback), the
//! connection lasts for later commands, `doctor` shows it, a running app is told to pick it up,
//! and disconnecting revokes it at Google.
#![allow(clippy::unwrap_used)]
#![cfg(unix)]

mod common;

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use perch_core::review::ReviewService;
use perch_core::review::server::{self, ServerConfig};
use perch_core::socket_requests::{AppControl, SocketHandler};
use perch_core::store::{Integrity, Store};
use perch_fake_google::{DESKTOP_CLIENT_ID, DESKTOP_CLIENT_SECRET, FakeGoogle, USER_EMAIL, WEB_CLIENT_ID};
use serde_json::Value;
use tokio::io::AsyncBufReadExt;

fn perch(data: &Path, socket: &Path, base: &str, args: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_perch"));
    cmd.args(args)
        .env("PERCH_DATA_DIR", data)
        .env("PERCH_KEY_STORE", "file")
        .env("PERCH_GOOGLE_BASE", base)
        .env("PERCH_IPC_PATH", socket)
        .env("BROWSER", "/bin/false")
        .env_remove("PERCH_GOOGLE_CLIENT_SECRET")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

async fn run(data: &Path, socket: &Path, base: &str, args: &[&str]) -> (bool, String, String) {
    let out = perch(data, socket, base, args).output().await.unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

#[tokio::test(flavor = "multi_thread")]
async fn connect_prints_googles_address_without_a_browser_and_the_connection_lasts_until_disconnect() {
    let google = FakeGoogle::start().await.unwrap();
    let base = google.base_url();
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    // A running app's socket, counting the times it is told a connection changed.
    let (store, _) = Store::open(&tmp.path().join("app.db"), Integrity::Quick).await.unwrap();
    let told = Arc::new(AtomicUsize::new(0));
    let counter = told.clone();
    let handler = SocketHandler {
        reviews: Arc::new(ReviewService::new(store)),
        control: Arc::new(AppControl::default()),
        connections_changed: Arc::new(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            Box::pin(async {})
        }),
    };
    let socket = tmp.path().join("s/review.sock");
    let _app = server::start(ServerConfig::new(socket.clone()), Arc::new(handler)).await.unwrap();

    // A Web client's file is refused with what to make instead, before any page opens.
    let web = tmp.path().join("web.json");
    std::fs::write(&web, format!(r#"{{"web":{{"client_id":"{WEB_CLIENT_ID}","client_secret":"x"}}}}"#))
        .unwrap();
    let (ok, _, said) = run(
        &data,
        &socket,
        &base,
        &["google", "connect", "--allow", "mail-read", "--client-file", web.to_str().unwrap()],
    )
    .await;
    assert!(!ok && said.contains("Desktop app"), "{said}");
    assert!(google.authorization_requests().is_empty());

    // Connect: the address alone on stdout, then it waits for the browser.
    let file = tmp.path().join("client_secret.json");
    std::fs::write(
        &file,
        format!(r#"{{"installed":{{"client_id":"{DESKTOP_CLIENT_ID}","client_secret":"{DESKTOP_CLIENT_SECRET}"}}}}"#),
    )
    .unwrap();
    let args = [
        "google",
        "connect",
        "--allow",
        "mail-read,calendar-read",
        "--client-file",
        file.to_str().unwrap(),
        "--no-browser",
    ];
    let mut connect = perch(&data, &socket, &base, &args).spawn().unwrap();
    let mut lines = tokio::io::BufReader::new(connect.stdout.take().unwrap()).lines();
    let page = lines.next_line().await.unwrap().unwrap();
    assert!(page.contains("/o/oauth2/v2/auth?") && page.contains("code_challenge_method=S256"), "{page}");
    assert!(!page.contains(DESKTOP_CLIENT_SECRET));
    common::consent_in_browser(&page).await;
    let done = connect.wait_with_output().await.unwrap();
    let said = String::from_utf8_lossy(&done.stderr);
    assert!(done.status.success(), "{said}");
    assert!(said.contains(&format!("connected as {USER_EMAIL}")), "{said}");
    assert!(said.contains("the running app now uses the changed connection"), "{said}");
    assert_eq!(told.load(Ordering::SeqCst), 1);

    // Later commands see it; nothing secret is printed.
    let (_, status, _) = run(&data, &socket, &base, &["google", "status", "--json"]).await;
    let status: Value = serde_json::from_str(&status).unwrap();
    assert_eq!(status["connected"], true);
    assert_eq!(status["account"], USER_EMAIL);
    let granted: Vec<&str> = status["services"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["granted"] == true)
        .map(|s| s["service"].as_str().unwrap())
        .collect();
    assert_eq!(granted, ["mail_read", "calendar_read"]);
    let (_, doctor, _) = run(&data, &socket, &base, &["doctor"]).await;
    assert!(doctor.contains(&format!("connected as {USER_EMAIL} (Read mail, See calendar)")), "{doctor}");
    for text in [status.to_string(), doctor] {
        assert!(!text.contains(DESKTOP_CLIENT_SECRET));
    }

    let (ok, _, said) = run(&data, &socket, &base, &["google", "disconnect"]).await;
    assert!(ok && said.contains("Google revoked Perch's access"), "{said}");
    assert_eq!(google.revocations().len(), 1);
    assert_eq!(told.load(Ordering::SeqCst), 2);
    let (_, status, _) = run(&data, &socket, &base, &["google", "status"]).await;
    assert!(status.contains("not connected"), "{status}");
}
