//! Connecting, its state, and disconnecting. One key-store record (`oauth/google`, the same
//! [`SignInRecord`] MCP sign-ins use) holds the client, the tokens, the granted scopes and who
//! is connected; nothing of it goes to the database, the logs or the UI but the account, the
//! client ID and the scopes.
//! (Over 500 lines with its tests; one record's life: connect, renew, disconnect.)

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use oauth2::{RefreshToken, TokenResponse};
use rmcp::transport::auth::{OAuthTokenResponse, StoredCredentials};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::{GoogleClient, GoogleEndpoints, IDENTITY_SCOPES, RECORD_NAME, Service};
use perch_foundation::keys::Keys;
use perch_oauth::OpenUrl;
use perch_oauth::flow::{self, FlowError};
use perch_oauth::loopback::{CallbackError, LoopbackError};
use perch_oauth::store::{SignInEntry, SignInRecord, StoreError};

/// An access token with less left than this is refreshed before it is handed out.
const REFRESH_AHEAD: Duration = Duration::from_secs(10 * 60);
/// The issuer recorded with the tokens.
const ISSUER: &str = "https://accounts.google.com";

/// The connection as Settings and `perch google status` show it. No token, no secret.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct GoogleStatus {
    /// The user's OAuth client, once given.
    pub client_id: Option<String>,
    pub has_client_secret: bool,
    pub connected: bool,
    /// Who is connected (their address).
    pub account: Option<String>,
    /// Every service, and whether Google granted it.
    pub services: Vec<ServiceView>,
    /// When the access token runs out (ms since the epoch); it is renewed before then.
    pub expires_at: Option<i64>,
    /// What is wrong, with what to do: a service the user did not grant, an ended connection.
    pub problem: Option<String>,
    /// While a connection is under way: Google's page (empty until it is known), to open or
    /// copy where no browser opened.
    pub connecting_page: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(rename = "GoogleServiceView")]
pub struct ServiceView {
    pub service: Service,
    pub label: String,
    pub description: String,
    pub granted: bool,
}

/// What the Google server gets at its start: never the refresh token or the client's secret.
#[derive(Clone)]
pub struct ServerAccess {
    pub access_token: String,
    pub scopes: Vec<String>,
    pub account: Option<String>,
    pub expires_at: SystemTime,
}

