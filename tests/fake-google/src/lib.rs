//! A stand-in for Google on loopback: the OAuth 2.0 endpoints an installed app uses
//! (authorization with PKCE, token, refresh, revocation, userinfo), the Gmail v1 API (messages,
//! threads, labels, send, drafts) and the Calendar v3 API (events, recurrence, free/busy,
//! quickAdd), answering in Google's JSON shapes and refusing what Google refuses, so Perch's
//! production code is what gets tested. Everything lives under one base URL; the app swaps
//! Google's hosts for it in debug builds.
//!
//! Misbehaviour on demand ([`FakeGoogle::fail_next`]) and the consent a user gives
//! ([`FakeGoogle::set_consent`]) let tests reach the paths a real account rarely takes.

mod calendar;
mod errors;
mod gmail;
mod http;
mod mailbox;
mod mime;
mod oauth;
mod query;
mod recur;
mod seed_calendar;
mod server;
mod when;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A registered OAuth client of type "Desktop app" (installed): any loopback port may be used.
pub const DESKTOP_CLIENT_ID: &str = "1071006060591-perchdesktop0fake0client.apps.googleusercontent.com";
pub const DESKTOP_CLIENT_SECRET: &str = "GOCSPX-fakeDesktopSecret0000000";
/// A registered client of type "Web application": the wrong type for a desktop app.
pub const WEB_CLIENT_ID: &str = "1071006060591-perchweb0fake0client0000.apps.googleusercontent.com";
pub const WEB_CLIENT_SECRET: &str = "GOCSPX-fakeWebSecret00000000000";
/// The one redirect URI registered for the web client.
pub const WEB_REDIRECT_URI: &str = "https://perch.example.com/oauth2/callback";
pub const USER_EMAIL: &str = "ada@example.com";
/// The stable account id Google puts in `sub`.
pub const USER_SUB: &str = "110248495921238986420";
pub const CALENDAR_TIME_ZONE: &str = "Europe/Berlin";

/// What the (automatic) consent screen answers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Consent {
    /// Every scope asked for.
    Grant,
    /// Only these of the asked scopes (the user unticked the rest); `openid` and `email` are
    /// always granted when asked, as Google does not offer to untick them.
    GrantOnly(Vec<String>),
    /// The user pressed Cancel: the redirect carries `error=access_denied`.
    Deny,
}

/// How the next matching requests misbehave.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Failure {
    /// 429 with `Retry-After` and Google's RESOURCE_EXHAUSTED body.
    RateLimited { retry_after_secs: u32 },
    /// 500 backendError.
    ServerError,
    /// 200 with truncated JSON.
    Malformed,
    /// Headers never come; the connection stays open.
    Stall,
}

/// A message sent or a draft saved through the API.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sent {
    pub id: String,
    pub thread_id: String,
    /// The decoded RFC 2822 text as received.
    pub raw: String,
}

/// An email Google sent an event's guests because the request's `sendUpdates` asked for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestEmail {
    /// `invitation`, `change` or `cancellation`.
    pub kind: String,
    /// The event's title.
    pub summary: String,
    pub to: Vec<String>,
}

/// An API request (Gmail, Calendar, userinfo) as received.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Recorded {
    pub method: String,
    pub path_and_query: String,
    pub authorization: Option<String>,
}

struct Failing {
    prefix: String,
    remaining: u32,
    failure: Failure,
}

struct State {
    oauth: oauth::OAuthState,
    mailbox: mailbox::Mailbox,
    calendar: calendar::Calendar,
    authorization_requests: Vec<BTreeMap<String, String>>,
    token_requests: Vec<BTreeMap<String, String>>,
    revocations: Vec<String>,
    api_requests: Vec<Recorded>,
    failing: Vec<Failing>,
    /// Makes every id and token minted unique.
    serial: u64,
}

impl State {
    fn new() -> Self {
        Self {
            oauth: oauth::OAuthState::default(),
            mailbox: mailbox::Mailbox::seeded(),
            calendar: calendar::Calendar::seeded(),
            authorization_requests: Vec::new(),
            token_requests: Vec::new(),
            revocations: Vec::new(),
            api_requests: Vec::new(),
            failing: Vec::new(),
            serial: 0,
        }
    }

