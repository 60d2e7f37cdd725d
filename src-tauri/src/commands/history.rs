use perch_core::store::{Conversation, ConversationDetail, SearchHit};
use tauri::State;

use crate::error::CommandResult;
use crate::state::AppState;

#[tauri::command]
#[specta::specta]
pub async fn history_list(
    state: State<'_, AppState>,
    limit: u32,
    offset: u32,
) -> CommandResult<Vec<Conversation>> {
    Ok(state.engine()?.store().list_conversations(limit, offset).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn history_search(
    state: State<'_, AppState>,
    query: String,
    limit: u32,
) -> CommandResult<Vec<SearchHit>> {
    Ok(state.engine()?.store().search(&query, limit).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn history_get(state: State<'_, AppState>, id: String) -> CommandResult<ConversationDetail> {
    Ok(state.engine()?.store().conversation(&id).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn history_rename(state: State<'_, AppState>, id: String, title: String) -> CommandResult<()> {
    Ok(state.engine()?.store().rename_conversation(&id, &title).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn history_delete(state: State<'_, AppState>, id: String) -> CommandResult<()> {
    Ok(state.engine()?.store().delete_conversation(&id).await?)
}
