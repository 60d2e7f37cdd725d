//! Settings -> Models -> Local and the first-run offer: the catalogue, the models on this
//! machine, downloads with progress, and the runtime's state.

use perch_core::agent::picker::DownloadProgress;
use perch_core::local::{CatalogModel, LocalModel, LocalSettings, RuntimeStatus};
use perch_core::settings::{Settings, merge_edit};
use serde::Serialize;
use tauri::State;
use tauri::ipc::Channel;

use crate::error::CommandResult;
use crate::state::AppState;

/// Everything Settings -> Models -> Local shows.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct LocalOverview {
    /// The curated models, smallest first; the first is the one a new user is offered.
    pub catalog: Vec<CatalogModel>,
    /// The models on this machine (downloaded, in the folder, or added).
    pub models: Vec<LocalModel>,
    pub runtime: RuntimeStatus,
    /// Where downloaded models are kept.
    pub folder: String,
}

#[tauri::command]
#[specta::specta]
pub async fn local_overview(state: State<'_, AppState>) -> CommandResult<LocalOverview> {
    let engine = state.engine()?;
    let settings = engine.settings().get().await;
    let local = engine.local();
    Ok(LocalOverview {
        catalog: local.catalog(&settings.local).await,
        models: local.list().await,
        runtime: local.runtime().status(),
        folder: local.dir().display().to_string(),
    })
}

/// Downloads a catalogue model with progress (resuming a partial download), checked against
/// its SHA-256; Stop is `local_model_cancel`.
#[tauri::command]
#[specta::specta]
pub async fn local_model_download(
    state: State<'_, AppState>,
    id: String,
    progress: Channel<DownloadProgress>,
) -> CommandResult<LocalModel> {
    let mut send = super::progress_sender(progress);
    let model = state.engine()?.local().download(&id, move |p| send(p.done, p.total)).await?;
    Ok(model)
}

#[tauri::command]
#[specta::specta]
pub fn local_model_cancel(state: State<'_, AppState>, id: String) -> CommandResult<bool> {
    Ok(state.engine()?.local().cancel_download(&id))
}

/// Deletes a downloaded model's file, or forgets an added one (its file stays).
#[tauri::command]
#[specta::specta]
pub async fn local_model_delete(state: State<'_, AppState>, name: String) -> CommandResult<()> {
    state.engine()?.local().delete(&name).await?;
    Ok(())
}

/// Registers a GGUF file elsewhere on disk (its header is checked first).
#[tauri::command]
#[specta::specta]
pub async fn local_model_add(
    state: State<'_, AppState>,
    path: String,
    name: Option<String>,
) -> CommandResult<LocalModel> {
    let name = name.filter(|n| !n.trim().is_empty());
    Ok(state.engine()?.local().add(std::path::Path::new(path.trim()), name.as_deref()).await?)
}

/// Unloads the model now (it would be after the keep-alive time), giving its memory back.
#[tauri::command]
#[specta::specta]
pub async fn local_runtime_stop(state: State<'_, AppState>) -> CommandResult<RuntimeStatus> {
    let engine = state.engine()?;
    engine.local().runtime().stop().await;
    Ok(engine.local().runtime().status())
}

#[tauri::command]
#[specta::specta]
pub async fn set_local_settings(
    state: State<'_, AppState>,
    base: LocalSettings,
    local: LocalSettings,
) -> CommandResult<Settings> {
    Ok(state.engine()?.settings().update(|s| s.local = merge_edit(&s.local, &base, &local)).await?)
}
