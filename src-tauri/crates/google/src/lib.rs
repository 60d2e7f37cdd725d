//! The Google connection (Settings -> Connections): the user's own OAuth client, the services
//! they allow (each a scope, asked for incrementally), the tokens in the key store, and a fresh
//! access token for the bundled Google MCP server (`mcp_servers/google`), which does the mail
//! and calendar work. The server never sees the refresh token or the client's secret.
//!
//! The browser step, the loopback redirect, PKCE and the key-store record are `oauth`'s; this
//! module knows only what is Google's: its endpoints, its scopes and its parameters
//! (`access_type=offline` for a refresh token, `include_granted_scopes` for incremental
//! authorization).

pub mod client;
pub mod connection;

use serde::{Deserialize, Serialize};

pub use client::{ClientError, GoogleClient};
pub use connection::{ConnectError, Connection, GoogleStatus, ServerAccess, ServiceView};

/// The key store's name for the connection.
pub const RECORD_NAME: &str = "oauth/google";
/// The name of the bundled MCP server that uses it (`mcp_servers/config/servers.json`).
pub const SERVER_NAME: &str = "google";
/// The program of that server, wherever it is installed.
pub const SERVER_PROGRAM: &str = "perch-mcp-google";

/// What the user may allow Perch to do, each one scope (Google's names, in plain words in
/// [`Service::describe`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, specta::Type)]
// Named for the UI's bindings as it reads there (a container rename changes no JSON).
#[serde(rename = "GoogleService", rename_all = "snake_case")]
pub enum Service {
    MailRead,
    MailSend,
    MailOrganize,
    CalendarRead,
    CalendarWrite,
}

const SCOPE_ROOT: &str = "https://www.googleapis.com/auth/";

impl Service {
    pub const ALL: [Service; 5] =
        [Self::MailRead, Self::MailSend, Self::MailOrganize, Self::CalendarRead, Self::CalendarWrite];

    /// The scope it asks for.
    pub fn scope(self) -> String {
        let name = match self {
            Self::MailRead => "gmail.readonly",
            Self::MailSend => "gmail.compose",
            Self::MailOrganize => "gmail.modify",
            Self::CalendarRead => "calendar.readonly",
            Self::CalendarWrite => "calendar.events",
        };
        format!("{SCOPE_ROOT}{name}")
    }

    /// Scopes that allow at least as much (Google's broader scopes include the narrower ones'
    /// methods), so a grant of any counts.
    fn covered_by(self) -> Vec<String> {
        let names: &[&str] = match self {
            Self::MailRead => &["gmail.readonly", "gmail.modify"],
            Self::MailSend => &["gmail.compose", "gmail.modify"],
            Self::MailOrganize => &["gmail.modify"],
            Self::CalendarRead => &["calendar.readonly", "calendar"],
            Self::CalendarWrite => &["calendar.events", "calendar"],
        };
        let mut scopes: Vec<String> = names.iter().map(|n| format!("{SCOPE_ROOT}{n}")).collect();
        if matches!(self, Self::MailRead | Self::MailSend | Self::MailOrganize) {
            scopes.push("https://mail.google.com/".to_owned());
        }
        scopes
    }

    pub fn granted_in(self, granted: &[String]) -> bool {
        let covering = self.covered_by();
        granted.iter().any(|g| covering.contains(g))
    }

    /// Its name on the command line (`mail-read`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Self::MailRead => "mail-read",
            Self::MailSend => "mail-send",
            Self::MailOrganize => "mail-organize",
            Self::CalendarRead => "calendar-read",
            Self::CalendarWrite => "calendar-write",
        }
    }

    /// A short name, and what allowing it lets Perch do.
    pub fn describe(self) -> (&'static str, &'static str) {
        match self {
            Self::MailRead => {
                ("Read mail", "Search and read your mail and its labels; see attachments' names and sizes.")
            }
            Self::MailSend => (
                "Write mail",
                "Write drafts and send mail as you (with Read mail, reply too). Perch asks you before every message is sent.",
            ),
            Self::MailOrganize => (
                "Organise mail",
                "Add and remove labels, and move mail to the trash (never deleted for good). Trashing always asks you first.",
            ),
            Self::CalendarRead => ("See calendar", "See your events and when you are free or busy."),
            Self::CalendarWrite => (
                "Change calendar",
                "Create, change and delete events. Deleting always asks you first; the others ask unless you allow them.",
            ),
        }
    }
}

