//! The terminal through the engine, as its tests share it: an engine whose working folder is a
//! temporary one outside `/tmp` (ask level off), a command run as the model would, and a chat
//! with a fake model whose every question a scripted user answers.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use perch_core::Engine;
use perch_core::agent::{TurnEvent, TurnRequest, TurnSink};
use perch_core::mcp::{CallOrigin, ToolOutput};
use perch_core::questions::{Answer, ApprovalChoice, Question};
use perch_core::settings::BaseUrl;
use perch_core::terminal::{AskLevel, TerminalSettings};
use perch_fake_llm::{Dialect, FakeLlm, Script, Step};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// A folder outside the temp folder (which the sandbox always leaves writable).
pub fn outside_tmp() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

pub async fn setup() -> (tempfile::TempDir, Engine, PathBuf) {
    let root = outside_tmp();
    let engine = super::engine(root.path()).await;
    let work = root.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    engine.terminal().set_idle_return(Duration::from_millis(1500));
    let folder = work.display().to_string();
    engine
        .settings()
        .update(|s| {
            s.terminal.working_folder = folder;
            s.terminal.ask_level = AskLevel::Off;
        })
        .await
        .unwrap();
    (root, engine, work)
}

pub async fn direct(engine: &Engine, command: &str, cancel: &CancellationToken) -> ToolOutput {
    let args = json!({ "command": command }).as_object().cloned();
    engine
        .mcp()
        .call_tool_from(&CallOrigin::default(), "terminal", "run_command", args, cancel, None)
        .await
        .unwrap()
}

pub async fn settings(engine: &Engine) -> TerminalSettings {
    engine.settings().get().await.terminal
}

#[derive(Default, Clone)]
pub struct Collect(pub Arc<Mutex<Vec<TurnEvent>>>);

impl TurnSink for Collect {
    fn send(&self, event: TurnEvent) {
        self.0.lock().unwrap().push(event);
    }
}

pub struct Chat {
    pub _root: tempfile::TempDir,
    pub engine: Engine,
    pub fake: FakeLlm,
    pub work: PathBuf,
    pub asked: Arc<Mutex<Vec<Question>>>,
}

/// A chat whose every question is answered `choice`.
pub async fn chat(choice: ApprovalChoice, level: AskLevel) -> Chat {
    chat_answering(move |_| choice, level).await
}

/// A chat whose questions are answered by `answer`, which sees each one.
pub async fn chat_answering(
    answer: impl Fn(&Question) -> ApprovalChoice + Send + 'static,
    level: AskLevel,
) -> Chat {
    let (root, engine, work) = setup().await;
    let fake = FakeLlm::start(Dialect::Ollama).await.unwrap();
    let url = BaseUrl::try_from(fake.url()).unwrap();
    engine
        .settings()
        .update(|s| {
            s.providers.ollama_url = url;
            s.terminal.ask_level = level;
        })
        .await
        .unwrap();
    let asked = super::answer_questions(&engine, move |q| Answer::Approval { choice: answer(q) });
    Chat { _root: root, engine, fake, work, asked }
}

pub fn turn_calling(name: &str, arguments: Value) -> Script {
    Script {
        steps: vec![Step::ToolCall { name: name.into(), arguments }, Step::Finish { reason: None }],
        token_delay_ms: 0,
    }
}

pub fn ask(text: &str) -> TurnRequest {
    TurnRequest::ask("ollama:qwen3-vl:8b-instruct", None, text)
}

pub fn tool_result(fake: &FakeLlm, request: usize) -> String {
    let body = &fake.chat_requests()[request].body;
    let tool = body["messages"].as_array().unwrap().iter().rfind(|m| m["role"] == "tool").cloned();
    tool.map(|m| m["content"].as_str().unwrap_or_default().to_owned()).unwrap_or_default()
}
