//! The shell's side of screen captures: the shortcuts, hiding Perch so it is not in its own
//! capture, the overlay windows (one per monitor, each showing its part of the frozen screen),
//! and bringing Perch back with the new chip. The pixels are perch-core's business.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use perch_core::Engine;
use perch_core::capture::{self, Capture, CaptureMode, CaptureSettings, FrozenScreen, Target, screen};
use perch_core::review::server::RequestError;
use perch_core::window_state::WindowMode;
use perch_ipc::{AppCommand, ScreenshotMode};
use serde_json::{Value, json};
use tauri::{AppHandle, Manager, PhysicalPosition, PhysicalSize, WebviewUrl};
use tauri_specta::Event;

use crate::error::{CommandError, CommandResult, ErrorKind};
use crate::events::{CaptureFailed, CapturesChanged};
use crate::shortcuts::{Phase, ShortcutStatus, Shortcuts};
use crate::state::AppState;
use crate::window;

pub const OVERLAY_PREFIX: &str = "capture-overlay-";

/// One capture at a time; the overlay's session while it is open.
#[derive(Default)]
pub struct CaptureState {
    busy: AtomicBool,
    overlay: std::sync::Mutex<Option<Overlay>>,
}

struct Overlay {
    mode: CaptureMode,
    frozen: FrozenScreen,
    /// Whether Perch's window was on screen before; it comes back only if it was, or a chip came.
    window_was_visible: bool,
}

fn engine(app: &AppHandle) -> CommandResult<Engine> {
    app.state::<AppState>().engine().cloned()
}

/// Registers the screenshot shortcuts from the settings (on Wayland, asked of the desktop by
/// `Shortcuts::apply`); returns how each went.
pub fn bind_shortcuts(app: &AppHandle, settings: &CaptureSettings) -> Vec<ShortcutStatus> {
    let shortcuts = app.state::<Shortcuts>();
    vec![
        shortcuts.bind(app, "screenshot", &settings.shortcut, on_press(None)),
        shortcuts.bind(
            app,
            "screenshot_window",
            &settings.window_shortcut,
            on_press(Some(Target::FocusedWindow)),
        ),
        crate::selection::bind(app, &settings.selection_shortcut),
    ]
}

/// An action that starts a capture on the key's press (the release means nothing here).
fn on_press(target: Option<Target>) -> crate::shortcuts::Action {
    Arc::new(move |app, phase| {
        if phase != Phase::Pressed {
            return;
        }
        let (app, target) = (app.clone(), target.clone());
        tauri::async_runtime::spawn(async move {
            let result = match target {
                Some(target) => capture_now(&app, target).await.map(drop),
                None => start(&app, None).await.map(drop),
            };
            if let Err(e) = result {
                report(&app, &e);
            }
        });
    })
}

/// Tells the UI (and the log) why a capture failed; the window comes forward to say it.
fn report(app: &AppHandle, error: &CommandError) {
    tracing::warn!(error = %error.message, "screen capture failed");
    let _ = CaptureFailed { message: error.message.clone() }.emit(app);
    let _ = window::set_mode(app, WindowMode::Normal).and_then(|()| window::show(app));
}

/// What the screenshot shortcut does: capture at once (fullscreen) or open the overlay
/// (precision, window). Returns a sentence for `perch screenshot`.
pub async fn start(app: &AppHandle, mode: Option<CaptureMode>) -> CommandResult<String> {
    // Pressed again while the overlay is up: the same key closes it.
    if overlay_open(app) {
        overlay_cancel(app)?;
        return Ok("The capture was cancelled.".into());
    }
    let engine = engine(app)?;
    let settings = engine.settings().get().await.capture;
    match mode.unwrap_or(settings.mode) {
        CaptureMode::None => Err(CommandError::new(
            ErrorKind::Invalid,
            "screenshots are off: pick a capture mode beside the input or in Settings -> General",
        )),
        CaptureMode::Fullscreen => {
            let target = if settings.all_monitors {
                Target::AllMonitors
            } else {
                Target::Cursor { point: cursor(app) }
            };
            let c = capture_now(app, target).await?;
            Ok(format!("Captured {} ({} x {}).", c.source, c.width, c.height))
        }
        mode @ (CaptureMode::Precision | CaptureMode::Window) => {
            open_overlay(app, mode).await?;
            Ok(match mode {
                CaptureMode::Window => "Click a window to capture it (Esc cancels).".into(),
                _ => "Drag a region on the screen (Esc cancels).".into(),
            })
        }
    }
}

