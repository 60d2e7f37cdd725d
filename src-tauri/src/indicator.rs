//! The dictate-anywhere indicator: a small window at the bottom of the screen the user is on,
//! showing that Perch listens (the level, the words so far) while the focus stays in the
//! application the words are for. It never takes the focus (`focusable(false)`: the window
//! manager is told it accepts no input focus), it lives only as long as the dictation, and Esc
//! is held for the whole desktop only while it does, to cancel.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use perch_core::voice::{DictationEvent, DictationUpdate};
use tauri::{AppHandle, Manager, PhysicalPosition, WebviewUrl};
use tauri_specta::Event;

use crate::events::IndicatorUpdate;
use crate::shortcuts::{Action, Phase, Shortcuts};
use crate::state::AppState;

pub const LABEL: &str = "dictation-indicator";
/// The window's logical size: one line of words under a level bar.
const WIDTH: f64 = 380.0;
const HEIGHT: f64 = 64.0;
/// Logical pixels between the indicator and the bottom of the screen (above most panels).
const MARGIN: f64 = 72.0;
/// The Esc bindings' names in the shortcut registry: Esc alone, and with the shortcut's keys.
const CANCEL: &str = "dictation_cancel";
const CANCEL_HELD: &str = "dictation_cancel_held";

/// Opens the indicator (nothing when it is open already) and holds Esc to cancel; a failure is
/// logged, never in the way of the dictation itself.
pub async fn open(app: &AppHandle) {
    OPENED.fetch_add(1, Ordering::SeqCst);
    *failure() = None;
    if app.get_webview_window(LABEL).is_none()
        && let Err(e) = build(app)
    {
        tracing::warn!(error = %e, "no dictation indicator; dictating without it");
    }
    let cancel: Action = std::sync::Arc::new(|app, phase| {
        if phase == Phase::Pressed
            && let Ok(engine) = app.state::<AppState>().engine()
        {
            let _ = engine.voice().cancel_dictation();
        }
    });
    let shortcuts = app.state::<Shortcuts>();
    if !shortcuts.hold(app, CANCEL, "Escape", cancel.clone()) {
        tracing::info!("Esc is not free for the whole desktop; the indicator's ✕ cancels instead");
    }
    // Holding the shortcut to talk, Esc comes with its modifiers (Ctrl+Alt+Escape), which a
    // grab of Escape alone does not match.
    if let Some(held) = held_modifiers(app).await {
        shortcuts.hold(app, CANCEL_HELD, &format!("{held}+Escape"), cancel);
    }
}

/// The dictate-anywhere shortcut's modifiers ("Ctrl+Alt" of "Ctrl+Alt+D"), if it has any.
async fn held_modifiers(app: &AppHandle) -> Option<String> {
    let engine = app.state::<AppState>().engine().ok()?.clone();
    let accelerator = engine.settings().get().await.voice.dictate_anywhere;
    let (modifiers, _key) = accelerator.trim().rsplit_once('+')?;
    Some(modifiers.to_owned()).filter(|m| !m.is_empty())
}

fn build(app: &AppHandle) -> tauri::Result<()> {
    let window = tauri::WebviewWindowBuilder::new(app, LABEL, WebviewUrl::default())
        .initialization_script("window.__PERCH_INDICATOR__ = true;")
        .title("Perch dictation")
        .inner_size(WIDTH, HEIGHT)
        .decorations(false)
        .always_on_top(true)
        .visible_on_all_workspaces(true)
        .skip_taskbar(true)
        // Resizable with its minimum and maximum both its size: GTK sizes a window that is not
        // resizable from the webview's natural height (taller than this one line).
        .resizable(true)
        .min_inner_size(WIDTH, HEIGHT)
        .max_inner_size(WIDTH, HEIGHT)
        .shadow(false)
        .focused(false)
        .focusable(false)
        .visible(false)
        .build()?;
    // The monitor the pointer is on: the user is looking there (usually where the focus is).
    let monitor = app
        .cursor_position()
        .ok()
        .and_then(|p| app.monitor_from_point(p.x, p.y).ok().flatten())
        .or_else(|| app.primary_monitor().ok().flatten());
    if let Some(monitor) = monitor {
        let (area, scale) = (monitor.work_area(), monitor.scale_factor());
        let width = (WIDTH * scale) as i32;
        let x = area.position.x + (area.size.width as i32 - width) / 2;
        let y = area.position.y + area.size.height as i32 - ((HEIGHT + MARGIN) * scale) as i32;
        window.set_position(PhysicalPosition::new(x, y))?;
    }
    window.show()
}

/// Passes a dictation's progress to the indicator; it closes once the dictation has ended, a
/// few seconds after a failure so its reason can be read where the user is looking.
pub fn forward(app: &AppHandle, update: &DictationUpdate) {
    if matches!(update.event, DictationEvent::Failed { .. }) {
        *failure() = Some(update.clone());
    }
    if app.get_webview_window(LABEL).is_some() {
        let _ = IndicatorUpdate { update: update.clone() }.emit_to(app, LABEL);
    }
    match update.event {
        DictationEvent::Final { .. } | DictationEvent::Cancelled => close(app, Duration::ZERO),
        DictationEvent::Failed { .. } => close(app, FAILURE_SHOWN),
        _ => {}
    }
}

/// The failure of the dictation the indicator was opened for. A dictation that cannot start
/// (no microphone) fails while the indicator's page is still loading, before it listens: the
/// page asks for it once it does, so the reason shows where the user is looking.
static FAILURE: Mutex<Option<DictationUpdate>> = Mutex::new(None);

fn failure() -> std::sync::MutexGuard<'static, Option<DictationUpdate>> {
    FAILURE.lock().unwrap_or_else(|p| p.into_inner())
}

/// The failure the indicator's page may have missed while it loaded.
#[tauri::command]
#[specta::specta]
pub fn indicator_failure() -> Option<DictationUpdate> {
    failure().clone()
}

/// How long a failure stays on the indicator.
const FAILURE_SHOWN: Duration = Duration::from_secs(4);
/// Counts the indicator's openings: a close scheduled for one dictation leaves the next alone.
static OPENED: AtomicU64 = AtomicU64::new(0);

/// Closes the indicator after `after` and lets go of Esc, unless another dictation opened it
/// meanwhile. Off the calling thread: the Esc handler itself may be what ended the dictation,
/// and the shortcut plugin cannot unregister from inside it.
fn close(app: &AppHandle, after: Duration) {
    let (app, opening) = (app.clone(), OPENED.load(Ordering::SeqCst));
    tauri::async_runtime::spawn(async move {
        // Esc goes back to the user's applications at once, even while a failure stays shown.
        if OPENED.load(Ordering::SeqCst) == opening {
            app.state::<Shortcuts>().release(&app, CANCEL);
            app.state::<Shortcuts>().release(&app, CANCEL_HELD);
        }
        tokio::time::sleep(after).await;
        if OPENED.load(Ordering::SeqCst) != opening {
            return;
        }
        if let Some(window) = app.get_webview_window(LABEL) {
            let _ = window.destroy();
        }
    });
}
