//! `perch mcp login|logout` against a real authorization server (the official TypeScript SDK's,
//! `tests/oauth-mcp/server.mjs`): with `--no-browser` the address alone goes to stdout, a person
//! opens it (here an HTTP client that follows it back to the loopback), and the sign-in is kept
//! for the next command; `list` and `doctor` show it; logout revokes it at the server.
#![allow(clippy::unwrap_used)]

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use common::{out, perch};
use serde_json::{Value, json};

/// The fixture, killed when dropped.
struct AuthServer {
    child: std::process::Child,
    mcp: String,
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_auth_server() -> AuthServer {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    let mut child = Command::new("node")
        .arg(root.join("tests/oauth-mcp/server.mjs"))
        .current_dir(&root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("node runs the OAuth fixture");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let first: Value = serde_json::from_str(&line).unwrap();
    AuthServer { child, mcp: first["mcp"].as_str().unwrap().to_owned() }
}

/// What a person's browser does with the address (see `common::consent_in_browser`).
fn approve_in_browser(page: &str) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(common::consent_in_browser(page));
}

#[test]
fn login_prints_the_address_without_a_browser_and_the_sign_in_lasts_until_logout() {
    let server = start_auth_server();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(
        data.path().join("mcp_servers.json"),
        json!({ "mcpServers": { "notes": { "type": "http", "url": server.mcp } } }).to_string(),
    )
    .unwrap();

    let before = perch(data.path(), &[], &["mcp", "tools", "notes"]);
    assert!(!before.status.success());
    assert!(String::from_utf8_lossy(&before.stderr).contains("perch mcp login notes"));

    // `login --no-browser`: the address alone on stdout, then it waits for the browser.
    let mut login = Command::new(env!("CARGO_BIN_EXE_perch"))
        .args(["mcp", "login", "notes", "--no-browser"])
        .env("PERCH_DATA_DIR", data.path())
        .env("PERCH_KEY_STORE", "file")
        .env("BROWSER", "/bin/false")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut page = String::new();
    BufReader::new(login.stdout.take().unwrap()).read_line(&mut page).unwrap();
    let page = page.trim();
    assert!(page.contains("/authorize?") && page.contains("code_challenge_method=S256"), "{page}");
    approve_in_browser(page);
    let login = login.wait_with_output().unwrap();
    let said = String::from_utf8_lossy(&login.stderr);
    assert!(login.status.success(), "{said}");
    assert!(said.contains("signed in with"), "{said}");

    // A later command uses the stored sign-in.
    let tools = perch(data.path(), &[], &["mcp", "tools", "notes"]);
    assert!(tools.status.success(), "{}", String::from_utf8_lossy(&tools.stderr));
    assert!(out(&tools).contains("whoami"));
    let listed = out(&perch(data.path(), &[], &["mcp", "list"]));
    assert!(listed.contains("signed in with"), "{listed}");
    let doctor = out(&perch(data.path(), &[], &["doctor"]));
    assert!(doctor.contains("MCP sign-ins:") && doctor.contains("signed in with"), "{doctor}");

    let logout = perch(data.path(), &[], &["mcp", "logout", "notes"]);
    assert!(String::from_utf8_lossy(&logout.stderr).contains("the server revoked the sign-in"));
    let after = perch(data.path(), &[], &["mcp", "tools", "notes"]);
    assert!(!after.status.success(), "signed out: the server asks again");
}
