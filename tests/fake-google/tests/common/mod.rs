//! What the tests share: an HTTP client that does not follow redirects (the browser step is
//! read, not followed), PKCE, form posts, and a sign-in through the whole OAuth dance.
#![allow(dead_code)]

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use perch_fake_google::{DESKTOP_CLIENT_ID, DESKTOP_CLIENT_SECRET, FakeGoogle};
use serde_json::Value;
use sha2::{Digest, Sha256};

pub const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk-perch-test-verifier";
pub const REDIRECT: &str = "http://127.0.0.1:53682/oauth/callback";
pub const GMAIL_READONLY: &str = "https://www.googleapis.com/auth/gmail.readonly";
pub const GMAIL_MODIFY: &str = "https://www.googleapis.com/auth/gmail.modify";
pub const GMAIL_SEND: &str = "https://www.googleapis.com/auth/gmail.send";
pub const GMAIL_METADATA: &str = "https://www.googleapis.com/auth/gmail.metadata";
pub const CALENDAR: &str = "https://www.googleapis.com/auth/calendar";
pub const CALENDAR_READONLY: &str = "https://www.googleapis.com/auth/calendar.readonly";
pub const CALENDAR_EVENTS: &str = "https://www.googleapis.com/auth/calendar.events";
pub const USERINFO_EMAIL: &str = "https://www.googleapis.com/auth/userinfo.email";

pub fn client() -> reqwest::Client {
    // reqwest here is built without a TLS provider of its own; plain http needs one installed all the same.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client")
}

pub fn challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

pub fn encode(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish()
}

pub async fn post_form(fake: &FakeGoogle, path: &str, pairs: &[(&str, &str)]) -> (u16, Value) {
    let response = client()
        .post(format!("{}{path}", fake.base_url()))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(encode(pairs))
        .send()
        .await
        .expect("send");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// The authorization request as a browser would make it; returns the status, the Location
/// header's query (when redirected) and the page.
pub async fn authorize(
    fake: &FakeGoogle,
    pairs: &[(&str, &str)],
) -> (u16, Option<BTreeMap<String, String>>, String) {
    let url = format!("{}/o/oauth2/v2/auth?{}", fake.base_url(), encode(pairs));
    let response = client().get(url).send().await.expect("send");
    let status = response.status().as_u16();
    let location = response.headers().get("location").and_then(|l| l.to_str().ok()).map(|l| {
        let url = url::Url::parse(l).expect("location is a URL");
        url.query_pairs().into_owned().collect::<BTreeMap<_, _>>()
    });
    (status, location, response.text().await.unwrap_or_default())
}

/// A well-formed desktop authorization request, with `extra` added or overriding.
pub fn auth_params<'a>(
    scope: &'a str,
    challenge: &'a str,
    extra: &[(&'a str, &'a str)],
) -> Vec<(&'a str, &'a str)> {
    let mut pairs = vec![
        ("client_id", DESKTOP_CLIENT_ID),
        ("redirect_uri", REDIRECT),
        ("response_type", "code"),
        ("scope", scope),
        ("code_challenge", challenge),
        ("code_challenge_method", "S256"),
        ("state", "xyz-state-1"),
        ("access_type", "offline"),
    ];
    for (k, v) in extra {
        pairs.retain(|(key, _)| key != k);
        pairs.push((k, v));
    }
    pairs
}

pub async fn exchange(fake: &FakeGoogle, code: &str, verifier: &str) -> (u16, Value) {
    post_form(
        fake,
        "/token",
        &[
            ("grant_type", "authorization_code"),
            ("code", code),
            ("code_verifier", verifier),
            ("client_id", DESKTOP_CLIENT_ID),
            ("client_secret", DESKTOP_CLIENT_SECRET),
            ("redirect_uri", REDIRECT),
        ],
    )
    .await
}

/// The whole dance: authorize, then exchange; returns the token answer.
pub async fn sign_in(fake: &FakeGoogle, scope: &str, extra: &[(&str, &str)]) -> Value {
    let challenge = challenge(VERIFIER);
    let (status, location, page) = authorize(fake, &auth_params(scope, &challenge, extra)).await;
    assert_eq!(status, 302, "{page}");
    let code = location.expect("redirected")["code"].clone();
    let (status, body) = exchange(fake, &code, VERIFIER).await;
    assert_eq!(status, 200, "{body}");
    body
}

pub async fn get(fake: &FakeGoogle, token: &str, path: &str) -> (u16, Value) {
    let response =
        client().get(format!("{}{path}", fake.base_url())).bearer_auth(token).send().await.expect("send");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

pub async fn send_json(
    fake: &FakeGoogle,
    method: &str,
    token: &str,
    path: &str,
    body: &Value,
) -> (u16, Value) {
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    let response = client()
        .request(method, format!("{}{path}", fake.base_url()))
        .bearer_auth(token)
        .json(body)
        .send()
        .await
        .expect("send");
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

pub fn b64url(text: &str) -> String {
    URL_SAFE_NO_PAD.encode(text.as_bytes())
}

pub fn unb64url(data: &str) -> Vec<u8> {
    URL_SAFE_NO_PAD.decode(data.trim_end_matches('=')).expect("base64url")
}
