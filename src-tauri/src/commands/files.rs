//! The composer's `@` picker: searching the user's folders (results streamed, a new query
//! cancelling the old) and checking a picked or dropped file before it becomes a chip. The
//! work is the engine's (`Engine::search_files`, `agent::attachments::check`).

use std::path::PathBuf;

use perch_core::agent::attachments::{self, Attachable};
use perch_core::files::{FilesError, SearchUpdate};
use tauri::State;
use tauri::ipc::Channel;

use crate::error::{CommandError, CommandResult, ErrorKind};
use crate::state::AppState;

fn refused(e: FilesError) -> CommandError {
    let kind = if matches!(e, FilesError::Missing { .. }) { ErrorKind::NotFound } else { ErrorKind::Invalid };
    CommandError::new(kind, e.to_string())
}

/// Searches `root` (a folder chosen in the picker), else the folders in Settings -> Tools, else
/// the home folder. Updates stream to `on_update`; the final list is returned.
#[tauri::command]
#[specta::specta]
pub async fn files_search(
    state: State<'_, AppState>,
    query: String,
    root: Option<String>,
    on_update: Channel<SearchUpdate>,
) -> CommandResult<SearchUpdate> {
    let report = move |u: &SearchUpdate| {
        let _ = on_update.send(u.clone());
    };
    state.engine()?.search_files(query, root.map(PathBuf::from), report).await.map_err(refused)
}

/// Asks the user for a folder to search instead of the usual ones; `None` when cancelled.
#[tauri::command]
#[specta::specta]
pub async fn files_choose_folder(app: tauri::AppHandle) -> CommandResult<Option<String>> {
    use tauri_plugin_dialog::DialogExt;
    let picked = tokio::task::spawn_blocking(move || {
        app.dialog().file().set_title("Search a folder").blocking_pick_folder()
    })
    .await
    .map_err(|e| CommandError::new(ErrorKind::Window, e.to_string()))?;
    Ok(picked.and_then(|p| p.into_path().ok()).map(|p| p.to_string_lossy().into_owned()))
}

/// Asks the user for one file of the given kind (a GGUF model: "GGUF model", ["gguf"]), in a
/// dialog titled `title`; `None` when cancelled. Only the chosen path comes back: reading it is
/// up to the command it is then given to.
#[tauri::command]
#[specta::specta]
pub async fn files_choose_file(
    app: tauri::AppHandle,
    title: String,
    kind: String,
    extensions: Vec<String>,
) -> CommandResult<Option<String>> {
    use tauri_plugin_dialog::DialogExt;
    let picked = tokio::task::spawn_blocking(move || {
        let extensions: Vec<&str> = extensions.iter().map(String::as_str).collect();
        app.dialog().file().set_title(title).add_filter(kind, &extensions).blocking_pick_file()
    })
    .await
    .map_err(|e| CommandError::new(ErrorKind::Window, e.to_string()))?;
    Ok(picked.and_then(|p| p.into_path().ok()).map(|p| p.to_string_lossy().into_owned()))
}

/// Stops the running search (the picker closed).
#[tauri::command]
#[specta::specta]
pub fn files_cancel(state: State<'_, AppState>) -> CommandResult<()> {
    state.engine()?.cancel_file_search();
    Ok(())
}

/// Checks a file for attaching (binary, size, encoding); `first_lines` accepts the offer made
/// for a file too large.
#[tauri::command]
#[specta::specta]
pub async fn files_attach(path: String, first_lines: Option<u32>) -> CommandResult<Attachable> {
    let checked = tokio::task::spawn_blocking(move || attachments::check(&PathBuf::from(path), first_lines));
    checked.await.map_err(|e| CommandError::new(ErrorKind::Invalid, e.to_string()))?.map_err(refused)
}
