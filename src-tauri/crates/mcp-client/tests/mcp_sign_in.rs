//! Signing in to MCP servers that need it, against a real authorization server: the official
//! TypeScript SDK's (`tests/oauth-mcp/server.mjs`), which enforces PKCE, `state`, `resource`,
//! `iss`, exact redirect URIs, client authentication and rotating refresh tokens. The browser
//! step is what a browser does: follow the authorization page's redirect to Perch's loopback.

#![allow(clippy::unwrap_used)]

use perch_test_support::logs;
use perch_test_support::poll;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use perch_foundation::keys::Keys;
use perch_mcp_client::manager::SignInFailure;
use perch_mcp_client::sign_in::{OpenUrl, SignInError};
use perch_mcp_client::{CallError, McpManager, ServerStatus, ServerView};
use perch_oauth::loopback::CallbackError;
use perch_tools::questions::Questions;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(30);

/// The fixture server, stopped when dropped (it also exits when its stdin closes).
struct AuthServer {
    _child: tokio::process::Child,
    mcp: String,
    issuer: String,
    base: String,
}

impl AuthServer {
    async fn start(args: &[&str]) -> Self {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
        let mut child = tokio::process::Command::new("node")
            .arg(root.join("tests/oauth-mcp/server.mjs"))
            .args(args)
            .current_dir(&root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("node runs the OAuth fixture");
        let stdout = child.stdout.take().unwrap();
        let line = tokio::io::BufReader::new(stdout).lines().next_line().await.unwrap().expect("its address");
        let first: Value = serde_json::from_str(&line).unwrap();
        let mcp = first["mcp"].as_str().unwrap().to_owned();
        let base = mcp.trim_end_matches("/mcp").to_owned();
        Self { _child: child, issuer: first["issuer"].as_str().unwrap().to_owned(), mcp, base }
    }

    async fn state(&self) -> Value {
        reqwest::get(format!("{}/test/state", self.base)).await.unwrap().json().await.unwrap()
    }

    async fn post(&self, path: &str, body: Value) {
        let client = reqwest::Client::new();
        let r = client.post(format!("{}{path}", self.base)).json(&body).send().await.unwrap();
        assert!(r.status().is_success(), "{path}: {}", r.status());
    }

    /// Every token value the server ever issued.
    async fn tokens(&self) -> Vec<String> {
        let state = self.state().await;
        let mut all = Vec::new();
        for kind in ["access", "refresh"] {
            for t in state["tokens"][kind].as_array().unwrap() {
                all.push(t["token"].as_str().unwrap().to_owned());
            }
        }
        for t in state["revoked"].as_array().unwrap() {
            if let Some(token) = t["token"].as_str() {
                all.push(token.to_owned());
            }
        }
        all
    }
}

/// A browser that approves: it loads the authorization page and follows where it sends the user
/// (to Perch's loopback), reporting each page it opened.
fn browser(opened: Arc<Mutex<Vec<String>>>) -> OpenUrl {
    Box::new(move |page: &str| {
        opened.lock().unwrap().push(page.to_owned());
        let page = page.to_owned();
        tokio::spawn(async move {
            let client =
                reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
            let answer = client.get(&page).send().await.unwrap();
            let back =
                answer.headers().get("location").expect("the server sends the user back").to_str().unwrap();
            let landed = client.get(back).send().await.unwrap();
            assert!(landed.status().is_success() || landed.status().as_u16() == 200, "{}", landed.status());
        });
    })
}

fn manager(dir: &Path, servers: Value) -> Arc<McpManager> {
    logs::capture();
    std::fs::write(dir.join("mcp_servers.json"), json!({ "mcpServers": servers }).to_string()).unwrap();
    let m = McpManager::new(dir, Some(dir.join("logs")), Arc::new(Questions::default()));
    m.set_keys(Arc::new(Keys::in_file(dir)));
    m
}

/// `name`'s view once `done` holds for it.
async fn until(m: &McpManager, name: &str, done: impl Fn(&ServerView) -> bool) -> ServerView {
    poll::until(name, WAIT, || {
        let view = m.server(name).unwrap();
        std::future::ready(done(&view).then_some(view))
    })
    .await
}

/// A manager over `servers` whose `notes` server was met (it asked for a sign-in), signed in to
/// and connected.
async fn signed_in(dir: &Path, servers: Value) -> Arc<McpManager> {
    let m = manager(dir, servers);
    let _ = m.ensure_connected("notes", WAIT).await;
    m.sign_in("notes", None, None, browser(Default::default())).await.unwrap();
    until(&m, "notes", |v| v.status == ServerStatus::Connected).await;
    m
}

async fn whoami(m: &Arc<McpManager>, server: &str) -> String {
    let out = m.call_tool(server, "whoami", None, &CancellationToken::new(), None).await.unwrap();
    out.text
}

/// Every file under `dir`, as text.
fn all_text(dir: &Path) -> String {
    let mut text = String::new();
    let mut stack: Vec<PathBuf> = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            stack.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        } else {
            text.push_str(&String::from_utf8_lossy(&std::fs::read(&p).unwrap()));
        }
    }
    text
}

