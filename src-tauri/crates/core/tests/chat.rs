// Over 500 lines: one test per thing a chat turn promises, each short; the helpers are in `support`.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! The turn against the fake Ollama: streaming into the sink and the database, stop, broken
//! streams, an unreachable Ollama, regenerate and edit, images, and context windowing.

use perch_test_support::poll;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use perch_core::Engine;
use perch_core::agent::attachments::{self, Attachable};
use perch_core::agent::{
    ChatError, FileInput, ImageInput, TurnEvent, TurnKind, TurnRequest, TurnSink, run_turn, thread,
};
use perch_core::files::FilesError;
use perch_core::paths::{DataDir, DataDirSource, Resolved};
use perch_core::providers::ProviderError;
use perch_core::settings::BaseUrl;
use perch_core::store::{MessageStatus, Role};
use perch_fake_llm::{Dialect, FakeLlm, FakeModel, Script, Step};

#[derive(Default, Clone)]
struct Collect(Arc<Mutex<Vec<TurnEvent>>>);

impl TurnSink for Collect {
    fn send(&self, event: TurnEvent) {
        self.0.lock().unwrap().push(event);
    }
}

impl Collect {
    fn events(&self) -> Vec<TurnEvent> {
        self.0.lock().unwrap().clone()
    }
    fn text(&self) -> String {
        self.events()
            .iter()
            .filter_map(|e| if let TurnEvent::Text(t) = e { Some(t.clone()) } else { None })
            .collect()
    }
    fn count_text(&self) -> usize {
        self.events().iter().filter(|e| matches!(e, TurnEvent::Text(_))).count()
    }
}

struct Setup {
    _tmp: tempfile::TempDir,
    engine: Engine,
    fake: FakeLlm,
}

async fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let dir =
        DataDir::prepare(Resolved { path: tmp.path().join("data"), source: DataDirSource::Env }).unwrap();
    let engine = Engine::start(dir).await.unwrap();
    let fake = FakeLlm::start(Dialect::Ollama).await.unwrap();
    let url = BaseUrl::try_from(fake.url()).unwrap();
    engine.settings().update(|s| s.providers.ollama_url = url).await.unwrap();
    Setup { _tmp: tmp, engine, fake }
}

fn ask(text: &str) -> TurnRequest {
    TurnRequest::ask("ollama:qwen3-vl:8b-instruct", None, text)
}

#[tokio::test]
async fn an_answer_streams_to_the_sink_and_is_saved_with_its_thinking_and_tokens() {
    let s = setup().await;
    s.fake.push(Script {
        steps: vec![
            Step::Thinking { text: "The user greets me.".into() },
            Step::Text { text: "Hello! ".into() },
            Step::Text { text: "How can I help?".into() },
            Step::Usage { input: 30, output: 8 },
            Step::Finish { reason: None },
        ],
        token_delay_ms: 0,
    });
    let sink = Collect::default();
    let answer = run_turn(s.engine.agent(), ask("Hi there"), &sink).await.unwrap();
    assert_eq!(answer.status, MessageStatus::Complete);
    assert_eq!(answer.content, "Hello! How can I help?");
    assert_eq!(answer.thinking.as_deref(), Some("The user greets me."));
    assert_eq!((answer.input_tokens, answer.output_tokens), (Some(30), Some(8)));
    assert_eq!(answer.model.as_deref(), Some("ollama:qwen3-vl:8b-instruct"));

    let events = sink.events();
    assert!(matches!(events.first(), Some(TurnEvent::Started(_))));
    assert!(matches!(events.last(), Some(TurnEvent::Finished(f)) if f.error.is_none()));
    assert_eq!(sink.text(), answer.content);

    let detail = s.engine.store().conversation(&answer.conversation_id).await.unwrap();
    assert_eq!(detail.conversation.title, "Hi there");
    assert_eq!((detail.conversation.input_tokens, detail.conversation.output_tokens), (30, 8));
    assert_eq!(detail.messages.iter().map(|m| m.role).collect::<Vec<_>>(), [Role::User, Role::Assistant]);
    let sent = s.fake.chat_requests().pop().unwrap();
    assert_eq!(sent.body["think"], true, "thinking is asked of a thinking model");
    assert_eq!(sent.body["messages"][0]["role"], "system");
}

