//! The floating window: creation with restored bounds, mini mode, hide-to-tray, and saving
//! the placement. Geometry decisions are perch-core's pure functions; this file reads
//! monitors and applies results. The window's page while it is hidden (`hidden_page`) and the
//! MCP Apps' frames inside it (`apps`) are the window's too.

pub mod apps;
pub mod hidden_page;

use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use perch_core::window_state::{
    self as geometry, MIN_HEIGHT, MIN_WIDTH, MINI_SIZE, Rect, WindowMode, WindowPlacement,
};
use tauri::{AppHandle, LogicalPosition, LogicalSize, Manager, WebviewUrl, WebviewWindow, WindowEvent};
use tauri_specta::Event;

use crate::events::WindowModeChanged;
use crate::state::AppState;

pub const MAIN: &str = "main";
/// Moves and resizes arrive in bursts while dragging; save once they settle.
const SAVE_DELAY: Duration = Duration::from_millis(400);

/// The placement as it is now; the single source of truth for mode and normal bounds.
pub struct WindowController {
    placement: Mutex<WindowPlacement>,
    save_generation: AtomicU64,
}

impl WindowController {
    pub fn new(placement: WindowPlacement) -> Self {
        Self { placement: Mutex::new(placement), save_generation: AtomicU64::new(0) }
    }
    fn placement(&self) -> std::sync::MutexGuard<'_, WindowPlacement> {
        self.placement.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Builds the main window where it was last time (clamped to today's monitors) and shows it;
/// `at_login` (the autostart entry) shows it as the bubble, without taking the focus from what
/// the user opened first.
pub fn create(app: &AppHandle, at_login: bool) -> tauri::Result<WebviewWindow> {
    let monitors = logical_monitors(app);
    let primary = primary_monitor(app).unwrap_or(monitors.first().copied().unwrap_or(FALLBACK_SCREEN));
    let controller = app.state::<WindowController>();
    let (mode, rect) = {
        let mut placement = controller.placement();
        if at_login {
            placement.mode = WindowMode::Mini;
        }
        let bounds = geometry::initial_bounds(placement.bounds, &monitors, primary);
        placement.bounds = Some(bounds);
        let rect = match placement.mode {
            WindowMode::Normal => bounds,
            WindowMode::Mini => geometry::initial_mini_rect(&placement, bounds, &monitors),
        };
        (placement.mode, rect)
    };
    let window = tauri::WebviewWindowBuilder::new(app, MAIN, WebviewUrl::App("index.html".into()))
        .title("Perch")
        .position(rect.x.into(), rect.y.into())
        .inner_size(rect.width.into(), rect.height.into())
        .decorations(false)
        .transparent(true)
        .shadow(false)
        .always_on_top(true)
        .visible_on_all_workspaces(true)
        .skip_taskbar(true)
        .content_protected(true)
        .maximizable(false)
        .focused(!at_login)
        .visible(false)
        .initialization_script_for_all_frames(apps::FRAME_GUARD_SCRIPT)
        // The window and its frames (an MCP app's) stay on Perch's pages.
        .on_navigation({
            let app = app.clone();
            move |url| apps::may_navigate(&app, url)
        })
        .on_page_load(|window, load| {
            if load.event() == tauri::webview::PageLoadEvent::Finished {
                apps::page_loaded(window.app_handle());
                hidden_page::loaded(window.app_handle());
            }
        })
        .build()?;
    // Before any app can open: an app's frame must not connect where its policy forbids.
    crate::speculation::turn_off(&window);
    apply_mode_constraints(&window, mode)?;
    hidden_page::watch_crashes(&window);
    window.show()?;
    let handle = app.clone();
    window.on_window_event(move |event| match event {
        WindowEvent::Moved(_) | WindowEvent::Resized(_) => schedule_save(&handle),
        WindowEvent::CloseRequested { api, .. } => {
            // Closing hides to the tray; Quit (tray or Ctrl+Q) ends the app.
            api.prevent_close();
            let _ = hide(&handle);
        }
        _ => {}
    });
    Ok(window)
}

const FALLBACK_SCREEN: Rect = Rect { x: 0, y: 0, width: 1280, height: 800 };

pub fn main_window(app: &AppHandle) -> tauri::Result<WebviewWindow> {
    app.get_webview_window(MAIN).ok_or(tauri::Error::WindowNotFound)
}

pub fn mode(app: &AppHandle) -> WindowMode {
    app.state::<WindowController>().placement().mode
}

/// Enters or leaves mini mode. Mini mode is a 52x52 square at the top-right corner of the
/// bounds it replaces; leaving it restores those bounds exactly (clamped to the monitors).
pub fn set_mode(app: &AppHandle, mode: WindowMode) -> tauri::Result<()> {
    let window = main_window(app)?;
    let controller = app.state::<WindowController>();
    let target = {
        let mut placement = controller.placement();
        if placement.mode == mode {
            return Ok(());
        }
        let target = match mode {
            WindowMode::Mini => {
                let bounds = current_rect(&window)?;
                placement.bounds = Some(bounds);
                placement.mini_origin = None;
                geometry::clamp_to_monitors(
                    geometry::mini_rect(bounds),
                    &logical_monitors(app),
                    (MINI_SIZE, MINI_SIZE),
                )
            }
            WindowMode::Normal => {
                let primary = primary_monitor(app).unwrap_or(FALLBACK_SCREEN);
                geometry::initial_bounds(placement.bounds, &logical_monitors(app), primary)
            }
        };
        placement.mode = mode;
        target
    };
    // Lift the old size limits before resizing; the new mode's limits follow.
    window.set_max_size(None::<LogicalSize<u32>>)?;
    window.set_min_size(Some(LogicalSize::new(MINI_SIZE, MINI_SIZE)))?;
    window.set_size(LogicalSize::new(target.width, target.height))?;
    window.set_position(LogicalPosition::new(target.x, target.y))?;
    apply_mode_constraints(&window, mode)?;
    confirm_size(app, mode, target);
    let _ = WindowModeChanged { mode }.emit(app);
    schedule_save(app);
    Ok(())
}

/// How long the window manager gets to apply a mode switch before the size is checked.
const CONFIRM_DELAY: Duration = Duration::from_millis(300);

/// Asks again for the normal bounds if leaving mini mode left the window stuck at a size the
/// limits produced. A resize sent together with new size limits can be judged against the old
/// ones: under load, openbox left a window that started in mini mode at its minimum size
/// instead of its saved bounds, and the snapshot then saved that minimum as the user's bounds.
/// Only those stuck sizes are corrected, so a resize the user makes meanwhile is kept.
fn confirm_size(app: &AppHandle, mode: WindowMode, target: Rect) {
    if mode != WindowMode::Normal {
        return; // The mini square is held by equal minimum and maximum sizes.
    }
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        for _ in 0..3 {
            tokio::time::sleep(CONFIRM_DELAY).await;
            let Ok(window) = main_window(&app) else { return };
            if self::mode(&app) != mode || !window.is_visible().unwrap_or(false) {
                return;
            }
            let Ok(now) = current_rect(&window) else { return };
            let size = (now.width, now.height);
            let stuck = size == (MIN_WIDTH, MIN_HEIGHT) || size == (MINI_SIZE, MINI_SIZE);
            if !stuck || size == (target.width, target.height) {
                return;
            }
            tracing::debug!(?now, ?target, "the window did not take its size; asking again");
            let _ = window.set_size(LogicalSize::new(target.width, target.height));
            let _ = window.set_position(LogicalPosition::new(target.x, target.y));
        }
    });
}

