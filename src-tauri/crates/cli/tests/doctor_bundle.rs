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

#[test]
fn redact_home_needs_a_bundle() {
    let tmp = tempfile::tempdir().unwrap();
    let o = perch(tmp.path(), &[], &["doctor", "--redact-home"]);
    assert!(!o.status.success());
    assert!(err(&o).contains("--bundle"), "{}", err(&o));
}
