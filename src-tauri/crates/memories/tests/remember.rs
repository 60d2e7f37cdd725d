#![allow(clippy::unwrap_used, clippy::panic)]
//! The `remember` tool against the real history database and the real question registry: a
//! proposal is kept only with the user's yes, as they edited it, and never when refused or
//! when nobody could be asked.

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use perch_memories::tool::{MemoryServer, SecretCheck, TOOL};
use perch_store::{Integrity, Store};
use perch_tools::questions::{Answer, Question, QuestionChange, Questions};
use perch_tools::{BuiltinServer, CallOrigin, ToolOutput};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// The engine's check, standing in: a stored key's value.
struct KnownKey;

impl SecretCheck for KnownKey {
    fn holds_secret<'a>(&'a self, text: &'a str) -> BoxFuture<'a, bool> {
        async move { text.contains("sk-live-0123456789abcdef") }.boxed()
    }
}

struct Setup {
    _dir: tempfile::TempDir,
    store: Store,
    questions: Arc<Questions>,
    server: MemoryServer,
    origin: CallOrigin,
}

async fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("perch.db"), Integrity::Quick).await.unwrap().0;
    let questions = Arc::new(Questions::default());
    let server = MemoryServer::new(store.clone(), questions.clone(), Arc::new(KnownKey));
    let conversation = store.create_conversation("chat", None).await.unwrap().id;
    let origin = CallOrigin {
        conversation_id: Some(conversation),
        call_id: Some("call-1".into()),
        ..CallOrigin::default()
    };
    Setup { _dir: dir, store, questions, server, origin }
}

impl Setup {
    /// Proposes `text`; the user answers the one question it raises with `answer`.
    async fn propose(&self, text: &str, answer: impl FnOnce(&Question) -> Answer) -> (ToolOutput, Question) {
        let mut events = self.questions.subscribe();
        let arguments = json!({ "text": text });
        let cancel = CancellationToken::new();
        let answering = async {
            loop {
                if let QuestionChange::Asked(open) = events.recv().await.unwrap() {
                    self.questions.answer(open.id, answer(&open.question)).unwrap();
                    return open.question;
                }
            }
        };
        let (output, asked) =
            tokio::join!(self.server.call(&self.origin, TOOL, &arguments, &cancel, None), answering);
        (output.unwrap(), asked)
    }

    async fn kept(&self) -> Vec<String> {
        self.store.memories().await.unwrap().into_iter().map(|m| m.text).collect()
    }
}

#[tokio::test]
async fn a_proposal_the_user_accepts_is_kept_with_its_conversation() {
    let s = setup().await;
    let (output, asked) = s
        .propose("The user deploys on Fridays", |q| match q {
            Question::Memory(m) => Answer::Memory { keep: Some(m.text.clone()) },
            other => panic!("asked {other:?}"),
        })
        .await;
    let Question::Memory(asked) = asked else { panic!() };
    assert_eq!(asked.text, "The user deploys on Fridays");
    assert_eq!(asked.call_id.as_deref(), Some("call-1"), "the question sits on the call's card");
    assert!(!output.is_error);
    assert_eq!(output.text, "Kept: \"The user deploys on Fridays\"");
    assert_eq!(output.structured.as_ref().unwrap()["kept"], true);
    assert_eq!(s.kept().await, ["The user deploys on Fridays"]);
    let memory = &s.store.memories().await.unwrap()[0];
    assert_eq!(memory.conversation_id, s.origin.conversation_id);
}

#[tokio::test]
async fn the_user_edits_a_proposal_before_keeping_it_and_the_model_reads_the_edit() {
    let s = setup().await;
    let (output, _) = s
        .propose("The user likes Python", |_| Answer::Memory {
            keep: Some("The user writes Python 3.12 only".into()),
        })
        .await;
    assert_eq!(output.text, "The user edited the note and kept it as: \"The user writes Python 3.12 only\"");
    assert_eq!(s.kept().await, ["The user writes Python 3.12 only"]);
}

#[tokio::test]
async fn a_refused_proposal_is_not_kept_and_the_model_is_told_not_to_ask_again() {
    let s = setup().await;
    let (output, _) = s.propose("The user's bank PIN is 1234", |_| Answer::Memory { keep: None }).await;
    assert!(output.text.contains("chose not to keep"), "{}", output.text);
    assert_eq!(output.structured.as_ref().unwrap()["kept"], false);
    assert!(s.kept().await.is_empty());
    // Any other answer (a stray approval) is no yes either.
    let (_, _) = s
        .propose("The user's bank PIN is 1234", |_| Answer::Approval {
            choice: perch_tools::questions::ApprovalChoice::Always,
        })
        .await;
    assert!(s.kept().await.is_empty());
}

#[tokio::test]
async fn nothing_is_kept_when_nobody_can_be_asked_or_the_answer_is_stopped() {
    let s = setup().await;
    // No window or terminal listens: the question is never put, and nothing is kept.
    let arguments = json!({ "text": "The user deploys on Fridays" });
    let output = s.server.call(&s.origin, TOOL, &arguments, &CancellationToken::new(), None).await.unwrap();
    assert!(output.text.starts_with("Not kept: nobody could be asked"), "{}", output.text);
    assert!(s.kept().await.is_empty());

    // Stopped while the question is open.
    let mut events = s.questions.subscribe();
    let cancel = CancellationToken::new();
    let stopping = async {
        while !matches!(events.recv().await.unwrap(), QuestionChange::Asked(_)) {}
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(s.server.call(&s.origin, TOOL, &arguments, &cancel, None), stopping);
    assert!(matches!(result, Err(perch_tools::CallError::Cancelled)), "{result:?}");
    assert!(s.kept().await.is_empty());
}

#[tokio::test]
async fn a_note_kept_already_or_not_a_note_at_all_asks_nothing() {
    let s = setup().await;
    s.store.add_memory("The user deploys on Fridays", None).await.unwrap();
    let _listening = s.questions.subscribe();
    let cancel = CancellationToken::new();
    let again = json!({ "text": "The user  deploys on Fridays " });
    let output = s.server.call(&s.origin, TOOL, &again, &cancel, None).await.unwrap();
    assert!(output.text.contains("already"), "{}", output.text);
    assert!(s.questions.pending().is_empty());

    for bad in [json!({}), json!({ "text": "  " }), json!({ "text": "x".repeat(501) })] {
        let output = s.server.call(&s.origin, TOOL, &bad, &cancel, None).await.unwrap();
        assert!(output.is_error && output.text.starts_with("Nothing was proposed"), "{}", output.text);
    }
    assert_eq!(s.kept().await.len(), 1);
}

#[tokio::test]
async fn a_secret_is_never_proposed_nor_kept_even_when_the_user_types_it_in() {
    let s = setup().await;
    let _listening = s.questions.subscribe();
    let arguments = json!({ "text": "The user's OpenAI key is sk-live-0123456789abcdef" });
    let output = s.server.call(&s.origin, TOOL, &arguments, &CancellationToken::new(), None).await.unwrap();
    assert!(output.is_error && output.text.contains("never keeps"), "{}", output.text);
    assert!(s.questions.pending().is_empty(), "not even asked");

    let (output, _) = s
        .propose("The user's key is in the keyring", |_| Answer::Memory {
            keep: Some("key sk-live-0123456789abcdef".into()),
        })
        .await;
    assert!(output.is_error && output.text.starts_with("Not kept"), "{}", output.text);
    assert!(s.kept().await.is_empty());
}
