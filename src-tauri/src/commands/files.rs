//! The composer's `@` picker: searching the user's folders (results streamed, a new query
//! cancelling the old) and checking a picked or dropped file before it becomes a chip.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use base64::Engine as _;
use perch_core::agent::ImageInput;
use perch_core::agent::context::estimate_tokens;
use perch_core::files::{self, FileKind, FilesError, Limits, Picker, SearchOptions, SearchUpdate};
use serde::Serialize;
use tauri::State;
use tauri::ipc::Channel;

use crate::error::{CommandError, CommandResult, ErrorKind};
use crate::state::AppState;

/// One picker for the window: a new search cancels the previous one.
static PICKER: LazyLock<Picker> = LazyLock::new(Picker::default);

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
    let roots: Vec<PathBuf> = match root {
        Some(r) => vec![PathBuf::from(r)],
        None => {
            let set = state.engine()?.settings().get().await.tools.roots;
            if set.is_empty() {
                dirs::home_dir().into_iter().collect()
            } else {
                set.into_iter().map(PathBuf::from).collect()
            }
        }
    };
    let cancel = PICKER.begin();
    let walk = tokio::task::spawn_blocking(move || {
        files::search(&roots, &query, &SearchOptions::default(), &cancel, |u| {
            let _ = on_update.send(u.clone());
        })
    });
    walk.await.map_err(|e| CommandError::new(ErrorKind::Invalid, e.to_string()))?.map_err(refused)
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

/// Stops the running search (the picker closed).
#[tauri::command]
#[specta::specta]
pub fn files_cancel() {
    PICKER.cancel();
}

/// A picked or dropped file, checked: a text chip, an image chip, or too large (with the
/// number of first lines that would fit, to offer instead).
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Attachable {
    Text { path: String, name: String, bytes: u32, tokens: u32, first_lines: Option<u32> },
    Image { image: ImageInput },
    TooLarge { path: String, message: String, lines_that_fit: u32 },
}

fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(|| path.to_string_lossy().into_owned(), |n| n.to_string_lossy().into_owned())
}

/// Checks a file for attaching (binary, size, encoding); `first_lines` accepts the offer made
/// for a file too large.
#[tauri::command]
#[specta::specta]
pub async fn files_attach(path: String, first_lines: Option<u32>) -> CommandResult<Attachable> {
    let path = PathBuf::from(path);
    let checked = tokio::task::spawn_blocking(move || -> Result<Attachable, FilesError> {
        if let FileKind::Image { mime, .. } = files::inspect(&path)? {
            let bytes =
                std::fs::read(&path).map_err(|source| FilesError::Io { path: path.clone(), source })?;
            let base64 = base64::engine::general_purpose::STANDARD.encode(bytes);
            return Ok(Attachable::Image {
                image: ImageInput { name: file_name(&path), mime: mime.into(), base64, capture: None },
            });
        }
        let display = path.to_string_lossy().into_owned();
        match files::read_text(&path, &Limits::default(), first_lines.map(|n| n as usize)) {
            Ok(text) => Ok(Attachable::Text {
                name: file_name(&path),
                bytes: u32::try_from(text.text.len()).unwrap_or(u32::MAX),
                tokens: u32::try_from(estimate_tokens(&text.block())).unwrap_or(u32::MAX),
                first_lines,
                path: display,
            }),
            // The chip names the file, and the offer is a button: the message says only why.
            Err(FilesError::TooLarge { bytes, limit, lines_that_fit, .. }) => Ok(Attachable::TooLarge {
                message: format!(
                    "{} is {} KB; a file may be at most {} KB.",
                    file_name(&path),
                    bytes / 1024,
                    limit / 1024
                ),
                path: display,
                lines_that_fit: u32::try_from(lines_that_fit).unwrap_or(u32::MAX),
            }),
            Err(e) => Err(e),
        }
    });
    checked.await.map_err(|e| CommandError::new(ErrorKind::Invalid, e.to_string()))?.map_err(refused)
}
