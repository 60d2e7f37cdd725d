//! One turn: validate, save the question, build the context, offer tools, run the loop, and
//! save the answer as complete, stopped or failed. The first request goes out as soon as the
//! context and the tools are known, while the answer's row is saved (and, for a first question
//! with nothing attached, the conversation and the question too): the store's round trips are
//! not paid before the model hears the question.
//! (Over 500 lines with its tests; the turn itself is one function read top to bottom.)

use std::pin::Pin;

use futures::future::MaybeDone;

use super::Agent;
use super::{
    ChatError, MAX_MESSAGE_CHARS, Outcome, TurnError, TurnEvent, TurnFinished, TurnKind, TurnOptions,
    TurnRequest, TurnSink, TurnStarted, attachments, context, rounds, stream, thread, tools,
};
use crate::files::TextFile;
use crate::providers::{ChatMessage, ChatRequest, ModelId, ProviderError};
use crate::store::{
    Conversation, ConversationDetail, Message, MessageStatus, MessageUpdate, NewMessage, Role,
};

/// Why a question into a conversation still being answered is refused.
pub const BUSY: &str =
    "An answer is still being written in this conversation: stop it (Esc) or wait for it, then send again.";

/// Runs one turn to its end. Returns the saved answer (complete, stopped or failed).
pub async fn run_turn(
    agent: &Agent,
    request: TurnRequest,
    sink: &dyn TurnSink,
) -> Result<Message, ChatError> {
    run_turn_with(agent, request, sink, TurnOptions::default()).await
}

