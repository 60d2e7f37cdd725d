//! Diagnostics bundles against a real data folder seeded with canary secrets: keys in the file
//! key store, sign-in records for an MCP server and for Google, secrets in `mcp_servers.json`,
//! in the environment and in the logs. None may reach the bundle; a harmless line must.
//!
//! Failure messages name a canary by its label, never its value: a test that prints the
//! secrets it guards would teach the wrong habit.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;

use perch_core::diagnostics::{self, BundleOptions, BundleSources};
use perch_core::doctor::{DataDirReport, DatabaseReport, DbStatus, DoctorReport};
use perch_core::keys::{Keys, Secret};
use perch_core::oauth::store::{SignInEntry, SignInRecord};
use perch_core::probes::Probe;
use serde_json::json;

const MARKER: &str = "harmless marker line: the model list was refreshed";

/// (label, value). Several have no recognisable shape on purpose: only the exact values from
/// the key store and the environment can catch them.
const CANARIES: [(&str, &str); 17] = [
    ("stored provider key", "perch-canary-stored-key-7f3a9c"),
    ("stored web search key", "perch-canary-brave-key-51bd0e"),
    ("mcp access token", "perch-canary-mcp-access-44c1"),
    ("mcp refresh token", "perch-canary-mcp-refresh-9a0b"),
    ("mcp client secret", "perch-canary-mcp-client-7d2e"),
    ("google access token", "ya29.perch-canary-google-access-00aa"),
    ("google refresh token", "1//perch-canary-google-refresh-11bb"),
    ("google client secret", "GOCSPX-perch-canary-client-22cc"),
    ("config env value", "perch-canary-config-env-33dd"),
    ("config header token", "perch-canary-config-header-44ee"),
    ("config url token", "perch-canary-config-url-55ff"),
    ("process environment", "perch-canary-process-env-6600"),
    ("logged bearer", "perch-canary-logged-bearer-7711"),
    ("logged query token", "perch-canary-logged-query-8822"),
    ("logged json field", "perch-canary-logged-json-9933"),
    ("doctor detail", "perch-canary-doctor-detail-aa44"),
    ("crash report bearer", "perch-canary-crash-bearer-bb55"),
];

const CRASH_FILE: &str = "20260501T100010.000Z-perch-mcp-web-4242.txt";

fn canary(label: &str) -> &'static str {
    CANARIES.iter().find(|(l, _)| *l == label).map(|(_, v)| *v).unwrap()
}

fn report(data_dir: &Path) -> DoctorReport {
    DoctorReport {
        version: perch_core::VERSION,
        data_dir: DataDirReport { path: Some(data_dir.to_path_buf()), source: None, error: None },
        database: DatabaseReport {
            path: None,
            status: DbStatus::Ok,
            schema_version: None,
            latest_schema: perch_core::store::LATEST_VERSION,
            size_bytes: None,
            conversations: None,
            messages: None,
            detail: format!("opened with Authorization: Bearer {}", canary("doctor detail")),
        },
        components: vec![Probe {
            name: "sandbox".into(),
            available: false,
            detail: "no user namespaces".into(),
        }],
        sign_ins: Vec::new(),
        google: None,
    }
}

fn sign_in(resource: &str, access: &str, refresh: &str, client_secret: &str) -> SignInRecord {
    serde_json::from_value(json!({
        "resource": resource,
        "credentials": {
            "client_id": "perch-test-client",
            "token_response": {"access_token": access, "token_type": "Bearer", "expires_in": 3600, "refresh_token": refresh},
            "granted_scopes": ["mcp"],
            "token_received_at": 1
        },
        "client_secret": client_secret,
    }))
    .unwrap()
}