/// Mini mode is a fixed square; normal mode resizes down to a usable minimum. The square is
/// fixed by equal minimum and maximum sizes, not by `set_resizable(false)`: GTK sizes a
/// non-resizable window to the webview's natural size (200x200), not the size asked for.
fn apply_mode_constraints(window: &WebviewWindow, mode: WindowMode) -> tauri::Result<()> {
    match mode {
        WindowMode::Mini => {
            let square = LogicalSize::new(MINI_SIZE, MINI_SIZE);
            window.set_min_size(Some(square))?;
            window.set_max_size(Some(square))
        }
        WindowMode::Normal => {
            window.set_max_size(None::<LogicalSize<u32>>)?;
            window.set_min_size(Some(LogicalSize::new(MIN_WIDTH, MIN_HEIGHT)))
        }
    }
}

pub fn hide(app: &AppHandle) -> tauri::Result<()> {
    snapshot(app);
    main_window(app)?.hide()?;
    hidden_page::hidden(app);
    Ok(())
}

/// Shows, un-minimises and focuses the window (tray, second launch), where it was when hidden:
/// window managers may place a re-mapped window anew.
pub fn show(app: &AppHandle) -> tauri::Result<()> {
    let window = main_window(app)?;
    let was_hidden = !window.is_visible()?;
    hidden_page::shown(app);
    window.show()?;
    window.unminimize()?;
    if was_hidden && let Some((x, y)) = last_origin(app) {
        window.set_position(LogicalPosition::new(x, y))?;
    }
    window.set_focus()
}