/// The UI chooses the run id and may send Stop before the engine has registered the run (Esc
/// right after Enter): the run then starts stopped, the question is kept, and nothing streams.
#[tokio::test]
async fn a_stop_that_arrives_before_the_run_is_not_lost() {
    let s = setup().await;
    s.fake.push(Script::answer(&"word ".repeat(400)).with_delay(20));
    assert!(!s.engine.runs().cancel("run-early"), "no such run yet");
    let mut request = ask("Tell me a long story");
    request.run_id = Some("run-early".into());
    let answer = run_turn(s.engine.agent(), request, &Collect::default()).await.unwrap();
    assert_eq!(answer.status, MessageStatus::Stopped);
    assert_eq!(answer.content, "");
    assert!(s.fake.chat_requests().is_empty(), "the model was never asked");
    let saved = s.engine.store().conversation(&answer.conversation_id).await.unwrap();
    assert_eq!(saved.messages[0].content, "Tell me a long story", "the question is kept");
    assert_eq!(s.engine.runs().active(), 0);
}

#[tokio::test]
async fn stop_ends_the_stream_and_keeps_the_partial_answer_as_stopped() {
    let s = setup().await;
    s.fake.push(Script::answer(&"word ".repeat(400)).with_delay(20));
    let sink = Collect::default();
    let engine = s.engine.clone();
    let mut request = ask("Tell me a long story");
    request.run_id = Some("run-1".into());
    let turn = tokio::spawn({
        let sink = sink.clone();
        async move { run_turn(engine.agent(), request, &sink).await }
    });
    while sink.count_text() < 5 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(s.engine.runs().cancel("run-1"));
    let answer = turn.await.unwrap().unwrap();
    assert_eq!(answer.status, MessageStatus::Stopped);
    assert!(
        !answer.content.is_empty() && "word ".repeat(400).starts_with(&answer.content),
        "{:?}",
        answer.content
    );
    assert!(answer.content.len() < 400 * 5, "the rest was never received");
    assert_eq!(s.engine.runs().active(), 0);
    let saved = s.engine.store().conversation(&answer.conversation_id).await.unwrap();
    assert_eq!(saved.messages[1].content, answer.content, "what arrived is what was saved");
}

/// A view that went away mid-answer (the chat left for Settings, mini mode) attaches again:
/// it gets what it missed, then the rest live, and a second question into the conversation is
/// refused while the first is open.
#[tokio::test]
async fn a_view_that_comes_back_mid_answer_gets_what_it_missed_then_the_rest() {
    let s = setup().await;
    s.fake.push(Script::answer("first"));
    let first = run_turn(s.engine.agent(), ask("Start"), &Collect::default()).await.unwrap();
    let cid = first.conversation_id.clone();
    assert!(s.engine.live_turns().attach(&cid).is_none(), "nothing is being answered yet");

    s.fake.push(Script::answer(&"word ".repeat(200)).with_delay(10));
    let sink = Collect::default();
    let mut request = ask("Tell me a long story");
    request.conversation_id = Some(cid.clone());
    let turn = tokio::spawn({
        let (engine, sink) = (s.engine.clone(), sink.clone());
        async move { run_turn(engine.agent(), request, &sink).await }
    });
    while sink.count_text() < 10 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let mut attached = s.engine.live_turns().attach(&cid).unwrap();

    // A second question into the same conversation is refused, and saves nothing.
    let mut second = ask("And another thing");
    second.conversation_id = Some(cid.clone());
    match run_turn(s.engine.agent(), second, &Collect::default()).await {
        Err(ChatError::Invalid(why)) => assert!(why.contains("still being written"), "{why}"),
        other => panic!("a second turn ran into an open one: {other:?}"),
    }

    let mut replayed = Vec::new();
    while let Some(event) = attached.recv().await {
        let last = matches!(event, TurnEvent::Finished(_));
        replayed.push(event);
        if last {
            break;
        }
    }
    let answer = turn.await.unwrap().unwrap();
    assert!(matches!(replayed.first(), Some(TurnEvent::Started(st)) if st.conversation.id == cid));
    let text: String = replayed
        .iter()
        .filter_map(|e| if let TurnEvent::Text(t) = e { Some(t.as_str()) } else { None })
        .collect();
    assert_eq!(text, answer.content, "missed and live text together are the whole answer");
    assert!(matches!(replayed.last(), Some(TurnEvent::Finished(f)) if f.message.id == answer.id));
    // Ended: nothing to attach to, and the conversation takes questions again.
    assert!(s.engine.live_turns().attach(&cid).is_none());
    let saved = s.engine.store().conversation(&cid).await.unwrap();
    assert_eq!(saved.messages.len(), 4, "no message of the refused question was saved");
    s.fake.push(Script::answer("ok"));
    let mut again = ask("And now?");
    again.conversation_id = Some(cid);
    run_turn(s.engine.agent(), again, &Collect::default()).await.unwrap();
}

