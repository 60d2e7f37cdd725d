//! The Google connection against the loopback fake of Google's OAuth endpoints
//! (`tests/fake-google`), which checks PKCE, the client's secret, single-use codes and the
//! redirect as Google does, grants incrementally, can grant less than asked, and revokes. The
//! browser step is what a browser does: load Google's page and follow its redirect to Perch's
//! loopback port.

#![allow(clippy::unwrap_used)]

use perch_test_support::logs;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use oauth2::TokenResponse;
use perch_core::google::{ConnectError, Connection, GoogleClient, GoogleEndpoints, Service};
use perch_core::keys::Keys;
use perch_core::oauth::OpenUrl;
use perch_core::oauth::store::SignInEntry;
use perch_fake_google::{
    Consent, DESKTOP_CLIENT_ID, DESKTOP_CLIENT_SECRET, FakeGoogle, USER_EMAIL, WEB_CLIENT_ID,
};
use sha2::Digest;
use tokio_util::sync::CancellationToken;

/// A browser on which the user clicks through Google's page: it loads the page and follows
/// where Google sends it (Perch's loopback), or, for an error page, stops there as a person
/// would (the connection then waits until cancelled).
fn browser(opened: Arc<Mutex<Vec<String>>>) -> OpenUrl {
    Box::new(move |page: &str| {
        opened.lock().unwrap().push(page.to_owned());
        let page = page.to_owned();
        tokio::spawn(async move {
            let client = perch_core::providers::http::client_builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap();
            let answer = client.get(&page).send().await.unwrap();
            if let Some(back) = answer.headers().get("location") {
                let landed = client.get(back.to_str().unwrap()).send().await.unwrap();
                assert!(landed.status().is_success(), "{}", landed.status());
            }
        });
    })
}

struct Setup {
    fake: FakeGoogle,
    google: Connection,
    keys: Arc<Keys>,
    opened: Arc<Mutex<Vec<String>>>,
    _dir: tempfile::TempDir,
}

async fn setup() -> Setup {
    logs::capture();
    let fake = FakeGoogle::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let keys = Arc::new(Keys::in_file(dir.path()));
    let google = Connection::with_endpoints(keys.clone(), GoogleEndpoints::under(&fake.base_url()));
    let client = GoogleClient::new(DESKTOP_CLIENT_ID, Some(DESKTOP_CLIENT_SECRET), true).unwrap();
    google.set_client(&client).await.unwrap();
    Setup { fake, google, keys, opened: Arc::default(), _dir: dir }
}

impl Setup {
    /// Connects; a browser step that failed (its assertions run on a task of their own) fails
    /// the test here rather than after the five-minute wait.
    async fn connect(&self, services: &[Service]) -> Result<perch_core::google::GoogleStatus, ConnectError> {
        let cancel = CancellationToken::new();
        let connecting = self.google.connect(services, browser(self.opened.clone()), &cancel);
        tokio::time::timeout(std::time::Duration::from_secs(60), connecting)
            .await
            .expect("the browser step ended")
    }
}

fn scope(request: &BTreeMap<String, String>) -> Vec<&str> {
    request["scope"].split(' ').collect()
}

fn granted(status: &perch_core::google::GoogleStatus) -> Vec<Service> {
    status.services.iter().filter(|s| s.granted).map(|s| s.service).collect()
}

