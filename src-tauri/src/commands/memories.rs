//! The Memories page: what Perch keeps about the user for later answers (list, add, edit,
//! forget) and whether memories are used at all, and by which models.

use perch_core::memories::Memory;
use perch_core::settings::{MemorySettings, Settings, merge_edit};
use tauri::State;

use crate::error::CommandResult;
use crate::state::AppState;

#[tauri::command]
#[specta::specta]
pub async fn memories_list(state: State<'_, AppState>) -> CommandResult<Vec<Memory>> {
    Ok(state.engine()?.memories().list().await?)
}

#[tauri::command]
#[specta::specta]
pub async fn memories_add(state: State<'_, AppState>, text: String) -> CommandResult<Memory> {
    Ok(state.engine()?.memories().add(&text).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn memories_edit(state: State<'_, AppState>, id: i64, text: String) -> CommandResult<Memory> {
    Ok(state.engine()?.memories().edit(id, &text).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn memories_forget(state: State<'_, AppState>, id: i64) -> CommandResult<()> {
    Ok(state.engine()?.memories().forget(id).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn set_memory_settings(
    state: State<'_, AppState>,
    base: MemorySettings,
    memories: MemorySettings,
) -> CommandResult<Settings> {
    Ok(state.engine()?.settings().update(|s| s.memories = merge_edit(&s.memories, &base, &memories)).await?)
}