/// Ollama runs a model at its own small window unless told, and cuts a longer prompt's start
/// (the system prompt, attached files) without a word; the fake does the same. Perch sends the
/// window it built the prompt for: the model's trained context up to the cap in Settings.
#[tokio::test]
async fn ollama_runs_at_the_window_the_prompt_was_built_for() {
    let s = setup().await;
    s.fake.push(Script::answer("Read it all."));
    let question = format!("START {}", "word ".repeat(5_000));
    let sink = Collect::default();
    run_turn(s.engine.agent(), ask(&question), &sink).await.unwrap();
    let sent = s.fake.chat_requests().pop().unwrap();
    // The fake's qwen3-vl is trained for 32k; the default cap is 16k.
    assert_eq!(sent.body["options"]["num_ctx"], 16_384);
    let seen = sent.seen.unwrap();
    assert_eq!(seen[0]["role"], "system", "the model read the system prompt: {}", seen.len());
    assert!(seen.iter().any(|m| m["content"].as_str().unwrap_or_default().starts_with("START")));
    let started = sink.events().into_iter().find_map(|e| match e {
        TurnEvent::Started(st) => Some(st.context_length),
        _ => None,
    });
    assert_eq!(started, Some(Some(16_384)), "the gauge shows the window in use");

    // A lower cap in Settings: the window and the budget follow it.
    s.engine.settings().update(|st| st.providers.ollama_context = 8_192).await.unwrap();
    s.fake.push(Script::answer("ok"));
    run_turn(s.engine.agent(), ask("Short one"), &Collect::default()).await.unwrap();
    assert_eq!(s.fake.chat_requests().pop().unwrap().body["options"]["num_ctx"], 8_192);
}

#[tokio::test]
async fn a_broken_stream_keeps_the_partial_answer_with_the_error() {
    let s = setup().await;
    s.fake.push(Script {
        steps: vec![
            Step::Text { text: "Half an ".into() },
            Step::Text { text: "answer".into() },
            Step::Disconnect,
        ],
        token_delay_ms: 0,
    });
    let sink = Collect::default();
    let answer = run_turn(s.engine.agent(), ask("Go"), &sink).await.unwrap();
    assert_eq!(answer.status, MessageStatus::Error);
    assert_eq!(answer.content, "Half an answer");
    assert!(answer.error.as_deref().unwrap().contains("closed before the answer was complete"));
    let Some(TurnEvent::Finished(finished)) = sink.events().pop() else { panic!("no finish") };
    assert_eq!(finished.error.unwrap().kind, perch_core::providers::ProviderErrorKind::Stream);
}

#[tokio::test]
async fn ollama_not_running_is_an_error_card_and_the_question_is_kept() {
    let s = setup().await;
    let (_held, port) = poll::refusing_port();
    let url = BaseUrl::try_from(format!("http://127.0.0.1:{port}")).unwrap();
    s.engine.settings().update(|st| st.providers.ollama_url = url).await.unwrap();
    let sink = Collect::default();
    let answer = run_turn(s.engine.agent(), ask("Are you there?"), &sink).await.unwrap();
    assert_eq!(answer.status, MessageStatus::Error);
    assert!(answer.error.unwrap().contains("ollama serve"));
    let detail = s.engine.store().conversation(&answer.conversation_id).await.unwrap();
    assert_eq!(detail.messages[0].content, "Are you there?");
}

#[tokio::test]
async fn a_missing_model_lists_the_installed_ones() {
    let s = setup().await;
    let mut request = ask("hello");
    request.model = "ollama:mistral:7b".into();
    let answer = run_turn(s.engine.agent(), request, &Collect::default()).await.unwrap();
    let error = answer.error.unwrap();
    assert!(error.contains("mistral:7b") && error.contains("qwen3-vl:8b-instruct, llama3.2:3b"), "{error}");
}