#[tokio::test]
async fn a_server_that_needs_sign_in_waits_for_it_then_works_and_stays_signed_in() {
    let server = AuthServer::start(&[]).await;
    let tmp = tempfile::tempdir().unwrap();
    let m = manager(tmp.path(), json!({ "notes": { "type": "http", "url": server.mcp } }));

    let err = m.ensure_connected("notes", WAIT).await.unwrap_err();
    assert_eq!(err, CallError::NeedsSignIn { server: "notes".into(), scope: None });
    let view = m.server("notes").unwrap();
    assert_eq!(view.status, ServerStatus::NeedsSignIn);
    assert!(view.last_error.unwrap().contains("perch mcp login notes"));

    let opened = Arc::new(Mutex::new(Vec::new()));
    let signed = m.sign_in("notes", None, None, browser(opened.clone())).await.unwrap();
    assert!(signed.signed_in && signed.can_refresh);
    assert_eq!(signed.issuer.as_deref(), Some(server.issuer.as_str()));
    assert!(signed.scopes.contains(&"mcp:tools".to_owned()), "the challenge's scope: {:?}", signed.scopes);
    assert!(signed.expires_at.is_some());
    let page = opened.lock().unwrap()[0].clone();
    assert!(page.contains("code_challenge_method=S256") && page.contains("resource="), "{page}");

    until(&m, "notes", |v| v.status == ServerStatus::Connected).await;
    let me = whoami(&m, "notes").await;
    assert!(me.contains("mcp:tools"), "{me}");

    // What the server saw: a public client registered as a native app, PKCE, the resource.
    let state = server.state().await;
    let client = &state["clients"][0];
    assert_eq!(client["token_endpoint_auth_method"], "none");
    let authorize = &state["authorization_requests"][0];
    assert_eq!(authorize["code_challenge_method"], "S256");
    assert_eq!(authorize["resource"], server.mcp.as_str());
    assert_eq!(state["token_requests"][0]["resource"], server.mcp.as_str());

    // A restart connects with the stored sign-in, without a browser.
    m.shutdown().await;
    let again = manager(tmp.path(), json!({ "notes": { "type": "http", "url": server.mcp } }));
    again.ensure_connected("notes", WAIT).await.unwrap();
    assert!(whoami(&again, "notes").await.contains("mcp:tools"));
    assert!(again.server("notes").unwrap().sign_in.unwrap().signed_in);

    // No token anywhere in the data folder (the database, logs, config, the sealed key file),
    // nor in what was logged.
    let everything = all_text(tmp.path());
    let logged = logs::text();
    assert!(logged.contains("signed in"), "the logs were captured");
    for token in server.tokens().await {
        assert!(!everything.contains(&token), "a token leaked into the data folder");
        assert!(!logged.contains(&token), "a token leaked into the logs");
    }
    again.shutdown().await;
}

