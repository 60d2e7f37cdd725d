#![allow(clippy::unwrap_used, clippy::panic)]
//! Memories through real turns: the fake Ollama proposes one with `remember`, a scripted user
//! keeps (edits) or refuses it, and later questions are given the kept ones they are about, in
//! the system prompt the model reads, recorded with the answer, never to a model off this
//! machine unless the user allowed it, and not at all with memories off.
#![cfg(unix)]

mod support;

use std::sync::{Arc, Mutex};

use perch_core::agent::{TurnEvent, TurnRequest, run_turn};
use perch_core::questions::{Answer, Question};
use perch_fake_llm::{FakeLlm, Script, Step};
use serde_json::{Value, json};

const MODEL: &str = "ollama:qwen3-vl:8b-instruct";

use support::terminal::Collect;

/// The memories the turn's `Started` event says the answer was given.
fn memories_started_with(sink: &Collect) -> Vec<String> {
    let events = sink.0.lock().unwrap();
    let started = events.iter().find_map(|e| match e {
        TurnEvent::Started(s) => Some(s.memories.iter().map(|m| m.text.clone()).collect()),
        _ => None,
    });
    started.expect("a Started event")
}

fn propose(text: &str) -> Script {
    Script {
        steps: vec![
            Step::ToolCall { name: "memory__remember".into(), arguments: json!({ "text": text }) },
            Step::Finish { reason: None },
        ],
        token_delay_ms: 0,
    }
}

fn system_prompt(fake: &FakeLlm, n: usize) -> String {
    let body = &fake.chat_requests()[n].body;
    assert_eq!(body["messages"][0]["role"], "system");
    body["messages"][0]["content"].as_str().unwrap().to_owned()
}

fn offered(fake: &FakeLlm, n: usize) -> Vec<String> {
    let body = &fake.chat_requests()[n].body;
    body["tools"].as_array().map_or(Vec::new(), |tools| {
        tools.iter().map(|t| t["function"]["name"].as_str().unwrap().to_owned()).collect()
    })
}

struct Setup {
    _tmp: tempfile::TempDir,
    engine: perch_core::Engine,
    fake: FakeLlm,
    asked: Arc<Mutex<Vec<Question>>>,
}

async fn setup(answer: impl Fn(&Question) -> Answer + Send + 'static) -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let engine = support::engine(tmp.path()).await;
    engine.terminal().set_enabled(false);
    let fake = support::fake_ollama(&engine).await;
    let asked = support::answer_questions(&engine, answer);
    Setup { _tmp: tmp, engine, fake, asked }
}

async fn ask(s: &Setup, text: &str) -> (perch_core::store::Message, Collect) {
    let sink = Collect::default();
    let answer = run_turn(s.engine.agent(), TurnRequest::ask(MODEL, None, text), &sink).await.unwrap();
    (answer, sink)
}

#[tokio::test]
async fn a_kept_memory_is_given_to_the_later_questions_it_is_about_and_shown_with_their_answers() {
    // The user keeps the proposal, edited.
    let s = setup(|q| match q {
        Question::Memory(_) => {
            Answer::Memory { keep: Some("The user's team deploys the billing service on Fridays".into()) }
        }
        other => panic!("asked {other:?}"),
    })
    .await;
    s.fake.push(propose("The user deploys on Fridays"));
    s.fake.push(Script::answer("Noted."));
    let (first, _) = ask(&s, "Remember that we deploy on Fridays").await;
    assert_eq!(first.content, "Noted.");
    assert!(offered(&s.fake, 0).contains(&"memory__remember".to_owned()), "offered with every question");
    let asked = s.asked.lock().unwrap().clone();
    let Question::Memory(proposal) = &asked[0] else { panic!("asked {asked:?}") };
    assert_eq!(proposal.text, "The user deploys on Fridays");
    assert!(proposal.call_id.is_some(), "the proposal sits on its call's card");
    // The model reads the user's edit.
    let result = &s.fake.chat_requests()[1].body["messages"];
    let tool = result.as_array().unwrap().iter().find(|m| m["role"] == "tool").unwrap();
    assert!(tool["content"].as_str().unwrap().contains("edited the note"), "{tool}");
    let kept = s.engine.memories().list().await.unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].conversation_id.as_deref(), Some(first.conversation_id.as_str()));

    // A question about it, in a new conversation: given, recorded, shown.
    s.fake.push(Script::answer("On Friday."));
    let (answer, sink) = ask(&s, "When does billing deploy?").await;
    assert!(
        system_prompt(&s.fake, 2).contains("\n- The user's team deploys the billing service on Fridays"),
        "{}",
        system_prompt(&s.fake, 2)
    );
    assert_eq!(memories_started_with(&sink), ["The user's team deploys the billing service on Fridays"]);
    let detail = s.engine.store().conversation(&answer.conversation_id).await.unwrap();
    assert_eq!(detail.memories_used.len(), 1);
    assert_eq!(detail.memories_used[0].message_id, answer.id);

    // A question about something else is given none.
    s.fake.push(Script::answer("Canberra."));
    let (_, sink) = ask(&s, "What is the capital of Australia?").await;
    assert!(!system_prompt(&s.fake, 3).contains("Notes the user asked you to keep"));
    assert!(memories_started_with(&sink).is_empty());

    // Forgotten: given to no question, while the answer that used it still shows what it had.
    s.engine.memories().forget(kept[0].id).await.unwrap();
    s.fake.push(Script::answer("Not sure."));
    ask(&s, "When does billing deploy?").await;
    assert!(!system_prompt(&s.fake, 4).contains("Fridays"));
    let detail = s.engine.store().conversation(&answer.conversation_id).await.unwrap();
    assert_eq!(detail.memories_used[0].text, "The user's team deploys the billing service on Fridays");
}