impl std::str::FromStr for Service {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wanted = text.trim().replace('_', "-").to_ascii_lowercase();
        Self::ALL.into_iter().find(|s| s.name() == wanted).ok_or_else(|| {
            let names: Vec<&str> = Self::ALL.iter().map(|s| s.name()).collect();
            format!("no Google service is called {text:?}; the services are {}", names.join(", "))
        })
    }
}

/// The Google server's environment (read by `mcp_servers/google`): the access token, the
/// granted scopes (it offers only the tools they allow), the account, and in tests the fake's
/// address.
pub const ACCESS_TOKEN_ENV: &str = "PERCH_GOOGLE_ACCESS_TOKEN";
pub const SCOPES_ENV: &str = "PERCH_GOOGLE_SCOPES";
pub const ACCOUNT_ENV: &str = "PERCH_GOOGLE_ACCOUNT";
pub const API_BASE_ENV: &str = "PERCH_GOOGLE_API_BASE";

/// What the Google server is started with: nothing but the API base (in tests) when not
/// connected, so it offers no tools and says how to connect.
pub fn server_env(access: Option<&ServerAccess>, endpoints: &GoogleEndpoints) -> Vec<(String, String)> {
    let mut env = Vec::new();
    if let Some(base) = &endpoints.test_base {
        env.push((API_BASE_ENV.to_owned(), base.clone()));
    }
    if let Some(access) = access {
        env.push((ACCESS_TOKEN_ENV.to_owned(), access.access_token.clone()));
        env.push((SCOPES_ENV.to_owned(), access.scopes.join(" ")));
        if let Some(account) = &access.account {
            env.push((ACCOUNT_ENV.to_owned(), account.clone()));
        }
    }
    env
}

/// Asked with every connection: who is connected, for "connected as".
pub const IDENTITY_SCOPES: [&str; 2] = ["openid", "email"];

/// Google's endpoints for the connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoogleEndpoints {
    pub oauth: perch_oauth::flow::Endpoints,
    pub revoke: String,
    /// What the tokens are for: the record is kept against it, and the server's API root.
    pub api: String,
    /// Set only in tests: the one loopback address every endpoint is under.
    pub test_base: Option<String>,
}

/// Where tests put their fake of Google (debug builds only; a release build always talks to
/// Google).
pub const TEST_BASE_ENV: &str = "PERCH_GOOGLE_BASE";

impl GoogleEndpoints {
    pub fn google() -> Self {
        Self {
            oauth: perch_oauth::flow::Endpoints {
                authorize: "https://accounts.google.com/o/oauth2/v2/auth".into(),
                token: "https://oauth2.googleapis.com/token".into(),
            },
            revoke: "https://oauth2.googleapis.com/revoke".into(),
            api: "https://www.googleapis.com/".into(),
            test_base: None,
        }
    }

    /// Google's, or in a debug build the fake named by [`TEST_BASE_ENV`].
    pub fn current() -> Self {
        #[cfg(debug_assertions)]
        if let Ok(base) = std::env::var(TEST_BASE_ENV)
            && !base.trim().is_empty()
        {
            return Self::under(base.trim().trim_end_matches('/'));
        }
        Self::google()
    }

    /// Every endpoint under one base, as the fake serves them.
    pub fn under(base: &str) -> Self {
        Self {
            oauth: perch_oauth::flow::Endpoints {
                authorize: format!("{base}/o/oauth2/v2/auth"),
                token: format!("{base}/token"),
            },
            revoke: format!("{base}/revoke"),
            api: format!("{base}/"),
            test_base: Some(base.to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broader_grant_counts_and_a_narrower_one_does_not() {
        let modify = vec![format!("{SCOPE_ROOT}gmail.modify")];
        assert!(Service::MailRead.granted_in(&modify));
        assert!(Service::MailSend.granted_in(&modify));
        assert!(Service::MailOrganize.granted_in(&modify));
        assert!(!Service::CalendarRead.granted_in(&modify));
        let read = vec![Service::MailRead.scope()];
        assert!(!Service::MailSend.granted_in(&read));
        assert!(Service::CalendarWrite.granted_in(&[format!("{SCOPE_ROOT}calendar")]));
        assert!(!Service::CalendarWrite.granted_in(&[Service::CalendarRead.scope()]));
    }

    #[test]
    fn the_test_base_replaces_every_endpoint() {
        let fake = GoogleEndpoints::under("http://127.0.0.1:9");
        assert_eq!(fake.oauth.token, "http://127.0.0.1:9/token");
        assert_eq!(fake.revoke, "http://127.0.0.1:9/revoke");
        assert!(GoogleEndpoints::google().oauth.authorize.starts_with("https://accounts.google.com/"));
    }
}