#[tokio::test]
async fn a_confidential_client_from_the_config_refreshes_with_its_secret_after_a_restart() {
    let server = AuthServer::start(&["--client-id", "perch-test", "--client-secret", "s3cr3t-value"]).await;
    let tmp = tempfile::tempdir().unwrap();
    let entry = json!({ "notes": { "type": "http", "url": server.mcp,
        "oauth": { "clientId": "perch-test", "clientSecret": "s3cr3t-value" } } });
    let m = manager(tmp.path(), entry.clone());
    assert!(m.ensure_connected("notes", WAIT).await.is_err());
    m.sign_in("notes", None, None, browser(Default::default())).await.unwrap();
    until(&m, "notes", |v| v.status == ServerStatus::Connected).await;
    m.shutdown().await;

    // The access token dies; a restarted Perch refreshes it, authenticating as the client.
    server.post("/test/expire-access", json!({})).await;
    let again = manager(tmp.path(), entry);
    again.ensure_connected("notes", WAIT).await.unwrap();
    assert!(whoami(&again, "notes").await.contains("perch-test"));
    let state = server.state().await;
    let refreshes: Vec<&Value> = state["token_requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["grant_type"] == "refresh_token")
        .collect();
    assert!(!refreshes.is_empty(), "{state}");
    assert!(refreshes.iter().all(|r| r["client_auth_method"] == "client_secret_basic" && r["status"] == 200));
    assert!(
        state["registrations"].as_array().is_none_or(Vec::is_empty),
        "no registration for a configured client"
    );
    // The secret is not sent to the UI.
    let shown = serde_json::to_string(&again.server("notes").unwrap()).unwrap();
    assert!(!shown.contains("s3cr3t"), "{shown}");
    again.shutdown().await;
}

#[tokio::test]
async fn a_revoked_sign_in_asks_again_instead_of_failing_forever() {
    let server = AuthServer::start(&[]).await;
    let tmp = tempfile::tempdir().unwrap();
    let entry = json!({ "notes": { "type": "http", "url": server.mcp } });
    let m = signed_in(tmp.path(), entry.clone()).await;
    m.shutdown().await;

    server.post("/test/revoke-all", json!({})).await;
    let again = manager(tmp.path(), entry);
    let err = again.ensure_connected("notes", WAIT).await.unwrap_err();
    assert!(matches!(err, CallError::NeedsSignIn { .. }), "{err}");
    let view = again.server("notes").unwrap();
    assert_eq!(view.status, ServerStatus::NeedsSignIn);
    // Signing in again works.
    again.sign_in("notes", None, None, browser(Default::default())).await.unwrap();
    until(&again, "notes", |v| v.status == ServerStatus::Connected).await;
    again.shutdown().await;
}

#[tokio::test]
async fn refused_consent_leaves_a_clear_state_and_nothing_waiting() {
    let server = AuthServer::start(&["--deny"]).await;
    let tmp = tempfile::tempdir().unwrap();
    let m = manager(tmp.path(), json!({ "notes": { "type": "http", "url": server.mcp } }));
    let _ = m.ensure_connected("notes", WAIT).await;
    let err = m.sign_in("notes", None, None, browser(Default::default())).await.unwrap_err();
    assert!(
        matches!(&err, SignInFailure::SignIn(SignInError::Browser(CallbackError::Denied { error, .. })) if error == "access_denied"),
        "{err}"
    );
    let view = m.server("notes").unwrap();
    assert_eq!(view.status, ServerStatus::NeedsSignIn);
    assert_eq!(view.sign_in_page, None, "no sign-in left waiting");

    // A sign-in whose tab was closed is cancelled from the app.
    let m2 = m.clone();
    let waiting = tokio::spawn(async move { m2.sign_in("notes", None, None, Box::new(|_: &str| {})).await });
    let page = until(&m, "notes", |v| v.sign_in_page.as_deref().is_some_and(|p| !p.is_empty())).await;
    assert!(page.sign_in_page.unwrap().starts_with(&server.base));
    m.cancel_sign_in("notes").unwrap();
    let err = waiting.await.unwrap().unwrap_err();
    assert!(matches!(err, SignInFailure::SignIn(SignInError::Browser(CallbackError::Cancelled))), "{err}");
    m.shutdown().await;
}

#[tokio::test]
async fn signing_out_revokes_at_the_server_and_forgets_here() {
    let server = AuthServer::start(&[]).await;
    let tmp = tempfile::tempdir().unwrap();
    let m = signed_in(tmp.path(), json!({ "notes": { "type": "http", "url": server.mcp } })).await;

    assert!(m.sign_out("notes").await.unwrap(), "the server was told");
    let state = server.state().await;
    let revocations = state["revocation_requests"].as_array().unwrap();
    assert_eq!(revocations.len(), 1, "{state}");
    assert_eq!(revocations[0]["token_type_hint"], "refresh_token");
    assert_eq!(revocations[0]["status"], 200);
    let view = until(&m, "notes", |v| v.status == ServerStatus::NeedsSignIn).await;
    assert_eq!(view.sign_in, None);
    m.shutdown().await;
}

#[tokio::test]
async fn ten_servers_sign_in_at_once() {
    let server = AuthServer::start(&[]).await;
    let tmp = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..10).map(|i| format!("notes{i}")).collect();
    let servers: serde_json::Map<String, Value> =
        names.iter().map(|n| (n.clone(), json!({ "type": "http", "url": server.mcp }))).collect();
    let m = manager(tmp.path(), Value::Object(servers));
    futures::future::join_all(names.iter().map(|n| m.ensure_connected(n, WAIT))).await;
    let signed = futures::future::join_all(
        names.iter().map(|n| m.sign_in(n, None, None, browser(Default::default()))),
    )
    .await;
    assert!(signed.iter().all(Result::is_ok), "{signed:?}");
    for n in &names {
        until(&m, n, |v| v.status == ServerStatus::Connected).await;
    }
    assert_eq!(server.state().await["clients"].as_array().unwrap().len(), 10, "one registration each");
    m.shutdown().await;
}

