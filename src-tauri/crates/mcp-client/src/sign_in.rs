//! Signing in to a Streamable HTTP server that needs it (MCP authorization, 2025-06-18 and
//! later, with the 2025-03-26 fallbacks), and connecting with what the sign-in left.
//!
//! rmcp's `AuthorizationManager` does discovery (RFC 9728, RFC 8414 and OpenID Connect with
//! their path variants), PKCE S256, resource indicators (RFC 8707), the RFC 9207 `iss` check,
//! scope selection and refresh. Perch goes its own way where it falls short:
//! - It picks the client identity itself (the entry's `oauth.clientId`, else a client ID
//!   metadata document where the server supports one, else dynamic registration), because
//!   rmcp's session drops the secret a registration answers with; the secret is kept in the
//!   key store beside the tokens ([`perch_oauth::store`]) and given back on every connect.
//! - Every endpoint the metadata names must be HTTPS, or HTTP on a loopback address; rmcp
//!   checks only that discovered hosts are not private addresses.
//! - The metadata is kept with the tokens, so connecting needs no discovery (and works while an
//!   authorization server is slow); a server that moved to another authorization server
//!   answers 401, and signing in again discovers the new one.
//! - Signing out revokes at the server (RFC 7009), which rmcp does not do.

use std::sync::Arc;
use std::time::Duration;

use oauth2::TokenResponse;
use reqwest::Url;
use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationManager, AuthorizationMetadata, AuthorizationMetadataSource,
    AuthorizationRequest, AuthorizationSession, OAuthClientConfig,
};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::config::{ServerConfig, Transport};
use perch_foundation::keys::Keys;
use perch_oauth::loopback::{CallbackError, Loopback, LoopbackError};
use perch_oauth::store::{KeyCredentialStore, SignInEntry, SignInRecord, StoreError};

/// How long the browser step may take before the sign-in gives up.
pub const BROWSER_WAIT: Duration = Duration::from_secs(5 * 60);
/// The name Perch registers under.
const CLIENT_NAME: &str = "Perch";

/// The key store's name for a server's sign-in.
pub fn record_name(server: &str) -> String {
    format!("oauth/mcp/{server}")
}

/// Why a sign-in did not complete, in words a person can act on.
#[derive(Debug, thiserror::Error)]
pub enum SignInError {
    #[error("{0} is not a Streamable HTTP server; only those sign in")]
    NotHttp(String),
    #[error("could not find how to sign in to {server}: {message}")]
    Discovery { server: String, message: String },
    #[error(
        "{server}'s authorization server names {url} for sign-in, which is not HTTPS; Perch sends \
         credentials only over HTTPS (or to this computer)"
    )]
    InsecureEndpoint { server: String, url: String },
    #[error(
        "{server}'s authorization server did not register Perch ({message}); add a client registered \
         with it as \"oauth\": {{\"clientId\": ...}} in the server's entry"
    )]
    Registration { server: String, message: String },
    #[error(transparent)]
    Loopback(#[from] LoopbackError),
    #[error("{0}")]
    Browser(#[from] CallbackError),
    #[error("{server} refused the sign-in: {message}")]
    Token { server: String, message: String },
    #[error("the sign-in for {server} could not be kept: {source}")]
    Store {
        server: String,
        #[source]
        source: StoreError,
    },
}

pub use perch_oauth::OpenUrl;

/// What a sign-in asks for beyond the server's entry.
#[derive(Default)]
pub struct SignInOptions {
    /// The `WWW-Authenticate` of the answer that asked for it (its `resource_metadata` and
    /// `scope` guide discovery and the scopes asked for).
    pub challenge: Option<String>,
    /// Scopes to ask for, already granted ones included (a step-up); otherwise the challenge's,
    /// else the resource's, else none.
    pub scopes: Vec<String>,
    /// Perch's client ID metadata document (a setting).
    pub client_metadata_url: Option<String>,
    pub cancel: CancellationToken,
}

/// The sign-in state of one server, as the dashboard and `perch mcp list` show it. No token.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct SignInView {
    pub signed_in: bool,
    /// Who issued the tokens.
    pub issuer: Option<String>,
    pub scopes: Vec<String>,
    /// When the access token runs out (ms since the epoch); a refresh token renews it.
    pub expires_at: Option<i64>,
    pub can_refresh: bool,
}