impl std::fmt::Debug for ServerAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerAccess")
            .field("scopes", &self.scopes)
            .field("account", &self.account)
            .field("expires_at", &self.expires_at)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("add your Google OAuth client first (its client ID, or its client_secret.json)")]
    NoClient,
    #[error("choose at least one thing Perch may do")]
    NothingChosen,
    #[error(
        "you did not allow Perch on Google's page, so nothing changed; connect again to choose what to allow"
    )]
    Denied,
    #[error(
        "Google's page did not come back within {} minutes. If it showed an error such as \
         invalid_client or redirect_uri_mismatch, check that the client ID is right and that it is \
         a \"Desktop app\" client; then connect again", .0.as_secs() / 60
    )]
    TimedOut(Duration),
    #[error("the connection was cancelled; nothing changed")]
    Cancelled,
    #[error(
        "Google refused this client ({0}): check the client ID and secret in Settings -> Connections \
         (a \"Desktop app\" client of your Google Cloud project)"
    )]
    ClientRefused(String),
    #[error("Google refused the sign-in: {0}; connect again")]
    Refused(String),
    #[error("Google could not be reached: {0}. Check the network and connect again")]
    Unreachable(String),
    #[error("Google answered something Perch cannot read: {0}; connect again")]
    Malformed(String),
    #[error(transparent)]
    Loopback(#[from] LoopbackError),
    #[error("the connection could not be kept: {0}")]
    Store(#[from] StoreError),
}

impl From<FlowError> for ConnectError {
    fn from(e: FlowError) -> Self {
        match e {
            FlowError::Loopback(e) => Self::Loopback(e),
            FlowError::Browser(CallbackError::Denied { .. }) => Self::Denied,
            FlowError::Browser(CallbackError::TimedOut(d)) => Self::TimedOut(d),
            FlowError::Browser(CallbackError::Cancelled) => Self::Cancelled,
            e if e.client_refused() => Self::ClientRefused(e.to_string()),
            e @ FlowError::Refused { .. } => Self::Refused(e.to_string()),
            FlowError::Unreachable(m) => Self::Unreachable(m),
            FlowError::Malformed(m) => Self::Malformed(m),
        }
    }
}

/// The Google connection over the key store.
#[derive(Debug, Clone)]
pub struct Connection {
    keys: Arc<Keys>,
    endpoints: GoogleEndpoints,
}

impl Connection {
    /// Against Google (or, in a debug build, the fake a test names).
    pub fn new(keys: Arc<Keys>) -> Self {
        Self::with_endpoints(keys, GoogleEndpoints::current())
    }

    pub fn with_endpoints(keys: Arc<Keys>, endpoints: GoogleEndpoints) -> Self {
        Self { keys, endpoints }
    }

    pub fn endpoints(&self) -> &GoogleEndpoints {
        &self.endpoints
    }

    fn entry(&self) -> SignInEntry {
        SignInEntry::new(self.keys.clone(), RECORD_NAME)
    }

    /// Client IDs are checked for Google's form except against a test's fake.
    pub fn strict(&self) -> bool {
        self.endpoints.test_base.is_none()
    }

    /// The record, if it is for these endpoints (a record made against a test's fake is not
    /// Google's, and the reverse).
    async fn record(&self) -> Result<Option<SignInRecord>, StoreError> {
        Ok(self.entry().load().await?.filter(|r| r.resource == self.endpoints.api))
    }

    pub async fn status(&self) -> Result<GoogleStatus, StoreError> {
        Ok(status_of(self.record().await?.as_ref()))
    }

    /// Keeps the user's client. Another client than the one connected ends the connection
    /// (its tokens belong to the old client, and are revoked at Google).
    pub async fn set_client(&self, client: &GoogleClient) -> Result<GoogleStatus, StoreError> {
        if let Some(record) = self.record().await?
            && record.credentials.as_ref().is_some_and(|c| c.client_id != client.id)
            && record.has_tokens()
        {
            self.disconnect().await?;
        }
        let record = self
            .entry()
            .update(&self.endpoints.api, |r| {
                let same_client = r.credentials.as_ref().is_some_and(|c| c.client_id == client.id);
                let keep = r.credentials.take().filter(|_| same_client);
                r.credentials = Some(keep.unwrap_or_else(|| {
                    let mut fresh = StoredCredentials::new(client.id.clone(), None, Vec::new(), None);
                    fresh.issuer = Some(ISSUER.into());
                    fresh
                }));
                // The same client typed again without its secret keeps the one stored (Google
                // requires it at every refresh).
                if client.secret.is_some() || !same_client {
                    r.client_secret = client.secret.clone();
                }
                r.revocation_endpoint = Some(self.endpoints.revoke.clone());
                r.secret_in_body = true;
            })
            .await?;
        Ok(status_of(Some(&record)))
    }

    /// Connects, or adds services to the connection: the page goes to `open`; the scopes
    /// granted before are kept (`include_granted_scopes`), so adding the calendar does not ask
    /// for mail again.
    pub async fn connect(
        &self,
        services: &[Service],
        open: OpenUrl,
        cancel: &CancellationToken,
    ) -> Result<GoogleStatus, ConnectError> {
        if services.is_empty() {
            return Err(ConnectError::NothingChosen);
        }
        let record = self.record().await?.ok_or(ConnectError::NoClient)?;
        let client_id =
            record.credentials.as_ref().map(|c| c.client_id.clone()).ok_or(ConnectError::NoClient)?;
        let client = flow::ClientIdentity { id: client_id, secret: record.client_secret.clone() };
        let old_tokens = record.credentials.as_ref().and_then(|c| c.token_response.clone());
        let old_refresh = old_tokens.as_ref().and_then(|t| t.refresh_token().cloned());
        let mut scopes: Vec<String> = IDENTITY_SCOPES.iter().map(|s| (*s).to_owned()).collect();
        scopes.extend(services.iter().map(|s| s.scope()));
        scopes.dedup();
        let mut extra = vec![("access_type", "offline"), ("include_granted_scopes", "true")];
        // Google sends a refresh token at the first consent only: without one kept, ask again.
        if old_refresh.is_none() {
            extra.push(("prompt", "consent"));
        }
        let request = flow::Request {
            endpoints: &self.endpoints.oauth,
            client: &client,
            scopes: &scopes,
            extra: &extra,
        };
        let granted = flow::authorize(request, open, cancel).await?;
        let mut tokens = granted.tokens;
        let signed_in_as = id_token_email(&tokens);
        // Another account than the one connected: the old account's refresh token is not its.
        let same_account =
            signed_in_as.is_none() || record.account.is_none() || signed_in_as == record.account;
        if tokens.refresh_token().is_none() && same_account {
            tokens.set_refresh_token(old_refresh);
        }
        let account = signed_in_as.or_else(|| record.account.clone());
        let refused: Vec<&str> =
            services.iter().filter(|s| !s.granted_in(&granted.scopes)).map(|s| s.describe().0).collect();
        let problem = (!refused.is_empty()).then(|| {
            format!(
                "Google did not grant: {}. To use {}, connect again and tick {} on Google's page.",
                refused.join(", "),
                if refused.len() == 1 { "it" } else { "them" },
                if refused.len() == 1 { "its box" } else { "their boxes" },
            )
        });
        let saved = self
            .entry()
            .update(&self.endpoints.api, |r| {
                if let Some(c) = r.credentials.as_mut() {
                    c.token_response = Some(tokens);
                    c.granted_scopes = granted.scopes.clone();
                    c.token_received_at = Some(now_secs());
                }
                r.account = account;
                r.problem = problem;
            })
            .await?;
        tracing::info!(scopes = ?granted.scopes, "connected to Google");
        Ok(status_of(Some(&saved)))
    }

    /// Revokes at Google (best effort) and forgets the tokens here; the client stays, so
    /// connecting again is one step. `Ok(true)` when Google was told.
    pub async fn disconnect(&self) -> Result<bool, StoreError> {
        let Some(record) = self.record().await? else { return Ok(false) };
        let revoked = if record.has_tokens() {
            match perch_oauth::revoke::revoke(&record).await {
                Ok(done) => done,
                Err(e) => {
                    tracing::warn!(error = %e, "could not revoke the Google connection at Google");
                    false
                }
            }
        } else {
            false
        };
        self.entry()
            .update(&self.endpoints.api, |r| {
                if let Some(c) = r.credentials.as_mut() {
                    c.token_response = None;
                    c.granted_scopes.clear();
                    c.token_received_at = None;
                }
                r.account = None;
                r.problem = None;
            })
            .await?;
        tracing::info!(revoked, "disconnected from Google");
        Ok(revoked)
    }

    /// Disconnects and forgets the client too.
    pub async fn forget(&self) -> Result<bool, StoreError> {
        let revoked = self.disconnect().await?;
        self.entry().delete().await?;
        Ok(revoked)
    }

    /// A fresh access token for the Google server, renewed first when it has less than
    /// [`REFRESH_AHEAD`] left, or whatever is left with `renew` (Google refused the stored
    /// one). `None` when not connected, or when Google ended the connection (the status then
    /// says so).
    pub async fn server_access(&self, renew: bool) -> Option<ServerAccess> {
        match self.fresh_access(renew).await {
            Ok(access) => access,
            Err(e) => {
                tracing::warn!(error = %e, "could not read the Google connection");
                None
            }
        }
    }

    async fn fresh_access(&self, renew: bool) -> Result<Option<ServerAccess>, StoreError> {
        let Some(record) = self.record().await? else { return Ok(None) };
        let refused = if renew { access_of(&record).map(|a| a.access_token) } else { None };
        // Still good: unless it is the token Google refused.
        let usable = |a: &ServerAccess| fresh(a) && refused.as_ref() != Some(&a.access_token);
        if let Some(access) = access_of(&record).filter(usable) {
            return Ok(Some(access));
        }
        if !record.has_tokens() {
            return Ok(None);
        }
        let guard = self.entry().refresh_guard().await.map_err(|e| StoreError::Task(e.to_string()))?;
        // Another process (or task) may have renewed it while this one waited for the lock.
        let Some(record) = self.record().await? else { return Ok(None) };
        if let Some(access) = access_of(&record).filter(usable) {
            return Ok(Some(access));
        }
        // What the server gets when renewal cannot happen now (offline, Google unreachable):
        // the token held, even run out, so the server still offers the granted tools (and the
        // lists saved for its idle times stay right); a call then fails and asks for a renewal.
        let current = access_of(&record);
        let Some(credentials) = record.credentials.as_ref() else { return Ok(None) };
        let Some(refresh_token) =
            credentials.token_response.as_ref().and_then(|t| t.refresh_token()).map(|t| t.secret().clone())
        else {
            return Ok(current);
        };
        let client =
            flow::ClientIdentity { id: credentials.client_id.clone(), secret: record.client_secret.clone() };
        let outcome = flow::refresh(&self.endpoints.oauth, &client, &refresh_token).await;
        // The record is changed and saved directly: `update` takes the lock this holds.
        let mut record = record;
        let access = match outcome {
            Ok(mut tokens) => {
                if tokens.refresh_token().is_none() {
                    tokens.set_refresh_token(Some(RefreshToken::new(refresh_token)));
                }
                let scopes = tokens.scopes().map(|s| s.iter().map(|s| s.to_string()).collect::<Vec<_>>());
                if let Some(account) = id_token_email(&tokens) {
                    record.account = Some(account);
                }
                if let Some(c) = record.credentials.as_mut() {
                    c.token_response = Some(tokens);
                    c.token_received_at = Some(now_secs());
                    if let Some(scopes) = scopes {
                        c.granted_scopes = scopes;
                    }
                }
                access_of(&record)
            }
            Err(e) if e.grant_refused() || e.client_refused() => {
                tracing::warn!(error = %e, "Google refused to renew the connection");
                if let Some(c) = record.credentials.as_mut() {
                    c.token_response = None;
                }
                record.problem = Some(ended_message(&e));
                None
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not renew the Google connection; trying again later");
                return Ok(current);
            }
        };
        self.entry().save(&record).await?;
        drop(guard);
        Ok(access)
    }
}

fn ended_message(e: &FlowError) -> String {
    if e.client_refused() {
        format!(
            "Google no longer accepts this client ({e}): check it in Google Cloud (it may have been \
             deleted or its secret reset), then connect again"
        )
    } else {
        "Google ended Perch's access (it expired or was revoked: a client in \"Testing\" status \
         expires after 7 days, and changing the Google password or removing Perch from the account \
         ends it too): connect again"
            .to_owned()
    }
}

fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or_default()
}