/// The pointer in desktop pixels, from the windowing system (perch-core asks X11 itself).
fn cursor(app: &AppHandle) -> Option<(i32, i32)> {
    app.cursor_position().ok().map(|p| (p.x.round() as i32, p.y.round() as i32))
}

/// Hides Perch, captures, and brings Perch back with the chip.
pub async fn capture_now(app: &AppHandle, target: Target) -> CommandResult<Capture> {
    let state = app.state::<CaptureState>();
    if state.busy.swap(true, Ordering::SeqCst) {
        return Err(CommandError::new(ErrorKind::Invalid, "a capture is already under way"));
    }
    let engine = engine(app);
    let result = async {
        let engine = engine?;
        let settings = engine.settings().get().await.capture;
        hide_self(app).await;
        let captured = engine.captures().capture(target, &settings).await;
        bring_back(app, &engine, captured.is_ok(), true);
        Ok(captured?)
    }
    .await;
    state.busy.store(false, Ordering::SeqCst);
    result
}

/// On Linux nothing keeps a window out of a capture, so Perch hides its window and waits until
/// the window manager no longer lists it. Windows and macOS leave the window alone: content
/// protection (set when the window is created) already keeps it out of captures there.
async fn hide_self(app: &AppHandle) -> bool {
    let Some(window) = app.get_webview_window(window::MAIN) else { return false };
    let visible = window.is_visible().unwrap_or(false);
    if !cfg!(target_os = "linux") || !visible {
        return visible;
    }
    let _ = window::hide(app);
    let pid = std::process::id();
    let _ = tokio::task::spawn_blocking(move || {
        let deadline = Instant::now() + Duration::from_secs(1);
        while screen::shows_window_of(pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    })
    .await;
    // A compositor may still be fading the window out.
    tokio::time::sleep(Duration::from_millis(30)).await;
    visible
}

/// Perch comes forward with the chip (out of mini mode), or just as it was before.
fn bring_back(app: &AppHandle, engine: &Engine, captured: bool, was_visible: bool) {
    if captured {
        let _ = CapturesChanged { captures: engine.captures().pending(), focus: true }.emit(app);
        let _ = window::set_mode(app, WindowMode::Normal).and_then(|()| window::show(app));
    } else if was_visible {
        let _ = window::show(app);
    }
}

async fn open_overlay(app: &AppHandle, mode: CaptureMode) -> CommandResult<()> {
    let state = app.state::<CaptureState>();
    if state.busy.swap(true, Ordering::SeqCst) {
        return Err(CommandError::new(ErrorKind::Invalid, "a capture is already under way"));
    }
    let opened = async {
        let engine = engine(app)?;
        let was_visible = hide_self(app).await;
        let frozen = match engine.captures().freeze().await {
            Ok(frozen) => frozen,
            Err(e) => {
                bring_back(app, &engine, false, was_visible);
                return Err(e.into());
            }
        };
        let under_cursor = cursor(app)
            .or_else(screen::cursor)
            .and_then(|(x, y)| capture::geometry::monitor_at(&frozen.monitors, x, y).map(|m| m.id.clone()));
        for (i, monitor) in frozen.monitors.iter().enumerate() {
            // The page learns which monitor it covers before any script runs (a URL fragment
            // would not survive the app protocol's path handling).
            let logical = |v: f64| v / monitor.scale;
            let overlay =
                tauri::WebviewWindowBuilder::new(app, format!("{OVERLAY_PREFIX}{i}"), WebviewUrl::default())
                    .initialization_script(format!("window.__PERCH_OVERLAY__ = {i};"))
                    .title("Perch capture")
                    .position(logical(f64::from(monitor.rect.x)), logical(f64::from(monitor.rect.y)))
                    .inner_size(
                        logical(f64::from(monitor.rect.width)),
                        logical(f64::from(monitor.rect.height)),
                    )
                    .decorations(false)
                    .always_on_top(true)
                    .skip_taskbar(true)
                    .resizable(false)
                    .shadow(false)
                    .focused(under_cursor.as_deref() == Some(&monitor.id))
                    .build()?;
            // Closed some other way (the window manager): the selection ends as if cancelled.
            let handle = app.clone();
            overlay.on_window_event(move |event| {
                if matches!(event, tauri::WindowEvent::Destroyed) && overlay_open(&handle) {
                    let _ = overlay_cancel(&handle);
                }
            });
            // Exactly the monitor's pixels, whatever rounding the logical size went through.
            overlay.set_position(PhysicalPosition::new(monitor.rect.x, monitor.rect.y))?;
            overlay.set_size(PhysicalSize::new(monitor.rect.width, monitor.rect.height))?;
            if under_cursor.as_deref() == Some(&monitor.id) {
                overlay.set_focus()?;
            }
        }
        *state.overlay.lock().unwrap_or_else(|p| p.into_inner()) =
            Some(Overlay { mode, frozen, window_was_visible: was_visible });
        Ok(())
    }
    .await;
    if opened.is_err() {
        close_overlays(app);
    }
    opened
}

fn overlay_open(app: &AppHandle) -> bool {
    app.state::<CaptureState>().overlay.lock().unwrap_or_else(|p| p.into_inner()).is_some()
}

/// What an overlay needs to draw itself.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub struct OverlayInfo {
    pub mode: CaptureMode,
    pub monitor: capture::MonitorInfo,
    /// Windows on the frozen screen, topmost first, in desktop pixels.
    pub windows: Vec<capture::WindowInfo>,
    /// The frozen monitor as a JPEG data URL, at most the monitor's logical size.
    pub preview: String,
}

