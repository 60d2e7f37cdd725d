//! Google's OAuth 2.0 for installed apps: the authorization endpoint (loopback redirect, PKCE,
//! incremental authorization), the token endpoint (code exchange, refresh), revocation,
//! userinfo, and the bearer check every API method makes against its scope list.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::errors::{self, auth_page, oauth as oauth_error};
use crate::http::{Request, Response};
use crate::{Consent, State};

/// Google's access tokens live an hour; `expires_in` says 3599 as Google does.
const ACCESS_LIFETIME: Duration = Duration::from_secs(3599);
const CODE_LIFETIME: Duration = Duration::from_secs(600);
const USERINFO_EMAIL: &str = "https://www.googleapis.com/auth/userinfo.email";
const USERINFO_PROFILE: &str = "https://www.googleapis.com/auth/userinfo.profile";

#[derive(Clone, Copy, PartialEq, Eq)]
enum ClientKind {
    Installed,
    Web,
}

fn client(id: &str) -> Option<(ClientKind, &'static str)> {
    match id {
        crate::DESKTOP_CLIENT_ID => Some((ClientKind::Installed, crate::DESKTOP_CLIENT_SECRET)),
        crate::WEB_CLIENT_ID => Some((ClientKind::Web, crate::WEB_CLIENT_SECRET)),
        _ => None,
    }
}

struct Code {
    client_id: String,
    redirect_uri: String,
    challenge: String,
    scopes: BTreeSet<String>,
    issued: Instant,
    /// access_type=offline and (first consent or prompt=consent): Google's rule for handing out
    /// a refresh token.
    refresh_due: bool,
    used: bool,
}

struct RefreshGrant {
    client_id: String,
    scopes: BTreeSet<String>,
    revoked: bool,
}

struct Access {
    scopes: BTreeSet<String>,
    expires: Instant,
    client_id: Option<String>,
    revoked: bool,
}

pub(crate) struct OAuthState {
    pub consent: Consent,
    /// Scopes the user has granted each client so far (Google keeps one grant per client+user).
    grants: HashMap<String, BTreeSet<String>>,
    codes: HashMap<String, Code>,
    refresh: HashMap<String, RefreshGrant>,
    access: HashMap<String, Access>,
}

impl Default for OAuthState {
    fn default() -> Self {
        Self {
            consent: Consent::Grant,
            grants: HashMap::new(),
            codes: HashMap::new(),
            refresh: HashMap::new(),
            access: HashMap::new(),
        }
    }
}

impl OAuthState {
    pub fn expire_access_tokens(&mut self) {
        let now = Instant::now();
        self.access.values_mut().for_each(|a| a.expires = now);
    }

    pub fn revoke_all(&mut self) {
        self.access.values_mut().for_each(|a| a.revoked = true);
        self.refresh.values_mut().for_each(|r| r.revoked = true);
        self.grants.clear();
    }

    /// Revokes a client's whole grant, as revoking any of its tokens does at Google.
    fn revoke_client(&mut self, client_id: &str) {
        self.grants.remove(client_id);
        for r in self.refresh.values_mut().filter(|r| r.client_id == client_id) {
            r.revoked = true;
        }
        for a in self.access.values_mut().filter(|a| a.client_id.as_deref() == Some(client_id)) {
            a.revoked = true;
        }
    }
}

/// Google's short names for the sign-in scopes, as they come back in `scope`.
fn normalize(scope: &str) -> String {
    match scope {
        "email" => USERINFO_EMAIL.to_owned(),
        "profile" => USERINFO_PROFILE.to_owned(),
        other => other.to_owned(),
    }
}

fn is_sign_in_scope(scope: &str) -> bool {
    scope == "openid" || scope == USERINFO_EMAIL || scope == USERINFO_PROFILE
}

fn is_known_scope(scope: &str) -> bool {
    is_sign_in_scope(scope)
        || scope == "https://mail.google.com/"
        || scope.strip_prefix("https://www.googleapis.com/auth/").is_some_and(|s| !s.is_empty())
}

fn scope_string(scopes: &BTreeSet<String>) -> String {
    scopes.iter().cloned().collect::<Vec<_>>().join(" ")
}

/// What a desktop client may be sent back to: any port and path on the loopback interface.
fn is_loopback(redirect_uri: &str) -> bool {
    url::Url::parse(redirect_uri).is_ok_and(|u| {
        u.scheme() == "http" && matches!(u.host_str(), Some("127.0.0.1" | "localhost" | "[::1]"))
    })
}

