#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! Crash reports through the engine: a report left by a crash is announced once at the next
//! start, and the sidecars the engine starts (Perch's MCP servers, the local model runtime) are
//! told where to write theirs, while other programs are not.
//! (The hook itself, in a real panicking process: perch-crash's tests.)

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use perch_core::Engine;
use perch_core::paths::{DataDir, DataDirSource, Resolved};

async fn engine(dir: &Path) -> Engine {
    let data_dir =
        DataDir::prepare(Resolved { path: dir.to_path_buf(), source: DataDirSource::Env }).unwrap();
    Engine::start(data_dir).await.unwrap()
}

/// A report as the web server's panic hook writes it.
fn crash_report(crashes: &Path) -> std::path::PathBuf {
    std::fs::create_dir_all(crashes).unwrap();
    let file = crashes.join("20260501T140200.000Z-perch-mcp-web-4242.txt");
    std::fs::write(
        &file,
        "Perch crash report\nComponent: perch-mcp-web\nVersion: 0.1.0\nOS: linux x86_64\n\
         Time: 2026-05-01T14:02:00.000Z\nProcess: 4242\nThread: tokio-runtime-worker\n\
         Location: mcp_servers/web/src/extract.rs:10:5\nMessage: byte index 3 is not a char boundary; of `…`\n\n\
         Backtrace:\n   0: perch_mcp_web::extract::read\n",
    )
    .unwrap();
    file
}

#[tokio::test]
async fn a_crash_report_is_announced_at_the_next_start_and_only_then() {
    let tmp = tempfile::tempdir().unwrap();
    let first = engine(tmp.path()).await;
    assert!(first.startup_notices().is_empty(), "no crash yet");
    first.shutdown(Duration::from_secs(1)).await;
    drop(first);

    let report = crash_report(&tmp.path().join("crashes"));
    let second = engine(tmp.path()).await;
    let notices = second.startup_notices();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert_eq!(notices[0].title, "A part of Perch (the web tools server) hit an unexpected error");
    assert!(notices[0].detail.contains("Copy diagnostics"), "{}", notices[0].detail);
    // Asked again in the same run (a reloaded window): the same notice.
    assert_eq!(second.startup_notices().len(), 1);
    second.shutdown(Duration::from_secs(1)).await;
    drop(second);

    let third = engine(tmp.path()).await;
    assert!(third.startup_notices().is_empty(), "told once");
    assert!(!report.exists());
    let kept = perch_core::crash::list(&tmp.path().join("crashes"));
    assert!(kept.len() == 1 && kept[0].seen, "the report stays for Settings and bundles: {kept:?}");
    third.shutdown(Duration::from_secs(1)).await;
}

fn repo_target_bin(name: &str) -> std::path::PathBuf {
    // Test binaries live in target/<profile>/deps; the workspace's binaries one level up.
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().unwrap().parent().unwrap().join(name);
    assert!(path.exists(), "{} is missing: build it with `cargo build -p {name}`", path.display());
    path
}

fn environ(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/environ"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', "\n"))
        .unwrap()
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn perchs_own_servers_are_told_where_crash_reports_go_and_no_other_program_is() {
    let tmp = tempfile::tempdir().unwrap();
    let demo = repo_target_bin("perch-mcp-demo");
    // The same server under a name that is not Perch's: a program the user added.
    let other = tmp.path().join("someone-elses-server");
    std::os::unix::fs::symlink(&demo, &other).unwrap();
    let config = serde_json::json!({ "mcpServers": {
        "demo": { "command": demo },
        "other": { "command": other },
    }});
    std::fs::write(tmp.path().join("mcp_servers.json"), config.to_string()).unwrap();
    let m = perch_core::mcp::McpManager::new(
        tmp.path(),
        None,
        Arc::new(perch_core::questions::Questions::default()),
    );
    for name in ["demo", "other"] {
        m.ensure_connected(name, Duration::from_secs(30)).await.unwrap();
    }
    let crashes = perch_core::paths::crashes_dir_in(tmp.path());
    let ours = environ(m.server("demo").unwrap().pid.unwrap());
    assert!(ours.contains(&format!("PERCH_CRASH_DIR={}\n", crashes.display())), "{ours}");
    let theirs = environ(m.server("other").unwrap().pid.unwrap());
    assert!(!theirs.contains("PERCH_CRASH_DIR"), "{theirs}");
    m.shutdown().await;
}

/// The local model runtime gets the folder in its environment. Its program is a script that
/// writes down what it was given, answers `ready` and dies on the load.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn the_local_runtime_is_told_where_crash_reports_go() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let models = perch_core::local::LocalModels::new(tmp.path());
    models.add(&perch_llm_protocol::test_support::smollm2_gguf(), Some("smollm2")).await.unwrap();
    let model = models.list().await.into_iter().find(|m| m.name == "smollm2").unwrap();
    let script = tmp.path().join("sidecar");
    let seen = tmp.path().join("seen");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$PERCH_CRASH_DIR\" > '{}'\necho '{{\"event\":\"ready\",\"version\":\"t\",\"system_info\":\"\"}}'\nread line\nexit 1\n",
            seen.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let crashes = perch_core::paths::crashes_dir_in(tmp.path());
    let runtime = perch_core::local::Runtime::with_crash_dir(Some(script), Some(crashes.clone()));
    let params = perch_llm_protocol::wire::ChatParams::default();
    let settings = perch_core::local::LocalSettings::default();
    assert!(runtime.chat(&model, &settings, params).await.is_err(), "the script cannot load a model");
    assert_eq!(std::fs::read_to_string(&seen).unwrap().trim_end(), crashes.display().to_string());
    runtime.stop().await;
}
