//! Dictation in the shell: the engine's updates broadcast to the window, and the push-to-talk
//! shortcut (hold to talk, or press to toggle), which works with Perch hidden or in mini mode:
//! the window then appears as the bubble, which shows that it is listening.
//!
//! The shortcut is one named binding in the shell's shortcut registry (`shortcuts.rs`), which
//! reports conflicts with other applications and with Perch's other shortcuts.

use std::sync::{Arc, Mutex};

use perch_core::voice::{AudioSource, DictationSink, DictationUpdate, PushToTalkMode, VoiceSettings};
use perch_core::window_state::WindowMode;
use tauri::{AppHandle, Manager};
use tauri_specta::Event;

use crate::events::VoiceUpdate;
use crate::shortcuts::{Action, Phase, ShortcutStatus, Shortcuts};
use crate::state::AppState;

/// Sends a dictation's updates to the window as `VoiceUpdate` events: a dictation can start
/// from the shortcut with no request from the window, and the bubble and the composer both
/// follow it.
struct WindowSink(AppHandle);

impl DictationSink for WindowSink {
    fn send(&self, update: DictationUpdate) {
        if let Err(e) = (VoiceUpdate { update }).emit(&self.0) {
            tracing::warn!(error = %e, "a dictation update did not reach the window");
        }
    }
}

pub fn sink(app: &AppHandle) -> Arc<dyn DictationSink> {
    Arc::new(WindowSink(app.clone()))
}

/// The push-to-talk shortcut's name in the shortcut registry.
const PUSH_TO_TALK: &str = "push_to_talk";

/// Hold or toggle, read at each key event so a change in Settings applies at once.
#[derive(Default)]
pub struct PushToTalk {
    mode: Mutex<PushToTalkMode>,
}

pub fn shortcut_status(app: &AppHandle) -> ShortcutStatus {
    app.state::<Shortcuts>().statuses().into_iter().find(|s| s.name == PUSH_TO_TALK).unwrap_or(
        ShortcutStatus {
            name: PUSH_TO_TALK.to_owned(),
            accelerator: String::new(),
            active: false,
            problem: None,
            assigned: None,
        },
    )
}

/// Binds the push-to-talk shortcut from the settings, replacing the previous one.
pub fn apply_shortcut(app: &AppHandle, settings: &VoiceSettings) {
    *app.state::<PushToTalk>().mode.lock().unwrap_or_else(|p| p.into_inner()) = settings.push_to_talk_mode;
    let action: Action = Arc::new(|app, phase| on_key(app, phase == Phase::Pressed));
    app.state::<Shortcuts>().bind(app, PUSH_TO_TALK, &settings.push_to_talk, action);
}

fn on_key(app: &AppHandle, pressed: bool) {
    let mode = *app.state::<PushToTalk>().mode.lock().unwrap_or_else(|p| p.into_inner());
    let Some(engine) = app.state::<AppState>().engine.as_ref().ok().cloned() else { return };
    let active = engine.voice().is_active();
    match (mode, pressed, active) {
        (PushToTalkMode::Hold, true, false) | (PushToTalkMode::Toggle, true, false) => start(app, engine),
        (PushToTalkMode::Hold, false, true) | (PushToTalkMode::Toggle, true, true) => {
            let _ = engine.voice().stop_dictation();
        }
        _ => {}
    }
}

/// Starts a dictation from the shortcut; a hidden window comes back as the bubble.
fn start(app: &AppHandle, engine: perch_core::Engine) {
    let hidden = app.get_webview_window("main").is_some_and(|w| !w.is_visible().unwrap_or(true));
    if hidden {
        let shown = crate::window::set_mode(app, WindowMode::Mini).and_then(|()| crate::window::show(app));
        if let Err(e) = shown {
            tracing::warn!(error = %e, "could not show the bubble for dictation");
        }
    }
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        let settings = engine.settings().get().await.voice;
        let source = AudioSource::Device(settings.device());
        let sink = sink(&app);
        if let Err(e) = engine.voice().start_dictation(&settings, source, sink.clone()) {
            // The window hears why, as it would for the mic button.
            sink.send(DictationUpdate {
                session: 0,
                event: perch_core::voice::DictationEvent::Failed { kind: e.kind(), message: e.to_string() },
            });
        }
    });
}