#[tokio::test]
async fn a_refused_proposal_is_never_kept_nor_given() {
    let s = setup(|_| Answer::Memory { keep: None }).await;
    s.fake.push(propose("The user's password is hunter2"));
    s.fake.push(Script::answer("Alright, I won't."));
    ask(&s, "my password is hunter2").await;
    assert_eq!(s.asked.lock().unwrap().len(), 1);
    assert!(s.engine.memories().list().await.unwrap().is_empty());
    let tool = s.fake.chat_requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    assert!(tool["content"].as_str().unwrap().contains("chose not to keep"), "{tool}");
    s.fake.push(Script::answer("I don't know it."));
    ask(&s, "what is my password?").await;
    assert!(!system_prompt(&s.fake, 2).contains("hunter2"));
}

#[tokio::test]
async fn memories_off_offers_no_proposals_and_gives_no_memories() {
    let s = setup(|q| panic!("nothing is asked with memories off: {q:?}")).await;
    s.engine.memories().add("The user's cat is called Miso").await.unwrap();
    s.fake.push(Script::answer("Miso."));
    ask(&s, "What is my cat called?").await;
    assert!(system_prompt(&s.fake, 0).contains("- The user's cat is called Miso"), "on by default");

    s.engine.settings().update(|st| st.memories.enabled = false).await.unwrap();
    s.fake.push(Script::answer("I don't know."));
    let (_, sink) = ask(&s, "What is my cat called?").await;
    assert!(!system_prompt(&s.fake, 1).contains("Miso"));
    assert!(!offered(&s.fake, 1).contains(&"memory__remember".to_owned()), "{:?}", offered(&s.fake, 1));
    assert!(memories_started_with(&sink).is_empty());
    // Even a model that calls it anyway (it saw it earlier) keeps nothing.
    s.fake.push(propose("The user's cat is black"));
    s.fake.push(Script::answer("Ok."));
    ask(&s, "My cat is black").await;
    assert_eq!(s.engine.memories().list().await.unwrap().len(), 1);
    assert!(s.asked.lock().unwrap().is_empty());
}

/// A model off this machine: the same fake, reached by the machine's name rather than a
/// loopback address, as Perch cannot tell that name from a server elsewhere.
#[tokio::test]
async fn memories_go_to_a_model_off_this_machine_only_when_the_user_allowed_it() {
    let s = setup(|q| panic!("nothing is asked: {q:?}")).await;
    let remote = FakeLlm::start_on(perch_fake_llm::Dialect::Ollama, "0.0.0.0:0").await.unwrap();
    let host = std::fs::read_to_string("/etc/hostname").unwrap().trim().to_owned();
    assert!(
        tokio::net::lookup_host((host.as_str(), 80)).await.is_ok_and(|mut a| a.next().is_some()),
        "this test reaches the fake by the machine's name ({host}), which must resolve (/etc/hosts)"
    );
    let url = format!("http://{host}:{}", remote.addr().port());
    let base = perch_core::settings::BaseUrl::try_from(url.clone()).unwrap();
    s.engine.settings().update(|st| st.providers.ollama_url = base).await.unwrap();
    s.engine.memories().add("The user's cat is called Miso").await.unwrap();

    remote.push(Script::answer("I don't know."));
    let (_, sink) = ask(&s, "What is my cat called?").await;
    let system = |n: usize| -> String {
        let body: &Value = &remote.chat_requests()[n].body;
        body["messages"][0]["content"].as_str().unwrap().to_owned()
    };
    assert!(!system(0).contains("Miso"), "{url} is not on this machine: no memories without consent");
    assert!(memories_started_with(&sink).is_empty());
    // The model may still propose one: the proposal is the user's to keep.
    assert!(offered(&remote, 0).contains(&"memory__remember".to_owned()));

    s.engine.settings().update(|st| st.memories.cloud = true).await.unwrap();
    remote.push(Script::answer("Miso."));
    ask(&s, "What is my cat called?").await;
    assert!(system(1).contains("- The user's cat is called Miso"), "{}", system(1));
    assert!(s.asked.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_memory_that_holds_a_stored_key_or_a_token_is_refused() {
    let s = setup(|q| panic!("nothing is asked: {q:?}")).await;
    let key = perch_foundation::keys::Secret::new("my-own-anthropic-key-value-42");
    s.engine.agent().keys().set("anthropic", &key).unwrap();
    for text in [
        "The user's Anthropic key is my-own-anthropic-key-value-42",
        "The user's token is ghp_abcdefghijklmnopqrstuvwxyz0123",
    ] {
        let refused = s.engine.memories().add(text).await.unwrap_err();
        assert!(refused.to_string().contains("never keeps"), "{refused}");
    }
    let kept = s.engine.memories().add("The user's keys live in the keyring").await.unwrap();
    let edited = s.engine.memories().edit(kept.id, "sk-ant-api03-abcdefghijklmnop").await;
    assert!(edited.is_err(), "{edited:?}");
    assert_eq!(s.engine.memories().list().await.unwrap()[0].text, "The user's keys live in the keyring");
    // And the model's proposal of one is not even put to the user.
    s.fake.push(propose("The user's token is ghp_abcdefghijklmnopqrstuvwxyz0123"));
    s.fake.push(Script::answer("I won't keep that."));
    ask(&s, "remember my token ghp_abcdefghijklmnopqrstuvwxyz0123").await;
    assert!(s.asked.lock().unwrap().is_empty());
    assert_eq!(s.engine.memories().list().await.unwrap().len(), 1);
}
