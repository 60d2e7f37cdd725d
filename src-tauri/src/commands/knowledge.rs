//! Settings -> Knowledge: the folders Perch searches for answers, their index runs with
//! progress, pausing them; and the composer's `#` picker, which searches them.

use perch_core::knowledge::{FoundPassage, KnowledgeError, KnowledgeFolder, KnowledgeStatus};
use tauri::State;
use tauri::ipc::Channel;

use crate::error::{CommandError, CommandResult, ErrorKind};
use crate::state::AppState;

impl From<KnowledgeError> for CommandError {
    fn from(e: KnowledgeError) -> Self {
        let kind = match &e {
            KnowledgeError::UnknownFolder(_) => ErrorKind::NotFound,
            KnowledgeError::Folder { .. } => ErrorKind::Invalid,
            KnowledgeError::Database(_) => ErrorKind::Storage,
            KnowledgeError::Embedding(_) => ErrorKind::External,
        };
        Self::new(kind, e.to_string())
    }
}

#[tauri::command]
#[specta::specta]
pub async fn knowledge_status(state: State<'_, AppState>) -> CommandResult<KnowledgeStatus> {
    Ok(state.engine()?.knowledge().status().await)
}

/// Sends the status each time it changes (an index run's progress, a folder's counts) until
/// the window stops listening.
#[tauri::command]
#[specta::specta]
pub async fn knowledge_watch(
    state: State<'_, AppState>,
    updates: Channel<KnowledgeStatus>,
) -> CommandResult<()> {
    let mut status = state.engine()?.knowledge().subscribe();
    tauri::async_runtime::spawn(async move {
        while status.changed().await.is_ok() {
            let now = status.borrow_and_update().clone();
            if updates.send(now).is_err() {
                break;
            }
        }
    });
    Ok(())
}

/// Adds a folder; it is indexed in the background (the status shows the progress).
#[tauri::command]
#[specta::specta]
pub async fn knowledge_add_folder(
    state: State<'_, AppState>,
    path: String,
) -> CommandResult<KnowledgeFolder> {
    let knowledge = state.engine()?.knowledge().clone();
    let folder = knowledge.add_folder(std::path::Path::new(path.trim())).await?;
    knowledge.index_in_background(Some(folder.path.clone().into()));
    Ok(folder)
}

/// Removes a folder and what was indexed from it (the last one takes the index with it).
#[tauri::command]
#[specta::specta]
pub async fn knowledge_remove_folder(state: State<'_, AppState>, path: String) -> CommandResult<()> {
    state.engine()?.knowledge().remove_folder(std::path::Path::new(&path)).await?;
    Ok(())
}

/// Indexes again what changed, in every folder.
#[tauri::command]
#[specta::specta]
pub fn knowledge_reindex(state: State<'_, AppState>) -> CommandResult<()> {
    state.engine()?.knowledge().index_in_background(None);
    Ok(())
}

/// Pauses index runs (what is indexed stays searchable) or resumes them.
#[tauri::command]
#[specta::specta]
pub fn knowledge_set_paused(state: State<'_, AppState>, paused: bool) -> CommandResult<()> {
    state.engine()?.knowledge().set_paused(paused);
    Ok(())
}

/// The composer's `#` picker: the passages that answer `query` (at most `limit`, up to 20);
/// `None` when no folder has been added, so the picker stays closed.
#[tauri::command]
#[specta::specta]
pub async fn knowledge_pick(
    state: State<'_, AppState>,
    query: String,
    limit: u32,
) -> CommandResult<Option<Vec<FoundPassage>>> {
    let knowledge = state.engine()?.knowledge().clone();
    Ok(knowledge.pick(&query, limit.clamp(1, 20) as usize).await?)
}