#[tokio::test]
async fn an_untagged_ollama_name_is_its_latest_tag_and_the_history_keeps_it_as_typed() {
    let s = setup().await;
    s.fake.set_models(vec![FakeModel::new("llama3.2:latest", &["completion"], 8192)]);
    s.fake.push(Script::answer("Hi."));
    let mut request = ask("hello");
    request.model = "ollama:Llama3.2".into();
    let answer = run_turn(s.engine.agent(), request, &Collect::default()).await.unwrap();
    assert_eq!(answer.status, MessageStatus::Complete, "{:?}", answer.error);
    assert_eq!(answer.model.as_deref(), Some("ollama:Llama3.2"));
    let detail = s.engine.store().conversation(&answer.conversation_id).await.unwrap();
    assert_eq!(detail.conversation.model.as_deref(), Some("ollama:Llama3.2"));
    // Another spelling of the same model is answered from the model-info cache.
    let shows = || s.fake.requests().iter().filter(|r| r.path == "/api/show").count();
    let before = shows();
    let mut again = ask("again");
    again.model = "ollama:llama3.2:latest".into();
    let answer = run_turn(s.engine.agent(), again, &Collect::default()).await.unwrap();
    assert_eq!(answer.status, MessageStatus::Complete, "{:?}", answer.error);
    assert_eq!(shows(), before);
}

#[tokio::test]
async fn regenerate_keeps_the_old_answer_as_an_alternative() {
    let s = setup().await;
    s.fake.push(Script::answer("First answer."));
    let first = run_turn(s.engine.agent(), ask("Question?"), &Collect::default()).await.unwrap();
    s.fake.push(Script::answer("Second answer."));
    let request = TurnRequest {
        conversation_id: Some(first.conversation_id.clone()),
        model: "ollama:qwen3-vl:8b-instruct".into(),
        kind: TurnKind::Regenerate { message_id: first.id },
        run_id: None,
    };
    let second = run_turn(s.engine.agent(), request, &Collect::default()).await.unwrap();
    assert_eq!(second.alternative_of, Some(first.id));
    let detail = s.engine.store().conversation(&first.conversation_id).await.unwrap();
    let visible: Vec<&str> = thread::visible(&detail.messages).iter().map(|m| m.content.as_str()).collect();
    assert_eq!(visible, ["Question?", "Second answer."]);
    assert_eq!(detail.messages.len(), 3, "the first answer is still stored");
    // The model was asked the question again, without the answer being replaced.
    let sent = s.fake.chat_requests().pop().unwrap().body.to_string();
    assert!(sent.contains("Question?") && !sent.contains("First answer."), "{sent}");
}

#[tokio::test]
async fn editing_the_last_question_sends_the_new_one_and_keeps_the_old() {
    let s = setup().await;
    s.fake.push(Script::answer("Paris."));
    let first = run_turn(s.engine.agent(), ask("Capital of France?"), &Collect::default()).await.unwrap();
    let detail = s.engine.store().conversation(&first.conversation_id).await.unwrap();
    let question = detail.messages[0].id;
    s.fake.push(Script::answer("Berlin."));
    let request = TurnRequest {
        conversation_id: Some(first.conversation_id.clone()),
        model: "ollama:qwen3-vl:8b-instruct".into(),
        kind: TurnKind::Edit { message_id: question, text: "Capital of Germany?".into() },
        run_id: None,
    };
    run_turn(s.engine.agent(), request, &Collect::default()).await.unwrap();
    let detail = s.engine.store().conversation(&first.conversation_id).await.unwrap();
    let visible: Vec<&str> = thread::visible(&detail.messages).iter().map(|m| m.content.as_str()).collect();
    assert_eq!(visible, ["Capital of Germany?", "Berlin."]);
    let sent = s.fake.chat_requests().pop().unwrap().body.to_string();
    assert!(sent.contains("Germany") && !sent.contains("France") && !sent.contains("Paris"), "{sent}");
}

fn png() -> ImageInput {
    ImageInput {
        name: "shot.png".into(),
        mime: "image/png".into(),
        base64: "iVBORw0KGgoAAAANSUhEUg==".into(),
        capture: None,
    }
}