pub async fn overlay_info(app: &AppHandle, index: u32) -> CommandResult<OverlayInfo> {
    let (mode, monitor, windows) = {
        let state = app.state::<CaptureState>();
        let guard = state.overlay.lock().unwrap_or_else(|p| p.into_inner());
        let overlay = guard.as_ref().ok_or(capture::CaptureError::NotSelecting)?;
        let monitor = overlay
            .frozen
            .monitors
            .get(index as usize)
            .cloned()
            .ok_or(capture::CaptureError::NotSelecting)?;
        (overlay.mode, monitor, overlay.frozen.windows.clone())
    };
    let (w, h) = (
        (f64::from(monitor.rect.width) / monitor.scale) as u32,
        (f64::from(monitor.rect.height) / monitor.scale) as u32,
    );
    let jpeg = engine(app)?.captures().frozen_preview(&monitor.id, w.max(1), h.max(1)).await?;
    use base64::Engine as _;
    let preview =
        format!("data:image/jpeg;base64,{}", base64::engine::general_purpose::STANDARD.encode(jpeg));
    Ok(OverlayInfo { mode, monitor, windows, preview })
}

/// The user finished: a region (precision) or a window (window mode) of the frozen screen.
pub async fn overlay_take(app: &AppHandle, pick: OverlayPick) -> CommandResult<Capture> {
    let (rect, source, was_visible) = {
        let state = app.state::<CaptureState>();
        let guard = state.overlay.lock().unwrap_or_else(|p| p.into_inner());
        let overlay = guard.as_ref().ok_or(capture::CaptureError::NotSelecting)?;
        let monitors = &overlay.frozen.monitors;
        let (rect, source) = match pick {
            OverlayPick::Region { monitor, selection, css_scale } => {
                let m = monitors.get(monitor as usize).ok_or(capture::CaptureError::NotSelecting)?;
                let rect = capture::geometry::selection_to_desktop(&m.rect, &selection, css_scale)
                    .ok_or(capture::CaptureError::EmptySelection)?;
                (rect, format!("Region {} x {}", rect.width, rect.height))
            }
            OverlayPick::Window { id } => {
                let w = overlay
                    .frozen
                    .windows
                    .iter()
                    .find(|w| w.id == id)
                    .ok_or(capture::CaptureError::WindowGone)?;
                (capture::window_rect(w, monitors)?, capture::window_source(w))
            }
        };
        (rect, source, overlay.window_was_visible)
    };
    let engine = engine(app)?;
    let settings = engine.settings().get().await.capture;
    let taken = engine.captures().take_frozen(rect, source, &settings).await;
    finish_overlay(app, &engine, taken.is_ok(), was_visible);
    Ok(taken?)
}