impl SignInView {
    pub fn of(record: &SignInRecord) -> Self {
        let credentials = record.credentials.as_ref();
        let tokens = credentials.and_then(|c| c.token_response.as_ref());
        let expires_at = tokens
            .and_then(|t| t.expires_in())
            .zip(credentials.and_then(|c| c.token_received_at))
            .map(|(lifetime, received)| {
                i64::try_from(received.saturating_add(lifetime.as_secs()).saturating_mul(1000))
                    .unwrap_or(i64::MAX)
            });
        Self {
            signed_in: tokens.is_some(),
            issuer: credentials.and_then(|c| c.issuer.clone()),
            scopes: credentials.map(|c| c.granted_scopes.clone()).unwrap_or_default(),
            expires_at,
            can_refresh: tokens.is_some_and(|t| t.refresh_token().is_some()),
        }
    }
}

/// Runs the whole sign-in: discovery, client identity, the browser, the code for tokens, and
/// keeps the result. `open` receives the page to show the user.
pub async fn sign_in(
    keys: Arc<Keys>,
    server: &ServerConfig,
    options: SignInOptions,
    open: OpenUrl,
) -> Result<SignInView, SignInError> {
    let name = server.name.clone();
    let Transport::Http { url, oauth, .. } = &server.transport else {
        return Err(SignInError::NotHttp(name));
    };
    let oauth = oauth.clone().unwrap_or_default();
    let discovery = |e: AuthError| SignInError::Discovery { server: name.clone(), message: e.to_string() };
    let entry = SignInEntry::new(keys, record_name(&name));

    // rmcp builds its own HTTP client for the authorization server, over the same rustls.
    perch_foundation::http::install_tls_provider();
    let mut manager = AuthorizationManager::new(url.as_str()).await.map_err(discovery)?;
    manager.set_credential_store(KeyCredentialStore::new(entry.clone(), url));
    let resolution =
        manager.resolve_metadata_from_challenge(options.challenge.as_deref()).await.map_err(discovery)?;
    let metadata = resolution.metadata;
    check_endpoints(&name, &metadata)?;
    if resolution.source == AuthorizationMetadataSource::LegacyEndpointFallback {
        tracing::info!(server = %name, "no OAuth metadata published; using the 2025-03-26 default endpoints");
    }
    manager.set_metadata(metadata.clone());

    let loopback = Loopback::bind(oauth.redirect_port).await?;
    let redirect = loopback.redirect_uri();
    let scopes: Vec<String> = if let Some(configured) = oauth.scopes.clone().filter(|s| !s.is_empty()) {
        configured
    } else if !options.scopes.is_empty() {
        options.scopes.clone()
    } else {
        manager.select_initial_scopes(&[]).await
    };
    let mut request = AuthorizationRequest::new(&redirect)
        .with_client_name(CLIENT_NAME)
        .with_application_type("native")
        .with_scopes(scopes.clone());

    // The client identity, in the order the specification prefers.
    let supports_cimd = metadata
        .additional_fields
        .get("client_id_metadata_document_supported")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false);
    let mut secret = None;
    if let Some(client_id) = &oauth.client_id {
        request = request.with_preregistered_client(client_id);
        if let Some(s) = &oauth.client_secret {
            request = request.with_client_secret(s.expose());
            secret = Some(s.expose().to_owned());
        }
    } else if let Some(document) = options.client_metadata_url.as_deref().filter(|_| supports_cimd) {
        request = request.with_client_metadata_url(document);
    } else {
        let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
        let registered = manager
            .register_client(CLIENT_NAME, &redirect, &scope_refs)
            .await
            .map_err(|e| SignInError::Registration { server: name.clone(), message: e.to_string() })?;
        request = request.with_preregistered_client(&registered.client_id);
        if let Some(s) = registered.client_secret {
            request = request.with_client_secret(&s);
            secret = Some(s);
        }
    }

    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| SignInError::Token { server: name.clone(), message: e.to_string() })?;
    let page = session.get_authorization_url().to_owned();
    let state = Url::parse(&page)
        .ok()
        .and_then(|u| u.query_pairs().find(|(k, _)| k == "state").map(|(_, v)| v.into_owned()))
        .unwrap_or_default();
    open(&page);
    let callback = loopback.wait(&state, BROWSER_WAIT, &options.cancel).await?;
    session
        .handle_callback_url(&callback)
        .await
        .map_err(|e| SignInError::Token { server: name.clone(), message: token_error(&e) })?;

    // The tokens are saved; the rest of the record goes beside them.
    let record = entry
        .update(url, |r| {
            r.client_secret = secret;
            r.revocation_endpoint = endpoint(&metadata, "revocation_endpoint");
            r.secret_in_body = secret_in_body(&metadata);
            r.metadata = Some(metadata.clone());
        })
        .await
        .map_err(|source| SignInError::Store { server: name.clone(), source })?;
    tracing::info!(server = %name, "signed in");
    Ok(SignInView::of(&record))
}

