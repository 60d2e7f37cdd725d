//! The OAuth endpoints refuse what Google refuses and answer the right requests as Google does.

mod common;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use common::*;
use perch_fake_google::{
    Consent, DESKTOP_CLIENT_ID, DESKTOP_CLIENT_SECRET, FakeGoogle, USER_EMAIL, WEB_CLIENT_ID,
    WEB_CLIENT_SECRET,
};
use serde_json::Value;

const SCOPE: &str = "openid email https://www.googleapis.com/auth/gmail.readonly";

#[tokio::test]
async fn the_desktop_flow_gives_tokens_an_id_token_and_userinfo() {
    let fake = FakeGoogle::start().await.expect("start");
    let challenge = challenge(VERIFIER);
    let (status, location, _) = authorize(&fake, &auth_params(SCOPE, &challenge, &[])).await;
    assert_eq!(status, 302);
    let location = location.expect("redirect");
    assert_eq!(location["state"], "xyz-state-1");
    assert_eq!(location["authuser"], "0");
    assert_eq!(location["prompt"], "consent");
    let granted: Vec<&str> = location["scope"].split(' ').collect();
    assert!(
        granted.contains(&GMAIL_READONLY) && granted.contains(&"openid") && granted.contains(&USERINFO_EMAIL)
    );

    let (status, token) = exchange(&fake, &location["code"], VERIFIER).await;
    assert_eq!(status, 200, "{token}");
    assert_eq!(token["token_type"], "Bearer");
    assert_eq!(token["expires_in"], 3599);
    assert!(token["access_token"].as_str().is_some_and(|t| t.starts_with("ya29.")));
    assert!(
        token["refresh_token"].is_string(),
        "first consent with access_type=offline gives a refresh token"
    );
    assert_eq!(token["scope"], location["scope"].as_str());
    let id_token = token["id_token"].as_str().expect("openid gives an id_token");
    let payload: Value = serde_json::from_slice(
        &URL_SAFE_NO_PAD.decode(id_token.split('.').nth(1).expect("jwt")).expect("b64"),
    )
    .expect("json");
    assert_eq!(payload["iss"], "https://accounts.google.com");
    assert_eq!(payload["aud"], DESKTOP_CLIENT_ID);
    assert_eq!(payload["email"], USER_EMAIL);
    assert_eq!(payload["email_verified"], true);
    assert!(payload["sub"].is_string());

    let access = token["access_token"].as_str().expect("access");
    let (status, me) = get(&fake, access, "/v1/userinfo").await;
    assert_eq!(status, 200);
    assert_eq!((me["email"].as_str(), me["email_verified"].as_bool()), (Some(USER_EMAIL), Some(true)));

    // Refresh: a new access token, the same scope, no new refresh token.
    let refresh = token["refresh_token"].as_str().expect("refresh");
    let (status, again) = post_form(
        &fake,
        "/token",
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh),
            ("client_id", DESKTOP_CLIENT_ID),
            ("client_secret", DESKTOP_CLIENT_SECRET),
        ],
    )
    .await;
    assert_eq!(status, 200, "{again}");
    assert_ne!(again["access_token"], token["access_token"]);
    assert_eq!(again["scope"], token["scope"]);
    assert!(again.get("refresh_token").is_none());

    let requests = fake.authorization_requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0]["code_challenge_method"], "S256");
    let tokens = fake.token_requests();
    assert_eq!(
        tokens.iter().map(|t| t["grant_type"].as_str()).collect::<Vec<_>>(),
        ["authorization_code", "refresh_token"]
    );
}

#[tokio::test]
async fn the_authorization_page_refuses_without_redirecting() {
    let fake = FakeGoogle::start().await.expect("start");
    let challenge = challenge(VERIFIER);
    let refused = |status: u16, location: &Option<_>, page: &str, code: &str| {
        assert_eq!(status, 400, "{page}");
        assert!(location.is_none(), "Google shows an error page, it does not redirect");
        assert!(page.contains(code), "{page}");
    };

    let (status, location, page) = authorize(
        &fake,
        &auth_params(SCOPE, &challenge, &[("client_id", "nobody.apps.googleusercontent.com")]),
    )
    .await;
    refused(status, &location, &page, "Error 401: invalid_client");
    assert!(page.contains("The OAuth client was not found."));

    let (status, location, page) =
        authorize(&fake, &auth_params(SCOPE, &challenge, &[("client_id", WEB_CLIENT_ID)])).await;
    refused(status, &location, &page, "redirect_uri_mismatch");

    let (status, location, page) =
        authorize(&fake, &auth_params(SCOPE, &challenge, &[("redirect_uri", "https://evil.example/cb")]))
            .await;
    refused(status, &location, &page, "redirect_uri_mismatch");

    let without_pkce: Vec<_> = auth_params(SCOPE, &challenge, &[])
        .into_iter()
        .filter(|(k, _)| !k.starts_with("code_challenge"))
        .collect();
    let (status, location, page) = authorize(&fake, &without_pkce).await;
    refused(status, &location, &page, "invalid_request");

    let (status, location, page) =
        authorize(&fake, &auth_params(SCOPE, VERIFIER, &[("code_challenge_method", "plain")])).await;
    refused(status, &location, &page, "invalid_request");

    let no_scope: Vec<_> =
        auth_params(SCOPE, &challenge, &[]).into_iter().filter(|(k, _)| *k != "scope").collect();
    let (status, location, page) = authorize(&fake, &no_scope).await;
    refused(status, &location, &page, "invalid_request");

    // Any loopback port and path is fine for a desktop client, localhost too.
    for redirect in ["http://127.0.0.1:1/x", "http://localhost:65000/"] {
        let (status, location, _) =
            authorize(&fake, &auth_params(SCOPE, &challenge, &[("redirect_uri", redirect)])).await;
        assert_eq!(status, 302);
        assert!(location.expect("redirect").contains_key("code"));
    }
}

