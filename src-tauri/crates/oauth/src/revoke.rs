//! Signing out at the authorization server (RFC 7009): the refresh token, and with it (RFC 7009
//! section 2.1) the access tokens it minted, stop working there, not only here.

use std::time::Duration;

use oauth2::TokenResponse;

use super::store::SignInRecord;

#[derive(Debug, thiserror::Error)]
pub enum RevokeError {
    #[error("the server refused to revoke the sign-in (HTTP {0})")]
    Refused(u16),
    #[error("the server could not be reached to revoke the sign-in: {0}")]
    Unreachable(String),
}

/// Revokes what `record` holds where it names a revocation endpoint; `Ok(false)` when the
/// server offers none (then only forgetting it here is possible).
pub async fn revoke(record: &SignInRecord) -> Result<bool, RevokeError> {
    let (Some(endpoint), Some(credentials)) = (&record.revocation_endpoint, &record.credentials) else {
        return Ok(false);
    };
    let Some(tokens) = &credentials.token_response else { return Ok(false) };
    let (token, hint) = match tokens.refresh_token() {
        Some(refresh) => (refresh.secret().as_str(), "refresh_token"),
        None => (tokens.access_token().secret().as_str(), "access_token"),
    };
    let client = perch_foundation::http::client_builder()
        .timeout(Duration::from_secs(15))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| RevokeError::Unreachable(e.to_string()))?;
    let mut form = vec![("token", token), ("token_type_hint", hint)];
    let mut request = client.post(endpoint);
    match &record.client_secret {
        Some(secret) if record.secret_in_body => {
            form.push(("client_id", &credentials.client_id));
            form.push(("client_secret", secret));
        }
        Some(secret) => {
            request = request.basic_auth(form_encode(&credentials.client_id), Some(form_encode(secret)));
        }
        None => form.push(("client_id", &credentials.client_id)),
    }
    let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(form).finish();
    let response = request
        .header(http::header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .map_err(|e| RevokeError::Unreachable(e.without_url().to_string()))?;
    // RFC 7009 section 2.2: 200 also for a token the server no longer knows.
    match response.status().as_u16() {
        200..=299 => Ok(true),
        status => Err(RevokeError::Refused(status)),
    }
}

/// RFC 6749 section 2.3.1: the client's ID and secret are form-encoded before HTTP Basic.
fn form_encode(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}