/// A data folder holding every canary somewhere Perch keeps things.
async fn seed(dir: &Path) -> Arc<Keys> {
    let keys = Arc::new(Keys::in_file(dir));
    keys.set("openai", &Secret::new(canary("stored provider key"))).unwrap();
    keys.set("brave", &Secret::new(canary("stored web search key"))).unwrap();
    let tracker = sign_in(
        "https://mcp.tracker.example/mcp",
        canary("mcp access token"),
        canary("mcp refresh token"),
        canary("mcp client secret"),
    );
    SignInEntry::new(keys.clone(), "oauth/mcp/tracker").save(&tracker).await.unwrap();
    let google = sign_in(
        "https://www.googleapis.com/",
        canary("google access token"),
        canary("google refresh token"),
        canary("google client secret"),
    );
    SignInEntry::new(keys.clone(), perch_core::google::RECORD_NAME).save(&google).await.unwrap();

    let config = json!({"mcpServers": {
        "tracker": {
            "url": format!("https://mcp.tracker.example/mcp?access_token={}", canary("config url token")),
            "headers": {"X-Tracker-Auth": canary("config header token")}
        },
        "gh": {"command": "npx", "args": ["-y", "server-github"], "env": {"GH_SETTING": canary("config env value")}}
    }});
    std::fs::write(dir.join("mcp_servers.json"), serde_json::to_string_pretty(&config).unwrap()).unwrap();

    std::fs::create_dir_all(dir.join("logs/mcp")).unwrap();
    let perch_log = [
        format!("2026-05-01T10:00:00Z  INFO {MARKER}"),
        format!(
            "2026-05-01T10:00:01Z DEBUG request headers: authorization: Bearer {}",
            canary("logged bearer")
        ),
        format!(
            "2026-05-01T10:00:02Z  INFO GET https://api.example/v1/items?access_token={}&page=2",
            canary("logged query token")
        ),
        format!(
            "2026-05-01T10:00:03Z  WARN token response {{\"refresh_token\": \"{}\"}}",
            canary("logged json field")
        ),
        format!("2026-05-01T10:00:04Z ERROR the provider echoed the key {}", canary("stored provider key")),
        format!("2026-05-01T10:00:05Z ERROR refresh failed for {}", canary("google refresh token")),
        format!("2026-05-01T10:00:06Z DEBUG child env leaked {}", canary("process environment")),
        format!("2026-05-01T10:00:07Z DEBUG web search with {}", canary("stored web search key")),
    ];
    std::fs::write(dir.join("logs/perch.2026-05-01.log"), perch_log.join("\n") + "\n").unwrap();
    let server_log = format!(
        "2026-05-01 10:00:08 using token {} and secret {}\n2026-05-01 10:00:09 ready\n",
        canary("mcp access token"),
        canary("mcp client secret")
    );
    std::fs::write(dir.join("logs/mcp/tracker.log"), server_log).unwrap();

    // A crash report whose message and backtrace happen to hold secrets.
    std::fs::create_dir_all(dir.join("crashes")).unwrap();
    let crash = format!(
        "Perch crash report\nComponent: perch-mcp-web\nVersion: 0.1.0\nTime: 2026-05-01T10:00:10.000Z\n\
         Message: request refused: authorization: Bearer {}\n\nBacktrace:\n   0: perch_mcp_web::search with {}\n",
        canary("crash report bearer"),
        canary("stored web search key")
    );
    std::fs::write(dir.join("crashes").join(CRASH_FILE), crash).unwrap();
    keys
}

fn sources<'a>(dir: &'a Path, keys: Arc<Keys>, report: &'a DoctorReport) -> BundleSources<'a> {
    let mut sources = BundleSources::new(Some(dir), keys, report);
    sources.environment = vec![("TRACKER_TOKEN".into(), canary("process environment").into())];
    sources
}

