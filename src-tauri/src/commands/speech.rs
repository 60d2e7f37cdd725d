//! Reading aloud: the Speak action on an answer, Stop, and Settings -> Voice's voices, speed and
//! loudspeaker. What the speaker does reaches the window as `SpeechUpdate` events.

use perch_core::read_aloud;
use perch_core::settings::{Settings, merge_edit};
use perch_core::speech::player::{OutputDevice, list_devices};
use perch_core::speech::{Phrases, SpeechSettings, VoiceChoice, VoiceView};
use tauri::State;
use tauri::ipc::Channel;

use super::DownloadProgress;
use crate::error::{CommandError, CommandResult, ErrorKind};
use crate::state::AppState;

#[tauri::command]
#[specta::specta]
pub fn speech_voices(state: State<'_, AppState>) -> CommandResult<Vec<VoiceView>> {
    Ok(state.engine()?.speech().voices())
}

/// Downloads a voice with progress (resuming a partial download); Stop is `speech_voice_cancel`.
#[tauri::command]
#[specta::specta]
pub async fn speech_voice_download(
    state: State<'_, AppState>,
    name: String,
    progress: Channel<DownloadProgress>,
) -> CommandResult<VoiceView> {
    let mut send = super::progress_sender(progress);
    Ok(state.engine()?.speech().download(&name, move |p| send(p.done, p.total)).await?)
}

#[tauri::command]
#[specta::specta]
pub fn speech_voice_cancel(state: State<'_, AppState>, name: String) -> CommandResult<bool> {
    Ok(state.engine()?.speech().cancel_download(&name))
}

#[tauri::command]
#[specta::specta]
pub fn speech_voice_delete(state: State<'_, AppState>, name: String) -> CommandResult<VoiceView> {
    Ok(state.engine()?.speech().delete(&name)?)
}

#[tauri::command]
#[specta::specta]
pub async fn speech_devices() -> CommandResult<Vec<OutputDevice>> {
    // Asking the audio system can take a moment; never on the UI's thread.
    let listed = tauri::async_runtime::spawn_blocking(list_devices).await;
    Ok(listed.map_err(|e| CommandError::new(ErrorKind::External, e.to_string()))??)
}

#[tauri::command]
#[specta::specta]
pub async fn set_speech_settings(
    state: State<'_, AppState>,
    base: SpeechSettings,
    speech: SpeechSettings,
) -> CommandResult<Settings> {
    Ok(state.engine()?.settings().update(|s| s.speech = merge_edit(&s.speech, &base, &speech)).await?)
}

/// The voice answers are read in now, and why espeak-ng speaks when it does.
#[tauri::command]
#[specta::specta]
pub async fn speech_choice(state: State<'_, AppState>) -> CommandResult<VoiceChoice> {
    let engine = state.engine()?;
    let settings = engine.settings().get().await;
    let language = read_aloud::language(settings.language.as_deref());
    Ok(engine.speech().choose(&settings.speech, &language))
}

/// Reads a saved answer aloud from its start (the Speak action); `phrases` are what is said for
/// code and tables, in the UI's language.
#[tauri::command]
#[specta::specta]
pub async fn speak_message(
    state: State<'_, AppState>,
    message_id: i64,
    phrases: Phrases,
) -> CommandResult<()> {
    let engine = state.engine()?;
    let message = engine.store().message(message_id).await?;
    let settings = engine.settings().get().await;
    let language = read_aloud::language(settings.language.as_deref());
    read_aloud::speak_text(
        engine.speech(),
        &message_id.to_string(),
        &message.content,
        &settings.speech,
        &language,
        phrases,
    );
    Ok(())
}

/// What is said in place of code and tables from now on, in the window's language (the window
/// sends it when it starts listening to the voice).
#[tauri::command]
#[specta::specta]
pub fn speech_phrases(state: State<'_, AppState>, phrases: Phrases) -> CommandResult<()> {
    state.engine()?.speech().set_phrases(phrases);
    Ok(())
}

/// Silences the voice at once; the id of the answer that was being read, if any.
#[tauri::command]
#[specta::specta]
pub fn speech_stop(state: State<'_, AppState>) -> CommandResult<Option<String>> {
    Ok(state.engine()?.speech().speaker().stop())
}

/// How long a pause ends a hands-free turn (a countdown shows it, and can be cancelled).
const TURN_ENDS_AFTER: std::time::Duration = std::time::Duration::from_millis(1500);

/// Turns the hands-free conversation on (every answer spoken) or off (the voice silenced, the
/// microphone closed).
#[tauri::command]
#[specta::specta]
pub fn conversation_set(state: State<'_, AppState>, on: bool) -> CommandResult<()> {
    let engine = state.engine()?;
    engine.speech().set_conversation(on);
    if !on && engine.voice().is_active() {
        let _ = engine.voice().cancel_dictation();
    }
    Ok(())
}

/// Listens for the next spoken question: it is sent after a pause, with the dictation's
/// events (a countdown among them) as `VoiceUpdate`s.
#[tauri::command]
#[specta::specta]
pub async fn conversation_listen(app: tauri::AppHandle, state: State<'_, AppState>) -> CommandResult<u32> {
    let engine = state.engine()?;
    let settings = engine.settings().get().await.voice;
    let source = perch_core::voice::AudioSource::Device(settings.device());
    Ok(engine.voice().start_hands_free(&settings, source, crate::dictation::sink(&app), TURN_ENDS_AFTER)?)
}

/// Cancels the countdown of the turn being heard: it goes on until stopped by hand.
#[tauri::command]
#[specta::specta]
pub fn conversation_keep_listening(state: State<'_, AppState>) -> CommandResult<u32> {
    Ok(state.engine()?.voice().keep_listening()?)
}
