//! Dictation and Settings -> Voice: models, microphones, the voice settings.

use perch_core::settings::{Settings, merge_edit};
use perch_core::voice::device::{InputDevice, list_devices};
use perch_core::voice::models::ModelView;
use perch_core::voice::{AudioSource, VoiceSettings};
use tauri::ipc::Channel;
use tauri::{AppHandle, Manager, State};

use crate::error::CommandResult;
use crate::state::AppState;
use perch_core::agent::picker::DownloadProgress;

#[tauri::command]
#[specta::specta]
pub fn voice_models(state: State<'_, AppState>) -> CommandResult<Vec<ModelView>> {
    Ok(state.engine()?.voice().models())
}

/// Downloads a model with progress (resuming a partial download); Stop is `voice_model_cancel`.
#[tauri::command]
#[specta::specta]
pub async fn voice_model_download(
    state: State<'_, AppState>,
    name: String,
    progress: Channel<DownloadProgress>,
) -> CommandResult<ModelView> {
    let mut send = super::progress_sender(progress);
    let view = state.engine()?.voice().download(&name, move |p| send(p.done, p.total)).await?;
    Ok(view)
}

#[tauri::command]
#[specta::specta]
pub fn voice_model_cancel(state: State<'_, AppState>, name: String) -> CommandResult<bool> {
    Ok(state.engine()?.voice().cancel_download(&name))
}

#[tauri::command]
#[specta::specta]
pub fn voice_model_delete(state: State<'_, AppState>, name: String) -> CommandResult<ModelView> {
    Ok(state.engine()?.voice().delete_model(&name)?)
}

#[tauri::command]
#[specta::specta]
pub async fn voice_devices() -> CommandResult<Vec<InputDevice>> {
    // Asking the audio system can take a moment; never on the UI's thread.
    let listed = tauri::async_runtime::spawn_blocking(list_devices).await;
    Ok(listed
        .map_err(|e| crate::error::CommandError::new(crate::error::ErrorKind::External, e.to_string()))??)
}

/// Where dictation runs (the graphics card, or the CPU and why), for Settings -> Voice. Asking
/// may open the Vulkan drivers: on a blocking thread.
#[tauri::command]
#[specta::specta]
pub async fn voice_runs_on(state: State<'_, AppState>) -> CommandResult<String> {
    let engine = state.engine()?;
    let settings = engine.settings().get().await.voice;
    let voice = engine.voice().clone();
    tauri::async_runtime::spawn_blocking(move || voice.runs_on(&settings))
        .await
        .map_err(|e| crate::error::CommandError::new(crate::error::ErrorKind::External, e.to_string()))
}

/// Saves Settings -> Voice and applies the push-to-talk shortcut.
#[tauri::command]
#[specta::specta]
pub async fn set_voice_settings(
    app: AppHandle,
    state: State<'_, AppState>,
    base: VoiceSettings,
    voice: VoiceSettings,
) -> CommandResult<Settings> {
    let settings =
        state.engine()?.settings().update(|s| s.voice = merge_edit(&s.voice, &base, &voice)).await?;
    crate::dictation::apply_shortcut(&app, &settings.voice);
    app.state::<crate::shortcuts::Shortcuts>().apply(&app);
    app.state::<crate::shortcuts::Shortcuts>().settled().await;
    Ok(settings)
}

/// Starts dictating (the mic button); updates arrive as `VoiceUpdate` events.
#[tauri::command]
#[specta::specta]
pub async fn voice_start(app: AppHandle, state: State<'_, AppState>) -> CommandResult<u32> {
    let engine = state.engine()?;
    let settings = engine.settings().get().await.voice;
    let source = AudioSource::Device(settings.device());
    Ok(engine.voice().start_dictation(&settings, source, crate::dictation::sink(&app))?)
}

/// Stops recording; the final text follows as an event.
#[tauri::command]
#[specta::specta]
pub fn voice_stop(state: State<'_, AppState>) -> CommandResult<u32> {
    Ok(state.engine()?.voice().stop_dictation()?)
}

/// Throws the recording away.
#[tauri::command]
#[specta::specta]
pub fn voice_cancel(state: State<'_, AppState>) -> CommandResult<u32> {
    Ok(state.engine()?.voice().cancel_dictation()?)
}

/// How dictate-anywhere types into other applications here, or why it cannot.
#[tauri::command]
#[specta::specta]
pub async fn typing_path() -> perch_core::probes::Probe {
    tauri::async_runtime::spawn_blocking(perch_typing::probe).await.unwrap_or_else(|e| {
        perch_core::probes::Probe {
            name: "typing into other apps".into(),
            available: false,
            detail: format!("the check failed: {e}"),
        }
    })
}

/// How the push-to-talk and dictate-anywhere shortcuts bound, in that order, for Settings.
#[tauri::command]
#[specta::specta]
pub fn voice_shortcut_statuses(app: AppHandle) -> Vec<crate::shortcuts::ShortcutStatus> {
    crate::dictation::shortcut_statuses(&app)
}

/// The last day's dictate-anywhere dictations, newest first (memory only), for Settings.
#[tauri::command]
#[specta::specta]
pub fn recent_dictations(
    recent: State<'_, perch_typing::recent::RecentDictations>,
) -> Vec<perch_typing::recent::RecentDictation> {
    recent.list()
}

/// Forgets the recent dictations.
#[tauri::command]
#[specta::specta]
pub fn clear_recent_dictations(recent: State<'_, perch_typing::recent::RecentDictations>) {
    recent.clear();
}
