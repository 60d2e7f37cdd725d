//! The authorization-code grant with PKCE (RFC 6749 section 4.1, RFC 7636) against a provider
//! whose endpoints are known in advance, as RFC 8252 describes for native apps: the page in the
//! user's browser ([`super::browser`] through the caller's `open`), the code back on a loopback
//! redirect ([`super::loopback`]), the code exchanged for tokens, and the refresh grant.
//!
//! MCP servers do not come here: theirs is rmcp's flow, which adds what MCP requires (a resource
//! indicator on every request) and which a provider such as Google does not take. The PKCE pair,
//! the state and the token answer are the oauth2 crate's types, the same ones rmcp uses, so the
//! tokens are kept in one record format ([`super::store`]).

use std::time::Duration;

use oauth2::{CsrfToken, PkceCodeChallenge};
use reqwest::Url;
use rmcp::transport::auth::OAuthTokenResponse;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use super::OpenUrl;
use super::loopback::{CallbackError, Loopback, LoopbackError};

/// How long the browser step may take before the flow gives up.
pub const BROWSER_WAIT: Duration = Duration::from_secs(5 * 60);
/// How long the token endpoint gets to answer.
const TOKEN_TIMEOUT: Duration = Duration::from_secs(30);
/// The most of a token endpoint's answer that is read (a token answer is a few kilobytes).
const MAX_ANSWER: usize = 256 * 1024;

/// Where the provider's pages and endpoints are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoints {
    pub authorize: String,
    pub token: String,
}

/// The client the user registered with the provider. The secret of an installed app is not a
/// secret in the RFC's sense (every copy of the app has it), but providers such as Google still
/// require it at the token endpoint, so it is kept in the key store like the tokens.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientIdentity {
    pub id: String,
    pub secret: Option<String>,
}

impl std::fmt::Debug for ClientIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientIdentity")
            .field("id", &self.id)
            .field("secret", &self.secret.as_ref().map(|_| "[REDACTED]"))
            .finish()
    }
}

/// One authorization request.
pub struct Request<'a> {
    pub endpoints: &'a Endpoints,
    pub client: &'a ClientIdentity,
    pub scopes: &'a [String],
    /// The provider's own parameters (Google: `access_type`, `include_granted_scopes`, `prompt`).
    pub extra: &'a [(&'a str, &'a str)],
}

