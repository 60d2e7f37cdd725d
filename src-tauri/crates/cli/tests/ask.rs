#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! `perch ask`, `perch models` and `perch keys` against fake model services on loopback.

mod common;

use std::process::{Command, Stdio};

use common::{err, out, perch};

use perch_fake_llm::{Dialect, FakeLlm, FakeModel, Script, Step};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread")] // the fake serves while this thread waits for perch
async fn ask_streams_the_answer_and_saves_it_to_history() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start(Dialect::Ollama).await.unwrap();
    fake.push(Script {
        steps: vec![
            Step::Thinking { text: "Counting.".into() },
            Step::Text { text: "Two plus two ".into() },
            Step::Text { text: "is four.".into() },
            Step::Usage { input: 10, output: 5 },
            Step::Finish { reason: None },
        ],
        token_delay_ms: 0,
    });
    let env = [("OLLAMA_HOST", fake.url())];
    let o = perch(tmp.path(), &env, &["ask", "What is 2+2?", "--thinking"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(out(&o).trim(), "Two plus two is four.");
    assert!(err(&o).contains("Counting."), "thinking goes to stderr: {}", err(&o));

    let list: Value =
        serde_json::from_str(&out(&perch(tmp.path(), &env, &["history", "list", "--json"]))).unwrap();
    assert_eq!(list[0]["title"], "What is 2+2?");
    let id = list[0]["id"].as_str().unwrap().to_owned();

    // Continue the same conversation; the model sees the earlier exchange.
    let o = perch(tmp.path(), &env, &["ask", "And times three?", "--conversation", &id[..6]]);
    assert!(o.status.success(), "{}", err(&o));
    let sent = fake.chat_requests().pop().unwrap().body.to_string();
    assert!(sent.contains("Two plus two is four.") && sent.contains("And times three?"), "{sent}");
    let shown: Value =
        serde_json::from_str(&out(&perch(tmp.path(), &env, &["history", "show", &id, "--json"]))).unwrap();
    assert_eq!(shown["messages"].as_array().unwrap().len(), 4);
}

#[tokio::test(flavor = "multi_thread")] // the fake serves while this thread waits for perch
async fn the_model_is_told_the_language_chosen_in_settings_else_the_system_locale() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start(Dialect::Ollama).await.unwrap();
    let system_of = |fake: &FakeLlm| {
        let sent = fake.chat_requests().pop().unwrap().body;
        sent["messages"][0]["content"].as_str().unwrap_or_default().to_owned()
    };
    let german = [("OLLAMA_HOST", fake.url()), ("LC_ALL", "de_DE.UTF-8".into())];
    let o = perch(tmp.path(), &german, &["ask", "Wie spät ist es?"]);
    assert!(o.status.success(), "{}", err(&o));
    let system = system_of(&fake);
    assert!(
        system.contains("The user's language is German (DE): answer in it unless they write in another."),
        "{system}"
    );

    // Control: the C locale names no language, and nothing is said.
    let plain = [("OLLAMA_HOST", fake.url()), ("LC_ALL", "C.UTF-8".into())];
    let o = perch(tmp.path(), &plain, &["ask", "What time is it?"]);
    assert!(o.status.success(), "{}", err(&o));
    let system = system_of(&fake);
    assert!(system.starts_with("You are Perch") && !system.contains("language"), "{system}");

    // The language chosen in Settings -> General comes before the system's locale.
    let (store, _) =
        perch_core::store::Store::open(&tmp.path().join("perch.db"), perch_core::store::Integrity::Quick)
            .await
            .unwrap();
    let settings = perch_core::settings::SettingsHandle::load(store).await.unwrap();
    settings.update(|s| s.language = Some("pt-BR".into())).await.unwrap();
    let o = perch(tmp.path(), &german, &["ask", "Que horas são?"]);
    assert!(o.status.success(), "{}", err(&o));
    let system = system_of(&fake);
    assert!(system.contains("The user's language is Portuguese (BR)"), "{system}");
}

