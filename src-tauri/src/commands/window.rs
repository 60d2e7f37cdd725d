use perch_core::settings::{Settings, merge_edit};
use perch_core::window_state::{HiddenSettings, WindowMode};
use tauri::{AppHandle, State};

use crate::error::CommandResult;
use crate::state::AppState;
use crate::window::{self, hidden_page};

#[tauri::command]
#[specta::specta]
pub fn get_window_mode(app: AppHandle) -> WindowMode {
    window::mode(&app)
}

/// Enters or leaves mini mode.
#[tauri::command]
#[specta::specta]
pub fn set_window_mode(app: AppHandle, mode: WindowMode) -> CommandResult<()> {
    Ok(window::set_mode(&app, mode)?)
}

/// The close button: the window goes to the tray, the app keeps running.
#[tauri::command]
#[specta::specta]
pub fn hide_window(app: AppHandle) -> CommandResult<()> {
    Ok(window::hide(&app)?)
}

/// The page says whether it holds work a reload would lose (file chips, pictures, an edit, the
/// settings open), so it is kept while the window is hidden.
#[tauri::command]
#[specta::specta]
pub fn page_holds_unsent(app: AppHandle, holds: bool) {
    hidden_page::set_holds_unsent(&app, holds);
}

/// Settings -> General: when a hidden window gives its page's memory back.
#[tauri::command]
#[specta::specta]
pub async fn set_hidden_settings(
    state: State<'_, AppState>,
    base: HiddenSettings,
    hidden: HiddenSettings,
) -> CommandResult<Settings> {
    Ok(state.engine()?.settings().update(|s| s.hidden = merge_edit(&s.hidden, &base, &hidden)).await?)
}

/// Called by the UI once its first frame is on screen, with the page's own clock (ms since
/// the page started loading); logged for the start-up benchmark.
#[tauri::command]
#[specta::specta]
pub fn ui_ready(state: State<'_, AppState>, page_ms: f64) {
    tracing::info!(
        ms = state.started_at.elapsed().as_millis() as u64,
        page_ms = page_ms.round() as u64,
        "first paint"
    );
    state.first_paint.notify_one();
}