#[tokio::test]
async fn connecting_uses_pkce_and_adding_a_service_does_not_ask_for_the_others_again() {
    let s = setup().await;
    let status = s.connect(&[Service::MailRead, Service::CalendarRead]).await.unwrap();
    assert!(status.connected);
    assert_eq!(status.account.as_deref(), Some(USER_EMAIL), "connected as whom, from the ID token");
    assert_eq!(granted(&status), vec![Service::MailRead, Service::CalendarRead]);
    assert_eq!(status.problem, None);

    // The authorization request: PKCE S256, offline access, incremental scopes, and a consent
    // prompt (no refresh token is held yet).
    let authorizations = s.fake.authorization_requests();
    let first = &authorizations[0];
    assert_eq!(first["code_challenge_method"], "S256");
    assert_eq!(first["access_type"], "offline");
    assert_eq!(first["include_granted_scopes"], "true");
    assert_eq!(first["prompt"], "consent");
    assert!(first["redirect_uri"].starts_with("http://127.0.0.1:"), "{}", first["redirect_uri"]);
    assert!(scope(first).contains(&"https://www.googleapis.com/auth/gmail.readonly"));
    // The verifier sent to the token endpoint is the one the challenge was made from.
    let exchange = &s.fake.token_requests()[0];
    assert_eq!(exchange["grant_type"], "authorization_code");
    let digest = sha2::Sha256::digest(exchange["code_verifier"].as_bytes());
    assert_eq!(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest), first["code_challenge"]);
    assert_eq!(exchange["client_secret"], DESKTOP_CLIENT_SECRET, "a Desktop client sends its secret");
    assert!(!s.opened.lock().unwrap()[0].contains(DESKTOP_CLIENT_SECRET), "never to the browser");

    // Adding the calendar's changes asks for that alone; Google's answer keeps the rest, and
    // the refresh token held means no second consent prompt.
    let status = s.connect(&[Service::CalendarWrite]).await.unwrap();
    let second = &s.fake.authorization_requests()[1];
    assert!(!scope(second).contains(&"https://www.googleapis.com/auth/gmail.readonly"), "{second:?}");
    assert!(!second.contains_key("prompt"), "{second:?}");
    assert_eq!(granted(&status), vec![Service::MailRead, Service::CalendarRead, Service::CalendarWrite]);

    // The server's access: the access token and scopes, never the refresh token.
    let access = s.google.server_access(false).await.unwrap();
    let env = perch_core::google::server_env(Some(&access), s.google.endpoints());
    let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        ["PERCH_GOOGLE_API_BASE", "PERCH_GOOGLE_ACCESS_TOKEN", "PERCH_GOOGLE_SCOPES", "PERCH_GOOGLE_ACCOUNT"]
    );
    let record =
        SignInEntry::new(s.keys.clone(), perch_core::google::RECORD_NAME).load().await.unwrap().unwrap();
    let tokens = record.credentials.unwrap().token_response.unwrap();
    let refresh = tokens.refresh_token().unwrap().secret().clone();
    assert!(env.iter().all(|(_, v)| *v != refresh && !v.contains(DESKTOP_CLIENT_SECRET)), "{names:?}");
    let logged = logs::text();
    assert!(!logged.contains(&access.access_token), "the access token is never logged");
    assert!(!logged.contains(DESKTOP_CLIENT_SECRET), "nor the client's secret");
}

#[tokio::test]
async fn a_box_left_unticked_is_named_and_what_was_granted_works() {
    let s = setup().await;
    s.fake.set_consent(Consent::GrantOnly(vec!["https://www.googleapis.com/auth/gmail.readonly".into()]));
    let status = s.connect(&[Service::MailRead, Service::MailSend]).await.unwrap();
    assert!(status.connected);
    assert_eq!(granted(&status), vec![Service::MailRead]);
    let problem = status.problem.unwrap();
    assert!(problem.contains("Write mail") && problem.contains("connect again"), "{problem}");
    let access = s.google.server_access(false).await.unwrap();
    assert!(!access.scopes.iter().any(|s| s.ends_with("gmail.compose")), "{:?}", access.scopes);
}

#[tokio::test]
async fn a_refusal_on_googles_page_changes_nothing() {
    let s = setup().await;
    s.connect(&[Service::MailRead]).await.unwrap();
    s.fake.set_consent(Consent::Deny);
    let err = s.connect(&[Service::CalendarWrite]).await.unwrap_err();
    assert!(matches!(err, ConnectError::Denied), "{err}");
    assert!(err.to_string().contains("nothing changed"), "{err}");
    let status = s.google.status().await.unwrap();
    assert!(status.connected, "the earlier connection stands");
    assert_eq!(granted(&status), vec![Service::MailRead]);
}