#[tokio::test]
async fn the_token_endpoint_refuses_bad_exchanges() {
    let fake = FakeGoogle::start().await.expect("start");
    let challenge = challenge(VERIFIER);
    let code = || async {
        let (_, location, _) = authorize(&fake, &auth_params(SCOPE, &challenge, &[])).await;
        location.expect("redirect")["code"].clone()
    };

    let (status, body) =
        exchange(&fake, &code().await, "a-different-verifier-that-is-long-enough-to-be-valid-0").await;
    assert_eq!(
        (status, body["error"].as_str(), body["error_description"].as_str()),
        (400, Some("invalid_grant"), Some("Bad Request"))
    );

    let first = code().await;
    assert_eq!(exchange(&fake, &first, VERIFIER).await.0, 200);
    let (status, body) = exchange(&fake, &first, VERIFIER).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_grant")), "a code is good once");

    let code2 = code().await;
    for secret in [Some("GOCSPX-wrong"), None] {
        let mut form = vec![
            ("grant_type", "authorization_code"),
            ("code", code2.as_str()),
            ("code_verifier", VERIFIER),
            ("client_id", DESKTOP_CLIENT_ID),
            ("redirect_uri", REDIRECT),
        ];
        form.extend(secret.map(|s| ("client_secret", s)));
        let (status, body) = post_form(&fake, "/token", &form).await;
        assert_eq!(
            (status, body["error"].as_str(), body["error_description"].as_str()),
            (401, Some("invalid_client"), Some("Unauthorized"))
        );
    }

    let (status, body) = post_form(
        &fake,
        "/token",
        &[
            ("grant_type", "authorization_code"),
            ("code", code2.as_str()),
            ("code_verifier", VERIFIER),
            ("client_id", DESKTOP_CLIENT_ID),
            ("client_secret", DESKTOP_CLIENT_SECRET),
            ("redirect_uri", "http://127.0.0.1:9/other"),
        ],
    )
    .await;
    assert_eq!((status, body["error"].as_str()), (400, Some("redirect_uri_mismatch")));

    let (status, body) = post_form(
        &fake,
        "/token",
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", "1//0nonsense"),
            ("client_id", WEB_CLIENT_ID),
            ("client_secret", WEB_CLIENT_SECRET),
        ],
    )
    .await;
    assert_eq!(
        (status, body["error_description"].as_str()),
        (400, Some("Token has been expired or revoked."))
    );
}

#[tokio::test]
async fn refresh_tokens_come_on_first_consent_or_prompt_consent_only() {
    let fake = FakeGoogle::start().await.expect("start");
    assert!(sign_in(&fake, SCOPE, &[]).await["refresh_token"].is_string());
    assert!(sign_in(&fake, SCOPE, &[]).await.get("refresh_token").is_none(), "consented before");
    assert!(sign_in(&fake, SCOPE, &[("prompt", "consent")]).await["refresh_token"].is_string());
    assert!(
        sign_in(&fake, SCOPE, &[("access_type", "online"), ("prompt", "consent")])
            .await
            .get("refresh_token")
            .is_none()
    );
}

#[tokio::test]
async fn consent_can_be_partial_or_denied() {
    let fake = FakeGoogle::start().await.expect("start");
    let challenge = challenge(VERIFIER);
    let scope = format!("openid email {GMAIL_READONLY} {CALENDAR_EVENTS}");
    fake.set_consent(Consent::GrantOnly(vec![CALENDAR_EVENTS.to_owned()]));
    let (_, location, _) = authorize(&fake, &auth_params(&scope, &challenge, &[])).await;
    let location = location.expect("redirect");
    let granted: Vec<&str> = location["scope"].split(' ').collect();
    assert!(
        granted.contains(&CALENDAR_EVENTS)
            && granted.contains(&"openid")
            && granted.contains(&USERINFO_EMAIL)
    );
    assert!(!granted.contains(&GMAIL_READONLY), "the user unticked Gmail");
    let (_, token) = exchange(&fake, &location["code"], VERIFIER).await;
    let (status, _) =
        get(&fake, token["access_token"].as_str().expect("token"), "/gmail/v1/users/me/messages").await;
    assert_eq!(status, 403);

    fake.set_consent(Consent::Deny);
    let (status, location, _) = authorize(&fake, &auth_params(&scope, &challenge, &[])).await;
    let location = location.expect("redirect");
    assert_eq!(status, 302);
    assert_eq!((location["error"].as_str(), location["state"].as_str()), ("access_denied", "xyz-state-1"));
    assert!(!location.contains_key("code"));
}