fn fresh(access: &ServerAccess) -> bool {
    access.expires_at > SystemTime::now() + REFRESH_AHEAD
}

fn access_of(record: &SignInRecord) -> Option<ServerAccess> {
    let credentials = record.credentials.as_ref()?;
    let tokens = credentials.token_response.as_ref()?;
    let received = UNIX_EPOCH + Duration::from_secs(credentials.token_received_at.unwrap_or_default());
    // Without a stated lifetime, Google's (an hour).
    let lifetime = tokens.expires_in().unwrap_or(Duration::from_secs(3600));
    Some(ServerAccess {
        access_token: tokens.access_token().secret().clone(),
        scopes: credentials.granted_scopes.clone(),
        account: record.account.clone(),
        expires_at: received + lifetime,
    })
}

fn status_of(record: Option<&SignInRecord>) -> GoogleStatus {
    let credentials = record.and_then(|r| r.credentials.as_ref());
    let connected = record.is_some_and(SignInRecord::has_tokens);
    let granted = credentials.filter(|_| connected).map(|c| c.granted_scopes.clone()).unwrap_or_default();
    let services = Service::ALL
        .into_iter()
        .map(|service| {
            let (label, description) = service.describe();
            ServiceView {
                service,
                label: label.into(),
                description: description.into(),
                granted: service.granted_in(&granted),
            }
        })
        .collect();
    let expires_at = record
        .and_then(access_of)
        .and_then(|a| a.expires_at.duration_since(UNIX_EPOCH).ok())
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    GoogleStatus {
        client_id: credentials.map(|c| c.client_id.clone()),
        has_client_secret: record.is_some_and(|r| r.client_secret.is_some()),
        connected,
        account: record.and_then(|r| r.account.clone()).filter(|_| connected),
        services,
        expires_at: expires_at.filter(|_| connected),
        problem: record.and_then(|r| r.problem.clone()),
        connecting_page: None,
    }
}