/// Export writes the conversation with its images copied beside it and linked from there, so
/// the file opens whole elsewhere.
#[tokio::test]
async fn an_export_carries_its_images_beside_it() {
    let s = setup().await;
    s.fake.push(Script::answer("A tiny picture."));
    let mut request = ask("What is this?");
    request.kind = TurnKind::Ask {
        text: "What is this?".into(),
        images: vec![png()],
        files: Vec::new(),
        selections: Vec::new(),
    };
    let answer = run_turn(s.engine.agent(), request, &Collect::default()).await.unwrap();
    let out = tempfile::tempdir().unwrap();
    let path = out.path().join("My chat.md");
    thread::export(s.engine.agent(), &answer.conversation_id, &path).await.unwrap();
    let md = std::fs::read_to_string(&path).unwrap();
    let copied: Vec<_> =
        std::fs::read_dir(out.path().join("My chat_files")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(copied.len(), 1, "{copied:?}");
    let file = copied[0].file_name().unwrap().to_string_lossy().into_owned();
    assert!(md.contains(&format!("![image 1](My%20chat_files/{file})")), "{md}");
    // The image comes with its question (the title is the question too, hence the last one).
    assert!(md.find("![image 1]") < md.rfind("What is this?") && md.contains("A tiny picture."), "{md}");
    let original = s.engine.data_dir().attachments_dir().join(&file);
    assert_eq!(std::fs::read(&copied[0]).unwrap(), std::fs::read(original).unwrap());
    // The chat shows the sent image large from the same file.
    let attachments = s.engine.store().attachments(&answer.conversation_id).await.unwrap();
    let url =
        attachments::image_url(s.engine.agent(), &answer.conversation_id, attachments[0].id).await.unwrap();
    assert_eq!(url, "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==");
    assert!(attachments::image_url(s.engine.agent(), "another", attachments[0].id).await.is_err());
    // Nowhere to write: a clear error, nothing half-written.
    let err =
        thread::export(s.engine.agent(), &answer.conversation_id, &out.path().join("missing/dir/x.md")).await;
    assert!(err.unwrap_err().to_string().contains("could not be written"));
}

#[tokio::test]
async fn images_go_to_vision_models_and_are_refused_before_sending_to_others() {
    let s = setup().await;
    let mut request = ask("What is this?");
    request.kind = TurnKind::Ask {
        text: "What is this?".into(),
        images: vec![png()],
        files: Vec::new(),
        selections: Vec::new(),
    };
    let answer = run_turn(s.engine.agent(), request.clone(), &Collect::default()).await.unwrap();
    assert_eq!(answer.status, MessageStatus::Complete);
    let sent = s.fake.chat_requests().pop().unwrap();
    assert_eq!(sent.body["messages"][1]["images"][0], "iVBORw0KGgoAAAANSUhEUg==");
    let files: Vec<_> = std::fs::read_dir(s.engine.data_dir().attachments_dir()).unwrap().collect();
    assert_eq!(files.len(), 1, "the image is a file in the data dir");
    let attachments = s.engine.store().attachments(&answer.conversation_id).await.unwrap();
    assert_eq!(attachments.len(), 1);

    // Regenerating sends the image again.
    let again = TurnRequest {
        conversation_id: Some(answer.conversation_id.clone()),
        model: request.model.clone(),
        kind: TurnKind::Regenerate { message_id: answer.id },
        run_id: None,
    };
    run_turn(s.engine.agent(), again, &Collect::default()).await.unwrap();
    assert_eq!(
        s.fake.chat_requests().pop().unwrap().body["messages"][1]["images"][0],
        "iVBORw0KGgoAAAANSUhEUg=="
    );

    let before = s.engine.store().list_conversations(100, 0).await.unwrap().len();
    request.model = "ollama:llama3.2:3b".into();
    let err = run_turn(s.engine.agent(), request, &Collect::default()).await.unwrap_err();
    assert!(matches!(err, ChatError::Provider(ProviderError::NoVision { .. })), "{err:?}");
    assert_eq!(s.engine.store().list_conversations(100, 0).await.unwrap().len(), before, "nothing was saved");
}

#[tokio::test]
async fn a_conversation_longer_than_the_context_sends_a_window_and_a_summary() {
    let s = setup().await;
    s.fake.set_models(vec![FakeModel::new("tiny", &["completion"], 2048)]);
    let mut conversation = None;
    for i in 0..12 {
        s.fake.push(Script::answer(&format!(
            "Noted point {i} about src/module_{i}.rs. {}",
            "padding ".repeat(60)
        )));
        let mut request = ask(&format!("Point {i}: remember ticket #{}", 100 + i));
        request.model = "ollama:tiny".into();
        request.conversation_id = conversation.clone();
        let answer = run_turn(s.engine.agent(), request, &Collect::default()).await.unwrap();
        conversation = Some(answer.conversation_id);
    }
    let sent = s.fake.chat_requests().pop().unwrap();
    let messages = sent.body["messages"].as_array().unwrap();
    let note = messages[1]["content"].as_str().unwrap();
    assert!(note.contains("Earlier in this conversation"), "{note}");
    assert!(note.contains("src/module_0.rs") && note.contains("#100"), "{note}");
    assert!(messages.len() < 24, "not every message was sent ({})", messages.len());
    assert_eq!(messages.last().unwrap()["content"], "Point 11: remember ticket #111");
    let stored = s.engine.store().conversation(conversation.as_deref().unwrap()).await.unwrap();
    assert_eq!(stored.messages.len(), 24, "the database keeps everything");
}

#[tokio::test]
async fn cloud_providers_without_a_key_say_where_to_add_one() {
    let s = setup().await;
    let mut request = ask("hello");
    request.model = "anthropic:claude-sonnet-4-5".into();
    // The test means nothing where a real key is configured.
    if std::env::var_os("ANTHROPIC_API_KEY").is_some() {
        return;
    }
    let err = run_turn(s.engine.agent(), request, &Collect::default()).await.unwrap_err();
    assert!(err.to_string().contains("ANTHROPIC_API_KEY"), "{err}");
}

#[tokio::test]
async fn answers_left_streaming_by_a_crash_are_stopped_at_the_next_start() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("data");
    let id = {
        let dir = DataDir::prepare(Resolved { path: path.clone(), source: DataDirSource::Env }).unwrap();
        let engine = Engine::start(dir).await.unwrap();
        let c = engine.store().create_conversation("t", None).await.unwrap();
        let mut m = perch_core::store::NewMessage::text(Role::Assistant, "partial");
        m.status = MessageStatus::Streaming;
        engine.store().add_message(&c.id, m).await.unwrap();
        c.id
    };
    let dir = DataDir::prepare(Resolved { path, source: DataDirSource::Env }).unwrap();
    let engine = Engine::start(dir).await.unwrap();
    let detail = engine.store().conversation(&id).await.unwrap();
    assert_eq!(detail.messages[0].status, MessageStatus::Stopped);
    assert_eq!(detail.messages[0].content, "partial");
}

