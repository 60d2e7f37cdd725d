#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! The `perch` binary run as a user runs it, against real data folders.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};

use perch_core::store::{Integrity, LATEST_VERSION, NewMessage, Role, Store};
use serde_json::Value;

fn perch(data_dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perch"))
        .args(args)
        .env("PERCH_DATA_DIR", data_dir)
        .env_remove("OLLAMA_HOST")
        // No Vulkan driver, whatever card the machine has: the same answers everywhere.
        .env("VK_DRIVER_FILES", "/nonexistent/icd.json")
        .env("VK_ICD_FILENAMES", "/nonexistent/icd.json")
        .env_remove("GGML_VK_VISIBLE_DEVICES")
        .output()
        .expect("perch runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> Value {
    assert!(o.status.success(), "failed: {}", stderr(o));
    serde_json::from_slice(&o.stdout).expect("valid JSON on stdout")
}

async fn seed(data_dir: &Path) -> String {
    std::fs::create_dir_all(data_dir).unwrap();
    let (store, _) = Store::open(&data_dir.join("perch.db"), Integrity::Quick).await.unwrap();
    let c = store.create_conversation("Borrow checker", Some("ollama:qwen3-vl:8b-instruct")).await.unwrap();
    store
        .add_message(&c.id, NewMessage::text(Role::User, "Why does the borrow checker reject this?"))
        .await
        .unwrap();
    let mut answer = NewMessage::text(Role::Assistant, "Because a mutable reference outlives its scope.");
    answer.model = Some("ollama:qwen3-vl:8b-instruct".into());
    store.add_message(&c.id, answer).await.unwrap();
    c.id
}

#[test]
fn version_is_printed() {
    let tmp = tempfile::tempdir().unwrap();
    let out = perch(tmp.path(), &["--version"]);
    assert!(out.status.success());
    assert_eq!(stdout(&out).trim(), format!("perch {}", perch_core::VERSION));
}

#[tokio::test]
async fn history_list_show_and_search() {
    let tmp = tempfile::tempdir().unwrap();
    let id = seed(tmp.path()).await;

    let list = json(&perch(tmp.path(), &["history", "list", "--json"]));
    assert_eq!(list[0]["id"], id.as_str());
    assert_eq!(list[0]["message_count"], 2);
    let text = stdout(&perch(tmp.path(), &["history", "list"]));
    assert!(text.contains(&id[..8]) && text.contains("Borrow checker"), "{text}");

    let shown = json(&perch(tmp.path(), &["history", "show", &id[..6], "--json"]));
    assert_eq!(shown["messages"][1]["content"], "Because a mutable reference outlives its scope.");
    let text = stdout(&perch(tmp.path(), &["history", "show", &id]));
    assert!(text.contains("## You") && text.contains("## ollama:qwen3-vl:8b-instruct"), "{text}");

    let hits = json(&perch(tmp.path(), &["history", "search", "outlives", "--json"]));
    assert_eq!(hits.as_array().unwrap().len(), 1);
    assert_eq!(hits[0]["conversation_id"], id.as_str());
    let text = stdout(&perch(tmp.path(), &["history", "search", "outlives"]));
    assert!(text.contains("outlives its scope"), "{text}");
    assert!(!text.contains('\u{2}'), "markers never reach a pipe");

    let none = stdout(&perch(tmp.path(), &["history", "search", "kubernetes"]));
    assert!(none.contains("Nothing matches"), "{none}");
}

#[tokio::test]
async fn unknown_conversation_is_a_clear_failure() {
    let tmp = tempfile::tempdir().unwrap();
    seed(tmp.path()).await;
    let out = perch(tmp.path(), &["history", "show", "ffffffff"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("conversation ffffffff was not found"), "{}", stderr(&out));
    let out = perch(tmp.path(), &["history", "show", "ab"]);
    assert!(stderr(&out).contains("at least 4 characters"), "{}", stderr(&out));
}

#[test]
fn an_empty_history_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let out = perch(tmp.path(), &["history", "list"]);
    assert!(out.status.success());
    assert_eq!(stdout(&out).trim(), "No conversations yet.");
}

#[test]
fn doctor_reports_a_healthy_data_dir_and_every_component() {
    let tmp = tempfile::tempdir().unwrap();
    let report = json(&perch(tmp.path(), &["doctor", "--json"]));
    assert_eq!(report["data_dir"]["path"], tmp.path().to_str().unwrap());
    assert_eq!(report["data_dir"]["source"], "env");
    assert_eq!(report["database"]["status"], "ok");
    assert_eq!(report["database"]["schema_version"], LATEST_VERSION);
    let names: Vec<&str> =
        report["components"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "display",
            "screen capture",
            "audio input",
            "speech out",
            "typing into other apps",
            "keyring",
            "certificates",
            "ollama",
            "sandbox",
            "graphics card",
            "npx",
            "uvx",
            "node",
            "python3",
            "crash reports"
        ]
    );
    // espeak-ng from the system, ONNX Runtime from the venv's wheel (PERCH_ONNXRUNTIME, as make
    // sets it): both kinds of voice can speak.
    let speech = report["components"].as_array().unwrap().iter().find(|c| c["name"] == "speech out").unwrap();
    assert_eq!(speech["available"], true, "{speech}");
    assert!(speech["detail"].as_str().unwrap().contains("natural voices through ONNX Runtime"), "{speech}");
    // The local model runtime beside the binary was started and asked; this machine has no
    // graphics card (lavapipe is never chosen by itself), so both run on the CPU, and say why.
    let card =
        report["components"].as_array().unwrap().iter().find(|c| c["name"] == "graphics card").unwrap();
    let detail = card["detail"].as_str().unwrap();
    assert_eq!(card["available"], false, "{detail}");
    assert!(detail.starts_with("no Vulkan graphics card was found"), "{detail}");
    assert!(
        detail.contains("local models run on the CPU; dictation: the CPU (no Vulkan graphics card was found"),
        "{detail}"
    );
}

