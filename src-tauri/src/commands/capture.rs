//! Screenshots: the chips, the overlay's requests, the clipboard, the capture settings and
//! their shortcuts.

use base64::Engine as _;
use perch_core::capture::{Capture, CaptureMode, CaptureSettings};
use perch_core::settings::merge_edit;
use tauri::{AppHandle, Manager, State};

use crate::capture::{self, OverlayInfo, OverlayPick};
use crate::error::{CommandError, CommandResult, ErrorKind};
use crate::shortcuts::{ShortcutStatus, Shortcuts};
use crate::state::AppState;

/// The captures waiting for the next question, oldest first.
#[tauri::command]
#[specta::specta]
pub fn captures_pending(state: State<'_, AppState>) -> CommandResult<Vec<Capture>> {
    Ok(state.engine()?.captures().pending())
}

/// Removes a chip (and its files).
#[tauri::command]
#[specta::specta]
pub fn capture_remove(state: State<'_, AppState>, id: String) -> CommandResult<()> {
    Ok(state.engine()?.captures().remove(&id)?)
}

/// What the shortcut does, in `mode` or the mode set; a sentence describing what happened.
#[tauri::command]
#[specta::specta]
pub async fn capture_start(app: AppHandle, mode: Option<CaptureMode>) -> CommandResult<String> {
    capture::start(&app, mode).await
}

/// The model's copy of a capture as a data URL, for the large view.
#[tauri::command]
#[specta::specta]
pub async fn capture_view(state: State<'_, AppState>, id: String) -> CommandResult<String> {
    let files = state.engine()?.captures().files(&id).await?;
    let data = base64::engine::general_purpose::STANDARD.encode(&files.model);
    Ok(format!("data:{};base64,{data}", files.mime))
}

/// Puts the original capture on the clipboard.
#[tauri::command]
#[specta::specta]
pub async fn capture_copy(state: State<'_, AppState>, id: String) -> CommandResult<()> {
    let pixels = state.engine()?.captures().original_pixels(&id).await?;
    let (w, h) = pixels.dimensions();
    // The one clipboard Perch has (typing's), not a plugin's second handle on it.
    tauri::async_runtime::spawn_blocking(move || perch_typing::clipboard::put_image(w, h, pixels.into_raw()))
        .await
        .map_err(|e| CommandError::new(ErrorKind::External, format!("copying the image stopped: {e}")))?
        .map_err(|e| CommandError::new(ErrorKind::External, format!("the clipboard refused the image: {e}")))
}

#[tauri::command]
#[specta::specta]
pub async fn capture_overlay_info(app: AppHandle, index: u32) -> CommandResult<OverlayInfo> {
    capture::overlay_info(&app, index).await
}

/// The overlay's result: a dragged region or a clicked window.
#[tauri::command]
#[specta::specta]
pub async fn capture_overlay_take(app: AppHandle, pick: OverlayPick) -> CommandResult<Capture> {
    capture::overlay_take(&app, pick).await
}

#[tauri::command]
#[specta::specta]
pub fn capture_overlay_cancel(app: AppHandle) -> CommandResult<()> {
    capture::overlay_cancel(&app)
}

/// Every global shortcut and whether it works.
#[tauri::command]
#[specta::specta]
pub fn shortcut_statuses(shortcuts: State<'_, Shortcuts>) -> Vec<ShortcutStatus> {
    shortcuts.statuses()
}

/// Saves the capture settings and binds their shortcuts again; returns how binding went.
#[tauri::command]
#[specta::specta]
pub async fn set_capture_settings(
    app: AppHandle,
    state: State<'_, AppState>,
    base: CaptureSettings,
    settings: CaptureSettings,
) -> CommandResult<Vec<ShortcutStatus>> {
    let saved = state
        .engine()?
        .settings()
        .update(|s| s.capture = merge_edit(&s.capture, &base, &settings))
        .await?
        .capture;
    capture::bind_shortcuts(&app, &saved);
    app.state::<Shortcuts>().apply(&app);
    app.state::<Shortcuts>().settled().await;
    Ok(app.state::<Shortcuts>().statuses())
}
