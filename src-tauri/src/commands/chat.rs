//! The chat: sending, stopping, and reading or exporting a conversation. Models, prices and
//! keys are in `models.rs`.

use perch_core::agent::thread::{self, ConversationView};
use perch_core::agent::{TurnEvent, TurnRequest, TurnSink, run_turn};
use perch_core::prices;
use perch_core::store::Message;
use tauri::State;
use tauri::ipc::Channel;

use crate::error::{CommandError, CommandResult, ErrorKind};
use crate::state::AppState;

/// The turn's events go to the UI over the channel it passed.
struct ChannelSink(Channel<TurnEvent>);

impl TurnSink for ChannelSink {
    fn send(&self, event: TurnEvent) {
        if let Err(e) = self.0.send(event) {
            tracing::debug!(error = %e, "the chat view went away during an answer");
        }
    }
}

/// Sends a question (or regenerates, or edits) and streams the answer over `on_event`.
/// Returns the saved answer; errors here mean nothing was sent or saved.
#[tauri::command]
#[specta::specta]
pub async fn chat_send(
    state: State<'_, AppState>,
    request: TurnRequest,
    on_event: Channel<TurnEvent>,
) -> CommandResult<Message> {
    let engine = state.engine()?.clone();
    let sink = ChannelSink(on_event);
    let settings = engine.settings().get().await;
    if settings.speech.speak_answers || engine.speech().in_conversation() {
        // Read aloud as it is written (Settings -> Voice, or a hands-free conversation).
        let language = perch_core::read_aloud::language(settings.language.as_deref());
        let speaking =
            perch_core::read_aloud::ReadAloud::new(&sink, engine.speech().clone(), settings.speech, language)
                .with_phrases(engine.speech().phrases());
        return Ok(run_turn(engine.agent(), request, &speaking).await?);
    }
    Ok(run_turn(engine.agent(), request, &sink).await?)
}

/// Follows the answer being written in a conversation, for a chat view that comes back to it
/// (after Settings, mini mode or a page freed while hidden): what it missed, then the live
/// events up to `finished`. `false` when no answer is being written there.
#[tauri::command]
#[specta::specta]
pub fn chat_attach(
    state: State<'_, AppState>,
    conversation_id: String,
    on_event: Channel<TurnEvent>,
) -> CommandResult<bool> {
    let Some(mut events) = state.engine()?.live_turns().attach(&conversation_id) else { return Ok(false) };
    tauri::async_runtime::spawn(async move {
        while let Some(event) = events.recv().await {
            let last = matches!(event, TurnEvent::Finished(_));
            if on_event.send(event).is_err() || last {
                break;
            }
        }
    });
    Ok(true)
}

/// An image sent with a question, as a data URL (the "N images" chip opens it large).
#[tauri::command]
#[specta::specta]
pub async fn attachment_image(
    state: State<'_, AppState>,
    conversation_id: String,
    id: i64,
) -> CommandResult<String> {
    Ok(perch_core::agent::attachments::image_url(state.engine()?.agent(), &conversation_id, id).await?)
}

/// Stops an answer; what arrived is kept, marked stopped.
#[tauri::command]
#[specta::specta]
pub fn chat_stop(state: State<'_, AppState>, run_id: String) -> CommandResult<bool> {
    Ok(state.engine()?.runs().cancel(&run_id))
}

#[tauri::command]
#[specta::specta]
pub async fn conversation_view(state: State<'_, AppState>, id: String) -> CommandResult<ConversationView> {
    let engine = state.engine()?;
    let detail = engine.store().conversation(&id).await?;
    let attachments = engine.store().attachments(&detail.conversation.id).await?;
    let prices = prices::merged(&engine.settings().get().await.models.prices);
    Ok(thread::view(&detail, &attachments, &prices))
}

/// The conversation as Markdown (for copying).
#[tauri::command]
#[specta::specta]
pub async fn conversation_markdown(state: State<'_, AppState>, id: String) -> CommandResult<String> {
    let engine = state.engine()?;
    let detail = engine.store().conversation(&id).await?;
    let attachments = engine.store().attachments(&detail.conversation.id).await?;
    // Copied text links images where they are kept on this computer.
    let folder = engine.data_dir().attachments_dir();
    Ok(thread::to_markdown(&detail, &attachments, &|a| Some(folder.join(&a.path).display().to_string())))
}

/// Saves the conversation as a Markdown file where the user picks; `None` when cancelled.
#[tauri::command]
#[specta::specta]
pub async fn conversation_export(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
    id: String,
) -> CommandResult<Option<String>> {
    use tauri_plugin_dialog::DialogExt;
    let engine = state.engine()?.clone();
    let detail = engine.store().conversation(&id).await?;
    let name: String =
        detail.conversation.title.chars().filter(|c| c.is_alphanumeric() || " -_".contains(*c)).collect();
    let name = format!("{}.md", if name.trim().is_empty() { "conversation" } else { name.trim() });
    let picked = tauri::async_runtime::spawn_blocking(move || {
        app.dialog().file().set_file_name(name).add_filter("Markdown", &["md"]).blocking_save_file()
    })
    .await
    .map_err(|e| CommandError::new(ErrorKind::Window, e.to_string()))?;
    let Some(path) = picked.and_then(|p| p.into_path().ok()) else { return Ok(None) };
    thread::export(engine.agent(), &detail.conversation.id, &path).await.map_err(|e| match e {
        thread::ExportError::Store(e) => e.into(),
        e => CommandError::new(ErrorKind::Storage, e.to_string()),
    })?;
    Ok(Some(path.display().to_string()))
}