pub async fn run_turn_with(
    agent: &Agent,
    request: TurnRequest,
    sink: &dyn TurnSink,
    options: TurnOptions,
) -> Result<Message, ChatError> {
    // First, so a Stop during the lookups below is not lost (a Stop even earlier is kept by
    // `Runs` until this line).
    let run = agent.runs().start(request.run_id.clone());
    // One turn per conversation; a view that went away can attach to this one again.
    let _live = agent
        .live_turns()
        .begin(&run.id, request.conversation_id.as_deref())
        .map_err(|_| ChatError::Invalid(BUSY.into()))?;
    let sink = &super::live::LiveSink { turns: agent.live_turns(), run_id: &run.id, inner: sink };
    let id: ModelId = request
        .model
        .parse()
        .map_err(|e: crate::providers::NotAModelId| ChatError::Invalid(e.to_string()))?;
    validate(&request.kind)?;
    let files = match &request.kind {
        TurnKind::Ask { files, .. } => attachments::read_files(agent, files, &run.token).await?,
        _ => Vec::new(),
    };
    let settings = agent.settings().get().await;
    let registry = agent.registry(&settings);
    let provider = registry.provider(&id.provider).await?;
    let info = agent.model_info(&*provider, &id).await;
    if let (TurnKind::Ask { images, .. }, Ok(info)) = (&request.kind, &info)
        && !images.is_empty()
        && !info.capabilities.vision
    {
        return Err(ProviderError::NoVision { model: request.model.clone() }.into());
    }
    let store = agent.store();
    let today = chrono::Local::now().format("%A %-d %B %Y").to_string();
    let system =
        context::system_prompt(&today, crate::locale::user_language(settings.language.as_deref()).as_deref());
    let context_length = info.as_ref().ok().and_then(|i| i.context_length);

    // The conversation so far, loaded once (the turn keeps its copy up to date).
    let history = match &request.conversation_id {
        Some(cid) => Some(store.conversation(cid).await?),
        None => None,
    };
    // The memories the question is about, where this model may read them; the answer records
    // which it was given.
    let on_this_machine = registry.endpoint(&id.provider).is_ok_and(|e| e.on_this_machine());
    let recall_question = match &request.kind {
        TurnKind::Ask { text, .. } | TurnKind::Edit { text, .. } => text.clone(),
        TurnKind::Regenerate { .. } => {
            history.as_ref().map(|h| latest_question(&h.messages)).unwrap_or_default()
        }
    };
    let recalled = agent.memories().for_question(&settings.memories, on_this_machine, &recall_question).await;
    let system = match perch_memories::prompt_section(&recalled) {
        Some(notes) => format!("{system}\n\n{notes}"),
        None => system,
    };
    // What its apps told the model so far is read now: their bound starts again.
    if let Some(cid) = &request.conversation_id {
        agent.app_sessions().turn_began(cid);
    }
    // The context. A question with nothing attached adds only its text to it: the request goes
    // out before the question is saved, and it is saved (with its conversation, if new) while
    // the request is under way (below). Otherwise the question is saved first and the context
    // read back with its attachments.
    let plain = match &request.kind {
        TurnKind::Ask { text, images, selections, .. }
            if images.is_empty() && files.is_empty() && selections.is_empty() =>
        {
            Some(text)
        }
        _ => None,
    };
    let (built, question, asked) = match plain {
        Some(text) => {
            let built = context_before(agent, history.as_ref(), text, &system, context_length).await?;
            (built, text.clone(), Asked::Pending { text, conversation: history.map(|h| h.conversation) })
        }
        None => {
            let saved = save_question(agent, &request, history, &files).await?;
            let built = context_of(agent, &saved, &system, context_length).await?;
            (built, latest_question(&saved.detail.messages), Asked::Saved(Box::new(saved)))
        }
    };
    let think = settings.models.thinking && info.as_ref().is_ok_and(|i| i.capabilities.thinking);

    let mut answer = NewMessage::text(Role::Assistant, "");
    answer.model = Some(request.model.clone());
    answer.status = MessageStatus::Streaming;
    answer.owner = agent.owner_id().map(str::to_owned);
    // What `Started` reports: the question (saved now, when it has nothing attached) and the
    // answer's row, inserted as `streaming` with this process as its owner.
    let saving = async {
        let saved = match asked {
            Asked::Saved(saved) => *saved,
            Asked::Pending { text, conversation } => {
                let conversation = match conversation {
                    Some(open) => {
                        store.set_conversation_model(&open.id, &request.model).await?;
                        open
                    }
                    // A new conversation is created with its model.
                    None => store.create_conversation(&title_from(text), Some(&request.model)).await?,
                };
                let m =
                    store.add_message(&conversation.id, NewMessage::text(Role::User, text.clone())).await?;
                let detail = ConversationDetail {
                    conversation,
                    messages: Vec::new(),
                    tool_calls: Vec::new(),
                    memories_used: Vec::new(),
                };
                Saved { detail, user_message: Some(m), replaces: None }
            }
        };
        answer.alternative_of = saved.replaces;
        let conversation_id = saved.detail.conversation.id.clone();
        let assistant = store.add_message(&conversation_id, answer).await?;
        if !recalled.is_empty() {
            store.set_answer_memories(assistant.id, &recalled).await?;
        }
        let header = store.conversation_header(&conversation_id).await?;
        Ok::<_, ChatError>((conversation_id, saved.user_message, assistant, header))
    };

    // The tools and the first request go out while that is saved: the first token is read only
    // after `Started`, which needs the rows. A model that is missing or cannot be
    // reached is recorded as the answer's error, so the question is kept with an error card;
    // other lookup failures (a server without a model list) do not stop the attempt.
    let mut saving = std::pin::pin!(futures::future::maybe_done(saving));
    let blocked = matches!(&info, Err(e) if blocks_the_answer(e));
    let (early, (offered, tools_off), chat) = if blocked {
        (stream::SentEarly::nothing(&*provider), (Vec::new(), None), None)
    } else {
        let can_use_tools = info.as_ref().map_or(true, |i| i.capabilities.tools);
        let tools = tools_for_turn(agent, &settings, &options, can_use_tools, &built.messages, &question);
        let (offered, tools_off) = alongside(saving.as_mut(), tools).await;
        let chat = ChatRequest {
            model: id.model.clone(),
            messages: built.messages,
            tools: tools::specs(&offered),
            think,
            max_output_tokens: None,
            context_window: context_length,
        };
        let early = if run.token.is_cancelled() {
            stream::SentEarly::nothing(&*provider)
        } else {
            stream::SentEarly::send(&*provider, chat.clone())
        };
        (early, (offered, tools_off), Some(chat))
    };
    early.alongside(saving.as_mut()).await;
    let Some(saved) = saving.as_mut().take_output() else {
        return Err(ChatError::Invalid("the answer could not be started".into()));
    };
    let (conversation_id, user_message, assistant, header) = saved?;
    sink.send(TurnEvent::Started(Box::new(TurnStarted {
        run_id: run.id.clone(),
        conversation: header,
        user_message,
        assistant_message: assistant.clone(),
        omitted: u32::try_from(built.omitted).unwrap_or(u32::MAX),
        context_length,
        memories: recalled.clone(),
    })));

    let mut outcome = Outcome::default();
    match chat {
        None => outcome.error = info.err(),
        Some(chat) => {
            let calls = tools::CallContext {
                agent,
                settings: &settings.tools,
                conversation_id: &conversation_id,
                message_id: assistant.id,
                run_id: &run.id,
                cancel: &run.token,
                sink,
                extra_rules: &options.extra_rules,
                app: None,
                tools_off,
            };
            rounds::agent_loop(&early, chat, &offered, &calls, settings.tools.max_rounds, &mut outcome).await;
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

/// The question: saved (with the conversation it went into) before the context was built, or
/// one with nothing attached, saved while the request goes out (its conversation created then,
/// when new).
enum Asked<'a> {
    Saved(Box<Saved>),
    Pending { text: &'a String, conversation: Option<Conversation> },
}

/// The question, and the conversation it went into, as saved before the context is built.
struct Saved {
    detail: ConversationDetail,
    user_message: Option<Message>,
    /// The answer being replaced (a regenerated one).
    replaces: Option<i64>,
}

/// The context for a question with nothing attached, before it is saved: the thread so far
/// (with its questions' attached files) and the question. What [`context_of`] reads back once
/// the question is saved, without the reads: the question has no attachments to find.
async fn context_before(
    agent: &Agent,
    history: Option<&ConversationDetail>,
    text: &str,
    system: &str,
    context_length: Option<u32>,
) -> Result<context::Built, ChatError> {
    let mut noted = Vec::new();
    if let Some(detail) = history.filter(|d| !d.messages.is_empty()) {
        let visible: Vec<Message> = thread::visible(&detail.messages)
            .into_iter()
            .map(|m| context::with_tool_notes(m, &detail.tool_calls))
            .collect();
        noted = attachments::with_file_blocks(agent, &detail.conversation.id, visible).await?;
    }
    // A new question is never an alternative: the thread with it is the thread, then it.
    noted.push(Message::unsaved(Role::User, text));
    let noted: Vec<&Message> = noted.iter().collect();
    Ok(context::build(system, &noted, Vec::new(), context_length))
}

/// Saves the question (or finds the answer being replaced) in its conversation (`history`, or
/// a new one).
async fn save_question(
    agent: &Agent,
    request: &TurnRequest,
    history: Option<ConversationDetail>,
    files: &[TextFile],
) -> Result<Saved, ChatError> {
    let store = agent.store();
    let (mut detail, new) = match history {
        Some(detail) => (detail, false),
        None => {
            let title = match &request.kind {
                TurnKind::Ask { text, .. } | TurnKind::Edit { text, .. } => title_from(text),
                TurnKind::Regenerate { .. } => String::new(),
            };
            let conversation = store.create_conversation(&title, Some(&request.model)).await?;
            (
                ConversationDetail {
                    conversation,
                    messages: Vec::new(),
                    tool_calls: Vec::new(),
                    memories_used: Vec::new(),
                },
                true,
            )
        }
    };
    let conversation_id = detail.conversation.id.clone();
    // A new conversation was created with the model; an open one is told it alongside the
    // question (one wait for the store instead of two).
    let set_model = async {
        if new { Ok(()) } else { store.set_conversation_model(&conversation_id, &request.model).await }
    };
    let question = async {
        match &request.kind {
            TurnKind::Ask { text, images, selections, .. } => {
                let m =
                    store.add_message(&conversation_id, NewMessage::text(Role::User, text.clone())).await?;
                attachments::save_images(agent, m.id, images).await?;
                attachments::save_text_files(agent, m.id, files).await?;
                attachments::save_selections(agent, m.id, selections).await?;
                Ok::<_, ChatError>((Some(m), None))
            }
            TurnKind::Edit { message_id, text } => {
                let old = last_of(&detail.messages, *message_id, Role::User)?;
                let mut edited = NewMessage::text(Role::User, text.clone());
                edited.alternative_of = Some(thread::group_of(old));
                let m = store.add_message(&conversation_id, edited).await?;
                attachments::copy_attachments(agent, old.id, m.id).await?;
                Ok((Some(m), None))
            }
            TurnKind::Regenerate { message_id } => {
                let old = last_of(&detail.messages, *message_id, Role::Assistant)?;
                Ok((None, Some(thread::group_of(old))))
            }
        }
    };
    let (set_model, question) = tokio::join!(set_model, question);
    set_model?;
    let (user_message, replaces) = question?;
    detail.messages.extend(user_message.clone());
    Ok(Saved { detail, user_message, replaces })
}

/// The context from the thread as it now stands (without the answer being replaced), with the
/// question's images and every question's attached files.
async fn context_of(
    agent: &Agent,
    saved: &Saved,
    system: &str,
    context_length: Option<u32>,
) -> Result<context::Built, ChatError> {
    let conversation_id = &saved.detail.conversation.id;
    let mut visible = thread::visible(&saved.detail.messages);
    visible.retain(|m| Some(thread::group_of(m)) != saved.replaces);
    let question = visible.iter().rev().find(|m| m.role == Role::User).map(|m| m.id);
    let noted: Vec<Message> =
        visible.iter().map(|m| context::with_tool_notes(m, &saved.detail.tool_calls)).collect();
    // Two reads of the store, asked for together.
    let images = async {
        match question {
            Some(qid) => attachments::load_images(agent, conversation_id, qid).await,
            None => Ok(Vec::new()),
        }
    };
    let (images, noted) =
        tokio::try_join!(images, attachments::with_file_blocks(agent, conversation_id, noted))?;
    let noted: Vec<&Message> = noted.iter().collect();
    Ok(context::build(system, &noted, images, context_length))
}

/// Runs `work` while `beside` (a part of the turn that need not wait for it) goes on too.
async fn alongside<F: Future, T>(mut beside: Pin<&mut MaybeDone<F>>, work: impl Future<Output = T>) -> T {
    let mut work = std::pin::pin!(work);
    std::future::poll_fn(|cx| {
        let _ = beside.as_mut().poll(cx);
        work.as_mut().poll(cx)
    })
    .await
}

/// How long a turn waits for servers starting for the first time to list their tools.
const SERVERS_STARTING_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The tools this turn offers: none when tools are off, the model cannot use them, or the
/// question has an image attached (a setting); else the top K for the question plus the
/// always-on ones. With none offered, why: a model that calls one anyway (it saw tools earlier
/// in the conversation) gets that reason, and so does the user, on the call's card.
async fn tools_for_turn(
    agent: &Agent,
    settings: &crate::settings::Settings,
    options: &TurnOptions,
    model_can_use_tools: bool,
    request: &[ChatMessage],
    question: &str,
) -> (Vec<tools::OfferedTool>, Option<tools::ToolsOff>) {
    // The question's own images, not the conversation's: one screenshot early on must not turn
    // tools off for every later question.
    let has_images = request
        .iter()
        .rev()
        .find_map(|m| match m {
            ChatMessage::User { images, .. } => Some(!images.is_empty()),
            _ => None,
        })
        .unwrap_or(false);
    let off = if !settings.tools.enabled {
        Some(tools::ToolsOff::Disabled)
    } else if options.no_tools {
        Some(tools::ToolsOff::ForThisQuestion)
    } else if !model_can_use_tools {
        Some(tools::ToolsOff::ModelCannot)
    } else if has_images && settings.tools.skip_with_images {
        Some(tools::ToolsOff::ImageAttached)
    } else {
        None
    };
    if off.is_some() {
        return (Vec::new(), off);
    }
    agent.mcp().settle(SERVERS_STARTING_WAIT).await;
    let mut all = tools::offered_tools(agent.mcp().tools());
    // Memories off: the model is not offered to propose any.
    if !settings.memories.enabled {
        all.retain(|t| t.server != perch_memories::tool::SERVER);
    }
    let always_on = always_on_tools(agent, &settings.tools, settings.memories.enabled);
    let ollama = crate::providers::ollama_url(&settings.providers);
    let (picked, report) =
        agent.tool_picker().pick(&settings.tools, &ollama, all, &always_on, question).await;
    if let Some(r) = report {
        tracing::debug!(retriever = %r.used, fallback = ?r.fallback_reason, tools = picked.len(), "tools picked");
    }
    (picked, None)
}

/// Tools always offered, as model names: Settings -> Tools (`server:tool`) and each server's
/// `alwaysOn` list.
fn always_on_tools(agent: &Agent, settings: &crate::settings::ToolSettings, memories: bool) -> Vec<String> {
    let mut names: Vec<String> = settings
        .always_on
        .iter()
        .filter_map(|s| s.split_once(':'))
        .map(|(server, tool)| tools::model_name(server.trim(), tool.trim()))
        .collect();
    for server in agent.mcp().list() {
        names.extend(server.config.always_on.iter().map(|t| tools::model_name(&server.config.name, t)));
    }
    // The user added knowledge folders to be searched: their tool is never left out by the
    // picker (it is listed only while a folder is indexed).
    names.push(tools::model_name(perch_knowledge::tool::SERVER, perch_knowledge::tool::TOOL));
    // A note the user asks to keep can come with any question.
    if memories {
        names.push(tools::model_name(perch_memories::tool::SERVER, perch_memories::tool::TOOL));
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
    if let TurnKind::Ask { selections, .. } = kind {
        let bytes: usize = selections.iter().map(|s| s.text.len()).sum();
        if bytes > perch_typing::SELECTION_LIMIT {
            let limit = perch_typing::SELECTION_LIMIT as u64;
            let why = perch_typing::TypingError::SelectionTooLarge { bytes: bytes as u64, limit };
            return Err(ChatError::Invalid(why.to_string()));
        }
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
        assert!(
            validate(&TurnKind::Ask {
                text: "  ".into(),
                images: Vec::new(),
                files: Vec::new(),
                selections: Vec::new()
            })
            .is_err()
        );
        let huge = "x".repeat(MAX_MESSAGE_CHARS + 1);
        let err = validate(&TurnKind::Ask {
            text: huge,
            images: Vec::new(),
            files: Vec::new(),
            selections: Vec::new(),
        })
        .unwrap_err()
        .to_string();
        assert!(err.contains("1000001 characters"), "{err}");
        assert!(validate(&TurnKind::Regenerate { message_id: 1 }).is_ok());

        // Selected text past the limit is refused with what to do; at the limit it goes.
        let selected = |bytes: usize| TurnKind::Ask {
            text: "Fix this".into(),
            images: Vec::new(),
            files: Vec::new(),
            selections: vec![super::super::SelectionInput { text: "x".repeat(bytes), app: "Notes".into() }],
        };
        let err = validate(&selected(perch_typing::SELECTION_LIMIT + 1)).unwrap_err().to_string();
        assert!(err.contains("attach it with @"), "{err}");
        assert!(validate(&selected(perch_typing::SELECTION_LIMIT)).is_ok());
    }
}
