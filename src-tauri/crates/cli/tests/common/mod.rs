//! What every `perch` command-line test does: run the built binary on a data folder of its own,
//! with the file key store and no model service or key from the developer's environment.
#![allow(dead_code)] // each test binary uses its own part of this
#![allow(clippy::unwrap_used)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Runs `perch ARGS` with `env` on top, its stdin closed.
pub fn perch(data: &Path, env: &[(&str, String)], args: &[&str]) -> Output {
    perch_with_input(data, env, args, None)
}

/// Runs `perch ARGS` with `env` on top, writing `stdin` (if any) before closing it.
pub fn perch_with_input(data: &Path, env: &[(&str, String)], args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_perch"));
    cmd.args(args)
        .env("PERCH_DATA_DIR", data)
        .env("PERCH_KEY_STORE", "file")
        .env_remove("OLLAMA_HOST")
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    if let Some(input) = stdin {
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    }
    drop(child.stdin.take());
    child.wait_with_output().unwrap()
}

pub fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// What a person's browser does with a sign-in address: the authorization server consents at
/// once and sends it back to Perch's loopback, whose page says the tab can be closed.
pub async fn consent_in_browser(page: &str) {
    let client = perch_core::providers::http::client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let answer = client.get(page).send().await.unwrap();
    let back = answer.headers()["location"].to_str().unwrap().to_owned();
    let landed = client.get(&back).send().await.unwrap().text().await.unwrap();
    assert!(landed.contains("You can close this tab"), "{landed}");
}