#[tokio::test]
async fn an_answer_another_engine_is_streaming_is_left_alone_until_that_engine_ends() {
    let tmp = tempfile::tempdir().unwrap();
    let start = || async {
        let dir =
            DataDir::prepare(Resolved { path: tmp.path().join("data"), source: DataDirSource::Env }).unwrap();
        Engine::start(dir).await.unwrap()
    };
    let writer = start().await;
    let c = writer.store().create_conversation("t", None).await.unwrap();
    let mut m = perch_core::store::NewMessage::text(Role::Assistant, "so far");
    m.status = MessageStatus::Streaming;
    m.owner = writer.owner_id().map(str::to_owned);
    writer.store().add_message(&c.id, m).await.unwrap();

    let reader = start().await;
    let status = |e: Engine| {
        let id = c.id.clone();
        async move { e.store().conversation(&id).await.unwrap().messages[0].status }
    };
    assert_eq!(status(reader.clone()).await, MessageStatus::Streaming);
    drop(writer);
    drop(reader);
    assert_eq!(status(start().await).await, MessageStatus::Stopped);
}

/// A saved answer's references are checked against the folders in Settings, and a good one
/// opens in the editor (a real process) with the file and the line; the rest never open.
#[tokio::test]
async fn an_answers_file_references_open_from_the_users_folders_only() {
    let s = setup().await;
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(repo.join("src/auth.rs"), "fn check() {}\n").unwrap();
    std::fs::write(tmp.path().join("secret.txt"), "no").unwrap();
    s.fake.push(Script::answer("See [`src/auth.rs:45`][], [`../secret.txt:1`][] and [`src/gone.rs:2`][]."));
    let answer = run_turn(s.engine.agent(), ask("Where?"), &Collect::default()).await.unwrap();
    use perch_core::agent::references;

    let unset = references::check(s.engine.agent(), answer.id).await.unwrap();
    assert!(unset.iter().all(|r| r.problem.as_deref().unwrap().contains("Settings -> Tools -> Folders")));

    let root = repo.display().to_string();
    s.engine.settings().update(|st| st.tools.roots = vec![root]).await.unwrap();
    let checked = references::check(s.engine.agent(), answer.id).await.unwrap();
    let problems: Vec<(&str, Option<&str>)> =
        checked.iter().map(|r| (r.target.as_str(), r.problem.as_deref())).collect();
    assert_eq!(problems[0], ("src/auth.rs:45", None));
    assert!(problems[1].1.unwrap().contains("outside your folders"), "{problems:?}");
    assert!(problems[2].1.unwrap().contains("does not exist"), "{problems:?}");

    let log = tmp.path().join("editor.txt");
    let editor = format!(r#"sh -c 'printf "%s|%s" "$1" "$2" > {}' editor {{file}} {{line}}"#, log.display());
    references::open(s.engine.agent(), answer.id, "src/auth.rs:45", &editor, &[]).await.unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::fs::read_to_string(&log).unwrap_or_default().is_empty() {
        assert!(std::time::Instant::now() < deadline, "the editor never ran");
        tokio::time::sleep(Duration::from_millis(20)).await; // polling the editor's output
    }
    let expected = format!("{}|45", repo.join("src/auth.rs").canonicalize().unwrap().display());
    assert_eq!(std::fs::read_to_string(&log).unwrap(), expected);

    for refused in ["../secret.txt:1", "src/gone.rs:2", "src/other.rs:1"] {
        let e = references::open(s.engine.agent(), answer.id, refused, &editor, &[]).await.unwrap_err();
        assert!(matches!(e, perch_core::review::ReviewError::Reference(_)), "{refused}: {e}");
    }
    assert_eq!(std::fs::read_to_string(&log).unwrap(), expected, "nothing else was opened");
}

#[tokio::test]
async fn attached_files_reach_the_model_as_blocks_with_their_paths_and_are_kept_as_chips() {
    let s = setup().await;
    let folder = tempfile::tempdir().unwrap();
    let code = folder.path().join("lib.rs");
    std::fs::write(&code, "pub fn answer() -> u32 {\n    42\n}\n").unwrap();
    let file = |path: &std::path::Path| FileInput {
        path: path.to_string_lossy().into_owned(),
        first_lines: None,
        lines: None,
    };
    let mut request = ask("What does this return?");
    request.kind = TurnKind::Ask {
        text: "What does this return?".into(),
        images: Vec::new(),
        files: vec![file(&code)],
        selections: Vec::new(),
    };
    let answer = run_turn(s.engine.agent(), request.clone(), &Collect::default()).await.unwrap();
    assert_eq!(answer.status, MessageStatus::Complete);
    let block = format!("<file path=\"{}\">\npub fn answer() -> u32 {{\n    42\n}}\n</file>", code.display());
    let sent = s.fake.chat_requests().pop().unwrap();
    let question = sent.body["messages"][1]["content"].as_str().unwrap().to_owned();
    assert_eq!(question, format!("{block}\n\nWhat does this return?"));
    // Stored as an attachment named by its path (the chip on reopening); the question's own
    // text is what the user typed.
    let attachments = s.engine.store().attachments(&answer.conversation_id).await.unwrap();
    assert_eq!(attachments.len(), 1);
    assert_eq!((attachments[0].kind.as_str(), attachments[0].name.as_deref()), ("file", code.to_str()));
    let detail = s.engine.store().conversation(&answer.conversation_id).await.unwrap();
    assert_eq!(detail.messages[0].content, "What does this return?");

    // A later question in the same conversation still carries the file (the model remembers it),
    // even after the file was deleted on disk.
    std::fs::remove_file(&code).unwrap();
    let mut next = ask("And doubled?");
    next.conversation_id = Some(answer.conversation_id.clone());
    run_turn(s.engine.agent(), next, &Collect::default()).await.unwrap();
    let sent = s.fake.chat_requests().pop().unwrap();
    assert!(sent.body["messages"][1]["content"].as_str().unwrap().starts_with(&block));
    assert_eq!(sent.body["messages"][3]["content"], "And doubled?");

    // A file that disappeared since it was picked refuses the question before anything is saved.
    let before = s.engine.store().list_conversations(100, 0).await.unwrap().len();
    let err = run_turn(s.engine.agent(), request, &Collect::default()).await.unwrap_err();
    assert!(matches!(err, ChatError::File(_)), "{err:?}");
    assert!(err.to_string().contains("no longer exists"), "{err}");
    assert_eq!(s.engine.store().list_conversations(100, 0).await.unwrap().len(), before);

    // The first lines of a large log: its lines are counted off the async threads, and a Stop
    // (here one that arrived before the turn began) ends the count and saves nothing.
    let log = folder.path().join("big.log");
    std::fs::write(&log, "a line of a long log\n".repeat(200_000)).unwrap();
    let mut stopped = ask("What went wrong?");
    stopped.run_id = Some("stop-while-reading".into());
    let part = FileInput { path: log.to_string_lossy().into_owned(), first_lines: Some(10), lines: None };
    stopped.kind = TurnKind::Ask {
        text: "What went wrong?".into(),
        images: Vec::new(),
        files: vec![part],
        selections: Vec::new(),
    };
    s.engine.runs().cancel("stop-while-reading");
    let err = run_turn(s.engine.agent(), stopped.clone(), &Collect::default()).await.unwrap_err();
    assert!(matches!(err, ChatError::File(FilesError::Stopped { .. })), "{err:?}");
    assert_eq!(s.engine.store().list_conversations(100, 0).await.unwrap().len(), before);
    stopped.run_id = None;
    let answer = run_turn(s.engine.agent(), stopped, &Collect::default()).await.unwrap();
    let sent = s.fake.chat_requests().pop().unwrap();
    let question = sent.body["messages"][1]["content"].as_str().unwrap();
    assert!(question.contains("lines=\"1-10 of 200000\""), "{question}");
    assert_eq!(answer.status, MessageStatus::Complete);
}

#[tokio::test]
async fn a_passage_picked_with_hash_reaches_the_model_as_its_lines_and_one_gone_since_refuses_the_question() {
    let s = setup().await;
    let knowledge = s.engine.knowledge().clone();
    assert_eq!(knowledge.pick("retry", 5).await.unwrap(), None, "no folder: the picker stays closed");
    let folder = tempfile::tempdir().unwrap();
    let notes = folder.path().join("decisions.md");
    std::fs::write(
        &notes,
        "# Decisions\n\n## Storage\nWe keep the history in SQLite.\n\n## Retry policy\nFailed uploads are attempted again three times.\n",
    )
    .unwrap();
    knowledge.add_folder(folder.path()).await.unwrap();
    knowledge.reindex(None).await.unwrap();
    let found = knowledge.pick("retry policy", 5).await.unwrap().unwrap();
    let passage = found.iter().find(|p| p.text.contains("Failed uploads")).unwrap().clone();
    assert_eq!(passage.place, format!("{}:{}-{}", notes.display(), passage.start, passage.end));

    let picked = FileInput {
        path: passage.path.clone(),
        first_lines: None,
        lines: Some((passage.start, passage.end)),
    };
    let mut request = ask("Is three enough?");
    request.kind = TurnKind::Ask {
        text: "Is three enough?".into(),
        images: Vec::new(),
        files: vec![picked],
        selections: Vec::new(),
    };
    let answer = run_turn(s.engine.agent(), request.clone(), &Collect::default()).await.unwrap();
    assert_eq!(answer.status, MessageStatus::Complete);
    let sent = s.fake.chat_requests().pop().unwrap();
    let question = sent.body["messages"][1]["content"].as_str().unwrap().to_owned();
    let block = format!(
        "<file path=\"{}\" lines=\"{}-{}\">\n{}\n</file>",
        notes.display(),
        passage.start,
        passage.end,
        passage.text
    );
    assert_eq!(question, format!("{block}\n\nIs three enough?"));
    assert!(!question.contains("SQLite"), "only the picked passage, not the file: {question}");
    let attachments = s.engine.store().attachments(&answer.conversation_id).await.unwrap();
    assert_eq!(attachments[0].name.as_deref(), Some(passage.place.as_str()), "the chip names its lines");

    // The file went away since the passage was picked: the question is refused, saying what to do.
    std::fs::remove_file(&notes).unwrap();
    knowledge.reindex(None).await.unwrap();
    let before = s.engine.store().list_conversations(100, 0).await.unwrap().len();
    let err = run_turn(s.engine.agent(), request, &Collect::default()).await.unwrap_err();
    assert!(
        matches!(err, ChatError::Invalid(_)) && err.to_string().contains("pick the passage again"),
        "{err}"
    );
    assert_eq!(s.engine.store().list_conversations(100, 0).await.unwrap().len(), before, "nothing saved");
}

#[test]
fn a_huge_image_is_refused_before_it_is_read_and_a_picked_text_file_becomes_a_chip() {
    let dir = tempfile::tempdir().unwrap();
    let huge = dir.path().join("huge.png");
    let file = std::fs::File::create(&huge).unwrap();
    use std::io::Write as _;
    (&file).write_all(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    file.set_len(21 << 20).unwrap(); // sparse: 21 MB on paper, nothing on disk
    let err = attachments::check(&huge, None).unwrap_err();
    assert!(matches!(err, FilesError::ImageTooLarge { bytes, .. } if bytes == 21 << 20), "{err:?}");
    assert!(err.to_string().contains("at most 20 MB"), "{err}");
    let small = dir.path().join("small.png");
    std::fs::write(&small, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    assert!(matches!(attachments::check(&small, None).unwrap(), Attachable::Image { .. }));
    let text = dir.path().join("notes.md");
    std::fs::write(&text, "# Notes\n").unwrap();
    let Attachable::Text { name, bytes, .. } = attachments::check(&text, None).unwrap() else { panic!() };
    assert_eq!((name.as_str(), bytes), ("notes.md", 8));
}
