//! Questions Perch must put to the user before going on: may this tool run, what does this
//! server want filled in (elicitation), may this server use the model (sampling). One
//! registry for all of them; the app shows them in the window, the CLI on the terminal.
//!
//! A question waits until it is answered, the asker gives up (a stopped turn), or nobody is
//! listening at all, which counts as "no".

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{broadcast, oneshot};
use tokio_util::sync::CancellationToken;

/// Why an answer was not delivered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AnswerError {
    /// Answered already (in another window or the terminal), or the turn that asked ended.
    #[error("question {0} is no longer open: it was answered already or its answer was stopped")]
    NotOpen(u64),
}

/// How long the user's answer to a tool approval holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalChoice {
    /// Run this call only.
    Once,
    /// Run this tool without asking for the rest of this conversation.
    Conversation,
    /// Always run this tool without asking.
    Always,
    /// Do not run it, now or later.
    Never,
    /// Do not run this call.
    Deny,
}

impl ApprovalChoice {
    pub fn allows(self) -> bool {
        matches!(self, Self::Once | Self::Conversation | Self::Always)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ApprovalQuestion {
    pub run_id: String,
    pub conversation_id: String,
    /// The tool call's id, so the UI can put the question on its card.
    pub call_id: String,
    pub server: String,
    pub tool: String,
    pub arguments: Value,
    pub read_only: bool,
    /// The tool says it destroys or sends something (MCP's `destructiveHint`: sending mail,
    /// trashing it, deleting an event): each call is asked about, so "allow in this chat" is
    /// not offered, and only a rule the user makes allows it without asking.
    pub destructive: bool,
    /// What a built-in server wants shown instead of the bare arguments (a terminal command).
    pub detail: Option<Box<ApprovalDetail>>,
    /// The app (MCP Apps) that asks, shown in the card it lives in; `None`: the model asks.
    pub app: Option<String>,
}

/// The subject of an approval, for built-in tools whose arguments need explaining.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ApprovalDetail {
    /// A terminal command.
    Command {
        command: String,
        cwd: String,
        /// The model's reason for running it.
        reason: Option<String>,
        sandbox: SandboxView,
        /// Why Perch asks although it might not (the parser could not reduce the line, no sandbox).
        why_asked: Option<String>,
        /// Whether "Always allow this command" is offered (not for lines Perch cannot check).
        can_remember: bool,
        /// No working folder is chosen yet: the card asks for one before the command can run.
        needs_folder: bool,
    },
    /// Session mode: commands in `folder` run without asking until the answer ends.
    Session { reason: String, folder: String },
    /// Text typed into a running command.
    Input { text: String, command: String },
}

/// The sandbox a command runs in, as the approval card, Settings and `perch doctor` say it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct SandboxView {
    /// Writes outside the allowed folders are refused by the kernel.
    pub enforced: bool,
    pub network_blocked: bool,
    pub writable: Vec<String>,
    /// One sentence for the card.
    pub summary: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ElicitationQuestion {
    pub server: String,
    pub message: String,
    /// A JSON schema of an object with simple (string, number, boolean, enum) properties.
    pub schema: Value,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct SamplingQuestion {
    pub server: String,
    /// The messages the server wants the model to answer, as plain text.
    pub messages: Vec<String>,
    pub system_prompt: Option<String>,
    pub max_tokens: u32,
    /// The model that would answer (`provider:model`).
    pub model: String,
}

/// The model proposes to remember something: the user keeps it (as written, or edited) or not.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct MemoryQuestion {
    pub conversation_id: Option<String>,
    /// The tool call that proposes it, so the UI can put the question on its card.
    pub call_id: Option<String>,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Question {
    ToolApproval(ApprovalQuestion),
    Elicitation(ElicitationQuestion),
    Sampling(SamplingQuestion),
    Memory(MemoryQuestion),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ElicitationAction {
    Accept,
    Decline,
    Cancel,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Answer {
    Approval {
        choice: ApprovalChoice,
    },
    Elicitation {
        action: ElicitationAction,
        content: Option<Value>,
    },
    Sampling {
        approve: bool,
    },
    /// The text to keep (the proposal, or the user's edit of it); `None`: not kept.
    Memory {
        keep: Option<String>,
    },
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct OpenQuestion {
    pub id: u64,
    pub question: Question,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "event", content = "data", rename_all = "snake_case")]
pub enum QuestionChange {
    Asked(OpenQuestion),
    /// Answered, or no longer needed: the UI removes it.
    Settled(u64),
}

#[derive(Debug)]
pub struct Questions {
    next: AtomicU64,
    pending: Mutex<BTreeMap<u64, (Question, oneshot::Sender<Answer>)>>,
    events: broadcast::Sender<QuestionChange>,
}

impl Default for Questions {
    fn default() -> Self {
        Self { next: AtomicU64::new(1), pending: Mutex::default(), events: broadcast::channel(64).0 }
    }
}

impl Questions {
    pub fn subscribe(&self) -> broadcast::Receiver<QuestionChange> {
        self.events.subscribe()
    }

    /// Whether anyone (a window, a terminal) can answer questions now.
    pub fn has_listener(&self) -> bool {
        self.events.receiver_count() > 0
    }

    /// Asks and waits. `None` when nobody can answer or `cancel` fires first.
    pub async fn ask(&self, question: Question, cancel: &CancellationToken) -> Option<Answer> {
        if !self.has_listener() {
            return None;
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.lock().insert(id, (question.clone(), tx));
        let _ = self.events.send(QuestionChange::Asked(OpenQuestion { id, question }));
        let answer = tokio::select! {
            answer = rx => answer.ok(),
            () = cancel.cancelled() => None,
        };
        self.lock().remove(&id);
        let _ = self.events.send(QuestionChange::Settled(id));
        answer
    }

    /// The user's answer to question `id`.
    pub fn answer(&self, id: u64, answer: Answer) -> Result<(), AnswerError> {
        let (_, tx) = self.lock().remove(&id).ok_or(AnswerError::NotOpen(id))?;
        tx.send(answer).map_err(|_| AnswerError::NotOpen(id))
    }

    /// Questions still waiting (for a window that opens after they were asked).
    pub fn pending(&self) -> Vec<OpenQuestion> {
        self.lock().iter().map(|(id, (q, _))| OpenQuestion { id: *id, question: q.clone() }).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, (Question, oneshot::Sender<Answer>)>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question() -> Question {
        Question::Elicitation(ElicitationQuestion {
            server: "s".into(),
            message: "name?".into(),
            schema: serde_json::json!({}),
        })
    }

    #[tokio::test]
    async fn a_question_waits_for_its_answer() {
        let questions = std::sync::Arc::new(Questions::default());
        let mut events = questions.subscribe();
        let asking = {
            let questions = questions.clone();
            tokio::spawn(async move { questions.ask(question(), &CancellationToken::new()).await })
        };
        let QuestionChange::Asked(ask) = events.recv().await.unwrap() else { panic!("expected a question") };
        assert_eq!(questions.pending().len(), 1);
        let answer = Answer::Sampling { approve: true };
        questions.answer(ask.id, answer.clone()).unwrap();
        assert_eq!(asking.await.unwrap(), Some(answer));
        assert_eq!(events.recv().await.unwrap(), QuestionChange::Settled(ask.id));
        assert_eq!(
            questions.answer(ask.id, Answer::Sampling { approve: false }),
            Err(AnswerError::NotOpen(ask.id))
        );
    }

    #[tokio::test]
    async fn nobody_listening_or_a_cancel_means_no_answer() {
        let questions = Questions::default();
        assert_eq!(questions.ask(question(), &CancellationToken::new()).await, None);
        let _listener = questions.subscribe();
        let cancel = CancellationToken::new();
        cancel.cancel();
        assert_eq!(questions.ask(question(), &cancel).await, None);
        assert!(questions.pending().is_empty());
    }
}