/// The `email` claim of the ID token that came with the tokens. Its signature is not checked:
/// it came straight from Google's token endpoint over TLS, which OpenID Connect allows in place
/// of a signature check (Core 1.0, section 3.1.3.7), and it is shown, never trusted for access.
fn id_token_email(tokens: &OAuthTokenResponse) -> Option<String> {
    let token = tokens.extra_fields().0.get("id_token")?.as_str()?;
    let payload = token.split('.').nth(1)?;
    let bytes =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    let claims: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    claims.get("email")?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(json: serde_json::Value) -> OAuthTokenResponse {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn the_account_comes_from_the_id_token() {
        let claims = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(br#"{"iss":"https://accounts.google.com","email":"ada@example.com"}"#);
        let with = tokens(serde_json::json!({
            "access_token": "a", "token_type": "Bearer", "id_token": format!("h.{claims}.s")
        }));
        assert_eq!(id_token_email(&with).as_deref(), Some("ada@example.com"));
        let broken =
            tokens(serde_json::json!({ "access_token": "a", "token_type": "Bearer", "id_token": "h.!!.s" }));
        assert_eq!(id_token_email(&broken), None);
    }

    #[test]
    fn the_status_shows_no_token_and_only_granted_services() {
        let mut record = SignInRecord::new("https://www.googleapis.com/");
        let response = tokens(serde_json::json!({
            "access_token": "secret-access", "refresh_token": "secret-refresh", "token_type": "Bearer", "expires_in": 3599
        }));
        record.credentials = Some(StoredCredentials::new(
            "id.apps.googleusercontent.com".into(),
            Some(response),
            vec![Service::MailRead.scope(), "openid".into()],
            Some(now_secs()),
        ));
        record.client_secret = Some("secret-client".into());
        record.account = Some("ada@example.com".into());
        let status = status_of(Some(&record));
        assert!(status.connected && status.has_client_secret);
        let granted: Vec<Service> = status.services.iter().filter(|s| s.granted).map(|s| s.service).collect();
        assert_eq!(granted, vec![Service::MailRead]);
        let shown = serde_json::to_string(&status).unwrap();
        assert!(!shown.contains("secret-"), "{shown}");
        let access = access_of(&record).unwrap();
        assert!(fresh(&access));
        assert!(!format!("{access:?}").contains("secret-access"));

        // Without tokens: the client is shown, nothing is connected.
        record.credentials.as_mut().unwrap().token_response = None;
        let status = status_of(Some(&record));
        assert!(!status.connected && status.account.is_none() && status.services.iter().all(|s| !s.granted));
        assert_eq!(status.client_id.as_deref(), Some("id.apps.googleusercontent.com"));
    }
}