/// Where the window's top-left corner belongs in the current mode.
fn last_origin(app: &AppHandle) -> Option<(i32, i32)> {
    let placement = app.state::<WindowController>().placement().clone();
    let bounds = placement.bounds?;
    Some(match placement.mode {
        WindowMode::Normal => (bounds.x, bounds.y),
        WindowMode::Mini => placement.mini_origin.unwrap_or_else(|| {
            let corner = geometry::mini_rect(bounds);
            (corner.x, corner.y)
        }),
    })
}

pub fn toggle(app: &AppHandle) -> tauri::Result<()> {
    if main_window(app)?.is_visible()? { hide(app) } else { show(app) }
}

fn current_rect(window: &WebviewWindow) -> tauri::Result<Rect> {
    let scale = window.scale_factor()?;
    let position = window.outer_position()?.to_logical::<f64>(scale);
    let size = window.inner_size()?.to_logical::<f64>(scale);
    Ok(Rect {
        x: position.x.round() as i32,
        y: position.y.round() as i32,
        width: size.width.round() as u32,
        height: size.height.round() as u32,
    })
}

fn logical_monitors(app: &AppHandle) -> Vec<Rect> {
    app.available_monitors().unwrap_or_default().iter().map(monitor_rect).collect()
}

fn primary_monitor(app: &AppHandle) -> Option<Rect> {
    app.primary_monitor().ok().flatten().as_ref().map(monitor_rect)
}

/// The monitor's work area (without panels and docks), in logical pixels.
fn monitor_rect(monitor: &tauri::Monitor) -> Rect {
    let scale = monitor.scale_factor();
    let area = monitor.work_area();
    let position = area.position.to_logical::<f64>(scale);
    let size = area.size.to_logical::<f64>(scale);
    Rect {
        x: position.x.round() as i32,
        y: position.y.round() as i32,
        width: size.width.round() as u32,
        height: size.height.round() as u32,
    }
}

/// Records where the window is now. Geometry is read from the window, not from event
/// payloads, and only when it fits the current mode, so a late event from a mode switch
/// cannot store the mini square as the normal bounds.
fn snapshot(app: &AppHandle) {
    let Ok(window) = main_window(app) else { return };
    if !window.is_visible().unwrap_or(false) {
        return;
    }
    let Ok(rect) = current_rect(&window) else { return };
    let controller = app.state::<WindowController>();
    let mut placement = controller.placement();
    let is_mini_square = rect.width == MINI_SIZE && rect.height == MINI_SIZE;
    match placement.mode {
        WindowMode::Normal if rect.width >= MIN_WIDTH && rect.height >= MIN_HEIGHT => {
            placement.bounds = Some(rect)
        }
        WindowMode::Mini if is_mini_square => {
            let corner = placement.bounds.map(geometry::mini_rect);
            let moved = corner.is_none_or(|c| (c.x, c.y) != (rect.x, rect.y));
            placement.mini_origin = moved.then_some((rect.x, rect.y));
        }
        _ => {}
    }
}

fn schedule_save(app: &AppHandle) {
    let generation = app.state::<WindowController>().save_generation.fetch_add(1, Ordering::SeqCst) + 1;
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(SAVE_DELAY).await;
        if app.state::<WindowController>().save_generation.load(Ordering::SeqCst) == generation {
            snapshot(&app);
            persist(&app).await;
        }
    });
}

async fn persist(app: &AppHandle) {
    let placement = app.state::<WindowController>().placement().clone();
    let Ok(engine) = &app.state::<AppState>().engine else { return };
    if let Err(e) = engine.settings().update(|s| s.window = placement).await {
        tracing::warn!(error = %e, "could not save the window placement");
    }
}

/// Saves the placement before the app exits.
pub fn save_now(app: &AppHandle) {
    snapshot(app);
    tauri::async_runtime::block_on(persist(app));
}
