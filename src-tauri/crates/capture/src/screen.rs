//! The screen as one API over the platforms: monitors, the pointer, windows, and the pixels of
//! a desktop rectangle. X11 goes through xcb (see `x11.rs`); Wayland's pixels through the
//! desktop's Screenshot portal (`portal.rs`), then, where there is none or it failed, xcap's
//! other ways (GNOME Shell's screenshot service, wlroots' screencopy); Wayland's monitors and
//! windows, Windows and macOS through xcap. Every function blocks: call them from a blocking
//! thread.

use image::RgbaImage;
use serde::Serialize;

use super::CaptureError;
use super::geometry::{MonitorInfo, Rect};

/// Which way this session captures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    X11,
    Wayland,
    /// Windows or macOS.
    Native,
}

/// The backend for this session, or why there is none.
pub fn backend() -> Result<Backend, CaptureError> {
    if !cfg!(target_os = "linux") {
        return Ok(Backend::Native);
    }
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    let wayland_session = std::env::var("XDG_SESSION_TYPE").is_ok_and(|t| t == "wayland");
    if set("WAYLAND_DISPLAY") || wayland_session {
        // XWayland's root window shows only X clients, so a Wayland session must use the portal.
        Ok(Backend::Wayland)
    } else if set("DISPLAY") {
        Ok(Backend::X11)
    } else {
        Err(CaptureError::NoDisplay)
    }
}

/// A top-level window another application shows.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct WindowInfo {
    pub id: u32,
    pub title: String,
    pub app: String,
    pub rect: Rect,
    pub focused: bool,
    pub pid: u32,
}

pub fn monitors() -> Result<Vec<MonitorInfo>, CaptureError> {
    let monitors = match backend()? {
        #[cfg(target_os = "linux")]
        Backend::X11 => super::x11::monitors()?,
        // xcap asks XWayland; without it, the compositor is asked.
        #[cfg(target_os = "linux")]
        Backend::Wayland => xcap_monitors(Backend::Wayland).or_else(|xcap| {
            super::wayland::monitors().map_err(|compositor| {
                CaptureError::Backend(format!(
                    "the monitors could not be listed, neither through XWayland ({xcap}) nor by the compositor ({compositor}); check that WAYLAND_DISPLAY names the running session"
                ))
            })
        })?,
        backend => xcap_monitors(backend)?,
    };
    if monitors.is_empty() { Err(CaptureError::NoMonitors) } else { Ok(monitors) }
}

/// How the last grab in this process read the pixels, where there is a choice (X11: "MIT-SHM"
/// or "GetImage"); for `perch doctor`.
pub fn last_transport() -> Option<&'static str> {
    #[cfg(target_os = "linux")]
    return super::x11::last_transport();
    #[cfg(not(target_os = "linux"))]
    None
}

/// The pointer, where the platform can tell without a window (X11); else None, and the shell
/// passes the position it knows.
pub fn cursor() -> Option<(i32, i32)> {
    match backend() {
        #[cfg(target_os = "linux")]
        Ok(Backend::X11) => super::x11::cursor().ok(),
        _ => None,
    }
}

/// The pixels of a desktop rectangle, which may span monitors.
pub fn grab(rect: Rect, monitors: &[MonitorInfo]) -> Result<RgbaImage, CaptureError> {
    match backend()? {
        #[cfg(target_os = "linux")]
        Backend::X11 => super::x11::grab(rect),
        #[cfg(target_os = "linux")]
        Backend::Wayland => wayland_grab(rect, monitors),
        backend => xcap_grab(rect, monitors, backend),
    }
}

/// Visible windows, topmost first, leaving out `own_pid`'s (Perch's own window and overlays).
pub fn windows(own_pid: u32) -> Result<Vec<WindowInfo>, CaptureError> {
    backend()?;
    let all = xcap::Window::all().map_err(xcap_error)?;
    let mut out: Vec<(i32, WindowInfo)> = Vec::new();
    for w in all {
        let (Ok(x), Ok(y), Ok(width), Ok(height)) = (w.x(), w.y(), w.width(), w.height()) else {
            continue;
        };
        // Older X toolkits set no _NET_WM_PID; such a window is never Perch's.
        let pid = w.pid().unwrap_or(0);
        if pid == own_pid || width == 0 || height == 0 || w.is_minimized().unwrap_or(false) {
            continue;
        }
        let info = WindowInfo {
            id: w.id().unwrap_or(0),
            title: w.title().unwrap_or_default(),
            app: w.app_name().unwrap_or_default(),
            rect: Rect::new(x, y, width, height),
            focused: w.is_focused().unwrap_or(false),
            pid,
        };
        out.push((w.z().unwrap_or(0), info));
    }
    out.sort_by_key(|(z, _)| std::cmp::Reverse(*z));
    Ok(out.into_iter().map(|(_, w)| w).collect())
}

