//! The turn: save the question, build the context, stream the answer to a sink while saving it
//! as it grows, and finish it as complete, stopped or failed. One loop for every provider:
//! when the stream ends with tool calls they run (see `tools`) and the model is asked again.

pub mod attachments;
pub mod context;
pub mod picker;
pub mod references;
pub mod runs;
pub mod sampling;
mod stream;
pub mod thread;
pub mod tools;

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::Engine;
use crate::providers::{
    ChatMessage, ChatRequest, ModelId, ModelInfo, Provider, ProviderError, Registry, Usage,
};
use crate::store::{Conversation, Message, MessageStatus, MessageUpdate, NewMessage, Role, StoreError};

/// The longest message Perch accepts; a bigger paste is refused with this number.
pub const MAX_MESSAGE_CHARS: usize = 1_000_000;

/// An image attached to a question, as the UI or the CLI read it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ImageInput {
    pub name: String,
    pub mime: String,
    pub base64: String,
    /// A capture on the shelf to attach instead of `base64` (which is then empty).
    #[serde(default)]
    pub capture: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TurnKind {
    /// A new question.
    Ask { text: String, images: Vec<ImageInput> },
    /// A new answer to the same question; the old answer is kept as an alternative.
    Regenerate { message_id: i64 },
    /// The last question, edited and sent again; the old one is kept as an alternative.
    Edit { message_id: i64, text: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct TurnRequest {
    /// Continue this conversation; a new one starts when absent.
    pub conversation_id: Option<String>,
    /// `provider:model`.
    pub model: String,
    pub kind: TurnKind,
    /// The id under which the run can be stopped (the UI picks it so Stop works at once).
    pub run_id: Option<String>,
}

/// Why an answer failed, for the error card.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct TurnError {
    pub kind: String,
    pub message: String,
}

/// What a turn reports while it runs.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "event", content = "data", rename_all = "snake_case")]
pub enum TurnEvent {
    Started(Box<TurnStarted>),
    Thinking(String),
    Text(String),
    Usage(Usage),
    /// A tool call appeared or changed (status, result); the UI replaces its card by id.
    ToolCall(Box<crate::store::tool_calls::ToolCallRecord>),
    /// A running tool reported progress.
    ToolProgress {
        id: String,
        progress: crate::mcp::Progress,
    },
    Finished(Box<TurnFinished>),
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct TurnStarted {
    pub run_id: String,
    pub conversation: Conversation,
    pub user_message: Option<Message>,
    pub assistant_message: Message,
    /// Older messages left out of the model's context (summarised instead).
    pub omitted: u32,
    pub context_length: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct TurnFinished {
    pub message: Message,
    pub error: Option<TurnError>,
}

/// Where a turn's events go: a Tauri channel in the app, stdout in the CLI, a Vec in tests.
pub trait TurnSink: Send + Sync {
    fn send(&self, event: TurnEvent);
}

/// A turn that could not start. Nothing was saved; the UI keeps what the user typed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChatError {
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Provider(#[from] ProviderError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<ProviderError> for TurnError {
    fn from(e: ProviderError) -> Self {
        Self { kind: e.kind().to_owned(), message: e.to_string() }
    }
}

/// How a turn may differ from the app's settings.
#[derive(Debug, Clone, Default)]
pub struct TurnOptions {
    /// Rules for this turn only, checked before the saved ones (`perch ask --approve demo:*`).
    pub extra_rules: Vec<crate::settings::ToolRule>,
    /// Offer no tools this time.
    pub no_tools: bool,
}

/// Runs one turn to its end. Returns the saved answer (complete, stopped or failed).
pub async fn run_turn(
    engine: &Engine,
    request: TurnRequest,
    sink: &dyn TurnSink,
) -> Result<Message, ChatError> {
    run_turn_with(engine, request, sink, TurnOptions::default()).await
}

pub async fn run_turn_with(
    engine: &Engine,
    request: TurnRequest,
    sink: &dyn TurnSink,
    options: TurnOptions,
) -> Result<Message, ChatError> {
    // First, so a Stop during the lookups below is not lost (a Stop even earlier is kept by
    // `Runs` until this line).
    let run = engine.runs().start(request.run_id.clone());
    let id: ModelId = request.model.parse().map_err(ChatError::Invalid)?;
    validate(&request.kind)?;
    let settings = engine.settings().get().await;
    let registry = Registry::for_engine(engine, &settings);
    let provider = registry.provider(&id.provider).await?;
    let info = engine.model_info(&*provider, &id).await;
    if let (TurnKind::Ask { images, .. }, Ok(info)) = (&request.kind, &info)
        && !images.is_empty()
        && !info.capabilities.vision
    {
        return Err(ProviderError::NoVision { model: request.model.clone() }.into());
    }
    let store = engine.store();

    // The question (or the answer being replaced) and its conversation.
    let conversation = match &request.conversation_id {
        Some(cid) => store.conversation(cid).await?.conversation,
        None => {
            let title = match &request.kind {
                TurnKind::Ask { text, .. } | TurnKind::Edit { text, .. } => title_from(text),
                TurnKind::Regenerate { .. } => String::new(),
            };
            store.create_conversation(&title, Some(&request.model)).await?
        }
    };
    store.set_conversation_model(&conversation.id, &request.model).await?;
    let detail = store.conversation(&conversation.id).await?;
    let (user_message, replaces) = match &request.kind {
        TurnKind::Ask { text, images } => {
            let m = store.add_message(&conversation.id, NewMessage::text(Role::User, text.clone())).await?;
            attachments::save_images(engine, m.id, images).await?;
            (Some(m), None)
        }
        TurnKind::Edit { message_id, text } => {
            let old = last_of(&detail.messages, *message_id, Role::User)?;
            let mut edited = NewMessage::text(Role::User, text.clone());
            edited.alternative_of = Some(thread::group_of(old));
            let m = store.add_message(&conversation.id, edited).await?;
            attachments::copy_attachments(engine, old.id, m.id).await?;
            (Some(m), None)
        }
        TurnKind::Regenerate { message_id } => {
            let old = last_of(&detail.messages, *message_id, Role::Assistant)?;
            (None, Some(thread::group_of(old)))
        }
    };

    // The context, from the thread as it now stands (without the answer being replaced).
    let detail = store.conversation(&conversation.id).await?;
    let mut visible = thread::visible(&detail.messages);
    visible.retain(|m| Some(thread::group_of(m)) != replaces);
    let question = visible.iter().rev().find(|m| m.role == Role::User).map(|m| m.id);
    let images = match question {
        Some(qid) => attachments::load_images(engine, &conversation.id, qid).await?,
        None => Vec::new(),
    };
    let context_length = info.as_ref().ok().and_then(|i| i.context_length);
    let today = chrono::Local::now().format("%A %-d %B %Y").to_string();
    let noted: Vec<Message> =
        visible.iter().map(|m| context::with_tool_notes(m, &detail.tool_calls)).collect();
    let noted: Vec<&Message> = noted.iter().collect();
    let built = context::build(&context::system_prompt(&today), &noted, images, context_length);
    let think = settings.models.thinking && info.as_ref().is_ok_and(|i| i.capabilities.thinking);

    let mut answer = NewMessage::text(Role::Assistant, "");
    answer.model = Some(request.model.clone());
    answer.status = MessageStatus::Streaming;
    answer.owner = engine.owner_id().map(str::to_owned);
    answer.alternative_of = replaces;
    let assistant = store.add_message(&conversation.id, answer).await?;
    sink.send(TurnEvent::Started(Box::new(TurnStarted {
        run_id: run.id.clone(),
        conversation: store.conversation(&conversation.id).await?.conversation,
        user_message,
        assistant_message: assistant.clone(),
        omitted: u32::try_from(built.omitted).unwrap_or(u32::MAX),
        context_length,
    })));

    // A model that is missing or cannot be reached is recorded as the answer's error, so the
    // question is kept with an error card; other lookup failures (a server without a model
    // list) do not stop the attempt.
    let mut outcome = Outcome::default();
    match info {
        Err(e) if blocks_the_answer(&e) => outcome.error = Some(e),
        info => {
            let can_use_tools = info.as_ref().map_or(true, |i| i.capabilities.tools);
            let offered =
                tools_for_turn(engine, &settings, &options, can_use_tools, &built.messages, &detail.messages)
                    .await;
            let calls = tools::CallContext {
                engine,
                settings: &settings.tools,
                conversation_id: &conversation.id,
                message_id: assistant.id,
                run_id: &run.id,
                cancel: &run.token,
                sink,
                extra_rules: &options.extra_rules,
            };
            let chat = ChatRequest {
                model: id.model.clone(),
                messages: built.messages,
                tools: tools::specs(&offered),
                think,
                max_output_tokens: None,
            };
            agent_loop(&*provider, chat, &offered, &calls, settings.tools.max_rounds, &mut outcome).await;
        }
    }
    let status = match (&outcome.error, outcome.stopped) {
        (_, true) => MessageStatus::Stopped,
        (Some(_), _) => MessageStatus::Error,
        (None, false) => MessageStatus::Complete,
    };
    let update = MessageUpdate {
        content: outcome.text,
        thinking: (!outcome.thinking.is_empty()).then_some(outcome.thinking),
        status: Some(status),
        error: outcome.error.as_ref().map(ToString::to_string),
        input_tokens: outcome.usage.map(|u| u.input_tokens as i64),
        output_tokens: outcome.usage.map(|u| u.output_tokens as i64),
    };
    let message = store.finish_message(assistant.id, update).await?;
    let error = outcome.error.map(TurnError::from);
    sink.send(TurnEvent::Finished(Box::new(TurnFinished { message: message.clone(), error })));
    Ok(message)
}

/// The tools this turn offers: none when tools are off, the model cannot use them, or images
/// are attached (a setting); else the top K for the question plus the always-on ones.
async fn tools_for_turn(
    engine: &Engine,
    settings: &crate::settings::Settings,
    options: &TurnOptions,
    model_can_use_tools: bool,
    request: &[ChatMessage],
    thread: &[Message],
) -> Vec<tools::OfferedTool> {
    let has_images =
        request.iter().any(|m| matches!(m, ChatMessage::User { images, .. } if !images.is_empty()));
    if !settings.tools.enabled
        || options.no_tools
        || !model_can_use_tools
        || (has_images && settings.tools.skip_with_images)
    {
        return Vec::new();
    }
    let all = tools::offered_tools(engine.mcp().tools());
    let always_on = always_on_tools(engine, &settings.tools);
    let ollama = crate::providers::ollama_url(&settings.providers);
    let (picked, report) =
        engine.tool_picker().pick(&settings.tools, &ollama, all, &always_on, &latest_question(thread)).await;
    if let Some(r) = report {
        tracing::debug!(retriever = %r.used, fallback = ?r.fallback_reason, tools = picked.len(), "tools picked");
    }
    picked
}

/// Tools always offered, as model names: Settings -> Tools (`server:tool`) and each server's
/// `alwaysOn` list.
fn always_on_tools(engine: &Engine, settings: &crate::settings::ToolSettings) -> Vec<String> {
    let mut names: Vec<String> = settings
        .always_on
        .iter()
        .filter_map(|s| s.split_once(':'))
        .map(|(server, tool)| tools::model_name(server.trim(), tool.trim()))
        .collect();
    for server in engine.mcp().list() {
        names.extend(server.config.always_on.iter().map(|t| tools::model_name(&server.config.name, t)));
    }
    names
}

/// The text of the newest question, which tool retrieval matches against.
fn latest_question(messages: &[Message]) -> String {
    thread::visible(messages)
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .map(|m| m.content.clone())
        .unwrap_or_default()
}

fn blocks_the_answer(e: &ProviderError) -> bool {
    matches!(
        e,
        ProviderError::ModelNotFound { .. }
            | ProviderError::Unreachable { .. }
            | ProviderError::Auth { .. }
            | ProviderError::LocalModel { .. }
    )
}

/// Model capabilities by `provider:model`, kept for ten minutes.
#[derive(Debug, Default)]
pub struct ModelCache {
    entries: std::sync::Mutex<std::collections::HashMap<String, (Instant, ModelInfo)>>,
}

impl ModelCache {
    const TTL: Duration = Duration::from_secs(600);

    fn get(&self, key: &str) -> Option<ModelInfo> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.get(key).filter(|(at, _)| at.elapsed() < Self::TTL).map(|(_, info)| info.clone())
    }

    fn put(&self, key: String, info: ModelInfo) {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).insert(key, (Instant::now(), info));
    }

    /// Forgets everything (after the user changes providers or keys).
    pub fn clear(&self) {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

fn validate(kind: &TurnKind) -> Result<(), ChatError> {
    let text = match kind {
        TurnKind::Ask { text, .. } | TurnKind::Edit { text, .. } => text,
        TurnKind::Regenerate { .. } => return Ok(()),
    };
    if text.trim().is_empty() {
        return Err(ChatError::Invalid("the message is empty".into()));
    }
    let chars = text.chars().count();
    if chars > MAX_MESSAGE_CHARS {
        return Err(ChatError::Invalid(format!(
            "the message has {chars} characters; Perch sends at most {MAX_MESSAGE_CHARS} at a time"
        )));
    }
    Ok(())
}

/// The message `id`, which must be the last visible one of its role: only the last question
/// can be edited, and only the last answer regenerated.
fn last_of(messages: &[Message], id: i64, role: Role) -> Result<&Message, ChatError> {
    let visible = thread::visible(messages);
    match visible.iter().rev().find(|m| m.role == role) {
        Some(m) if m.id == id => Ok(m),
        _ => Err(ChatError::Invalid(format!(
            "message {id} is not the last {} message of this conversation",
            if role == Role::User { "question" } else { "answer" }
        ))),
    }
}

/// A conversation's first title: its first line, shortened.
pub fn title_from(text: &str) -> String {
    let line = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    if line.chars().count() > 60 {
        format!("{}…", line.chars().take(59).collect::<String>())
    } else {
        line.to_owned()
    }
}

#[derive(Default)]
struct Outcome {
    text: String,
    thinking: String,
    usage: Option<Usage>,
    error: Option<ProviderError>,
    stopped: bool,
}

/// The loop every provider shares: stream; when the model asks for tools, run them (checked,
/// approved, concurrently) and stream again with the results, up to `max_rounds` rounds.
async fn agent_loop(
    provider: &dyn Provider,
    mut chat: ChatRequest,
    offered: &[tools::OfferedTool],
    calls: &tools::CallContext<'_>,
    max_rounds: u32,
    out: &mut Outcome,
) {
    let mut declined: Vec<(String, String)> = Vec::new();
    let mut round = 0u32;
    loop {
        let text_before = out.text.len();
        let stream::Step { calls: asked, thinking } = stream::stream_answer(
            provider,
            chat.clone(),
            calls.engine.store(),
            calls.message_id,
            calls.cancel,
            calls.sink,
            out,
        )
        .await;
        if asked.is_empty() || out.stopped || out.error.is_some() {
            return;
        }
        if round >= max_rounds {
            let note = format!("\n\n_Perch stopped here after {max_rounds} rounds of tool calls._");
            out.text.push_str(&note);
            calls.sink.send(TurnEvent::Text(note));
            return;
        }
        // Asking again for exactly what the user declined ends the turn instead of looping.
        if asked.iter().any(|c| declined.contains(&(c.name.clone(), c.arguments.to_string()))) {
            let note = "\n\n_Perch stopped here: the model asked again for a tool call you declined._";
            out.text.push_str(note);
            calls.sink.send(TurnEvent::Text(note.to_owned()));
            return;
        }
        let offset = u32::try_from(out.text.chars().count()).unwrap_or(u32::MAX);
        let results = calls.run_round(round, offset, asked.clone(), offered).await;
        chat.messages.push(ChatMessage::Assistant {
            text: out.text[text_before..].to_owned(),
            tool_calls: asked,
            thinking,
        });
        for r in results {
            if r.denied {
                declined.push((r.call.name.clone(), r.call.arguments.to_string()));
            }
            chat.messages.push(ChatMessage::Tool {
                call_id: r.call.id.clone(),
                name: r.call.name.clone(),
                content: r.output.text.clone(),
                is_error: r.output.is_error,
            });
        }
        if calls.cancel.is_cancelled() {
            out.stopped = true;
            return;
        }
        round += 1;
        if round >= max_rounds {
            // The last request offers no tools, so the model answers with what it has.
            chat.tools.clear();
            chat.messages.push(ChatMessage::System(format!(
                "You have used {max_rounds} rounds of tool calls, the most allowed for one answer. \
                 Answer now with what you have, and say what is left to do."
            )));
        }
    }
}

/// Engine helpers the turn needs.
impl Engine {
    /// A model's capabilities, cached for ten minutes.
    pub async fn model_info(
        &self,
        provider: &dyn Provider,
        id: &ModelId,
    ) -> Result<ModelInfo, ProviderError> {
        let key = id.key();
        if let Some(info) = self.model_cache().get(&key) {
            return Ok(info);
        }
        let info = provider.model_info(&id.model).await?;
        self.model_cache().put(key, info.clone());
        Ok(info)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_the_first_line_shortened() {
        assert_eq!(title_from("\n  How do I read a file?\nmore"), "How do I read a file?");
        let long = "word ".repeat(30);
        let t = title_from(&long);
        assert_eq!(t.chars().count(), 60);
        assert!(t.ends_with('…'));
    }

    #[test]
    fn empty_and_oversized_messages_are_refused_before_anything_is_saved() {
        assert!(validate(&TurnKind::Ask { text: "  ".into(), images: Vec::new() }).is_err());
        let huge = "x".repeat(MAX_MESSAGE_CHARS + 1);
        let err = validate(&TurnKind::Ask { text: huge, images: Vec::new() }).unwrap_err().to_string();
        assert!(err.contains("1000001 characters"), "{err}");
        assert!(validate(&TurnKind::Regenerate { message_id: 1 }).is_ok());
    }
}