#[tokio::test(flavor = "multi_thread")] // the fake serves while this thread waits for perch
async fn ask_fails_clearly_and_nonzero() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start(Dialect::Ollama).await.unwrap();
    let env = [("OLLAMA_HOST", fake.url())];

    let o = perch(tmp.path(), &env, &["ask", "hi", "--model", "ollama:mistral:7b"]);
    assert!(!o.status.success());
    assert!(err(&o).contains("installed: qwen3-vl:8b-instruct, llama3.2:3b"), "{}", err(&o));

    let image = tmp.path().join("shot.png");
    std::fs::write(&image, [0x89, b'P', b'N', b'G']).unwrap();
    let o = perch(
        tmp.path(),
        &env,
        &["ask", "what is it", "--model", "ollama:llama3.2:3b", "--image", image.to_str().unwrap()],
    );
    assert!(!o.status.success());
    assert!(err(&o).contains("cannot read images"), "{}", err(&o));

    let o = perch(tmp.path(), &env, &["ask", "hi", "--model", "gpt-4.1"]);
    assert!(err(&o).contains("write provider:model"), "{}", err(&o));

    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let o = perch(
        tmp.path(),
        &[("OLLAMA_HOST", format!("127.0.0.1:{port}"))],
        &["ask", "hi", "--model", "ollama:x"],
    );
    assert!(!o.status.success());
    assert!(err(&o).contains("ollama serve"), "{}", err(&o));
}

/// `perch ask` streams 175 characters, then the model goes quiet. Meanwhile other `perch`
/// processes open the same data folder (each start looks for answers cut off by an exit):
/// they must leave the live answer streaming, and see its text saved during the pause. After
/// a kill -9 the next start keeps that text as a stopped answer.
#[tokio::test(flavor = "multi_thread")] // the fake serves while this thread waits for perch
async fn a_killed_ask_keeps_what_it_printed_and_a_live_one_is_left_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start(Dialect::Ollama).await.unwrap();
    let said = "word ".repeat(35);
    fake.push(Script {
        steps: vec![
            Step::Text { text: said.clone() },
            Step::Sleep { ms: 60_000 },
            Step::Text { text: "never seen".into() },
            Step::Finish { reason: None },
        ],
        token_delay_ms: 0,
    });
    let env = [("OLLAMA_HOST", fake.url())];
    let mut ask = Command::new(env!("CARGO_BIN_EXE_perch"))
        .args(["ask", "Tell me", "--model", "ollama:qwen3-vl:8b-instruct", "--no-tools"])
        .env("PERCH_DATA_DIR", tmp.path())
        .env("PERCH_KEY_STORE", "file")
        .env("OLLAMA_HOST", fake.url())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let show = |id: &str| -> Value {
        serde_json::from_str(&out(&perch(tmp.path(), &env, &["history", "show", id, "--json"]))).unwrap()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let id = loop {
        assert!(std::time::Instant::now() < deadline, "the text before the pause was never saved");
        let listed = perch(tmp.path(), &env, &["history", "list", "--json"]);
        assert!(listed.status.success(), "{}", err(&listed));
        let list: Value = serde_json::from_str(&out(&listed)).unwrap();
        if let Some(id) = list[0]["id"].as_str() {
            let answer = &show(id)["messages"][1];
            if !answer.is_null() {
                assert_eq!(
                    answer["status"], "streaming",
                    "another process's live answer was marked: {answer}"
                );
                if answer["content"] == said.as_str() {
                    break id.to_owned();
                }
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(100)); // the poll's pace, not a wait for a result
    };
    assert!(ask.try_wait().unwrap().is_none(), "perch ask is still waiting on the model");
    ask.kill().unwrap(); // SIGKILL: no chance to save anything more
    ask.wait().unwrap();
    let answer = show(&id)["messages"][1].clone();
    assert_eq!(answer["status"], "stopped", "{answer}");
    assert_eq!(answer["content"], said.as_str());
}

#[tokio::test(flavor = "multi_thread")] // the fake serves while this thread waits for perch
async fn ask_takes_ollama_names_without_a_tag() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start(Dialect::Ollama).await.unwrap();
    fake.set_models(vec![FakeModel::new("llama3.2:latest", &["completion"], 8192)]);
    fake.push(Script::answer("Hello there."));
    let env = [("OLLAMA_HOST", fake.url())];
    let o = perch(tmp.path(), &env, &["ask", "hi", "--model", "ollama:llama3.2"]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(out(&o).trim(), "Hello there.");
    let list: Value =
        serde_json::from_str(&out(&perch(tmp.path(), &env, &["history", "list", "--json"]))).unwrap();
    assert_eq!(list[0]["model"], "ollama:llama3.2", "the history keeps the name as typed");
    // A model that is not installed under any spelling still lists what is.
    let o = perch(tmp.path(), &env, &["ask", "hi", "--model", "ollama:llama3.2:1b"]);
    assert!(!o.status.success());
    assert!(err(&o).contains("\"llama3.2:1b\"; installed: llama3.2:latest"), "{}", err(&o));
}

#[tokio::test(flavor = "multi_thread")] // the fake serves while this thread waits for perch
async fn models_lists_what_each_provider_offers() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start(Dialect::Ollama).await.unwrap();
    let o = perch(tmp.path(), &[("OLLAMA_HOST", fake.url())], &["models", "--json"]);
    assert!(o.status.success(), "{}", err(&o));
    let listing: Value = serde_json::from_str(&out(&o)).unwrap();
    let ollama = listing.as_array().unwrap().iter().find(|p| p["provider"] == "ollama").unwrap();
    assert_eq!(ollama["models"][0]["id"], "ollama:qwen3-vl:8b-instruct");
    assert_eq!(ollama["models"][0]["capabilities"]["vision"], true);
    let anthropic = listing.as_array().unwrap().iter().find(|p| p["provider"] == "anthropic").unwrap();
    assert!(anthropic["error"].as_str().unwrap().contains("no API key"), "{anthropic}");
    let text = out(&perch(tmp.path(), &[("OLLAMA_HOST", fake.url())], &["models"]));
    // Trained for 32k, run at the default cap of 16k: the window Perch uses is the one listed.
    assert!(text.contains("ollama:qwen3-vl:8b-instruct  [vision, tools, thinking]  16k context"), "{text}");
}

