#![allow(clippy::unwrap_used)]
//! `perch knowledge`: a folder added, listed, searched with its places, used by `perch ask`
//! through `search_knowledge` (a fake Ollama calling the tool), and removed with its index.

mod common;

use common::{err, out, perch};

use perch_fake_llm::{Dialect, FakeLlm, Script, Step};
use serde_json::{Value, json};

const NOTES: &str = "# Runbook\n\n## Rotating the signing key\nThe signing key is rotated every ninety days by the release captain.\n";

#[tokio::test(flavor = "multi_thread")] // the fake serves while this thread waits for perch
async fn a_folder_is_added_searched_used_by_ask_and_removed_without_a_trace() {
    let data = tempfile::tempdir().unwrap();
    let folder = tempfile::tempdir().unwrap();
    let folder_path = folder.path().canonicalize().unwrap();
    std::fs::write(folder_path.join("runbook.md"), NOTES).unwrap();
    std::fs::write(folder_path.join("signing.key"), "-----BEGIN PRIVATE KEY-----\nMIIE\n").unwrap();
    let fake = FakeLlm::start(Dialect::Ollama).await.unwrap();
    let env = [("OLLAMA_HOST", fake.url())];

    // A first folder that cannot be added leaves no index behind.
    let o = perch(data.path(), &env, &["knowledge", "add", "/no/such/folder"]);
    assert!(!o.status.success() && err(&o).contains("/no/such/folder: cannot be opened"), "{}", err(&o));
    assert!(!data.path().join("knowledge.db").exists(), "a refused first folder left an index");

    let o = perch(data.path(), &env, &["knowledge", "add", folder_path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(out(&o).contains("Files indexed: 1 (unchanged: 0, removed: 0, skipped: 1)."), "{}", out(&o));
    assert!(out(&o).contains("signing.key: its name says it holds a secret"), "{}", out(&o));

    let listed: Value =
        serde_json::from_str(&out(&perch(data.path(), &env, &["knowledge", "list", "--json"]))).unwrap();
    assert_eq!(listed["folders"][0]["path"], folder_path.display().to_string());
    assert_eq!(listed["folders"][0]["files"], 1);

    let o = perch(data.path(), &env, &["knowledge", "search", "who rotates the signing key", "-k", "1"]);
    assert!(o.status.success(), "{}", err(&o));
    let cited =
        format!("{}:3-4  (Runbook > Rotating the signing key)", folder_path.join("runbook.md").display());
    assert!(out(&o).starts_with(&cited), "{}", out(&o));

    // `perch ask`: the model searches and answers from the passage.
    let call = json!({ "query": "signing key rotation" });
    fake.push(Script {
        steps: vec![
            Step::ToolCall { name: "knowledge__search_knowledge".into(), arguments: call },
            Step::Finish { reason: None },
        ],
        token_delay_ms: 0,
    });
    fake.push(Script {
        steps: vec![
            Step::Text { text: "The release captain, every ninety days.".into() },
            Step::Finish { reason: None },
        ],
        token_delay_ms: 0,
    });
    let o = perch(data.path(), &env, &["ask", "Who rotates the signing key?"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(out(&o).contains("The release captain"), "{}", out(&o));
    let second = fake.chat_requests()[1].body.clone();
    let result =
        second["messages"].as_array().unwrap().iter().find(|m| m["role"] == "tool").unwrap()["content"]
            .clone();
    let result = result.as_str().unwrap();
    assert!(result.contains(&format!("[`{}:3-4`][]", folder_path.join("runbook.md").display())), "{result}");
    assert!(!result.contains("MIIE"), "{result}");

    let o = perch(data.path(), &env, &["knowledge", "remove", folder_path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", err(&o));
    for leftover in ["knowledge.db", "knowledge.db-wal", "knowledge.db-shm"] {
        assert!(!data.path().join(leftover).exists(), "{leftover} left behind");
    }
    let listed = out(&perch(data.path(), &env, &["knowledge", "list"]));
    assert!(listed.contains("No folders"), "{listed}");
    assert!(!data.path().join("knowledge.db").exists(), "listing makes no index");
}