/// Whether a window of `pid` is still on screen (Perch waits for its own to go before grabbing).
pub fn shows_window_of(pid: u32) -> bool {
    xcap::Window::all()
        .map(|all| all.iter().any(|w| w.pid().ok() == Some(pid) && !w.is_minimized().unwrap_or(false)))
        .unwrap_or(false)
}

fn xcap_error(e: xcap::XCapError) -> CaptureError {
    CaptureError::Backend(e.to_string())
}

/// Whether xcap reports monitor positions and sizes in logical units (points). macOS
/// (`CGDisplayBounds`) and xcap's Linux backend divide by the scale factor; Windows reads them
/// from the display mode (`DEVMODE`), which is in physical pixels whatever the process's DPI
/// awareness (the app's window library makes it per-monitor aware; the CLI is not, and xcap
/// then falls back to `GetDeviceCaps` for the scale only).
const XCAP_LOGICAL_UNITS: bool = !cfg!(target_os = "windows");

/// Monitors from xcap in Perch's desktop units (physical pixels): logical positions are scaled
/// by each monitor's factor.
fn xcap_monitors(backend: Backend) -> Result<Vec<MonitorInfo>, CaptureError> {
    check_permission()?;
    let monitors = xcap::Monitor::all().map_err(|e| backend_error(e, backend))?;
    let mut out = Vec::new();
    for (i, m) in monitors.iter().enumerate() {
        let scale = f64::from(m.scale_factor().unwrap_or(1.0)).max(0.1);
        let to_physical = if XCAP_LOGICAL_UNITS { scale } else { 1.0 };
        let px = |v: f64| (v * to_physical).round();
        let (x, y) = (m.x().unwrap_or(0), m.y().unwrap_or(0));
        let (w, h) = (m.width().unwrap_or(0), m.height().unwrap_or(0));
        let name = m.name().unwrap_or_else(|_| format!("monitor-{}", i + 1));
        out.push(MonitorInfo {
            id: m.id().map(|id| id.to_string()).unwrap_or_else(|_| name.clone()),
            name,
            rect: Rect::new(
                px(f64::from(x)) as i32,
                px(f64::from(y)) as i32,
                px(f64::from(w)) as u32,
                px(f64::from(h)) as u32,
            ),
            scale,
            primary: m.is_primary().unwrap_or(false),
        });
    }
    Ok(out)
}

/// macOS answers a capture without the Screen Recording permission with the wallpaper and no
/// windows, not an error, so the permission is asked first; the first refusal also makes macOS
/// show its prompt (and list Perch in System Settings). Elsewhere there is nothing to ask.
fn check_permission() -> Result<(), CaptureError> {
    #[cfg(target_os = "macos")]
    {
        use objc2_core_graphics::{CGPreflightScreenCaptureAccess, CGRequestScreenCaptureAccess};
        if !CGPreflightScreenCaptureAccess() {
            CGRequestScreenCaptureAccess();
            return Err(CaptureError::Permission);
        }
    }
    Ok(())
}

