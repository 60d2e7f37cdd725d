//! Dictation in the shell: the engine's updates broadcast to the window, and the push-to-talk
//! shortcut (hold to talk, or press to toggle), which works with Perch hidden or in mini mode:
//! the window then appears as the bubble, which shows that it is listening.
//!
//! The shortcut is registered with tauri's global-shortcut plugin here, on its own. When the
//! shortcut registry (`shortcuts.rs`) is on main, `apply_shortcut` becomes one `bind` call there.

use std::str::FromStr;
use std::sync::{Arc, Mutex};

use perch_core::voice::{AudioSource, DictationSink, DictationUpdate, PushToTalkMode, VoiceSettings};
use perch_core::window_state::WindowMode;
use serde::Serialize;
use tauri::{AppHandle, Manager};
use tauri_plugin_global_shortcut::{GlobalShortcutExt, Shortcut, ShortcutState};
use tauri_specta::Event;

use crate::events::VoiceUpdate;
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

/// The push-to-talk shortcut as Settings shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, specta::Type)]
pub struct ShortcutStatus {
    /// As configured ("Ctrl+Alt+Space"); empty when turned off.
    pub accelerator: String,
    pub active: bool,
    /// What stops it, in words a user can act on.
    pub problem: Option<String>,
}

#[derive(Default)]
pub struct PushToTalk {
    registered: Mutex<Option<Shortcut>>,
    status: Mutex<ShortcutStatus>,
    mode: Mutex<PushToTalkMode>,
}

pub fn shortcut_status(app: &AppHandle) -> ShortcutStatus {
    app.state::<PushToTalk>().status.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// Registers the push-to-talk shortcut from the settings, replacing the previous one.
pub fn apply_shortcut(app: &AppHandle, settings: &VoiceSettings) {
    let ptt = app.state::<PushToTalk>();
    *ptt.mode.lock().unwrap_or_else(|p| p.into_inner()) = settings.push_to_talk_mode;
    if let Some(old) = ptt.registered.lock().unwrap_or_else(|p| p.into_inner()).take() {
        let _ = app.global_shortcut().unregister(old);
    }
    let accelerator = settings.push_to_talk.trim().to_owned();
    let mut status = ShortcutStatus { accelerator: accelerator.clone(), active: false, problem: None };
    if !accelerator.is_empty() {
        match Shortcut::from_str(&accelerator) {
            Err(e) => {
                status.problem = Some(format!("\"{accelerator}\" is not a shortcut Perch understands ({e})"))
            }
            Ok(shortcut) => match app
                .global_shortcut()
                .on_shortcut(shortcut, |app, _, event| on_key(app, event.state() == ShortcutState::Pressed))
            {
                Ok(()) => {
                    *ptt.registered.lock().unwrap_or_else(|p| p.into_inner()) = Some(shortcut);
                    status.active = true;
                    status.problem = wayland_problem();
                }
                Err(e) => {
                    status.problem = Some(if e.to_string().to_lowercase().contains("already") {
                        format!(
                            "{accelerator} is already taken by another application or another Perch shortcut; pick another"
                        )
                    } else {
                        format!("the system refused {accelerator}: {e}")
                    })
                }
            },
        }
    }
    if let Some(problem) = &status.problem {
        tracing::warn!(%accelerator, %problem, "push-to-talk shortcut not active");
    }
    *ptt.status.lock().unwrap_or_else(|p| p.into_inner()) = status;
}

/// Global key grabs do not work on most Wayland compositors.
fn wayland_problem() -> Option<String> {
    let wayland = std::env::var_os("WAYLAND_DISPLAY").is_some_and(|v| !v.is_empty())
        || std::env::var("XDG_SESSION_TYPE").is_ok_and(|t| t == "wayland");
    (cfg!(target_os = "linux") && wayland).then(|| {
        "Wayland does not let applications grab keys for the whole desktop; the shortcut works only while Perch has focus. Bind `perch dictate` to a key in your desktop's settings instead.".to_owned()
    })
}

fn on_key(app: &AppHandle, pressed: bool) {
    let mode = *app.state::<PushToTalk>().mode.lock().unwrap_or_else(|p| p.into_inner());
    let Ok(engine) = app.state::<AppState>().engine.clone() else { return };
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