#[derive(Debug, thiserror::Error)]
pub enum FlowError {
    #[error(transparent)]
    Loopback(#[from] LoopbackError),
    #[error("{0}")]
    Browser(#[from] CallbackError),
    /// The token endpoint answered with an OAuth error (RFC 6749 section 5.2).
    #[error("{}", .description.as_deref().map_or_else(|| .error.clone(), |d| format!("{} ({d})", .error)))]
    Refused { status: u16, error: String, description: Option<String> },
    #[error("the sign-in service could not be reached: {0}")]
    Unreachable(String),
    #[error("the sign-in service answered something that is not a token: {0}")]
    Malformed(String),
}

impl FlowError {
    /// The grant was refused for good (RFC 6749 `invalid_grant`): an expired or revoked refresh
    /// token, or a code already used.
    pub fn grant_refused(&self) -> bool {
        matches!(self, Self::Refused { error, .. } if error == "invalid_grant")
    }

    /// The provider does not know the client or refused its credentials.
    pub fn client_refused(&self) -> bool {
        matches!(self, Self::Refused { error, .. } if error == "invalid_client" || error == "unauthorized_client")
    }
}

/// What a completed authorization gave.
#[derive(Debug)]
pub struct Granted {
    pub tokens: OAuthTokenResponse,
    /// The scopes granted, from the answer's `scope` (the user may have refused some), else the
    /// ones asked for (RFC 6749 section 5.1: absent means as requested).
    pub scopes: Vec<String>,
}

/// Runs the authorization: the page goes to `open`, the browser comes back to a loopback port,
/// and the code is exchanged for tokens.
pub async fn authorize(
    request: Request<'_>,
    open: OpenUrl,
    cancel: &CancellationToken,
) -> Result<Granted, FlowError> {
    let loopback = Loopback::bind(None).await?;
    let redirect = loopback.redirect_uri();
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let state = CsrfToken::new_random();
    let page = authorization_url(&request, &redirect, challenge.as_str(), state.secret())
        .map_err(|e| FlowError::Malformed(format!("the authorization address: {e}")))?;
    open(page.as_str());
    let callback = loopback.wait(state.secret(), BROWSER_WAIT, cancel).await?;
    let code = Url::parse(&callback)
        .ok()
        .and_then(|u| u.query_pairs().find(|(k, _)| k == "code").map(|(_, v)| v.into_owned()))
        .ok_or_else(|| FlowError::Malformed("the browser came back without a code".into()))?;
    let mut form = vec![
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", redirect.as_str()),
        ("code_verifier", verifier.secret().as_str()),
    ];
    let tokens = token_request(request.endpoints, request.client, &mut form).await?;
    let scopes = granted_scopes(&tokens, request.scopes);
    Ok(Granted { tokens, scopes })
}

/// Trades a refresh token for a new access token. The answer may leave out the refresh token
/// (Google does: the old one stays valid), which the caller keeps.
pub async fn refresh(
    endpoints: &Endpoints,
    client: &ClientIdentity,
    refresh_token: &str,
) -> Result<OAuthTokenResponse, FlowError> {
    let mut form = vec![("grant_type", "refresh_token"), ("refresh_token", refresh_token)];
    token_request(endpoints, client, &mut form).await
}

/// The page the user is sent to.
fn authorization_url(
    request: &Request<'_>,
    redirect: &str,
    challenge: &str,
    state: &str,
) -> Result<Url, url::ParseError> {
    let mut url = Url::parse(&request.endpoints.authorize)?;
    {
        let mut query = url.query_pairs_mut();
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", &request.client.id)
            .append_pair("redirect_uri", redirect)
            .append_pair("scope", &request.scopes.join(" "))
            .append_pair("state", state)
            .append_pair("code_challenge", challenge)
            .append_pair("code_challenge_method", "S256");
        for (name, value) in request.extra {
            query.append_pair(name, value);
        }
    }
    Ok(url)
}

/// An OAuth error answer (RFC 6749 section 5.2).
#[derive(Deserialize)]
struct ErrorAnswer {
    error: String,
    error_description: Option<String>,
}

/// Posts to the token endpoint with the client's credentials in the body (RFC 6749 section
/// 2.3.1 allows it, and it is what installed-app providers document).
async fn token_request<'a>(
    endpoints: &Endpoints,
    client: &'a ClientIdentity,
    form: &mut Vec<(&'a str, &'a str)>,
) -> Result<OAuthTokenResponse, FlowError> {
    form.push(("client_id", &client.id));
    if let Some(secret) = &client.secret {
        form.push(("client_secret", secret));
    }
    let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(form.iter()).finish();
    let http = perch_foundation::http::client_builder()
        .timeout(TOKEN_TIMEOUT)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| FlowError::Unreachable(e.to_string()))?;
    let response = http
        .post(&endpoints.token)
        .header(http::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(http::header::ACCEPT, "application/json")
        .body(body)
        .send()
        .await
        .map_err(|e| FlowError::Unreachable(e.without_url().to_string()))?;
    let status = response.status().as_u16();
    let bytes = read_bounded(response).await?;
    if !(200..300).contains(&status) {
        return Err(match serde_json::from_slice::<ErrorAnswer>(&bytes) {
            Ok(answer) => {
                FlowError::Refused { status, error: answer.error, description: answer.error_description }
            }
            Err(_) => FlowError::Refused { status, error: format!("HTTP {status}"), description: None },
        });
    }
    let tokens: OAuthTokenResponse =
        serde_json::from_slice(&bytes).map_err(|e| FlowError::Malformed(e.to_string()))?;
    if *oauth2::TokenResponse::token_type(&tokens) != oauth2::basic::BasicTokenType::Bearer {
        return Err(FlowError::Malformed("a token that is not a bearer token".into()));
    }
    Ok(tokens)
}

async fn read_bounded(mut response: reqwest::Response) -> Result<Vec<u8>, FlowError> {
    let mut bytes = Vec::new();
    while let Some(chunk) =
        response.chunk().await.map_err(|e| FlowError::Unreachable(e.without_url().to_string()))?
    {
        if bytes.len() + chunk.len() > MAX_ANSWER {
            return Err(FlowError::Malformed("the answer is too large".into()));
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

fn granted_scopes(tokens: &OAuthTokenResponse, asked: &[String]) -> Vec<String> {
    use oauth2::TokenResponse;
    match tokens.scopes() {
        Some(scopes) => scopes.iter().map(|s| s.to_string()).collect(),
        None => asked.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_carries_pkce_state_and_the_providers_parameters() {
        let endpoints =
            Endpoints { authorize: "https://auth.example/o/auth?hl=en".into(), token: String::new() };
        let client = ClientIdentity { id: "id-1".into(), secret: Some("s-1".into()) };
        let scopes = vec!["openid".to_owned(), "https://api.example/mail".to_owned()];
        let request = Request {
            endpoints: &endpoints,
            client: &client,
            scopes: &scopes,
            extra: &[("access_type", "offline")],
        };
        let url = authorization_url(&request, "http://127.0.0.1:5000/callback", "ch", "st").unwrap();
        let pairs: std::collections::HashMap<String, String> = url.query_pairs().into_owned().collect();
        assert_eq!(pairs["hl"], "en", "the endpoint's own query is kept");
        assert_eq!(pairs["client_id"], "id-1");
        assert_eq!(pairs["scope"], "openid https://api.example/mail");
        assert_eq!(pairs["code_challenge_method"], "S256");
        assert_eq!(pairs["code_challenge"], "ch");
        assert_eq!(pairs["state"], "st");
        assert_eq!(pairs["access_type"], "offline");
        assert!(!url.as_str().contains("s-1"), "the secret never goes to the browser");
        assert!(!format!("{client:?}").contains("s-1"));
    }

    #[test]
    fn an_absent_scope_means_what_was_asked() {
        let asked = vec!["a".to_owned(), "b".to_owned()];
        let with: OAuthTokenResponse = serde_json::from_value(serde_json::json!({
            "access_token": "t", "token_type": "Bearer", "scope": "a"
        }))
        .unwrap();
        assert_eq!(granted_scopes(&with, &asked), vec!["a".to_owned()]);
        let without: OAuthTokenResponse =
            serde_json::from_value(serde_json::json!({ "access_token": "t", "token_type": "Bearer" }))
                .unwrap();
        assert_eq!(granted_scopes(&without, &asked), asked);
    }

    #[test]
    fn refusals_are_told_apart() {
        let refused =
            |error: &str| FlowError::Refused { status: 400, error: error.into(), description: None };
        assert!(refused("invalid_grant").grant_refused());
        assert!(!refused("invalid_grant").client_refused());
        assert!(refused("invalid_client").client_refused());
        let described = FlowError::Refused {
            status: 400,
            error: "invalid_grant".into(),
            description: Some("Token has been expired or revoked.".into()),
        };
        assert_eq!(described.to_string(), "invalid_grant (Token has been expired or revoked.)");
    }
}