/// Percent-encodes a query value the way Google's redirects do (spaces as %20, `/` and `:` kept).
fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' | b':' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn with_query(redirect_uri: &str, pairs: &[(&str, &str)]) -> String {
    let query: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}={}", encode(v))).collect();
    let joiner = if redirect_uri.contains('?') { '&' } else { '?' };
    format!("{redirect_uri}{joiner}{}", query.join("&"))
}

/// `GET /o/oauth2/v2/auth`: the browser step, consented automatically.
pub(crate) fn authorize(s: &mut State, request: &Request) -> Response {
    let params: BTreeMap<String, String> = request.query.iter().cloned().collect();
    s.authorization_requests.push(params.clone());
    let param = |name: &str| params.get(name).map(String::as_str).filter(|v| !v.is_empty());

    let Some((kind, _)) = param("client_id").and_then(client) else {
        return auth_page("invalid_client", "The OAuth client was not found.");
    };
    let Some(redirect_uri) = param("redirect_uri") else {
        return auth_page("invalid_request", "Missing required parameter: redirect_uri");
    };
    let allowed = match kind {
        ClientKind::Installed => is_loopback(redirect_uri),
        ClientKind::Web => redirect_uri == crate::WEB_REDIRECT_URI,
    };
    if !allowed {
        return auth_page(
            "redirect_uri_mismatch",
            "You can't sign in to this app because it doesn't comply with Google's OAuth 2.0 policy. \
             If you're the app developer, register the redirect URI in the Google Cloud Console.",
        );
    }
    let Some(response_type) = param("response_type") else {
        return auth_page("invalid_request", "Required parameter is missing: response_type");
    };
    let state = param("state");
    let error_redirect = |error: &str| {
        let mut pairs = vec![("error", error)];
        pairs.extend(state.map(|s| ("state", s)));
        Response::redirect(&with_query(redirect_uri, &pairs))
    };
    if response_type != "code" {
        return error_redirect("unsupported_response_type");
    }
    let Some(scope) = param("scope") else {
        return auth_page("invalid_request", "Missing required parameter: scope");
    };
    let asked: BTreeSet<String> = scope.split(' ').filter(|s| !s.is_empty()).map(normalize).collect();
    let invalid: Vec<&String> = asked.iter().filter(|s| !is_known_scope(s)).collect();
    if !invalid.is_empty() {
        let names: Vec<&str> = invalid.iter().map(|s| s.as_str()).collect();
        return auth_page(
            "invalid_scope",
            &format!("Some requested scopes were invalid. {{invalid=[{}]}}", names.join(", ")),
        );
    }
    // Google lets a desktop client skip PKCE; this fake does not, as a careful app always sends it.
    let Some(challenge) = param("code_challenge") else {
        return auth_page("invalid_request", "Missing required parameter: code_challenge");
    };
    if param("code_challenge_method") != Some("S256") {
        return auth_page("invalid_request", "Invalid code_challenge_method: S256 is required");
    }
    let well_formed = challenge.len() == 43
        && challenge.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if !well_formed {
        return auth_page("invalid_request", "Invalid code_challenge");
    }
    let client_id = param("client_id").unwrap_or_default().to_owned();
    let consented: BTreeSet<String> = match &s.oauth.consent {
        Consent::Deny => return error_redirect("access_denied"),
        Consent::Grant => asked.clone(),
        Consent::GrantOnly(only) => {
            let only: BTreeSet<String> = only.iter().map(|s| normalize(s)).collect();
            asked.iter().filter(|s| only.contains(*s) || is_sign_in_scope(s)).cloned().collect()
        }
    };
    let before = s.oauth.grants.get(&client_id).cloned();
    let first_consent = before.is_none();
    let mut scopes = consented.clone();
    if param("include_granted_scopes") == Some("true") {
        scopes.extend(before.iter().flatten().cloned());
    }
    s.oauth.grants.entry(client_id.clone()).or_default().extend(consented);
    let prompt_consent = param("prompt").is_some_and(|p| p.split(' ').any(|p| p == "consent"));
    let code = format!("4/0A{}", s.fresh(60));
    s.oauth.codes.insert(
        code.clone(),
        Code {
            client_id,
            redirect_uri: redirect_uri.to_owned(),
            challenge: challenge.to_owned(),
            scopes: scopes.clone(),
            issued: Instant::now(),
            refresh_due: param("access_type") == Some("offline") && (first_consent || prompt_consent),
            used: false,
        },
    );
    let granted = scope_string(&scopes);
    let mut pairs = Vec::new();
    pairs.extend(state.map(|s| ("state", s)));
    pairs.extend([
        ("code", code.as_str()),
        ("scope", granted.as_str()),
        ("authuser", "0"),
        ("prompt", "consent"),
    ]);
    Response::redirect(&with_query(redirect_uri, &pairs))
}

