//! Dictation in the shell: the engine's updates broadcast to the window, and the push-to-talk
//! shortcut (hold to talk, or press to toggle), which works with Perch hidden or in mini mode:
//! the window then appears as the bubble, which shows that it is listening.
//!
//! Dictate-anywhere is a second shortcut with the same hold or toggle: the words are typed into
//! the application that has the focus (`perch_core::anywhere`), and Perch's window is neither
//! shown nor focused, so the focus stays where the words go.
//!
//! Each shortcut is one named binding in the shell's shortcut registry (`shortcuts.rs`), which
//! reports conflicts with other applications and with Perch's other shortcuts.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use perch_core::voice::{
    AudioSource, DictationEvent, DictationSink, DictationUpdate, PushToTalkMode, VoiceErrorKind,
    VoiceSettings,
};
use perch_core::window_state::WindowMode;
use perch_typing::recent::{Outcome, RecentDictations};
use perch_typing::{self as typing, Delivered, PerchFocus};
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

/// A dictation for the focused application: its words are typed there (into Perch's box only
/// when Perch itself has the focus). The indicator shows its progress; the window hears only a
/// failure, so it can say why. `never` is Settings -> Voice's never-type list.
struct AnywhereSink {
    app: AppHandle,
    never: Vec<String>,
}

impl DictationSink for AnywhereSink {
    fn send(&self, update: DictationUpdate) {
        crate::indicator::forward(&self.app, &update);
        match &update.event {
            DictationEvent::Final { text, .. } if !text.trim().is_empty() => {
                let (app, never) = (self.app.clone(), self.never.clone());
                tauri::async_runtime::spawn_blocking(move || deliver(&app, update, &never));
            }
            DictationEvent::Failed { .. } => WindowSink(self.app.clone()).send(update),
            _ => {}
        }
    }
}

/// Types a finished dictation into the focused application, or hands it on. Every dictation
/// meant for another application is kept in the recent ones (Settings -> Voice), typed or not,
/// so words typed where the focus had moved can be copied again.
fn deliver(app: &AppHandle, update: DictationUpdate, never: &[String]) {
    let DictationEvent::Final { text, .. } = &update.event else { return };
    let recent = app.state::<RecentDictations>();
    // Wayland names no focused window to the engine, but the shell knows its own.
    let focused =
        |label: &str| app.get_webview_window(label).is_some_and(|w| w.is_focused().unwrap_or(false));
    let perch_focus = || {
        if focused(crate::indicator::LABEL) {
            PerchFocus::Indicator
        } else if focused(crate::window::MAIN) {
            PerchFocus::Window
        } else {
            PerchFocus::Elsewhere
        }
    };
    let why = match typing::type_dictation(text, std::process::id(), never, perch_focus) {
        Ok(Delivered::Perch) => return WindowSink(app.clone()).send(update),
        Ok(Delivered::Typed { app: into, chars }) => {
            tracing::info!(chars, "typed a dictation into the focused application");
            return recent.add(text, Outcome::Typed { app: into });
        }
        Err(why) => why,
    };
    // Nothing said is lost: the words go on the clipboard, and the window says why.
    let copied = typing::clipboard::put_private(text).is_ok();
    tracing::warn!(error = %why, copied, "a dictation could not be typed into the focused application");
    // A terminal pastes with Ctrl+Shift+V (Ctrl+V there is a key for the shell).
    let keys = if matches!(why, typing::TypingError::Terminal(_)) { "Ctrl+Shift+V" } else { "Ctrl+V" };
    let next = if copied {
        recent.add(text, Outcome::Copied { reason: why.to_string() });
        format!("The words are on the clipboard: paste them yourself with {keys}.")
    } else {
        recent.add(text, Outcome::Kept { reason: why.to_string() });
        "The words could not be put on the clipboard either: copy them from Settings -> Voice -> Recent dictations.".to_owned()
    };
    let message = format!("Perch did not type into the focused application: {why}. {next}");
    let event = DictationEvent::Failed { kind: VoiceErrorKind::Typing, message };
    WindowSink(app.clone()).send(DictationUpdate { session: update.session, event });
}

/// The push-to-talk shortcut's name in the shortcut registry.
const PUSH_TO_TALK: &str = "push_to_talk";
/// The dictate-anywhere shortcut's name.
const DICTATE_ANYWHERE: &str = "dictate_anywhere";

/// Hold or toggle, read at each key event so a change in Settings applies at once; and a
/// dictation being started, which the engine does not know of yet (the settings are read and
/// the indicator opened first): a key let go meanwhile stops it as soon as it has started.
#[derive(Default)]
pub struct PushToTalk {
    mode: Mutex<PushToTalkMode>,
    starting: AtomicBool,
    stop_once_started: AtomicBool,
}

