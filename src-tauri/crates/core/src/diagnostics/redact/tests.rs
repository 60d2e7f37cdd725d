use serde_json::json;

use super::*;

fn clean(text: &str) -> String {
    Redactor::new(Vec::new(), None).text(text)
}

/// Asserts the secret is gone without ever printing it: failures name the case, not the value.
fn assert_removed(label: &str, text: &str, secret: &str) {
    let out = clean(text);
    assert!(!out.contains(secret), "{label}: the secret survived redaction");
    assert!(out.contains(REMOVED), "{label}: no removal marker");
}

#[test]
fn keys_and_tokens_are_removed_by_their_shape() {
    let cases = [
        ("openai", "sk-proj-Abcdefghijklmnop1234567890"),
        ("anthropic", "sk-ant-api03-Abcdefghijklmnop1234567890-xyz"),
        ("google api key", "AIzaSyA1234567890abcdefghijklmnopqrstu"),
        ("github classic", "ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
        ("github oauth", "gho_abcdefghijklmnopqrstuvwxyz0123456789"),
        ("github fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"),
        ("slack bot", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOp"),
        ("google access", "ya29.a0AfH6SMBabcdefghijklmnopqrstuvwxyz"),
        ("google refresh", "1//0gAbCdEfGhIjKlMnOpQrStUvWxYz-0123456789"),
        ("google client secret", "GOCSPX-AbCdEfGhIjKlMnOpQrStUvWx"),
        ("hugging face", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123"),
        ("stripe", "sk_live_51AbCdEfGhIjKlMnOpQrStUv"),
        ("stripe restricted", "rk_test_51AbCdEfGhIjKlMnOpQrStUv"),
        ("gitlab", "glpat-AbCdEfGhIjKlMnOpQrSt"),
        ("npm", "npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
        ("pypi", "pypi-AgEIcHlwaS5vcmcCJDAwMDAwMDAwLTAwMDAtMDAwMC0wMDAwLTAwMDAwMDAwMDAwMAAC"),
        ("groq", "gsk_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
        ("xai", "xai-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
        ("perplexity", "pplx-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"),
        ("slack app", "xapp-1-A012345-0123456789-abcdef"),
        (
            "jwt",
            "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        ),
    ];
    for (label, secret) in cases {
        assert_removed(label, &format!("provider said: {secret} (done)"), secret);
    }
}

#[test]
fn authorization_headers_keep_their_scheme_and_lose_their_value() {
    assert_eq!(clean("Authorization: Bearer abcdef0123456789xyz"), "Authorization: Bearer [removed]");
    assert_eq!(clean("authorization: Basic dXNlcjpwYXNzd29yZA=="), "authorization: Basic [removed]");
    assert_eq!(clean(r#"{"Authorization":"Bearer short"}"#), r#"{"Authorization":"Bearer [removed]"}"#);
    assert_eq!(clean("x-api-key: my-own-service-key"), "x-api-key: [removed]");
    assert_eq!(clean(r#"headers: {"authorization": "Bearer abcdef0123456789"}"#).matches(REMOVED).count(), 1);
    let mut r = Redactor::new(Vec::new(), None);
    r.text("Authorization: Bearer abcdef0123456789xyz");
    assert_eq!(r.counts().auth_headers, 1, "one header is one removal, not two");
}

#[test]
fn secret_parameters_in_urls_and_forms_are_removed() {
    assert_eq!(
        clean("GET https://api.example/cb?code=4/0AbCdEfGhIj&state=xyz&access_token=abc123def"),
        "GET https://api.example/cb?code=[removed]&state=xyz&access_token=[removed]"
    );
    assert_eq!(
        clean(
            "grant_type=refresh_token&refresh_token=r-123456789&client_secret=s3cr3t-value&client_id=perch"
        ),
        "grant_type=refresh_token&refresh_token=[removed]&client_secret=[removed]&client_id=perch"
    );
    assert_eq!(
        clean("https://maps.example/api?key=AbCdEf123456789&q=x"),
        "https://maps.example/api?key=[removed]&q=x"
    );
    assert_eq!(clean("see https://h/?token=tok-abcdef"), "see https://h/?token=[removed]");
    assert_eq!(clean("fetch https://h/?api_key=k9k9k9k9k9"), "fetch https://h/?api_key=[removed]");
    assert_eq!(
        clean(
            "GET https://b.s3.example/a?X-Amz-Credential=AKIDEXAMPLE%2F2026&X-Amz-Signature=5d4c0ffee00042"
        ),
        "GET https://b.s3.example/a?X-Amz-Credential=[removed]&X-Amz-Signature=[removed]"
    );
    assert_eq!(clean("resume sid=8c2d1e4a9f3b side=left"), "resume sid=[removed] side=left");
}

#[test]
fn ordinary_log_fields_survive() {
    for line in [
        "2026-01-02T10:00:00Z  INFO server started status code=404 key=brave",
        "the token expired; signing in again",
        "token_endpoint: \"https://oauth2.googleapis.com/token\"",
        "\"token_type\": \"Bearer\"",
        "a basic question about bearer bonds",
        "model=ollama:qwen3 provider=openai",
    ] {
        assert_eq!(clean(line), line, "changed: {line}");
    }
}

#[test]
fn fields_named_like_secrets_lose_their_values() {
    assert_eq!(
        clean(r#"{"refresh_token": "r-abc", "scope": "email"}"#),
        r#"{"refresh_token": "[removed]", "scope": "email"}"#
    );
    assert_eq!(
        clean(r#"Record { client_secret: "shh-it-is-secret" }"#),
        r#"Record { client_secret: "[removed]" }"#
    );
    assert_eq!(clean(r#"WARN failed password="hunter2""#), r#"WARN failed password="[removed]""#);
    assert_eq!(
        clean(r#"{"apiKey":"abc\"def"}"#),
        r#"{"apiKey":"[removed]"}"#,
        "escaped quotes stay inside the value"
    );
    assert_eq!(
        clean(
            r#"{"private_key": "pk-abc", "sshKey": "k-1", "passphrase": "open sesame", "publicKey": "pub-1"}"#
        ),
        r#"{"private_key": "[removed]", "sshKey": "[removed]", "passphrase": "[removed]", "publicKey": "pub-1"}"#
    );
    for name in [
        "GITHUB_PERSONAL_ACCESS_TOKEN",
        "clientSecret",
        "key",
        "private_key",
        "access_key",
        "secretAccessKey",
        "passphrase",
        "signature",
        "X-Amz-Signature",
        "session",
        "sid",
    ] {
        assert!(is_secret_name(name), "{name}");
    }
    for name in ["token_endpoint", "token_type", "keyboard", "public_key", "keys", "inside"] {
        assert!(!is_secret_name(name), "{name}");
    }
}

#[test]
fn private_keys_go_whole_from_their_first_line_to_their_last() {
    let body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7";
    let mut r = Redactor::new(Vec::new(), None);
    let pem = format!(
        "loaded:\n-----BEGIN RSA PRIVATE KEY-----\n{body}\nAbCd==\n-----END RSA PRIVATE KEY-----\nready"
    );
    assert_eq!(r.private_keys(&pem), "loaded:\n[removed]\nready");
    // Escaped in one log line (JSON), and a first line alone, as a line-by-line reader sees it.
    let escaped = format!(
        r#"{{"key":"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----\n"}}"#
    );
    assert!(!clean(&escaped).contains(body), "escaped");
    assert_eq!(clean(&format!("-----BEGIN PRIVATE KEY----- {body}")), "[removed]");
    assert_eq!(r.counts().token_shapes, 1);
    // A certificate is not a secret.
    let cert = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----";
    assert_eq!(clean(cert), cert);
}

#[test]
fn passwords_in_urls_are_removed() {
    assert_eq!(
        clean("proxy http://ann:pa55word@proxy.local:8080/"),
        "proxy http://[removed]@proxy.local:8080/"
    );
    assert_eq!(
        clean("mailto:ann@example.com https://example.com/a@b"),
        "mailto:ann@example.com https://example.com/a@b"
    );
}

#[test]
fn known_values_are_removed_wherever_they_appear() {
    let known = vec![
        "custom-plain-secret-1".to_owned(),
        "custom-plain-secret-1-longer".to_owned(),
        "short".to_owned(),
    ];
    let mut r = Redactor::new(known, None);
    let out = r.text("a=custom-plain-secret-1-longer b=custom-plain-secret-1 c=short");
    assert_eq!(
        out, "a=[removed] b=[removed] c=short",
        "the longer value goes whole; short values are not hunted"
    );
    assert_eq!(r.counts().known_secrets, 2);
    assert_eq!(r.counts().describe(), "2 stored or environment secrets");
}

#[test]
fn the_home_folder_becomes_a_tilde_only_when_asked() {
    let mut r = Redactor::new(Vec::new(), Some("/home/ann"));
    assert_eq!(
        r.text("/home/ann/.local/share/perch and /home/anna/x and /home/ann"),
        "~/.local/share/perch and /home/anna/x and ~"
    );
    assert_eq!(r.counts().home_paths, 2);
    assert_eq!(clean("/home/ann/x"), "/home/ann/x");
    assert_eq!(
        Redactor::new(Vec::new(), Some("/")).text("/usr/bin"),
        "/usr/bin",
        "a root home is left alone"
    );
}

#[test]
fn json_documents_lose_secret_fields_at_any_depth() {
    let mut r = Redactor::new(vec!["stored-canary-value".to_owned()], None);
    let doc = json!({
        "credentials": {"token_response": {"access_token": "opaque-1", "refresh_token": "opaque-2", "token_type": "Bearer"}},
        "notes": ["has stored-canary-value inside"],
        "token_endpoint": "https://as.example/token",
        "count": 3,
    });
    let out = r.json(&doc);
    let text = out.to_string();
    for secret in ["opaque-1", "opaque-2", "stored-canary-value"] {
        assert!(!text.contains(secret), "a secret field survived");
    }
    assert_eq!(out["credentials"]["token_response"]["token_type"], "Bearer");
    assert_eq!(out["token_endpoint"], "https://as.example/token");
    assert_eq!(out["count"], 3);
    assert_eq!(r.counts().secret_fields, 2);
    assert_eq!(r.counts().known_secrets, 1);
}

#[test]
fn counts_describe_themselves_without_values() {
    assert_eq!(RedactionCounts::default().describe(), "nothing");
    let counts = RedactionCounts { auth_headers: 1, url_parameters: 3, ..Default::default() };
    assert_eq!(counts.describe(), "1 authorization header, 3 URL or form parameters");
    assert_eq!(counts.total(), 4);
}
