//! The program the end-to-end tests start: its one line of output and its HTTP controls.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use common::*;
use serde_json::{Value, json};

/// Kills the fake when the test ends, pass or fail.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn control(base: &str, path: &str, body: &Value) -> Value {
    let response = client().post(format!("{base}{path}")).json(body).send().await.expect("send");
    assert_eq!(response.status().as_u16(), 200, "{path}");
    response.json().await.expect("json")
}

#[tokio::test]
async fn the_program_prints_its_url_and_offers_controls() {
    let mut child = Child(
        Command::new(env!("CARGO_BIN_EXE_perch-fake-google")).stdout(Stdio::piped()).spawn().expect("spawn"),
    );
    let stdout = child.0.stdout.take().expect("stdout");
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).expect("a line");
    let base = line.trim().to_owned();
    assert!(base.starts_with("http://127.0.0.1:") && !base.ends_with('/'), "{base}");

    let minted = control(&base, "/test/mint", &json!({ "scopes": [GMAIL_SEND] })).await;
    let token = minted["access_token"].as_str().expect("token").to_owned();
    control(
        &base,
        "/test/fail",
        &json!({ "path": "/gmail/v1/users/me/messages", "count": 1, "kind": "rateLimited", "retryAfter": 2 }),
    )
    .await;
    let send = |raw: &str| {
        client()
            .post(format!("{base}/gmail/v1/users/me/messages/send"))
            .bearer_auth(&token)
            .json(&json!({ "raw": b64url(raw) }))
            .send()
    };
    let limited = send("To: ana@example.org\r\nSubject: hi\r\n\r\nhello\r\n").await.expect("send");
    assert_eq!(limited.status().as_u16(), 429);
    assert_eq!(limited.headers().get("retry-after").and_then(|h| h.to_str().ok()), Some("2"));
    assert_eq!(
        send("To: ana@example.org\r\nSubject: hi\r\n\r\nhello\r\n").await.expect("send").status().as_u16(),
        200
    );

    control(&base, "/test/consent", &json!({ "mode": "deny" })).await;
    control(&base, "/test/expire-access", &json!({})).await;
    assert_eq!(send("To: ana@example.org\r\n\r\nagain\r\n").await.expect("send").status().as_u16(), 401);
    control(&base, "/test/revoke-all", &json!({})).await;

    let state: Value =
        client().get(format!("{base}/test/state")).send().await.expect("send").json().await.expect("json");
    assert_eq!(state["sent"].as_array().map(Vec::len), Some(1));
    assert_eq!(state["sent"][0]["raw"], "To: ana@example.org\r\nSubject: hi\r\n\r\nhello\r\n");
    assert!(state["events"].as_array().is_some_and(|e| !e.is_empty()));
    for key in ["drafts", "authorization_requests", "token_requests", "revocations"] {
        assert!(state[key].is_array(), "{key}");
    }
}