#[tokio::test]
async fn a_tool_that_needs_more_scope_asks_for_it_and_works_after_a_step_up() {
    let server = AuthServer::start(&[]).await;
    let tmp = tempfile::tempdir().unwrap();
    let m = signed_in(tmp.path(), json!({ "notes": { "type": "http", "url": server.mcp } })).await;

    let err = m.call_tool("notes", "secret_note", None, &CancellationToken::new(), None).await.unwrap_err();
    let CallError::NeedsSignIn { scope: Some(scope), .. } = &err else { panic!("{err:?}") };
    assert!(scope.contains("notes:read"), "{scope}");
    // The card's Sign in asks for what was granted and what is missing.
    let view = m.sign_in("notes", None, None, browser(Default::default())).await.unwrap();
    assert!(
        view.scopes.contains(&"notes:read".to_owned()) && view.scopes.contains(&"mcp:tools".to_owned()),
        "{view:?}"
    );
    until(&m, "notes", |v| v.status == ServerStatus::Connected).await;
    let out = m.call_tool("notes", "secret_note", None, &CancellationToken::new(), None).await.unwrap();
    assert!(!out.is_error, "{}", out.text);
    let asked = server.state().await["authorization_requests"][1]["scope"].as_str().unwrap().to_owned();
    assert!(asked.contains("mcp:tools") && asked.contains("notes:read"), "the union: {asked}");
    m.shutdown().await;
}

#[tokio::test]
async fn tokens_revoked_during_a_session_turn_a_call_into_a_sign_in_request() {
    let server = AuthServer::start(&[]).await;
    let tmp = tempfile::tempdir().unwrap();
    let m = signed_in(tmp.path(), json!({ "notes": { "type": "http", "url": server.mcp } })).await;
    server.post("/test/revoke-all", json!({})).await;
    let err = m.call_tool("notes", "whoami", None, &CancellationToken::new(), None).await.unwrap_err();
    assert_eq!(err, CallError::NeedsSignIn { server: "notes".into(), scope: None });
    // Signing in again brings it back.
    m.sign_in("notes", None, None, browser(Default::default())).await.unwrap();
    until(&m, "notes", |v| v.status == ServerStatus::Connected).await;
    assert!(whoami(&m, "notes").await.contains("mcp:tools"));
    m.shutdown().await;
}

/// A hand-written HTTP server: answers each `GET`/`POST` path from `routes` (status, extra
/// headers, body), 404 otherwise, and records every request's head.
async fn canned_server(
    routes: impl Fn(&str) -> Option<(u16, String, String)> + Send + Sync + 'static,
) -> (String, Arc<Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (recorded, routes) = (seen.clone(), Arc::new(routes));
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let (recorded, routes) = (recorded.clone(), routes.clone());
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65536];
                let n = socket.read(&mut buf).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&buf[..n]).into_owned();
                let path = head.split(' ').nth(1).unwrap_or("").to_owned();
                recorded.lock().unwrap().push(head);
                let (status, headers, body) =
                    routes(&path).unwrap_or((404, String::new(), "{\"error\":\"not_found\"}".into()));
                let response = format!(
                    "HTTP/1.1 {status} X\r\n{headers}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    (base, seen)
}