#[tokio::test(flavor = "multi_thread")] // the fake serves while this thread waits for perch
async fn keys_are_stored_checked_masked_and_deleted() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start(Dialect::OpenAi).await.unwrap();
    fake.require_key("sk-test-right-key-0000001");
    let env = [("OPENAI_BASE_URL", fake.url())];

    let o = common::perch_with_input(
        tmp.path(),
        &env,
        &["keys", "set", "openai"],
        Some("sk-test-right-key-0000001\n"),
    );
    assert!(o.status.success(), "{}", err(&o));
    assert!(out(&o).contains("The key for openai works"), "{}", out(&o));
    assert!(err(&o).contains("No OS keyring"), "the file fallback is announced: {}", err(&o));

    let status: Value =
        serde_json::from_str(&out(&perch(tmp.path(), &env, &["keys", "status", "--json"]))).unwrap();
    let openai = status["keys"].as_array().unwrap().iter().find(|k| k["provider"] == "openai").unwrap();
    assert_eq!(openai["masked"], "sk-…0001");
    assert_eq!(openai["source"], "file");
    let all =
        std::fs::read_dir(tmp.path()).unwrap().map(|e| std::fs::read(e.unwrap().path()).unwrap_or_default());
    for bytes in all {
        assert!(!String::from_utf8_lossy(&bytes).contains("right-key"), "the key is never on disk in clear");
    }

    // The key is used for asking.
    fake.push(Script::answer("Hi from the cloud."));
    let o = perch(tmp.path(), &env, &["ask", "hello", "--model", "openai:gpt-4.1"]);
    assert_eq!(out(&o).trim(), "Hi from the cloud.", "{}", err(&o));

    let o = common::perch_with_input(
        tmp.path(),
        &env,
        &["keys", "set", "openai"],
        Some("sk-wrong-key-99999999\n"),
    );
    assert!(!o.status.success());
    assert!(err(&o).contains("the key for openai was rejected"), "{}", err(&o));
    assert!(!err(&o).contains("sk-wrong"), "the key is never printed");

    assert!(perch(tmp.path(), &env, &["keys", "delete", "openai"]).status.success());
    let o = perch(tmp.path(), &env, &["ask", "hello", "--model", "openai:gpt-4.1"]);
    assert!(err(&o).contains("no API key for openai") && err(&o).contains("OPENAI_API_KEY"), "{}", err(&o));
}