/// The client a token request authenticates as: form fields or HTTP Basic.
fn client_credentials(
    request: &Request,
    form: &BTreeMap<String, String>,
) -> (Option<String>, Option<String>) {
    let basic = request
        .header("authorization")
        .and_then(|h| h.strip_prefix("Basic "))
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b.trim()).ok())
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|b| b.split_once(':').map(|(i, s)| (i.to_owned(), s.to_owned())));
    match basic {
        Some((id, secret)) => (Some(id), Some(secret)),
        None => (form.get("client_id").cloned(), form.get("client_secret").cloned()),
    }
}

fn id_token(client_id: &str) -> String {
    let now = jiff::Timestamp::now().as_second();
    let header = json!({ "alg": "RS256", "kid": "fakegoogle0000000000000000000000000000001", "typ": "JWT" });
    let payload = json!({
        "iss": "https://accounts.google.com",
        "azp": client_id,
        "aud": client_id,
        "sub": crate::USER_SUB,
        "email": crate::USER_EMAIL,
        "email_verified": true,
        "iat": now,
        "exp": now + 3599,
    });
    let part = |v: &Value| URL_SAFE_NO_PAD.encode(v.to_string());
    format!("{}.{}.{}", part(&header), part(&payload), URL_SAFE_NO_PAD.encode(b"not a real signature"))
}

fn issue_access(s: &mut State, scopes: &BTreeSet<String>, client_id: Option<&str>) -> String {
    let token = format!("ya29.a0{}", s.fresh(64));
    s.oauth.access.insert(
        token.clone(),
        Access {
            scopes: scopes.clone(),
            expires: Instant::now() + ACCESS_LIFETIME,
            client_id: client_id.map(str::to_owned),
            revoked: false,
        },
    );
    token
}

pub(crate) fn mint(s: &mut State, scopes: &[String]) -> String {
    let scopes: BTreeSet<String> = scopes.iter().map(|s| normalize(s)).collect();
    issue_access(s, &scopes, None)
}

fn token_answer(
    s: &mut State,
    client_id: &str,
    scopes: &BTreeSet<String>,
    refresh: Option<String>,
) -> Response {
    let access = issue_access(s, scopes, Some(client_id));
    let mut body = json!({
        "access_token": access,
        "expires_in": ACCESS_LIFETIME.as_secs(),
        "scope": scope_string(scopes),
        "token_type": "Bearer",
    });
    if let Some(refresh) = refresh {
        body["refresh_token"] = json!(refresh);
    }
    if scopes.contains("openid") {
        body["id_token"] = json!(id_token(client_id));
    }
    Response::json(200, &body).header("Cache-Control", "no-cache, no-store, max-age=0, must-revalidate")
}

/// `POST /token`.
pub(crate) fn token(s: &mut State, request: &Request) -> Response {
    let form: BTreeMap<String, String> = request.form().into_iter().collect();
    s.token_requests.push(form.clone());
    if request.method != "POST" {
        return oauth_error(405, "invalid_request", "Method Not Allowed");
    }
    let (client_id, secret) = client_credentials(request, &form);
    let Some((client_id, expected_secret)) =
        client_id.and_then(|id| client(&id).map(|(_, secret)| (id, secret)))
    else {
        return oauth_error(401, "invalid_client", "The OAuth client was not found.");
    };
    let field = |name: &str| form.get(name).map(String::as_str).filter(|v| !v.is_empty());
    match field("grant_type") {
        None => oauth_error(400, "invalid_request", "Missing required parameter: grant_type"),
        Some(_) if secret.as_deref() != Some(expected_secret) => {
            oauth_error(401, "invalid_client", "Unauthorized")
        }
        Some("authorization_code") => exchange_code(s, &client_id, &form),
        Some("refresh_token") => refresh(s, &client_id, &form),
        Some(other) => oauth_error(400, "unsupported_grant_type", &format!("Invalid grant_type: {other}")),
    }
}