#[tokio::test]
async fn no_canary_secret_reaches_the_bundle() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    std::fs::create_dir_all(&dir).unwrap();
    let keys = seed(&dir).await;
    let report = report(&dir);
    let out = tmp.path().join("perch-diagnostics.zip");

    let summary = diagnostics::write_bundle(sources(&dir, keys, &report), &out, BundleOptions::default())
        .await
        .unwrap();

    assert_eq!(summary.size_bytes, std::fs::metadata(&out).unwrap().len());
    assert!(!tmp.path().join("perch-diagnostics.zip.part").exists(), "no partial file is left behind");
    let files = diagnostics::read_bundle(&out).unwrap();
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    let crash_entry = format!("crashes/{CRASH_FILE}");
    for expected in [
        "doctor.json",
        "versions.txt",
        "settings.json",
        "mcp_servers.json",
        "logs/perch.2026-05-01.log",
        "logs/mcp/tracker.log",
        crash_entry.as_str(),
        "bundle.txt",
    ] {
        assert!(names.contains(&expected), "{expected} is missing from {names:?}");
    }
    for (name, bytes) in &files {
        let text = String::from_utf8_lossy(bytes);
        for (label, value) in CANARIES {
            assert!(!text.contains(value), "the {label} canary is in {name}");
        }
    }

    // The control: redaction did not simply throw everything away.
    let log = files
        .iter()
        .find(|(n, _)| n == "logs/perch.2026-05-01.log")
        .map(|(_, b)| String::from_utf8_lossy(b))
        .unwrap();
    assert!(log.contains(MARKER), "the harmless line is kept");
    assert!(log.contains("authorization: Bearer [removed]") && log.contains("&page=2"));
    let crash =
        files.iter().find(|(n, _)| *n == crash_entry).map(|(_, b)| String::from_utf8_lossy(b)).unwrap();
    assert!(crash.contains("Component: perch-mcp-web") && crash.contains("Bearer [removed]"));
    let config: serde_json::Value =
        serde_json::from_slice(&files.iter().find(|(n, _)| n == "mcp_servers.json").unwrap().1).unwrap();
    assert_eq!(
        config["mcpServers"]["gh"]["env"]["GH_SETTING"], "[removed]",
        "the name stays, the value goes"
    );
    assert_eq!(config["mcpServers"]["tracker"]["url"], "https://mcp.tracker.example/mcp");
    let versions =
        String::from_utf8_lossy(&files.iter().find(|(n, _)| n == "versions.txt").unwrap().1).into_owned();
    assert!(versions.contains(perch_core::VERSION) && versions.contains("Sandbox: no (no user namespaces)"));
    assert!(summary.removed.known_secrets >= 5, "the stored values were looked for: {:?}", summary.removed);
    assert_eq!(summary.unreadable_keys, 0);
    assert!(!summary.logs_cut);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&out).unwrap().permissions().mode() & 0o777, 0o600, "logs are personal");
    }
}

#[tokio::test]
async fn the_home_folder_is_a_tilde_when_asked() {
    let Some(home) = dirs_home() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    std::fs::create_dir_all(dir.join("logs")).unwrap();
    std::fs::write(dir.join("logs/perch.2026-05-02.log"), format!("opened {home}/work/notes.md\n")).unwrap();
    let keys = Arc::new(Keys::in_file(&dir));
    let report = report(&dir);
    let out = tmp.path().join("bundle.zip");

    let asked = BundleOptions { redact_home: true };
    let summary = diagnostics::write_bundle(sources(&dir, keys.clone(), &report), &out, asked).await.unwrap();
    let log = bundled(&out, "logs/perch.2026-05-02.log");
    assert_eq!(String::from_utf8_lossy(&log), "opened ~/work/notes.md\n");
    assert!(summary.removed.home_paths >= 1);

    diagnostics::write_bundle(sources(&dir, keys, &report), &out, BundleOptions::default()).await.unwrap();
    let log = bundled(&out, "logs/perch.2026-05-02.log");
    assert!(String::from_utf8_lossy(&log).contains(&home), "left alone unless asked");
}

fn dirs_home() -> Option<String> {
    std::env::var("HOME").ok().filter(|h| h.len() > 1)
}

/// One file of a written bundle.
fn bundled(bundle: &Path, name: &str) -> Vec<u8> {
    diagnostics::read_bundle(bundle).unwrap().into_iter().find(|(n, _)| n == name).unwrap().1
}