#[test]
fn a_web_search_key_is_stored_without_a_model_provider() {
    let tmp = tempfile::tempdir().unwrap();
    let env = [("BRAVE_API_KEY", String::new())];
    let o =
        common::perch_with_input(tmp.path(), &env, &["keys", "set", "brave"], Some("brv-secret-0000042\n"));
    assert!(o.status.success(), "{}", err(&o));
    assert!(out(&o).contains("--backend") && out(&o).contains("brave"), "says how to use it: {}", out(&o));
    let status: Value =
        serde_json::from_str(&out(&perch(tmp.path(), &env, &["keys", "status", "--json"]))).unwrap();
    let keys = status["keys"].as_array().unwrap();
    let brave = keys.iter().find(|k| k["provider"] == "brave").unwrap();
    assert_eq!((brave["masked"].as_str(), brave["source"].as_str()), (Some("brv…0042"), Some("file")));
    assert!(keys.iter().any(|k| k["provider"] == "tavily" && k["masked"].is_null()));
    assert!(perch(tmp.path(), &env, &["keys", "delete", "brave"]).status.success());
    let status: Value =
        serde_json::from_str(&out(&perch(tmp.path(), &env, &["keys", "status", "brave", "--json"]))).unwrap();
    assert!(status["keys"][0]["masked"].is_null(), "{status}");
}

#[tokio::test(flavor = "multi_thread")] // the fake serves while this thread waits for perch
async fn ask_file_sends_each_file_as_a_block_and_refuses_binary_and_missing_ones() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start(Dialect::Ollama).await.unwrap();
    let env = [("OLLAMA_HOST", fake.url())];
    let notes = tmp.path().join("notes.md");
    std::fs::write(&notes, "# Plan\nship on Friday\n").unwrap();
    let data = tmp.path().join("data.csv");
    std::fs::write(&data, "a,b\n1,2\n").unwrap();
    let o = perch(
        tmp.path(),
        &env,
        &["ask", "Summarise", "--file", notes.to_str().unwrap(), data.to_str().unwrap()],
    );
    assert!(o.status.success(), "{}", err(&o));
    let sent = fake.chat_requests().pop().unwrap();
    let question = sent.body["messages"][1]["content"].as_str().unwrap().to_owned();
    let expected = format!(
        "<file path=\"{}\">\n# Plan\nship on Friday\n</file>\n\n<file path=\"{}\">\na,b\n1,2\n</file>\n\nSummarise",
        notes.display(),
        data.display()
    );
    assert_eq!(question, expected);

    let before = fake.chat_requests().len();
    let binary = tmp.path().join("tool.bin");
    std::fs::write(&binary, b"\x7fELF\0\0\x01").unwrap();
    let o = perch(tmp.path(), &env, &["ask", "What is it?", "--file", binary.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(err(&o).contains("is a binary file"), "{}", err(&o));
    let gone = tmp.path().join("gone.txt");
    let o = perch(tmp.path(), &env, &["ask", "What is it?", "--file", gone.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(err(&o).contains("no longer exists"), "{}", err(&o));
    assert_eq!(fake.chat_requests().len(), before, "nothing was sent");
}