/// Red team: the sign-in for a server is never sent to whatever its entry points at later. The
/// user (or a pasted config, or an add-server link replacing it) moves `notes` to another
/// address; Perch must connect there without the tokens. Control: the same sign-in does reach
/// the server it was made for.
#[tokio::test]
async fn a_sign_in_is_never_sent_to_the_address_a_server_moved_to() {
    let server = AuthServer::start(&[]).await;
    let tmp = tempfile::tempdir().unwrap();
    let m = signed_in(tmp.path(), json!({ "notes": { "type": "http", "url": server.mcp } })).await;
    assert!(whoami(&m, "notes").await.contains("mcp:tools"), "control: the tokens work where they belong");
    m.shutdown().await;

    let (elsewhere, seen) = canned_server(|_| {
        Some((401, "WWW-Authenticate: Bearer realm=\"x\"\r\n".into(), "{\"error\":\"unauthorized\"}".into()))
    })
    .await;
    let moved =
        manager(tmp.path(), json!({ "notes": { "type": "http", "url": format!("{elsewhere}/mcp") } }));
    let err = moved.ensure_connected("notes", WAIT).await.unwrap_err();
    assert!(matches!(err, CallError::NeedsSignIn { .. }), "{err}");
    let requests = seen.lock().unwrap().join("\n").to_ascii_lowercase();
    assert!(!requests.is_empty(), "Perch did try the new address");
    assert!(!requests.contains("authorization:"), "a credential went to the new address: {requests}");
    for token in server.tokens().await {
        assert!(!requests.contains(&token.to_ascii_lowercase()));
    }
    moved.shutdown().await;
}

/// Red team: an authorization server whose metadata sends the code and the client's secret to a
/// plain-HTTP address elsewhere is refused before any browser opens.
#[tokio::test]
async fn metadata_naming_a_plain_http_token_endpoint_is_refused_before_the_browser() {
    let base = Arc::new(std::sync::OnceLock::<String>::new());
    let at = base.clone();
    let (url, seen) = canned_server(move |path| {
        let base = at.get().unwrap();
        match path {
            "/mcp" => Some((
                401,
                format!("WWW-Authenticate: Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"\r\n"),
                "{}".into(),
            )),
            "/.well-known/oauth-protected-resource/mcp" => Some((
                200,
                String::new(),
                json!({ "resource": format!("{base}/mcp"), "authorization_servers": [base] }).to_string(),
            )),
            "/.well-known/oauth-authorization-server" => Some((
                200,
                String::new(),
                json!({
                    "issuer": base,
                    "authorization_endpoint": format!("{base}/authorize"),
                    "token_endpoint": "http://tokens.example.net/token",
                    "registration_endpoint": format!("{base}/register"),
                    "code_challenge_methods_supported": ["S256"],
                })
                .to_string(),
            )),
            _ => None,
        }
    })
    .await;
    base.set(url.clone()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let m = manager(tmp.path(), json!({ "notes": { "type": "http", "url": format!("{url}/mcp") } }));
    let _ = m.ensure_connected("notes", WAIT).await;
    assert_eq!(
        m.server("notes").unwrap().status,
        ServerStatus::NeedsSignIn,
        "control: the server asks for a sign-in"
    );
    let opened = Arc::new(Mutex::new(Vec::new()));
    let err = m.sign_in("notes", None, None, browser(opened.clone())).await.unwrap_err();
    assert!(
        matches!(&err, SignInFailure::SignIn(SignInError::InsecureEndpoint { url, .. }) if url == "http://tokens.example.net/token"),
        "{err}"
    );
    assert!(opened.lock().unwrap().is_empty(), "no browser was opened");
    let requests = seen.lock().unwrap().clone();
    assert!(!requests.iter().any(|r| r.starts_with("POST /register")), "nothing was registered");
    m.shutdown().await;
}