/// An error from the token endpoint in a sentence (rmcp's carry the server's whole answer,
/// which can be a page of HTML).
fn token_error(e: &AuthError) -> String {
    let text = e.to_string();
    let text = text.split_once('<').map_or(text.as_str(), |(head, _)| head.trim_end());
    text.chars().take(300).collect()
}

/// The stored sign-in of `server`, if it is for the server's current URL (one key-store read).
pub async fn stored(keys: Arc<Keys>, server: &ServerConfig) -> Result<Option<SignInRecord>, StoreError> {
    let Transport::Http { url, .. } = &server.transport else { return Ok(None) };
    let record = SignInEntry::new(keys, record_name(&server.name)).load().await?;
    Ok(record.filter(|r| r.resource == *url))
}

/// A client for a server signed in to earlier (`record`, from [`stored`]): the tokens go on every
/// request, refreshed before they run out and once on a 401. `None` when the record holds no
/// usable sign-in.
pub async fn authorized_client(
    keys: Arc<Keys>,
    server: &ServerConfig,
    record: &SignInRecord,
    http: reqwest::Client,
) -> Option<AuthClient<reqwest::Client>> {
    let (Some(metadata), Some(credentials)) = (record.metadata.clone(), record.credentials.as_ref()) else {
        return None;
    };
    if !record.has_tokens() {
        return None;
    }
    let url = &record.resource;
    perch_foundation::http::install_tls_provider();
    let mut manager = AuthorizationManager::new(url.as_str()).await.ok()?;
    manager.set_credential_store(KeyCredentialStore::new(
        SignInEntry::new(keys, record_name(&server.name)),
        url,
    ));
    manager.set_metadata(metadata);
    let mut client = OAuthClientConfig::new(credentials.client_id.clone(), url.clone());
    if let Some(secret) = &record.client_secret {
        client = client.with_client_secret(secret.clone());
    }
    if let Err(e) = manager.configure_client(client) {
        tracing::warn!(server = %server.name, error = %e, "the stored sign-in cannot be used");
        return None;
    }
    Some(AuthClient::new(http, manager))
}

/// The sign-in state of `server`, from the key store.
pub async fn view(keys: Arc<Keys>, server: &ServerConfig) -> Option<SignInView> {
    match stored(keys, server).await {
        Ok(record) => record.as_ref().map(SignInView::of),
        Err(e) => {
            tracing::warn!(server = %server.name, error = %e, "could not read the stored sign-in");
            None
        }
    }
}

/// Signs out: revokes at the server where it can (best effort) and forgets the sign-in here.
/// `Ok(false)` when the server could not be told (no revocation endpoint, or it failed).
pub async fn sign_out(keys: Arc<Keys>, server: &str) -> Result<bool, StoreError> {
    let entry = SignInEntry::new(keys, record_name(server));
    let revoked = match entry.load().await {
        Ok(Some(record)) => match perch_oauth::revoke::revoke(&record).await {
            Ok(done) => done,
            Err(e) => {
                tracing::warn!(%server, error = %e, "could not revoke the sign-in at the server");
                false
            }
        },
        Ok(None) => false,
        // A damaged record is forgotten all the same.
        Err(StoreError::Damaged(_)) => false,
        Err(e) => return Err(e),
    };
    entry.delete().await?;
    Ok(revoked)
}