#[derive(Debug, Clone, serde::Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum OverlayPick {
    Region { monitor: u32, selection: capture::Selection, css_scale: f64 },
    Window { id: u32 },
}

/// Esc, or an overlay closed: nothing is captured and Perch returns as it was.
pub fn overlay_cancel(app: &AppHandle) -> CommandResult<()> {
    let was_visible = app
        .state::<CaptureState>()
        .overlay
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .as_ref()
        .is_some_and(|o| o.window_was_visible);
    let engine = engine(app)?;
    engine.captures().discard_frozen();
    finish_overlay(app, &engine, false, was_visible);
    Ok(())
}

fn finish_overlay(app: &AppHandle, engine: &Engine, captured: bool, was_visible: bool) {
    close_overlays(app);
    bring_back(app, engine, captured, was_visible);
}

fn close_overlays(app: &AppHandle) {
    let state = app.state::<CaptureState>();
    state.overlay.lock().unwrap_or_else(|p| p.into_inner()).take();
    for (label, w) in app.webview_windows() {
        if label.starts_with(OVERLAY_PREFIX) {
            let _ = w.destroy();
        }
    }
    state.busy.store(false, Ordering::SeqCst);
}

/// Answers app requests from the local socket (`perch show | toggle | screenshot | selection`).
pub fn serve_app_requests(app: &AppHandle, engine: &Engine) {
    let mut requests = engine.app_control().attach();
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        while let Some(request) = requests.recv().await {
            let answer = match request.command {
                // Minutes, for a download: answered on its own task so `show` is never held up.
                AppCommand::UpdateCheck | AppCommand::UpdateApply => {
                    let app = app.clone();
                    let apply = matches!(request.command, AppCommand::UpdateApply);
                    tauri::async_runtime::spawn(async move {
                        let answer = crate::update::from_command_line(&app, apply)
                            .await
                            .map_err(|e| RequestError::Window(e.message));
                        let _ = request.reply.send(answer);
                    });
                    continue;
                }
                AppCommand::Show => window::set_mode(&app, WindowMode::Normal)
                    .and_then(|()| window::show(&app))
                    .map(|()| json!({ "message": "Perch is in front." }))
                    .map_err(|e| RequestError::Window(e.to_string())),
                AppCommand::Toggle => window::toggle(&app)
                    .map(|()| Value::Null)
                    .map_err(|e| RequestError::Window(e.to_string())),
                AppCommand::ActOnSelection => {
                    crate::selection::take(&app);
                    Ok(Value::Null)
                }
                AppCommand::DictateToggle => {
                    Ok(json!({ "message": crate::dictation::toggle_anywhere(&app) }))
                }
                AppCommand::Screenshot { mode } => {
                    let mode = mode.map(|m| match m {
                        ScreenshotMode::Fullscreen => CaptureMode::Fullscreen,
                        ScreenshotMode::Precision => CaptureMode::Precision,
                        ScreenshotMode::Window => CaptureMode::Window,
                    });
                    start(&app, mode).await.map(|message| json!({ "message": message })).map_err(|e| {
                        report(&app, &e);
                        RequestError::Window(e.message)
                    })
                }
            };
            let _ = request.reply.send(answer);
        }
    });
}