#[test]
fn doctor_recovers_a_corrupt_database_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("perch.db"), b"garbage, not sqlite".repeat(300)).unwrap();
    let out = perch(tmp.path(), &["doctor"]);
    assert!(out.status.success(), "a recovered database still lets Perch run");
    let text = stdout(&out);
    assert!(text.contains("the database was damaged") && text.contains("perch.db.corrupt-"), "{text}");
    let backups = std::fs::read_dir(tmp.path())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().starts_with("perch.db.corrupt-"))
        .count();
    assert_eq!(backups, 1);
    // A second run finds the fresh database healthy.
    assert_eq!(json(&perch(tmp.path(), &["doctor", "--json"]))["database"]["status"], "ok");
}

#[test]
fn doctor_and_history_refuse_a_newer_database() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("perch.db");
    make_newer_db(&db);
    let out = perch(tmp.path(), &["doctor", "--json"]);
    assert!(!out.status.success());
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["database"]["status"], "too_new");
    let out = perch(tmp.path(), &["history", "list"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("newer Perch"), "{}", stderr(&out));
}

/// Builds a database whose schema version is ahead of this build, through the engine's own
/// SQLite connection (the CLI crate has no rusqlite dependency of its own).
fn make_newer_db(db: &Path) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (store, _) = Store::open(db, Integrity::Quick).await.unwrap();
        store.call(|c| Ok(c.pragma_update(None, "user_version", LATEST_VERSION + 1)?)).await.unwrap();
    });
}

#[test]
fn an_unusable_data_dir_is_named_with_what_to_do() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("not-a-folder");
    std::fs::write(&file, "x").unwrap();
    let bad = file.join("data");
    for args in [&["history", "list"][..], &["doctor"][..]] {
        let out = perch(&bad, args);
        assert!(!out.status.success(), "{args:?}");
        let all = stdout(&out) + &stderr(&out);
        assert!(all.contains(&bad.display().to_string()), "{all}");
        assert!(all.contains("PERCH_DATA_DIR"), "{all}");
    }
}

#[test]
fn doctor_finds_ollama_through_ollama_host() {
    // A loopback server answering /api/version as Ollama does.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut request_line = String::new();
        reader.read_line(&mut request_line).unwrap();
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            if line == "\r\n" || line.is_empty() {
                break;
            }
        }
        let body = r#"{"version":"0.12.3"}"#;
        write!(stream, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()).unwrap();
        request_line
    });
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_perch"))
        .args(["doctor", "--json"])
        .env("PERCH_DATA_DIR", tmp.path())
        .env("OLLAMA_HOST", format!("127.0.0.1:{port}"))
        .output()
        .unwrap();
    let report = json(&out);
    let ollama =
        report["components"].as_array().unwrap().iter().find(|c| c["name"] == "ollama").unwrap().clone();
    assert_eq!(ollama["available"], true, "{ollama}");
    assert!(ollama["detail"].as_str().unwrap().contains("0.12.3"));
    assert!(server.join().unwrap().starts_with("GET /api/version "));
}