fn endpoint(metadata: &AuthorizationMetadata, field: &str) -> Option<String> {
    metadata.additional_fields.get(field).and_then(serde_json::Value::as_str).map(str::to_owned)
}

/// rmcp's rule for the token endpoint, kept for revocation: the body only where the server
/// takes `client_secret_post` and not Basic.
fn secret_in_body(metadata: &AuthorizationMetadata) -> bool {
    let methods =
        metadata.additional_fields.get("token_endpoint_auth_methods_supported").and_then(|v| v.as_array());
    let has = |m: &str| methods.is_some_and(|a| a.iter().any(|v| v.as_str() == Some(m)));
    has("client_secret_post") && !has("client_secret_basic")
}

/// Every endpoint credentials go to must be HTTPS, or HTTP to this computer.
fn check_endpoints(server: &str, metadata: &AuthorizationMetadata) -> Result<(), SignInError> {
    let named = [Some(metadata.authorization_endpoint.clone()), Some(metadata.token_endpoint.clone())]
        .into_iter()
        .chain([metadata.registration_endpoint.clone(), endpoint(metadata, "revocation_endpoint")])
        .flatten();
    for url in named {
        if !secure(&url) {
            return Err(SignInError::InsecureEndpoint { server: server.to_owned(), url });
        }
    }
    Ok(())
}

fn secure(url: &str) -> bool {
    let Ok(parsed) = Url::parse(url) else { return false };
    match parsed.scheme() {
        "https" => true,
        "http" => parsed.host_str().is_some_and(|host| {
            let bare = host.trim_start_matches('[').trim_end_matches(']');
            bare.parse::<std::net::IpAddr>()
                .map_or(host.eq_ignore_ascii_case("localhost"), |ip| ip.is_loopback())
        }),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_go_only_over_https_or_to_this_computer() {
        assert!(secure("https://auth.example/token"));
        assert!(secure("http://127.0.0.1:8080/token"));
        assert!(secure("http://[::1]:8080/token"));
        assert!(secure("http://localhost/token"));
        assert!(!secure("http://auth.example/token"));
        assert!(!secure("http://127.0.0.1.evil.example/token"));
        assert!(!secure("ftp://auth.example/token"));
        assert!(!secure("not a url"));
        let metadata: AuthorizationMetadata = serde_json::from_value(serde_json::json!({
            "authorization_endpoint": "https://auth.example/authorize",
            "token_endpoint": "https://auth.example/token",
            "revocation_endpoint": "http://auth.example/revoke",
        }))
        .unwrap();
        let err = check_endpoints("linear", &metadata).unwrap_err();
        assert!(err.to_string().contains("http://auth.example/revoke"), "{err}");
    }

    #[test]
    fn the_secret_goes_in_the_body_only_where_basic_is_not_offered() {
        let with = |methods: serde_json::Value| -> AuthorizationMetadata {
            serde_json::from_value(serde_json::json!({
                "authorization_endpoint": "https://a/authorize", "token_endpoint": "https://a/token",
                "token_endpoint_auth_methods_supported": methods,
            }))
            .unwrap()
        };
        assert!(secret_in_body(&with(serde_json::json!(["client_secret_post"]))));
        assert!(!secret_in_body(&with(serde_json::json!(["client_secret_post", "client_secret_basic"]))));
        assert!(!secret_in_body(&with(serde_json::json!(["none"]))));
    }

    #[test]
    fn a_token_endpoint_answering_html_is_cut_to_its_sentence() {
        let e = AuthError::TokenExchangeFailed("Server returned error response <html><body>Oops".into());
        assert_eq!(token_error(&e), "OAuth token exchange failed: Server returned error response");
    }
}
