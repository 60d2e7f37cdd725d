//! `perch doctor --bundle FILE` as a user runs it: a data folder with canary secrets in the key
//! store, a sign-in record, `mcp_servers.json`, the environment and the logs; the bundle and
//! what the command prints hold none of them. Failures name a canary's label, not its value.
#![allow(clippy::unwrap_used)]

mod common;

use std::sync::Arc;

use common::{err, out, perch};
use perch_core::keys::{Keys, Secret};
use serde_json::json;

const MARKER: &str = "harmless marker: conversation list loaded";

const CANARIES: [(&str, &str); 6] = [
    ("stored key", "perch-cli-canary-stored-3b1f"),
    ("sign-in access token", "perch-cli-canary-access-8c2d"),
    ("sign-in refresh token", "perch-cli-canary-refresh-1e4a"),
    ("config env value", "perch-cli-canary-env-cfg-77aa"),
    ("process environment", "perch-cli-canary-env-proc-55bb"),
    ("logged bearer", "perch-cli-canary-bearer-99cc"),
];

fn canary(label: &str) -> &'static str {
    CANARIES.iter().find(|(l, _)| *l == label).map(|(_, v)| *v).unwrap()
}

fn seed(dir: &std::path::Path) {
    let keys = Arc::new(Keys::in_file(dir));
    keys.set("anthropic", &Secret::new(canary("stored key"))).unwrap();
    let record = json!({
        "resource": "https://mcp.notes.example/mcp",
        "credentials": {
            "client_id": "perch",
            "token_response": {"access_token": canary("sign-in access token"), "token_type": "Bearer",
                               "refresh_token": canary("sign-in refresh token")},
            "granted_scopes": [], "token_received_at": 1
        }
    });
    keys.set("oauth/mcp/notes", &Secret::new(record.to_string())).unwrap();
    let config = json!({"mcpServers": {
        "notes": {"url": "https://mcp.notes.example/mcp"},
        "local": {"command": "npx", "args": ["-y", "notes-server"], "env": {"NOTES_CONFIG": canary("config env value")}}
    }});
    std::fs::write(dir.join("mcp_servers.json"), config.to_string()).unwrap();
    std::fs::create_dir_all(dir.join("logs/mcp")).unwrap();
    let log = [
        format!("2026-05-03T09:00:00Z  INFO {MARKER}"),
        format!("2026-05-03T09:00:01Z DEBUG sent Authorization: Bearer {}", canary("logged bearer")),
        format!("2026-05-03T09:00:02Z ERROR provider said the key {} is invalid", canary("stored key")),
        format!("2026-05-03T09:00:03Z DEBUG spawned with {}", canary("process environment")),
    ];
    std::fs::write(dir.join("logs/perch.2026-05-03.log"), log.join("\n") + "\n").unwrap();
    let server = format!("2026-05-03 09:00:04 refreshing with {}\n", canary("sign-in refresh token"));
    std::fs::write(dir.join("logs/mcp/notes.log"), server).unwrap();
}

#[test]
fn doctor_bundle_writes_a_zip_without_the_secrets() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    seed(&data);
    let file = tmp.path().join("report.zip");

    let env = [("NOTES_SERVICE_TOKEN", canary("process environment").to_owned())];
    let o = perch(&data, &env, &["doctor", "--bundle", file.to_str().unwrap(), "--redact-home"]);
    let (stdout, stderr) = (out(&o), err(&o));
    assert!(o.status.success(), "perch doctor --bundle failed: {stderr}");
    assert!(stdout.contains(&format!("Wrote the diagnostics bundle to {}", file.display())), "{stdout}");
    assert!(stdout.contains("Removed: ") && stdout.contains("stored or environment secrets"), "{stdout}");

    let files = perch_core::diagnostics::read_bundle(&file).unwrap();
    for (label, value) in CANARIES {
        assert!(!stdout.contains(value) && !stderr.contains(value), "the {label} canary was printed");
        for (name, bytes) in &files {
            assert!(!String::from_utf8_lossy(bytes).contains(value), "the {label} canary is in {name}");
        }
    }
    let text = |name: &str| {
        files.iter().find(|(n, _)| n == name).map(|(_, b)| String::from_utf8_lossy(b).into_owned()).unwrap()
    };
    assert!(text("logs/perch.2026-05-03.log").contains(MARKER), "the harmless line is kept");
    assert!(text("logs/mcp/notes.log").contains("refreshing with [removed]"));
    let doctor: serde_json::Value = serde_json::from_str(&text("doctor.json")).unwrap();
    assert_eq!(doctor["database"]["status"], "ok", "the real doctor report is in it");
    assert!(text("versions.txt").contains(&format!("Perch {}", perch_core::VERSION)));
    assert!(text("settings.json").contains("\"source\": \"database\""));
}