/// Wayland: the portal's picture of the whole desktop, cut to `rect`. Where there is no portal,
/// or it failed, xcap's other ways are tried, and a failure names every way's reason; a portal
/// that declined or did not answer is not asked again through xcap (a second dialog, or a
/// second wait without a limit).
#[cfg(target_os = "linux")]
fn wayland_grab(rect: Rect, monitors: &[MonitorInfo]) -> Result<RgbaImage, CaptureError> {
    use super::portal::{PortalFailure, screenshot_on_session_bus};
    let portal_reason = match screenshot_on_session_bus() {
        Ok(desktop) => return compose(rect, monitors, |info| cut(&desktop, info)),
        Err(PortalFailure::Answered(e @ CaptureError::PortalFailed(_))) => e,
        Err(PortalFailure::Answered(e)) => return Err(e),
        Err(PortalFailure::Absent(m)) => CaptureError::WaylandPortal(format!("no Screenshot portal: {m}")),
    };
    xcap_grab(rect, monitors, Backend::Wayland).map_err(|xcap| {
        let others = format!(
            "xcap's other ways (GNOME Shell's screenshot service, wlroots' screencopy) failed too, the last with: {}",
            match &xcap {
                CaptureError::WaylandPortal(m) | CaptureError::Backend(m) => m.clone(),
                other => other.to_string(),
            }
        );
        match portal_reason {
            CaptureError::PortalFailed(m) => CaptureError::PortalFailed(format!("{m}; {others}")),
            CaptureError::WaylandPortal(m) => CaptureError::WaylandPortal(format!("{m}; {others}")),
            other => other,
        }
    })
}

/// The part of `desktop` (the portal's picture, in desktop units) that `monitor` covers.
#[cfg(target_os = "linux")]
fn cut(desktop: &RgbaImage, monitor: &MonitorInfo) -> Result<RgbaImage, CaptureError> {
    let area = monitor.rect;
    let x = (area.x.max(0) as u32).min(desktop.width());
    let y = (area.y.max(0) as u32).min(desktop.height());
    let width = area.width.min(desktop.width() - x);
    let height = area.height.min(desktop.height() - y);
    if width == 0 || height == 0 {
        return Err(CaptureError::PortalFailed(format!(
            "its screenshot ({} x {}) does not show the monitor {}",
            desktop.width(),
            desktop.height(),
            monitor.name
        )));
    }
    Ok(image::imageops::crop_imm(desktop, x, y, width, height).to_image())
}

fn xcap_grab(rect: Rect, monitors: &[MonitorInfo], backend: Backend) -> Result<RgbaImage, CaptureError> {
    check_permission()?;
    let xcap_monitors = xcap::Monitor::all().map_err(|e| backend_error(e, backend))?;
    compose(rect, monitors, |info| {
        let monitor = xcap_monitors
            .iter()
            .find(|m| m.id().map(|id| id.to_string()).ok().as_deref() == Some(&info.id))
            .ok_or_else(|| CaptureError::MonitorGone(info.name.clone()))?;
        monitor.capture_image().map_err(|e| backend_error(e, backend))
    })
}

/// `rect` put together from each monitor's picture (`shot_of`), scaled where a picture is not
/// in the monitor's desktop units.
fn compose(
    rect: Rect,
    monitors: &[MonitorInfo],
    mut shot_of: impl FnMut(&MonitorInfo) -> Result<RgbaImage, CaptureError>,
) -> Result<RgbaImage, CaptureError> {
    let mut out = RgbaImage::new(rect.width, rect.height);
    for info in monitors {
        let Some(part) = info.rect.intersect(&rect) else { continue };
        let shot = shot_of(info)?;
        // The image is in the monitor's own pixels, whatever units xcap used for positions.
        let sx = f64::from(shot.width()) / f64::from(info.rect.width.max(1));
        let sy = f64::from(shot.height()) / f64::from(info.rect.height.max(1));
        let src = Rect::new(
            (f64::from(part.x - info.rect.x) * sx) as i32,
            (f64::from(part.y - info.rect.y) * sy) as i32,
            (f64::from(part.width) * sx) as u32,
            (f64::from(part.height) * sy) as u32,
        );
        let piece =
            image::imageops::crop_imm(&shot, src.x as u32, src.y as u32, src.width, src.height).to_image();
        let piece = if piece.dimensions() == (part.width, part.height) {
            piece
        } else {
            image::imageops::resize(&piece, part.width, part.height, image::imageops::FilterType::Triangle)
        };
        image::imageops::replace(&mut out, &piece, i64::from(part.x - rect.x), i64::from(part.y - rect.y));
    }
    Ok(out)
}

/// Names what went wrong in words a user can act on.
fn backend_error(e: xcap::XCapError, backend: Backend) -> CaptureError {
    let text = e.to_string();
    match backend {
        Backend::Wayland => CaptureError::WaylandPortal(text),
        #[cfg(target_os = "macos")]
        Backend::Native if text.contains("permission") || text.contains("denied") => CaptureError::Permission,
        _ => CaptureError::Backend(text),
    }
}