#[tokio::test]
async fn a_web_client_or_an_unknown_one_stops_at_googles_page_and_can_be_cancelled() {
    let s = setup().await;
    let web = GoogleClient::new(WEB_CLIENT_ID, Some("x"), true).unwrap();
    s.google.set_client(&web).await.unwrap();
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    let opened = s.opened.clone();
    tokio::spawn(async move {
        // Google shows its error page; the user gives up.
        while opened.lock().unwrap().is_empty() {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        stop.cancel();
    });
    let err = s.google.connect(&[Service::MailRead], browser(s.opened.clone()), &cancel).await.unwrap_err();
    assert!(matches!(err, ConnectError::Cancelled), "{err}");
    assert!(!s.google.status().await.unwrap().connected);
}

#[tokio::test]
async fn the_access_token_is_renewed_before_it_runs_out_and_an_ended_connection_says_so() {
    let s = setup().await;
    s.connect(&[Service::MailRead]).await.unwrap();
    let first = s.google.server_access(false).await.unwrap();
    // Still fresh: handed out as it is, no token request.
    let before = s.fake.token_requests().len();
    assert_eq!(s.google.server_access(false).await.unwrap().access_token, first.access_token);
    assert_eq!(s.fake.token_requests().len(), before);

    // Google refused it (revoked early): a renewal is asked for, with the refresh token.
    let renewed = s.google.server_access(true).await.unwrap();
    assert_ne!(renewed.access_token, first.access_token);
    let refresh = s.fake.token_requests().last().cloned().unwrap();
    assert_eq!(refresh["grant_type"], "refresh_token");
    assert_eq!(refresh["client_secret"], DESKTOP_CLIENT_SECRET);
    // Google sends no new refresh token; the old one is kept and keeps working.
    let again = s.google.server_access(true).await.unwrap();
    assert_ne!(again.access_token, renewed.access_token);

    // Google cannot be reached: the token held is handed out still (the server keeps its
    // tools, and a call asks again), and nothing is marked wrong.
    s.fake.fail_next("/token", 1, perch_fake_google::Failure::ServerError);
    let kept = s.google.server_access(true).await.unwrap();
    assert_eq!(kept.access_token, again.access_token);
    assert_eq!(s.google.status().await.unwrap().problem, None);

    // The same client typed again without its secret keeps the secret (Google requires it).
    let typed = GoogleClient::new(DESKTOP_CLIENT_ID, None, true).unwrap();
    assert!(s.google.set_client(&typed).await.unwrap().has_client_secret);

    // The user removed Perch from their account: the next renewal is refused for good.
    s.fake.revoke_all();
    assert!(s.google.server_access(true).await.is_none());
    let status = s.google.status().await.unwrap();
    assert!(!status.connected);
    assert!(status.problem.unwrap().contains("connect again"));
    assert_eq!(status.client_id.as_deref(), Some(DESKTOP_CLIENT_ID), "the client stays");
}

#[tokio::test]
async fn disconnecting_revokes_at_google_and_forgets_the_tokens_here() {
    let s = setup().await;
    s.connect(&[Service::MailRead]).await.unwrap();
    assert!(s.google.disconnect().await.unwrap(), "Google was told");
    assert_eq!(s.fake.revocations().len(), 1);
    let status = s.google.status().await.unwrap();
    assert!(!status.connected && status.account.is_none());
    assert!(s.google.server_access(false).await.is_none());
    // Connecting again asks for consent again (no refresh token is held).
    s.connect(&[Service::MailRead]).await.unwrap();
    assert_eq!(s.fake.authorization_requests().last().unwrap()["prompt"], "consent");
    // Forgetting the client too.
    s.google.forget().await.unwrap();
    let status = s.google.status().await.unwrap();
    assert_eq!(status.client_id, None);
    assert!(matches!(s.connect(&[Service::MailRead]).await, Err(ConnectError::NoClient)));
}

/// The workspace's build of a binary (test binaries live in target/<profile>/deps).
fn repo_target_bin(name: &str) -> String {
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().unwrap().parent().unwrap().join(name);
    assert!(path.exists(), "{} is missing: build it with `cargo build -p {name}`", path.display());
    path.to_string_lossy().into_owned()
}

fn environ(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/environ"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', "\n"))
        .unwrap()
}

/// A manager running `perch-mcp-google` under each of `names` (the engine's secret hook over
/// this test's key store and fake), each connected.
async fn servers(s: &Setup, names: &[&str]) -> Arc<perch_core::mcp::McpManager> {
    let dir = s._dir.path();
    let command = repo_target_bin("perch-mcp-google");
    let entries: serde_json::Map<String, serde_json::Value> =
        names.iter().map(|name| ((*name).to_owned(), serde_json::json!({ "command": command }))).collect();
    std::fs::write(dir.join("mcp_servers.json"), serde_json::json!({ "mcpServers": entries }).to_string())
        .unwrap();
    let m =
        perch_core::mcp::McpManager::new(dir, None, Arc::new(perch_core::questions::Questions::default()));
    m.set_secret_env(perch_core::mcp::secrets::from_keys(s.keys.clone(), s.google.clone()));
    for name in names {
        m.ensure_connected(name, std::time::Duration::from_secs(30)).await.unwrap();
    }
    m
}

#[tokio::test]
async fn a_server_the_user_adds_that_runs_the_google_program_gets_no_token() {
    // The escape: add an entry of one's own (not the bundled `google`) running the same
    // program, and hope the secret hook goes by the program's name.
    let s = setup().await;
    s.connect(&[Service::MailRead]).await.unwrap();
    let m = servers(&s, &["google", "mailbox"]).await;
    let bundled = m.server("google").unwrap();
    let added = m.server("mailbox").unwrap();
    assert!(!added.config.bundled && bundled.config.bundled);
    // Control: the bundled entry has the token and the tools.
    assert!(environ(bundled.pid.unwrap()).contains("PERCH_GOOGLE_ACCESS_TOKEN="));
    assert!(!bundled.tools.is_empty());
    // The added one has neither.
    assert!(!environ(added.pid.unwrap()).contains("PERCH_GOOGLE_ACCESS_TOKEN"));
    assert!(added.tools.is_empty());
    m.shutdown().await;
}

#[tokio::test]
async fn the_google_server_gets_only_an_access_token_offers_what_was_granted_and_renews_a_refused_one() {
    let s = setup().await;
    s.connect(&[Service::MailRead]).await.unwrap();
    let m = servers(&s, &["google"]).await;

    // Only what reading mail allows is offered.
    let view = m.server("google").unwrap();
    let mut tools: Vec<&str> = view.tools.iter().map(|t| t.name.as_str()).collect();
    tools.sort_unstable();
    assert_eq!(tools, ["gmail_list_labels", "gmail_read_message", "gmail_read_thread", "gmail_search"]);
    assert!(view.tools.iter().all(|t| t.read_only));

    // Its environment holds the access token, never the refresh token or the client's secret.
    let record =
        SignInEntry::new(s.keys.clone(), perch_core::google::RECORD_NAME).load().await.unwrap().unwrap();
    let tokens = record.credentials.unwrap().token_response.unwrap();
    let env = environ(view.pid.unwrap());
    assert!(env.contains(&format!("PERCH_GOOGLE_ACCESS_TOKEN={}", tokens.access_token().secret())));
    assert!(!env.contains(tokens.refresh_token().unwrap().secret()));
    assert!(!env.contains(DESKTOP_CLIENT_SECRET));

    let search = |m: Arc<perch_core::mcp::McpManager>| async move {
        let arguments = serde_json::json!({ "query": "in:inbox" }).as_object().cloned();
        m.call_tool("google", "gmail_search", arguments, &CancellationToken::new(), None).await.unwrap()
    };
    let found = search(m.clone()).await;
    assert!(!found.is_error, "{}", found.text);

    // Google stops accepting the token before its time: the server says so, the manager
    // renews the token, starts the server again with it, and the call goes through.
    s.fake.expire_access_tokens();
    let refreshes = |fake: &FakeGoogle| {
        fake.token_requests().iter().filter(|r| r["grant_type"] == "refresh_token").count()
    };
    assert_eq!(refreshes(&s.fake), 0);
    let again = search(m.clone()).await;
    assert!(!again.is_error, "{}", again.text);
    assert_eq!(refreshes(&s.fake), 1);
    let restarted = m.server("google").unwrap();
    assert_ne!(restarted.pid, view.pid, "started again with the renewed token");

    // Access ended for good: the call fails with the reason, once, and nothing loops.
    s.fake.revoke_all();
    let ended = search(m.clone()).await;
    assert!(ended.is_error && ended.text.contains("reconnect"), "{}", ended.text);
    assert_eq!(refreshes(&s.fake), 2, "one renewal was tried, and refused");
    assert!(s.google.status().await.unwrap().problem.is_some());
    m.shutdown().await;
}

#[tokio::test]
async fn without_a_connection_the_google_server_offers_nothing_and_says_how_to_connect() {
    let s = setup().await;
    let m = servers(&s, &["google"]).await;
    let view = m.server("google").unwrap();
    assert!(view.tools.is_empty());
    let said = view.instructions.unwrap_or_default();
    assert!(said.contains("Settings") && said.contains("Connections"), "{said}");
    assert!(!environ(view.pid.unwrap()).contains("PERCH_GOOGLE_ACCESS_TOKEN"));
    m.shutdown().await;
}
