//! The environment the engine starts this server with (never a refresh token):
//! - `PERCH_GOOGLE_ACCESS_TOKEN`: a fresh access token; absent, the server offers no tools.
//! - `PERCH_GOOGLE_SCOPES`: the granted scopes, space separated, which decide the tools listed.
//! - `PERCH_GOOGLE_ACCOUNT`: the user's address (left out of reply-all).
//! - `PERCH_GOOGLE_TIME_ZONE`: an IANA zone for showing and reading times; else the system's.
//! - `PERCH_GOOGLE_API_BASE`: debug builds only, for tests: one root for both APIs.

use jiff::tz::TimeZone;
use url::Url;

use crate::scopes::Granted;

pub const ACCESS_TOKEN: &str = "PERCH_GOOGLE_ACCESS_TOKEN";
pub const SCOPES: &str = "PERCH_GOOGLE_SCOPES";
pub const ACCOUNT: &str = "PERCH_GOOGLE_ACCOUNT";
pub const TIME_ZONE: &str = "PERCH_GOOGLE_TIME_ZONE";
pub const API_BASE: &str = "PERCH_GOOGLE_API_BASE";

const GMAIL_ROOT: &str = "https://gmail.googleapis.com/gmail/v1/";
const CALENDAR_ROOT: &str = "https://www.googleapis.com/calendar/v3/";

/// The OAuth access token. Its Debug output is redacted so that no log line can carry it.
#[derive(Clone)]
pub struct AccessToken(String);

impl AccessToken {
    pub fn new(token: impl Into<String>) -> Self {
        Self(token.into())
    }

    pub fn secret(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for AccessToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AccessToken(redacted)")
    }
}

/// The user's time zone and the name it is shown by.
#[derive(Debug, Clone)]
pub struct UserZone {
    pub tz: TimeZone,
    pub name: String,
}

impl UserZone {
    pub fn named(name: &str) -> Result<Self, String> {
        TimeZone::get(name)
            .map(|tz| Self { tz, name: name.to_owned() })
            .map_err(|_| format!("{name} is not a time zone name (such as Europe/Paris or America/New_York)"))
    }

    pub fn system() -> Self {
        let tz = TimeZone::system();
        let name = tz.iana_name().unwrap_or("the system's time zone").to_owned();
        Self { tz, name }
    }
}

/// Where the two APIs live.
#[derive(Debug, Clone)]
pub struct Roots {
    pub gmail: Url,
    pub calendar: Url,
}

impl Default for Roots {
    fn default() -> Self {
        Self { gmail: fixed(GMAIL_ROOT), calendar: fixed(CALENDAR_ROOT) }
    }
}

#[allow(clippy::expect_used)] // constant, valid addresses
fn fixed(url: &str) -> Url {
    Url::parse(url).expect("a valid constant URL")
}

#[derive(Debug, Clone)]
pub struct Config {
    pub token: Option<AccessToken>,
    pub granted: Granted,
    pub account: Option<String>,
    pub zone: UserZone,
    pub roots: Roots,
    /// Said in the log at start: settings that were ignored and why.
    pub warnings: Vec<String>,
}

impl Config {
    /// Reads the contract from `var` (the process environment, or a map in tests).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Self {
        let present = |name: &str| var(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
        let mut warnings = Vec::new();
        let zone = match present(TIME_ZONE) {
            Some(name) => UserZone::named(&name).unwrap_or_else(|e| {
                warnings.push(format!("{TIME_ZONE}: {e}; using the system's time zone"));
                UserZone::system()
            }),
            None => UserZone::system(),
        };
        let roots = match present(API_BASE) {
            Some(base) if cfg!(debug_assertions) => test_roots(&base).unwrap_or_else(|e| {
                warnings.push(format!("{API_BASE}: {e}; using Google's own addresses"));
                Roots::default()
            }),
            Some(_) => {
                warnings.push(format!("{API_BASE} is honoured only in debug builds; ignored"));
                Roots::default()
            }
            None => Roots::default(),
        };
        Self {
            token: present(ACCESS_TOKEN).map(AccessToken),
            granted: Granted::parse(&present(SCOPES).unwrap_or_default()),
            account: present(ACCOUNT).map(|a| a.to_ascii_lowercase()),
            zone,
            roots,
            warnings,
        }
    }
}

/// The roots under a test server's base: https anywhere, plain http only to 127.0.0.1 (a fake on
/// this machine), so a mistaken setting cannot send the token in the clear.
fn test_roots(base: &str) -> Result<Roots, String> {
    let base = Url::parse(base.trim_end_matches('/')).map_err(|e| format!("not an address ({e})"))?;
    match (base.scheme(), base.host_str()) {
        ("https", Some(_)) | ("http", Some("127.0.0.1")) => {}
        _ => return Err("only https, or http to 127.0.0.1, is accepted".into()),
    }
    let under = |path: &str| {
        Url::parse(&format!("{}/{path}", base.as_str().trim_end_matches('/'))).map_err(|e| e.to_string())
    };
    Ok(Roots { gmail: under("gmail/v1/")?, calendar: under("calendar/v3/")? })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(vars: &[(&str, &str)]) -> Config {
        let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Config::from_vars(|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    #[test]
    fn reads_the_contract_and_hides_the_token() {
        let c = config(&[
            (ACCESS_TOKEN, "ya29.secret"),
            (SCOPES, "https://www.googleapis.com/auth/gmail.readonly"),
            (ACCOUNT, "Me@Example.org"),
            (TIME_ZONE, "Asia/Tokyo"),
        ]);
        assert_eq!(c.token.as_ref().map(AccessToken::secret), Some("ya29.secret"));
        assert!(!format!("{c:?}").contains("ya29"), "{c:?}");
        assert!(c.granted.allows("gmail_search"));
        assert_eq!(c.account.as_deref(), Some("me@example.org"));
        assert_eq!(c.zone.name, "Asia/Tokyo");
        assert_eq!(c.roots.gmail.as_str(), GMAIL_ROOT);
        assert!(config(&[(ACCESS_TOKEN, "  ")]).token.is_none());
    }

    #[test]
    fn the_test_base_is_loopback_http_or_https_only() {
        let c = config(&[(API_BASE, "http://127.0.0.1:4321")]);
        assert_eq!(c.roots.gmail.as_str(), "http://127.0.0.1:4321/gmail/v1/");
        assert_eq!(c.roots.calendar.as_str(), "http://127.0.0.1:4321/calendar/v3/");
        let remote = config(&[(API_BASE, "http://example.org")]);
        assert_eq!(remote.roots.gmail.as_str(), GMAIL_ROOT);
        assert_eq!(remote.warnings.len(), 1);
        let bad_zone = config(&[(TIME_ZONE, "Mars/Olympus")]);
        assert!(bad_zone.warnings[0].contains("Mars/Olympus"), "{:?}", bad_zone.warnings);
    }
}
