//! `remember`, the built-in tool the model proposes a memory with. The call itself puts the
//! proposal to the user ([`Question::Memory`], shown on the call's card and in `perch ask`):
//! nothing is kept without the user's yes, no rule or grant keeps one for them, and the user
//! may edit the text before keeping it. The model reads what became of it.

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use perch_store::{Store, memory_text};
use perch_tools::questions::{Answer, MemoryQuestion, Question, Questions};
use perch_tools::{BuiltinServer, CallError, CallOrigin, Progress, ToolOutput, ToolView, Vetting};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The server's name, as tools are qualified (`memory__remember`).
pub const SERVER: &str = "memory";
pub const TOOL: &str = "remember";

/// What the engine knows of secrets (the stored keys, the shapes of tokens, private keys):
/// text that holds one is never proposed to the user nor kept.
pub trait SecretCheck: Send + Sync {
    fn holds_secret<'a>(&'a self, text: &'a str) -> BoxFuture<'a, bool>;
}

/// Why a text that holds a secret is not kept, for the model and the user alike.
pub const HOLDS_A_SECRET: &str = "it looks like it holds a key, a token or a password, which Perch never keeps as \
     a memory (keys belong in Settings -> Models)";

pub struct MemoryServer {
    store: Store,
    questions: Arc<Questions>,
    secrets: Arc<dyn SecretCheck>,
}

impl MemoryServer {
    pub fn new(store: Store, questions: Arc<Questions>, secrets: Arc<dyn SecretCheck>) -> Self {
        Self { store, questions, secrets }
    }

    fn view() -> ToolView {
        ToolView {
            name: TOOL.to_owned(),
            title: Some("Remember".to_owned()),
            description: "Propose a lasting note about the user, their projects or their preferences \
                 (\"The user's team ships on Fridays\", \"Prefers answers with type annotations\"), to be \
                 given to you in later conversations when relevant. The user sees the proposal and keeps, \
                 edits or refuses it. Use it when the user asks you to remember something, or states a \
                 durable fact or preference worth keeping; never for secrets, passwords or keys, and never \
                 for passing details of this conversation."
                .to_owned(),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "text": {
                        "type": "string",
                        "description": "The note, one short sentence in the third person about the user"
                    }
                },
                "required": ["text"]
            }),
            read_only: false,
            destructive: false,
            harmless_when: None,
            ui: None,
        }
    }
}

/// What the card shows: whether it was kept, and as what.
fn outcome(kept: Option<&perch_store::Memory>, proposed: &str) -> Value {
    match kept {
        Some(m) => json!({ "kept": true, "id": m.id, "text": m.text, "proposed": proposed }),
        None => json!({ "kept": false, "proposed": proposed }),
    }
}

impl BuiltinServer for MemoryServer {
    fn name(&self) -> &'static str {
        SERVER
    }

    fn tools(&self) -> Vec<ToolView> {
        vec![Self::view()]
    }

    /// The call asks the user itself, with the text to edit: not the approval card's question.
    fn vet<'a>(&'a self, _: &'a CallOrigin, _: &'a str, _: &'a Value) -> BoxFuture<'a, Vetting> {
        async { Vetting::NoQuestion }.boxed()
    }

    fn call<'a>(
        &'a self,
        origin: &'a CallOrigin,
        tool: &'a str,
        arguments: &'a Value,
        cancel: &'a CancellationToken,
        _: Option<mpsc::UnboundedSender<Progress>>,
    ) -> BoxFuture<'a, Result<ToolOutput, CallError>> {
        async move {
            if tool != TOOL {
                return Err(CallError::UnknownTool { server: SERVER.into(), tool: tool.into() });
            }
            let proposed =
                match memory_text(arguments.get("text").and_then(Value::as_str).unwrap_or_default()) {
                    Ok(text) => text,
                    Err(e) => return Ok(ToolOutput::error(format!("Nothing was proposed: {e}."))),
                };
            if self.secrets.holds_secret(&proposed).await {
                return Ok(ToolOutput::error(format!("Nothing was proposed: {HOLDS_A_SECRET}.")));
            }
            let store_error = |e: perch_store::StoreError| CallError::Protocol {
                server: SERVER.into(),
                message: format!("the memories could not be read or saved: {e}"),
            };
            if let Some(kept) =
                self.store.memories().await.map_err(store_error)?.into_iter().find(|m| m.text == proposed)
            {
                return Ok(ToolOutput {
                    text: "The user keeps this note already; nothing to do.".into(),
                    structured: Some(outcome(Some(&kept), &proposed)),
                    ..ToolOutput::default()
                });
            }
            let question = Question::Memory(MemoryQuestion {
                conversation_id: origin.conversation_id.clone(),
                call_id: origin.call_id.clone(),
                text: proposed.clone(),
            });
            let answer = self.questions.ask(question, cancel).await;
            if cancel.is_cancelled() {
                return Err(CallError::Cancelled);
            }
            let keep = match answer {
                Some(Answer::Memory { keep: Some(text) }) => text,
                Some(_) => {
                    return Ok(ToolOutput {
                        text: "The user chose not to keep this note. Do not propose it again.".into(),
                        structured: Some(outcome(None, &proposed)),
                        ..ToolOutput::default()
                    });
                }
                None => {
                    return Ok(ToolOutput {
                        text: "Not kept: nobody could be asked (no window or terminal is open to answer). \
                               The user can add it on the Memories page."
                            .into(),
                        structured: Some(outcome(None, &proposed)),
                        ..ToolOutput::default()
                    });
                }
            };
            if self.secrets.holds_secret(&keep).await {
                return Ok(ToolOutput::error(format!("Not kept: {HOLDS_A_SECRET}.")));
            }
            let kept = match self.store.add_memory(&keep, origin.conversation_id.as_deref()).await {
                Ok(kept) => kept,
                Err(perch_store::StoreError::Invalid(why)) => {
                    return Ok(ToolOutput::error(format!("Not kept: {why}.")));
                }
                Err(e) => return Err(store_error(e)),
            };
            let text = if kept.text == proposed {
                format!("Kept: \"{}\"", kept.text)
            } else {
                format!("The user edited the note and kept it as: \"{}\"", kept.text)
            };
            Ok(ToolOutput {
                text,
                structured: Some(outcome(Some(&kept), &proposed)),
                ..ToolOutput::default()
            })
        }
        .boxed()
    }
}