#[tokio::test]
async fn include_granted_scopes_unites_with_earlier_grants() {
    let fake = FakeGoogle::start().await.expect("start");
    sign_in(&fake, &format!("openid email {GMAIL_READONLY}"), &[]).await;
    let alone = sign_in(&fake, CALENDAR_EVENTS, &[]).await;
    assert_eq!(alone["scope"], CALENDAR_EVENTS);
    let united = sign_in(&fake, CALENDAR_EVENTS, &[("include_granted_scopes", "true")]).await;
    let scopes: Vec<&str> = united["scope"].as_str().expect("scope").split(' ').collect();
    for scope in [CALENDAR_EVENTS, GMAIL_READONLY, "openid", USERINFO_EMAIL] {
        assert!(scopes.contains(&scope), "{scopes:?} lacks {scope}");
    }
}

#[tokio::test]
async fn revocation_ends_the_grant_and_every_token_from_it() {
    let fake = FakeGoogle::start().await.expect("start");
    let token = sign_in(&fake, SCOPE, &[]).await;
    let (access, refresh) =
        (token["access_token"].as_str().expect("a"), token["refresh_token"].as_str().expect("r"));
    assert_eq!(get(&fake, access, "/gmail/v1/users/me/labels").await.0, 200);
    let (status, body) = post_form(&fake, "/revoke", &[("token", refresh)]).await;
    assert_eq!((status, body), (200, serde_json::json!({})));
    assert_eq!(fake.revocations(), [refresh]);
    assert_eq!(get(&fake, access, "/gmail/v1/users/me/labels").await.0, 401);
    let (status, body) = post_form(
        &fake,
        "/token",
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh),
            ("client_id", DESKTOP_CLIENT_ID),
            ("client_secret", DESKTOP_CLIENT_SECRET),
        ],
    )
    .await;
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_grant")));
    let (status, body) = post_form(&fake, "/revoke", &[("token", refresh)]).await;
    assert_eq!((status, body["error"].as_str()), (400, Some("invalid_token")));
    // After revocation the next consent is a first one again: a refresh token comes back.
    let token = sign_in(&fake, SCOPE, &[]).await;
    assert!(token["refresh_token"].is_string());
    // The token as a query parameter, as Google also takes it.
    let url = format!("{}/revoke?token={}", fake.base_url(), token["access_token"].as_str().expect("a"));
    let response = client()
        .post(url)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .send()
        .await
        .expect("send");
    assert_eq!(response.status().as_u16(), 200);
}

#[tokio::test]
async fn expired_tokens_get_googles_401_and_refresh_still_works() {
    let fake = FakeGoogle::start().await.expect("start");
    let token = sign_in(&fake, SCOPE, &[]).await;
    fake.expire_access_tokens();
    let response = client()
        .get(format!("{}/gmail/v1/users/me/messages", fake.base_url()))
        .bearer_auth(token["access_token"].as_str().expect("a"))
        .send()
        .await
        .expect("send");
    assert_eq!(response.status().as_u16(), 401);
    let challenge = response
        .headers()
        .get("www-authenticate")
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(challenge.starts_with("Bearer realm="), "{challenge}");
    let body: Value = response.json().await.expect("json");
    assert_eq!(body["error"]["status"], "UNAUTHENTICATED");
    assert_eq!(body["error"]["errors"][0]["reason"], "authError");
    assert_eq!(body["error"]["errors"][0]["message"], "Invalid Credentials");
    let (status, _) = post_form(
        &fake,
        "/token",
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", token["refresh_token"].as_str().expect("r")),
            ("client_id", DESKTOP_CLIENT_ID),
            ("client_secret", DESKTOP_CLIENT_SECRET),
        ],
    )
    .await;
    assert_eq!(status, 200);
    fake.revoke_all();
    let (status, _) = post_form(
        &fake,
        "/token",
        &[
            ("grant_type", "refresh_token"),
            ("refresh_token", token["refresh_token"].as_str().expect("r")),
            ("client_id", DESKTOP_CLIENT_ID),
            ("client_secret", DESKTOP_CLIENT_SECRET),
        ],
    )
    .await;
    assert_eq!(status, 400);
}
