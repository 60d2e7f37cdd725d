#![allow(clippy::unwrap_used)]
//! `perch memories`: kept, listed, edited, given to `perch ask` for a question about them (the
//! fake Ollama reads it in the system prompt, the terminal names it), and forgotten.

mod common;

use common::{err, out, perch};

use perch_fake_llm::{Dialect, FakeLlm, Script};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread")] // the fake serves while this thread waits for perch
async fn memories_are_kept_listed_edited_used_by_ask_and_forgotten() {
    let data = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start(Dialect::Ollama).await.unwrap();
    let env = [("OLLAMA_HOST", fake.url())];

    let o = perch(data.path(), &env, &["memories", "list"]);
    assert!(o.status.success() && out(&o).contains("No memories"), "{}", err(&o));
    let o = perch(data.path(), &env, &["memories", "add", "The user's cat is called Miso"]);
    assert!(o.status.success() && out(&o).contains("Kept as memory 1."), "{}{}", out(&o), err(&o));
    let o = perch(data.path(), &env, &["memories", "add", "   "]);
    assert!(!o.status.success() && err(&o).contains("cannot be empty"), "{}", err(&o));
    let o =
        perch(data.path(), &env, &["memories", "edit", "1", "The user's cat is called Miso and is black"]);
    assert!(o.status.success(), "{}", err(&o));
    let listed: Value =
        serde_json::from_str(&out(&perch(data.path(), &env, &["memories", "list", "--json"]))).unwrap();
    assert_eq!(listed[0]["text"], "The user's cat is called Miso and is black");
    assert!(out(&perch(data.path(), &env, &["memories", "list"])).contains("only models on this computer"));

    fake.push(Script::answer("Miso."));
    let o = perch(data.path(), &env, &["ask", "What is my cat called?"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(err(&o).contains("[memory] The user's cat is called Miso and is black"), "{}", err(&o));
    let system = fake.chat_requests()[0].body["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(system.contains("- The user's cat is called Miso and is black"), "{system}");

    let o = perch(data.path(), &env, &["memories", "forget", "1"]);
    assert!(o.status.success(), "{}", err(&o));
    let o = perch(data.path(), &env, &["memories", "forget", "1"]);
    assert!(!o.status.success() && err(&o).contains("memory 1 was not found"), "{}", err(&o));
    fake.push(Script::answer("I don't know."));
    let o = perch(data.path(), &env, &["ask", "What is my cat called?"]);
    assert!(!err(&o).contains("[memory]"), "{}", err(&o));
    let system = fake.chat_requests()[1].body["messages"][0]["content"].as_str().unwrap().to_owned();
    assert!(!system.contains("Miso"), "{system}");
}
