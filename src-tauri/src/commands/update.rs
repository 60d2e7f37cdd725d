//! Settings -> General -> Updates: check, download (its signature verified), install now or on
//! quitting. Each waits for the user's click; see `perch_update`.

use perch_core::settings::Settings;
use tauri::{AppHandle, Manager, State};

use crate::error::{CommandError, CommandResult, ErrorKind};
use crate::state::AppState;
use crate::update::{UpdatePhase, UpdateStatus, Updates};

#[tauri::command]
#[specta::specta]
pub fn update_status(updates: State<'_, Updates>) -> UpdateStatus {
    updates.status()
}

/// "Check now": a failure is shown, unlike the quiet check at start.
#[tauri::command]
#[specta::specta]
pub async fn update_check(updates: State<'_, Updates>) -> CommandResult<UpdateStatus> {
    Ok(updates.check(false).await?)
}

/// Downloads the release on offer; progress arrives as `UpdateChanged` events.
#[tauri::command]
#[specta::specta]
pub async fn update_download(updates: State<'_, Updates>) -> CommandResult<UpdateStatus> {
    Ok(updates.download().await?)
}

/// Installs the verified download now and restarts Perch into it, or (`on_quit`) when Perch
/// quits.
#[tauri::command]
#[specta::specta]
pub async fn update_install(app: AppHandle, on_quit: bool) -> CommandResult<UpdateStatus> {
    let status = app.state::<Updates>().install(on_quit).await?;
    if matches!(status.phase, UpdatePhase::Installed) {
        // Through the event loop, so the engine shuts down as at any quit.
        app.request_restart();
    }
    Ok(status)
}

/// Shows the saved package (a copy that installs by hand) in the file manager.
#[tauri::command]
#[specta::specta]
pub fn update_show_package(app: AppHandle) -> CommandResult<()> {
    use tauri_plugin_opener::OpenerExt;
    let UpdatePhase::Ready { saved: Some(path), .. } = app.state::<Updates>().status().phase else {
        return Err(CommandError::new(ErrorKind::NotFound, "No update package is saved."));
    };
    app.opener()
        .reveal_item_in_dir(&path)
        .map_err(|e| CommandError::new(ErrorKind::External, format!("Could not show {path}: {e}")))
}

#[tauri::command]
#[specta::specta]
pub async fn set_update_settings(
    state: State<'_, AppState>,
    check_at_start: bool,
) -> CommandResult<Settings> {
    Ok(state.engine()?.settings().update(|s| s.updates.check_at_start = check_at_start).await?)
}