    /// A hex string unique to this server's life, `len` characters long.
    fn fresh(&mut self, len: usize) -> String {
        use sha2::Digest;
        self.serial += 1;
        let nanos = jiff::Timestamp::now().as_nanosecond();
        let digest = sha2::Sha256::digest(format!("{}:{nanos}", self.serial).as_bytes());
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        hex[..len.min(hex.len())].to_owned()
    }

    /// The failure the next request to `path` gets, if one is queued for it.
    fn take_failure(&mut self, path: &str) -> Option<Failure> {
        let failing = self.failing.iter_mut().find(|f| f.remaining > 0 && path.starts_with(&f.prefix))?;
        failing.remaining -= 1;
        let failure = failing.failure;
        self.failing.retain(|f| f.remaining > 0);
        Some(failure)
    }
}

type Shared = Arc<Mutex<State>>;

fn lock(state: &Shared) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|p| p.into_inner())
}

/// A running fake, seeded with a mailbox and a calendar. It stops when dropped.
pub struct FakeGoogle {
    addr: SocketAddr,
    state: Shared,
    task: tokio::task::JoinHandle<()>,
}

impl FakeGoogle {
    /// Listens on 127.0.0.1 on a free port.
    pub async fn start() -> std::io::Result<FakeGoogle> {
        Self::start_on(0).await
    }

    pub async fn start_on(port: u16) -> std::io::Result<FakeGoogle> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        let state = Arc::new(Mutex::new(State::new()));
        let task = tokio::spawn(server::serve(listener, state.clone()));
        Ok(FakeGoogle { addr, state, task })
    }

    /// `http://127.0.0.1:PORT`, without a trailing slash.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// An access token for these scopes (full URLs), valid for an hour, without the OAuth dance.
    pub fn mint_access_token(&self, scopes: &[&str]) -> String {
        let scopes: Vec<String> = scopes.iter().map(|s| (*s).to_owned()).collect();
        oauth::mint(&mut self.lock(), &scopes)
    }

    pub fn set_consent(&self, consent: Consent) {
        self.lock().oauth.consent = consent;
    }

    /// The query of every authorization request, in order.
    pub fn authorization_requests(&self) -> Vec<BTreeMap<String, String>> {
        self.lock().authorization_requests.clone()
    }

    /// The form fields of every token request, in order.
    pub fn token_requests(&self) -> Vec<BTreeMap<String, String>> {
        self.lock().token_requests.clone()
    }

    /// The tokens revoked at `/revoke`, in order.
    pub fn revocations(&self) -> Vec<String> {
        self.lock().revocations.clone()
    }

    pub fn sent(&self) -> Vec<Sent> {
        self.lock().mailbox.sent.clone()
    }

    pub fn drafts(&self) -> Vec<Sent> {
        self.lock().mailbox.draft_log.clone()
    }

    pub fn message_labels(&self, id: &str) -> Option<Vec<String>> {
        self.lock().mailbox.find(id).map(|m| m.labels.clone())
    }

    /// The emails sent to events' guests, in order.
    pub fn guest_emails(&self) -> Vec<GuestEmail> {
        self.lock().calendar.emailed.clone()
    }

    /// The calendar's stored events, recurring ones as their series (not expanded).
    pub fn events(&self) -> Vec<Value> {
        self.lock().calendar.events.clone()
    }

    /// The next `count` requests whose path starts with `path_prefix` get `failure`.
    pub fn fail_next(&self, path_prefix: &str, count: u32, failure: Failure) {
        self.lock().failing.push(Failing { prefix: path_prefix.to_owned(), remaining: count, failure });
    }

    /// Every access token issued so far expires now (refresh tokens stay good).
    pub fn expire_access_tokens(&self) {
        self.lock().oauth.expire_access_tokens();
    }

    /// Every grant is revoked, as when the user removes the app at myaccount.google.com.
    pub fn revoke_all(&self) {
        self.lock().oauth.revoke_all();
    }

    pub fn api_requests(&self) -> Vec<Recorded> {
        self.lock().api_requests.clone()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }
}

impl Drop for FakeGoogle {
    fn drop(&mut self) {
        self.task.abort();
    }
}
