//! The terminal panel, its session banner and Settings -> Terminal.

use perch_core::settings::{Settings, merge_edit};
use perch_core::store::terminal::TerminalEvent;
use perch_core::terminal::tools::working_folder;
use perch_core::terminal::{SandboxView, TerminalSettings, TerminalUpdate};
use serde::Serialize;
use tauri::State;
use tauri::ipc::Channel;

use crate::error::{CommandError, CommandResult, ErrorKind};
use crate::state::AppState;

/// Streams the terminal's updates to the panel until it goes away or the page subscribes again
/// (loaded anew: the old page's feed ends), paced by `PanelFeed`: each command's output at most
/// every 50 ms and 128 KB at a time, the newest, with what was skipped named, so a flood costs
/// the page what it can show rather than everything printed.
#[tauri::command]
#[specta::specta]
pub fn terminal_subscribe(
    state: State<'_, AppState>,
    on_event: Channel<TerminalUpdate>,
) -> CommandResult<()> {
    let mut feed = state.engine()?.terminal().panel_feed();
    tauri::async_runtime::spawn(async move {
        while let Some(update) = feed.next().await {
            if on_event.send(update).is_err() {
                break;
            }
        }
    });
    Ok(())
}

/// Every command of a conversation, for the panel when it is reopened.
#[tauri::command]
#[specta::specta]
pub async fn terminal_history(
    state: State<'_, AppState>,
    conversation_id: String,
) -> CommandResult<Vec<TerminalEvent>> {
    Ok(state.engine()?.store().terminal_events(&conversation_id).await?)
}

/// Kills a running command and everything it started (the panel's Kill button).
#[tauri::command]
#[specta::specta]
pub fn terminal_kill(state: State<'_, AppState>, job: u32) -> CommandResult<()> {
    state.engine()?.terminal().kill(job).map_err(|e| CommandError::new(ErrorKind::NotFound, e.to_string()))
}

/// Ends session mode for a conversation (the banner's End button, a new chat).
#[tauri::command]
#[specta::specta]
pub fn terminal_end_session(state: State<'_, AppState>, conversation_id: String) -> CommandResult<()> {
    state.engine()?.terminal().end_sessions_of(&conversation_id);
    Ok(())
}

/// What Settings -> Terminal shows besides the settings.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct TerminalStatus {
    /// The sandbox a command in the working folder gets.
    pub sandbox: SandboxView,
}

#[tauri::command]
#[specta::specta]
pub async fn terminal_status(state: State<'_, AppState>) -> CommandResult<TerminalStatus> {
    let engine = state.engine()?;
    let settings = engine.settings().get().await.terminal;
    let sandbox = engine.terminal().sandbox_view(&working_folder(None, &settings), &settings).await;
    Ok(TerminalStatus { sandbox })
}

/// Chooses the working folder: `path` as typed, or (without one) the folder picked in the
/// system's dialog, for one conversation or (without `conversation_id`) as the default.
/// Saved when Perch accepts it; `None` when the dialog was cancelled.
#[tauri::command]
#[specta::specta]
pub async fn terminal_choose_folder(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
    path: Option<String>,
    conversation_id: Option<String>,
) -> CommandResult<Option<String>> {
    let engine = state.engine()?;
    let path = match path.map(|p| p.trim().to_owned()).filter(|p| !p.is_empty()) {
        Some(typed) => std::path::PathBuf::from(typed),
        None => {
            use tauri_plugin_dialog::DialogExt;
            let picked = tokio::task::spawn_blocking(move || {
                app.dialog().file().set_title("Working folder for commands").blocking_pick_folder()
            })
            .await
            .map_err(|e| CommandError::new(ErrorKind::Window, e.to_string()))?;
            match picked.and_then(|p| p.into_path().ok()) {
                Some(p) => p,
                None => return Ok(None),
            }
        }
    };
    let dir = engine
        .choose_working_folder(&path, conversation_id.as_deref())
        .await
        .map_err(|e| CommandError::new(ErrorKind::Invalid, e.to_string()))?;
    Ok(Some(dir.display().to_string()))
}

#[tauri::command]
#[specta::specta]
pub async fn set_terminal_settings(
    state: State<'_, AppState>,
    base: TerminalSettings,
    terminal: TerminalSettings,
) -> CommandResult<Settings> {
    let engine = state.engine()?;
    let mut terminal = terminal;
    // A folder typed here is held to what the first command's card allows (not home itself,
    // not Perch's data); cleared, no command runs until one is chosen again.
    if terminal.working_folder != base.working_folder && !terminal.working_folder.trim().is_empty() {
        let typed = std::path::PathBuf::from(terminal.working_folder.trim());
        let dir = engine
            .terminal()
            .check_folder(&typed)
            .map_err(|e| CommandError::new(ErrorKind::Invalid, e.to_string()))?;
        terminal.working_folder = dir.display().to_string();
    }
    let settings =
        engine.settings().update(|s| s.terminal = merge_edit(&s.terminal, &base, &terminal)).await?;
    engine.terminal().set_enabled(settings.terminal.enabled);
    Ok(settings)
}