/// What servers print of their own configuration, and secrets by their shape or their name:
/// each goes in a server's log, and none may reach the bundle.
const PRINTED: [(&str, &str); 20] = [
    ("config header value", "perch-cli-canary-header-41d0"),
    ("config header token", "perch-cli-canary-hdrtok-7a13"),
    ("config URL password", "perch-cli-canary-urlpw-2b7e"),
    ("config URL query value", "perch-cli-canary-query-6f3a"),
    ("config client secret", "perch-cli-canary-oauth-93c5"),
    ("config env URL password", "perch-cli-canary-dbpw-0c9d"),
    ("config argument", "perch-cli-canary-arg-5e21"),
    ("stripe secret key", "sk_live_51Hc0nAr1eSx7mPlEkEy0042"),
    ("stripe restricted key", "rk_live_51Hc0nAr1eSx7mPlEkEy0043"),
    ("gitlab token", "glpat-Xc4n4ryT0k3nF0rT3st1ng"),
    ("npm token", "npm_C4n4ryT0k3nF0rT3st1ngPerchCliAbcd"),
    ("pypi token", "pypi-AgEIcHlwaS5vcmcCJGNhbmFyeS10b2tlbi1mb3ItdGVzdGluZy1wZXJjaC1jbGk"),
    ("groq key", "gsk_C4n4ryK3yF0rT3st1ngPerchCli0001"),
    ("xai key", "xai-C4n4ryK3yF0rT3st1ngPerchCli0002"),
    ("perplexity key", "pplx-C4n4ryK3yF0rT3st1ngPerchCli0003"),
    ("slack app token", "xapp-1-A0CANARY-1234567890-abcdef0123456789"),
    ("private key body", "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQCanaryBody"),
    ("private_key field", "perch-cli-canary-pkfield-11f2"),
    ("passphrase field", "perch-cli-canary-phrase-c3d4"),
    ("S3 signature", "5d4c0ffee5d4c0ffee5d4c0ffee5d4c0ffee5d4c0ffee0042"),
];

fn printed(label: &str) -> &'static str {
    PRINTED.iter().find(|(l, _)| *l == label).map(|(_, v)| *v).unwrap()
}

#[test]
fn doctor_bundle_removes_what_servers_print_of_their_config_and_keys_by_shape_and_name() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    std::fs::create_dir_all(data.join("logs/mcp")).unwrap();
    let config = json!({"mcpServers": {
        "tracker": {
            "url": format!("https://ann:{}@mcp.tracker.example/mcp?workspace={}",
                printed("config URL password"), printed("config URL query value")),
            "headers": {"X-Tracker-Key": printed("config header value"),
                        "Authorization": format!("Token {}", printed("config header token"))},
            "oauth": {"clientId": "perch", "clientSecret": printed("config client secret")}
        },
        "db": {
            "command": "db-server",
            "args": ["--api-key", printed("config argument"), "--verbose"],
            "env": {"DATABASE_URL": format!("postgresql://db.example/app?password={}", printed("config env URL password"))}
        }
    }});
    std::fs::write(data.join("mcp_servers.json"), config.to_string()).unwrap();
    // What the servers said about themselves, and the keys a log may hold.
    let mut log: Vec<String> = PRINTED
        .iter()
        .filter(|(label, _)| {
            *label != "private key body" && !label.ends_with("field") && *label != "S3 signature"
        })
        .map(|(_, value)| format!("2026-05-03 09:00:05 using {value} for this session"))
        .collect();
    log.push(format!(
        "2026-05-03 09:00:06 {{\"private_key\": \"{}\", \"passphrase\": \"{}\"}}",
        printed("private_key field"),
        printed("passphrase field")
    ));
    log.push(format!(
        "2026-05-03 09:00:07 GET https://files.s3.amazonaws.com/a.pdf?X-Amz-Date=20260503T090007Z&X-Amz-Signature={}",
        printed("S3 signature")
    ));
    log.push("2026-05-03 09:00:08 loaded key:".into());
    log.extend([
        "-----BEGIN PRIVATE KEY-----".to_owned(),
        printed("private key body").to_owned(),
        "F1xGzT0aZ9vcUMk2Zxq8Y2pP3nK4yV0dA7bHqWmE5tRjL6sNcXoIuBgYhDfQeSw".into(),
        "-----END PRIVATE KEY-----".into(),
    ]);
    log.push(format!("2026-05-03 09:00:09 {MARKER}"));
    std::fs::write(data.join("logs/mcp/tracker.log"), log.join("\n") + "\n").unwrap();

    let file = tmp.path().join("report.zip");
    let o = perch(&data, &[], &["doctor", "--bundle", file.to_str().unwrap()]);
    let (stdout, stderr) = (out(&o), err(&o));
    assert!(o.status.success(), "perch doctor --bundle failed: {stderr}");
    let files = perch_core::diagnostics::read_bundle(&file).unwrap();
    let leaked: Vec<&str> = PRINTED
        .iter()
        .filter(|(_, value)| {
            stdout.contains(value)
                || stderr.contains(value)
                || files.iter().any(|(_, b)| String::from_utf8_lossy(b).contains(value))
        })
        .map(|(l, _)| *l)
        .collect();
    assert!(leaked.is_empty(), "LEAKED {leaked:?}");
    // Control: the log is there, its harmless lines kept.
    let log =
        files.iter().find(|(n, _)| n == "logs/mcp/tracker.log").map(|(_, b)| String::from_utf8_lossy(b));
    let log = log.expect("the server's log is in the bundle");
    assert!(log.contains(MARKER) && log.contains("X-Amz-Date=20260503T090007Z"), "{log}");
    assert!(log.contains("loaded key:\n[removed]\n"), "the key goes whole: {log}");
}

#[test]
fn redact_home_needs_a_bundle() {
    let tmp = tempfile::tempdir().unwrap();
    let o = perch(tmp.path(), &[], &["doctor", "--redact-home"]);
    assert!(!o.status.success());
    assert!(err(&o).contains("--bundle"), "{}", err(&o));
}
