#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! Two rounds of tool calls, then a later turn, against every provider's fake, with thinking
//! on. The fakes refuse what the services refuse (see `perch_fake_llm::rules`): Anthropic a
//! tool round without its signed thinking first, Gemini a function call without its
//! `thoughtSignature`, OpenAI a tool call left unanswered. One test, so the keys it puts in the
//! environment are set before any engine reads them.
#![cfg(unix)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use perch_core::Engine;
use perch_core::agent::{TurnEvent, TurnOptions, TurnRequest, TurnSink, run_turn_with, tools};
use perch_core::paths::{DataDir, DataDirSource, Resolved};
use perch_core::settings::BaseUrl;
use perch_core::store::MessageStatus;
use perch_fake_llm::signatures::sign;
use perch_fake_llm::{Dialect, FakeLlm, Script, Step};
use serde_json::{Value, json};

#[derive(Default, Clone)]
struct Collect(Arc<Mutex<Vec<TurnEvent>>>);

impl TurnSink for Collect {
    fn send(&self, event: TurnEvent) {
        self.0.lock().unwrap().push(event);
    }
}

const KEY: &str = "test-key-1234";

/// A model of each fake that can think and call tools.
fn model(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Ollama => "ollama:qwen3-vl:8b-instruct",
        Dialect::OpenAi => "openai:gpt-4.1",
        Dialect::Anthropic => "anthropic:claude-sonnet-4-5",
        Dialect::Gemini => "gemini:gemini-2.5-flash",
    }
}

/// A step that thinks, says a little and asks for one tool call.
fn round(thought: &str, call: Value) -> Script {
    Script {
        steps: vec![
            Step::Thinking { text: thought.into() },
            Step::Text { text: "Working. ".into() },
            Step::ToolCall { name: "demo__add".into(), arguments: call },
            Step::Finish { reason: None },
        ],
        token_delay_ms: 0,
    }
}

async fn engine_for(dialect: Dialect, fake: &FakeLlm, data: std::path::PathBuf) -> Engine {
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("mcp_servers.json"), json!({ "mcpServers": {} }).to_string()).unwrap();
    let dir = DataDir::prepare(Resolved { path: data, source: DataDirSource::Env }).unwrap();
    let engine = Engine::start(dir).await.unwrap();
    let url = BaseUrl::try_from(fake.url()).unwrap();
    engine
        .settings()
        .update(|s| match dialect {
            Dialect::Ollama => s.providers.ollama_url = url,
            Dialect::OpenAi => s.providers.openai_url = url,
            Dialect::Anthropic => s.providers.anthropic_url = url,
            Dialect::Gemini => s.providers.gemini_url = url,
        })
        .await
        .unwrap();
    engine.mcp().ensure_connected("demo", Duration::from_secs(30)).await.unwrap();
    engine
}

async fn turn(
    engine: &Engine,
    dialect: Dialect,
    text: &str,
    conversation: Option<String>,
) -> perch_core::store::Message {
    let request = TurnRequest::ask(model(dialect), conversation.as_deref(), text);
    let options = TurnOptions { extra_rules: tools::approve_rules(&["demo:*".into()]), no_tools: false };
    run_turn_with(engine.agent(), request, &Collect::default(), options).await.unwrap()
}

#[tokio::test]
async fn two_tool_rounds_and_a_later_turn_work_against_every_provider() {
    // SAFETY: the only test in this binary sets these before any engine or thread reads them.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("PERCH_KEY_STORE", "file");
        for var in ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"] {
            std::env::set_var(var, KEY);
        }
        std::env::remove_var("OPENAI_BASE_URL");
    }
    the_anthropic_fake_refuses_a_tool_round_without_its_thinking().await;
    let tmp = tempfile::tempdir().unwrap();
    for dialect in [Dialect::Ollama, Dialect::OpenAi, Dialect::Anthropic, Dialect::Gemini] {
        let fake = FakeLlm::start(dialect).await.unwrap();
        fake.require_key(KEY);
        let engine = engine_for(dialect, &fake, tmp.path().join(format!("{dialect:?}"))).await;
        fake.push(round("First 2 + 3.", json!({ "a": 2, "b": 3 })));
        let mut second = round("Then 5 + 4.", json!({ "a": 5, "b": 4 }));
        second.steps.insert(0, Step::RedactedThinking { payload: "hidden".into() });
        fake.push(second);
        fake.push(Script::answer("The total is 9."));

        let answer = turn(&engine, dialect, "What is 2 + 3 + 4?", None).await;
        assert_eq!(answer.status, MessageStatus::Complete, "{dialect:?}: {:?}", answer.error);
        assert_eq!(answer.content, "Working. Working. The total is 9.", "{dialect:?}");
        let requests = fake.chat_requests();
        assert_eq!(requests.len(), 3, "{dialect:?}");

        // The later turn: a new question in the same conversation, after the tool rounds.
        fake.push(round("And 9 + 1.", json!({ "a": 9, "b": 1 })));
        fake.push(Script::answer("Ten."));
        let later = turn(&engine, dialect, "Add one more.", Some(answer.conversation_id.clone())).await;
        assert_eq!(later.status, MessageStatus::Complete, "{dialect:?}: {:?}", later.error);
        assert_eq!(later.content, "Working. Ten.", "{dialect:?}");

        let bodies: Vec<Value> = fake.chat_requests().into_iter().map(|r| r.body).collect();
        match dialect {
            Dialect::Anthropic => {
                // The third request repeats the second step's blocks as they came, thinking first.
                let messages = bodies[2]["messages"].as_array().unwrap();
                let step = &messages[messages.len() - 2]["content"];
                assert_eq!(step[0]["type"], "redacted_thinking", "{step}");
                assert_eq!(
                    step[1],
                    json!({ "type": "thinking", "thinking": "Then 5 + 4.", "signature": sign("Then 5 + 4.") })
                );
                assert_eq!(
                    (step[2]["type"].as_str(), step[3]["type"].as_str()),
                    (Some("text"), Some("tool_use"))
                );
                assert!(bodies[2]["thinking"]["type"] == "enabled", "thinking stays on");
            }
            Dialect::Gemini => {
                let contents = bodies[2]["contents"].as_array().unwrap();
                let signed = contents
                    .iter()
                    .flat_map(|c| c["parts"].as_array().unwrap())
                    .filter(|p| p.get("thoughtSignature").is_some())
                    .count();
                assert_eq!(signed, 2, "both steps' calls carry their signatures: {contents:?}");
            }
            _ => {}
        }
    }
}

/// Without the signed blocks the fake refuses the round, as Anthropic does: the check the test
/// above relies on can fail.
async fn the_anthropic_fake_refuses_a_tool_round_without_its_thinking() {
    let fake = FakeLlm::start(Dialect::Anthropic).await.unwrap();
    let body = json!({ "model": "claude-sonnet-4-5", "max_tokens": 100, "stream": true,
        "thinking": { "type": "enabled", "budget_tokens": 50 }, "messages": [
        { "role": "user", "content": "add" },
        { "role": "assistant", "content": [{ "type": "tool_use", "id": "t", "name": "demo__add", "input": {} }] },
        { "role": "user", "content": [{ "type": "tool_result", "tool_use_id": "t", "content": "5" }] } ] });
    let response = perch_core::providers::http::client_builder()
        .build()
        .unwrap()
        .post(format!("{}/v1/messages", fake.url()))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let text = response.text().await.unwrap();
    assert!(text.contains("Expected `thinking` or `redacted_thinking`, but found `tool_use`"), "{text}");
}