/// How the push-to-talk and dictate-anywhere shortcuts bound, in that order.
pub fn shortcut_statuses(app: &AppHandle) -> Vec<ShortcutStatus> {
    let statuses = app.state::<Shortcuts>().statuses();
    [PUSH_TO_TALK, DICTATE_ANYWHERE]
        .map(|name| {
            statuses.iter().find(|s| s.name == name).cloned().unwrap_or(ShortcutStatus {
                name: name.to_owned(),
                accelerator: String::new(),
                active: false,
                problem: None,
                assigned: None,
            })
        })
        .to_vec()
}

/// Registers the push-to-talk and dictate-anywhere shortcuts from the settings, replacing the
/// previous ones (on Wayland, asked of the desktop by `Shortcuts::apply`).
pub fn apply_shortcut(app: &AppHandle, settings: &VoiceSettings) {
    *app.state::<PushToTalk>().mode.lock().unwrap_or_else(|p| p.into_inner()) = settings.push_to_talk_mode;
    let action: Action = Arc::new(|app, phase| on_key(app, phase == Phase::Pressed, start));
    app.state::<Shortcuts>().bind(app, PUSH_TO_TALK, &settings.push_to_talk, action);
    let anywhere: Action = Arc::new(|app, phase| on_key(app, phase == Phase::Pressed, start_anywhere));
    app.state::<Shortcuts>().bind(app, DICTATE_ANYWHERE, &settings.dictate_anywhere, anywhere);
}

fn on_key(app: &AppHandle, pressed: bool, start: fn(&AppHandle, perch_core::Engine)) {
    let state = app.state::<PushToTalk>();
    let mode = *state.mode.lock().unwrap_or_else(|p| p.into_inner());
    let Some(engine) = app.state::<AppState>().engine.as_ref().ok().cloned() else { return };
    if state.starting.load(Ordering::SeqCst) {
        // Released (hold) or pressed again (toggle) before the dictation has started.
        if !pressed || mode == PushToTalkMode::Toggle {
            state.stop_once_started.store(true, Ordering::SeqCst);
        }
        return;
    }
    let active = engine.voice().is_active();
    match (mode, pressed, active) {
        (PushToTalkMode::Hold, true, false) | (PushToTalkMode::Toggle, true, false) => {
            state.stop_once_started.store(false, Ordering::SeqCst);
            state.starting.store(true, Ordering::SeqCst);
            start(app, engine);
        }
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
    begin(app.clone(), engine, sink(app));
}

/// `perch dictate --toggle`: starts dictate-anywhere, or stops the dictation under way (its words
/// are then typed); says which, for the terminal.
pub fn toggle_anywhere(app: &AppHandle) -> &'static str {
    let Some(engine) = app.state::<AppState>().engine.as_ref().ok().cloned() else {
        return "Perch's engine did not start; see the window.";
    };
    let state = app.state::<PushToTalk>();
    if state.starting.load(Ordering::SeqCst) {
        state.stop_once_started.store(true, Ordering::SeqCst);
        "Stopped: the words will be typed where the cursor is."
    } else if engine.voice().is_active() {
        let _ = engine.voice().stop_dictation();
        "Stopped: the words will be typed where the cursor is."
    } else {
        state.stop_once_started.store(false, Ordering::SeqCst);
        state.starting.store(true, Ordering::SeqCst);
        start_anywhere(app, engine);
        "Listening: run it again to stop, and the words are typed where the cursor is."
    }
}

/// Starts a dictation for the focused application: Perch's window stays as it is (showing or
/// focusing it would take the focus from where the words go); the indicator, which takes no
/// focus, shows it listening. Off the shortcut's thread: opening the indicator holds Esc,
/// which the shortcut plugin cannot register from inside a key's handler.
fn start_anywhere(app: &AppHandle, engine: perch_core::Engine) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        crate::indicator::open(&app).await;
        let never = engine.settings().get().await.voice.never_type_into;
        let sink = Arc::new(AnywhereSink { app: app.clone(), never });
        begin(app, engine, sink);
    });
}

/// Starts the dictation (the caller set `starting`), then stops it at once if its key was let
/// go meanwhile.
fn begin(app: AppHandle, engine: perch_core::Engine, sink: Arc<dyn DictationSink>) {
    tauri::async_runtime::spawn(async move {
        let settings = engine.settings().get().await.voice;
        let source = AudioSource::Device(settings.device());
        let started = engine.voice().start_dictation(&settings, source, sink.clone());
        let state = app.state::<PushToTalk>();
        state.starting.store(false, Ordering::SeqCst);
        match started {
            Ok(_) if state.stop_once_started.swap(false, Ordering::SeqCst) => {
                let _ = engine.voice().stop_dictation();
            }
            Ok(_) => {}
            // The window hears why, as it would for the mic button.
            Err(e) => sink.send(DictationUpdate {
                session: 0,
                event: DictationEvent::Failed { kind: e.kind(), message: e.to_string() },
            }),
        }
    });
}