fn exchange_code(s: &mut State, client_id: &str, form: &BTreeMap<String, String>) -> Response {
    let field = |name: &str| form.get(name).map(String::as_str).filter(|v| !v.is_empty());
    let Some(code_value) = field("code") else {
        return oauth_error(400, "invalid_request", "Missing required parameter: code");
    };
    let Some(code) = s.oauth.codes.get(code_value) else {
        return oauth_error(400, "invalid_grant", "Malformed auth code.");
    };
    if code.used || code.issued.elapsed() > CODE_LIFETIME || code.client_id != client_id {
        return oauth_error(400, "invalid_grant", "Bad Request");
    }
    let Some(redirect_uri) = field("redirect_uri") else {
        return oauth_error(400, "invalid_request", "Missing parameter: redirect_uri");
    };
    if redirect_uri != code.redirect_uri {
        return oauth_error(400, "redirect_uri_mismatch", "Bad Request");
    }
    let Some(verifier) = field("code_verifier") else {
        return oauth_error(400, "invalid_grant", "Missing code verifier.");
    };
    if URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes())) != code.challenge {
        return oauth_error(400, "invalid_grant", "Bad Request");
    }
    let (scopes, refresh_due) = (code.scopes.clone(), code.refresh_due);
    if let Some(code) = s.oauth.codes.get_mut(code_value) {
        code.used = true;
    }
    let refresh_token = refresh_due.then(|| {
        let token = format!("1//0{}", s.fresh(60));
        s.oauth.refresh.insert(
            token.clone(),
            RefreshGrant { client_id: client_id.to_owned(), scopes: scopes.clone(), revoked: false },
        );
        token
    });
    token_answer(s, client_id, &scopes, refresh_token)
}

fn refresh(s: &mut State, client_id: &str, form: &BTreeMap<String, String>) -> Response {
    let Some(token) = form.get("refresh_token").filter(|t| !t.is_empty()) else {
        return oauth_error(400, "invalid_request", "Missing required parameter: refresh_token");
    };
    let Some(grant) = s.oauth.refresh.get(token).filter(|g| !g.revoked) else {
        return oauth_error(400, "invalid_grant", "Token has been expired or revoked.");
    };
    if grant.client_id != client_id {
        return oauth_error(401, "unauthorized_client", "Unauthorized");
    }
    let mut scopes = grant.scopes.clone();
    // A refresh may ask for fewer scopes than were granted, never more.
    if let Some(asked) = form.get("scope").filter(|s| !s.is_empty()) {
        let asked: BTreeSet<String> = asked.split(' ').filter(|s| !s.is_empty()).map(normalize).collect();
        if !asked.is_subset(&scopes) {
            return oauth_error(400, "invalid_scope", "Some requested scopes were invalid.");
        }
        scopes = asked;
    }
    token_answer(s, client_id, &scopes, None)
}

/// `POST /revoke`: the token in the form body or the query.
pub(crate) fn revoke(s: &mut State, request: &Request) -> Response {
    let token = request
        .form()
        .into_iter()
        .find(|(k, _)| k == "token")
        .map(|(_, v)| v)
        .or_else(|| request.param("token").map(str::to_owned))
        .unwrap_or_default();
    let revoked = || oauth_error(400, "invalid_token", "Token expired or revoked");
    let client_id = if let Some(grant) = s.oauth.refresh.get(&token) {
        if grant.revoked {
            return revoked();
        }
        Some(grant.client_id.clone())
    } else if let Some(access) = s.oauth.access.get_mut(&token) {
        if access.revoked || access.expires <= Instant::now() {
            return revoked();
        }
        access.revoked = true;
        access.client_id.clone()
    } else {
        return revoked();
    };
    if let Some(client_id) = client_id {
        s.oauth.revoke_client(&client_id);
    }
    s.revocations.push(token);
    Response::json(200, &json!({}))
}

/// `GET /v1/userinfo` (OpenID Connect).
pub(crate) fn userinfo(s: &mut State, request: &Request) -> Response {
    let accepted = ["openid", USERINFO_EMAIL, USERINFO_PROFILE];
    if let Err(refusal) = check(s, request, &accepted, "openidconnect.googleapis.com", "userinfo") {
        return refusal;
    }
    Response::json(
        200,
        &json!({
            "sub": crate::USER_SUB,
            "email": crate::USER_EMAIL,
            "email_verified": true,
            "picture": "https://lh3.googleusercontent.com/a/fake-ada-photo=s96-c",
        }),
    )
}

/// The bearer check: a live access token carrying one of the scopes the method accepts. Returns
/// the token's scopes (some methods answer differently under narrower ones).
pub(crate) fn check(
    s: &State,
    request: &Request,
    accepted: &[&str],
    service: &str,
    method: &str,
) -> Result<BTreeSet<String>, Response> {
    let bearer = request.header("authorization").and_then(|h| {
        let (scheme, token) = h.split_once(' ')?;
        scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
    });
    let Some(bearer) = bearer else {
        return Err(errors::missing_credentials());
    };
    let Some(access) = s.oauth.access.get(bearer).filter(|a| !a.revoked && a.expires > Instant::now()) else {
        return Err(errors::unauthenticated());
    };
    if !accepted.iter().any(|scope| access.scopes.contains(*scope)) {
        return Err(errors::insufficient_scope(service, method, accepted));
    }
    Ok(access.scopes.clone())
}
