use perch_core::agent::references;
use perch_core::review::references::FileReference;
use perch_core::review::{CommitOutcome, ReviewDocument, ReviewVersion, editor};
use perch_core::settings::{ReviewSettings, Settings, merge_edit};
use tauri::State;

use crate::error::CommandResult;
use crate::state::{AppState, ReviewSocketStatus};

#[tauri::command]
#[specta::specta]
pub async fn review_latest(state: State<'_, AppState>) -> CommandResult<Option<ReviewDocument>> {
    Ok(state.engine()?.reviews().latest().await?)
}

#[tauri::command]
#[specta::specta]
pub async fn review_get(state: State<'_, AppState>, id: i64) -> CommandResult<ReviewDocument> {
    Ok(state.engine()?.reviews().version(id).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn review_versions(state: State<'_, AppState>, limit: u32) -> CommandResult<Vec<ReviewVersion>> {
    Ok(state.engine()?.reviews().versions(limit).await?)
}

/// Opens a reference of review version `id` in the user's editor (checked again in the engine).
#[tauri::command]
#[specta::specta]
pub async fn review_open_reference(state: State<'_, AppState>, id: i64, target: String) -> CommandResult<()> {
    let engine = state.engine()?;
    let template = editor_template(engine).await?;
    Ok(engine.reviews().open_reference(id, &target, &template, &engine.child_env()).await?)
}

/// The file references in chat answer `message_id`, checked against the user's folders.
#[tauri::command]
#[specta::specta]
pub async fn chat_references(
    state: State<'_, AppState>,
    message_id: i64,
) -> CommandResult<Vec<FileReference>> {
    Ok(references::check(state.engine()?.agent(), message_id).await?)
}

/// Opens a reference of chat answer `message_id` in the user's editor (checked again).
#[tauri::command]
#[specta::specta]
pub async fn chat_open_reference(
    state: State<'_, AppState>,
    message_id: i64,
    target: String,
) -> CommandResult<()> {
    let engine = state.engine()?;
    let template = editor_template(engine).await?;
    Ok(references::open(engine.agent(), message_id, &target, &template, &engine.child_env()).await?)
}

/// Settings -> Reviews -> Editor command, or the editor found on this machine.
async fn editor_template(engine: &perch_core::Engine) -> CommandResult<String> {
    let configured = engine.settings().get().await.review.editor_command;
    Ok(editor::template_or_default(&configured).await.map_err(perch_core::review::ReviewError::from)?)
}

/// Runs `git commit` in the review's folder with the review as the message (the UI asks first).
#[tauri::command]
#[specta::specta]
pub async fn review_commit(state: State<'_, AppState>, id: i64) -> CommandResult<CommitOutcome> {
    let engine = state.engine()?;
    Ok(engine.reviews().commit(id, &engine.child_env()).await?)
}

/// The text selected in the review or chat view, for `get_selection` over the socket.
#[tauri::command]
#[specta::specta]
pub fn set_selection(state: State<'_, AppState>, text: Option<String>) -> CommandResult<()> {
    state.engine()?.reviews().set_selection(text);
    Ok(())
}

#[tauri::command]
#[specta::specta]
pub fn review_socket_status(state: State<'_, AppState>) -> ReviewSocketStatus {
    state.review_socket.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Saves Settings -> Reviews; restarts the socket only when its own settings changed.
#[tauri::command]
#[specta::specta]
pub async fn set_review_settings(
    state: State<'_, AppState>,
    base: ReviewSettings,
    review: ReviewSettings,
) -> CommandResult<Settings> {
    let engine = state.engine()?;
    let before = engine.settings().get().await.review;
    let settings = engine.settings().update(|s| s.review = merge_edit(&s.review, &base, &review)).await?;
    let socket =
        |r: &ReviewSettings| (r.socket_enabled, r.max_content_chars, r.max_line_bytes, r.idle_timeout_secs);
    if socket(&before) != socket(&settings.review) {
        state.set_review_socket(engine.apply_review_socket_setting().await);
    }
    Ok(settings)
}
