//! Screen captures for questions: the monitor under the cursor, every monitor stitched, a
//! region dragged on a frozen copy of the screen, or a window; each saved on the shelf
//! (`shelf`) with a copy sized for the model, until the next question takes it.
//!
//! No window here: the shell hides Perch, shows the overlay and calls these functions. Grabs
//! and encoding block, so every public async function runs them on a blocking thread.
//! (Over 500 lines: the capture functions the shell calls, each a few lines around a blocking grab,
//! and the checks every capture passes.)

pub mod encode;
pub mod geometry;
#[cfg(target_os = "linux")]
mod pixels;
#[cfg(target_os = "linux")]
pub mod portal;
pub mod screen;
mod shelf;
#[cfg(target_os = "linux")]
mod shm;
#[cfg(target_os = "linux")]
mod wayland;
#[cfg(target_os = "linux")]
mod x11;

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use image::RgbaImage;
use serde::{Deserialize, Serialize};

pub use encode::Format;
pub use geometry::{MonitorInfo, Rect, Selection};
pub use screen::{Backend, WindowInfo};
pub use shelf::{Capture, CaptureFiles, Prepare, Shelf};

/// A capture larger than this many pixels is refused before any pixel is read (three 8K
/// monitors stitched would hold 400 MB).
pub const MAX_PIXELS: u64 = 64_000_000;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CaptureError {
    #[error(
        "there is no display to capture: Perch needs a graphical session (neither DISPLAY nor WAYLAND_DISPLAY is set)"
    )]
    NoDisplay,
    #[error(
        "the Wayland session did not give Perch the screen ({0}). Captures on Wayland go through the desktop's Screenshot portal: install xdg-desktop-portal with your desktop's backend (xdg-desktop-portal-gnome, -kde or -wlr), log in again, and allow the request"
    )]
    WaylandPortal(String),
    #[error(
        "the desktop declined to give Perch a screenshot (its Screenshot portal answered that the request was cancelled or denied): when the desktop asks, allow it; if it did not ask, allow screenshots for Perch in the desktop's privacy or app-permission settings, then try again"
    )]
    PortalDeclined,
    #[error(
        "the desktop's Screenshot portal could not take the screenshot ({0}): check that xdg-desktop-portal and your desktop's backend run (`systemctl --user status xdg-desktop-portal`; xdg-desktop-portal-wlr also needs PipeWire running), then try again"
    )]
    PortalFailed(String),
    #[error(
        "the desktop's Screenshot portal did not answer within {seconds} s: if the desktop shows a dialog, answer it and try again; otherwise restart the portal (`systemctl --user restart xdg-desktop-portal`)"
    )]
    PortalTimedOut { seconds: u64 },
    #[error(
        "macOS has not allowed Perch to record the screen: turn Perch on in System Settings -> Privacy & Security -> Screen Recording, then restart Perch"
    )]
    Permission,
    #[error("the capture came back all black. {hint}")]
    AllBlack { hint: &'static str },
    #[error("the monitor {0} is no longer connected; press the shortcut again")]
    MonitorGone(String),
    #[error("no monitor was found to capture")]
    NoMonitors,
    #[error("that window is gone")]
    WindowGone,
    #[error(
        "the capture would be {width} x {height} pixels ({megapixels} MP), more than the {limit} MP Perch takes at once: capture one monitor or a region"
    )]
    TooLarge { width: u32, height: u32, megapixels: u64, limit: u64 },
    #[error("there is no capture {0}: it was sent or removed")]
    NotFound(String),
    #[error("nothing is being selected: the overlay was closed")]
    NotSelecting,
    #[error("nothing was selected")]
    EmptySelection,
    #[error("the screen could not be captured: {0}")]
    Backend(String),
    #[error("the capture could not be saved in {path}: {reason}")]
    Io { path: PathBuf, reason: String },
}

impl CaptureError {
    /// A short machine-readable name, for the UI and `--json`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::NoDisplay => "no_display",
            Self::WaylandPortal(_) => "wayland_portal",
            Self::PortalDeclined => "portal_declined",
            Self::PortalFailed(_) => "portal_failed",
            Self::PortalTimedOut { .. } => "portal_timed_out",
            Self::Permission => "permission",
            Self::AllBlack { .. } => "all_black",
            Self::MonitorGone(_) => "monitor_gone",
            Self::NoMonitors => "no_monitors",
            Self::WindowGone => "window_gone",
            Self::TooLarge { .. } => "too_large",
            Self::NotFound(_) => "not_found",
            Self::NotSelecting | Self::EmptySelection => "cancelled",
            Self::Backend(_) => "backend",
            Self::Io { .. } => "io",
        }
    }
}

fn all_black_hint() -> &'static str {
    if cfg!(target_os = "macos") {
        "macOS gives black captures until Perch may record the screen: System Settings -> Privacy & Security -> Screen Recording, then restart Perch."
    } else if std::env::var_os("WAYLAND_DISPLAY").is_some() {
        "The desktop portal returned an empty picture: allow the screenshot request, or check that xdg-desktop-portal runs."
    } else {
        "The screen may be locked or asleep, or showing protected video; nothing was attached."
    }
}

/// What Alt+. does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum CaptureMode {
    /// The monitor under the cursor (or every monitor, a setting).
    #[default]
    Fullscreen,
    /// Drag a region on a frozen copy of the screen.
    Precision,
    /// Click a window.
    Window,
    /// The shortcut does nothing.
    None,
}

/// A quick action of the user's own on text selected in another application: a button on the
/// selection's chip that sends `prompt` with the selection, to `model` when one is named.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct QuickAction {
    pub name: String,
    pub prompt: String,
    /// A model id ("ollama:qwen3:8b"); empty: the conversation's model.
    pub model: String,
}

/// Settings -> General -> Screenshots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct CaptureSettings {
    pub mode: CaptureMode,
    /// Fullscreen captures every monitor stitched instead of the one under the cursor.
    pub all_monitors: bool,
    /// The global shortcut, in the accelerator form ("Alt+Period"); empty turns it off.
    pub shortcut: String,
    /// Captures the focused window at once, whatever the mode.
    pub window_shortcut: String,
    /// Brings the text selected in the focused application into Perch (`anywhere`); empty
    /// turns it off.
    pub selection_shortcut: String,
    /// The user's own quick actions on a selection, beside Explain, Fix, Translate, Summarise.
    pub quick_actions: Vec<QuickAction>,
    /// In fullscreen mode, a question sent without a capture takes one first.
    pub auto_screenshot: bool,
    /// The longest edge of the copy the model gets; the original is kept as taken.
    pub max_edge: u32,
    pub jpeg_quality: u8,
    /// Captures never sent are removed after this many hours.
    pub keep_hours: u32,
}

impl Default for CaptureSettings {
    fn default() -> Self {
        Self {
            mode: CaptureMode::Fullscreen,
            all_monitors: false,
            shortcut: "Alt+Period".into(),
            window_shortcut: "Alt+Shift+Period".into(),
            selection_shortcut: "Ctrl+Alt+E".into(),
            quick_actions: Vec::new(),
            auto_screenshot: false,
            max_edge: 1568,
            jpeg_quality: 85,
            keep_hours: 24,
        }
    }
}

impl CaptureSettings {
    pub fn prepare(&self) -> Prepare {
        Prepare { max_edge: self.max_edge, jpeg_quality: self.jpeg_quality }
    }
    pub fn keep(&self) -> Duration {
        Duration::from_secs(u64::from(self.keep_hours.max(1)) * 3600)
    }
}

/// What to capture at once (no overlay).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Target {
    /// The monitor under this point, else under the pointer.
    Cursor {
        point: Option<(i32, i32)>,
    },
    AllMonitors,
    Monitor {
        id: String,
    },
    /// A desktop rectangle.
    Region {
        rect: Rect,
    },
    /// The focused window (not Perch's own).
    FocusedWindow,
    Window {
        id: u32,
    },
}

/// The screen as it was when the overlay opened: every monitor's pixels, and the windows on
/// them, so a region or a window is cut from what the user saw.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct FrozenScreen {
    pub monitors: Vec<MonitorInfo>,
    /// Topmost first.
    pub windows: Vec<WindowInfo>,
}

struct Frozen {
    info: FrozenScreen,
    images: Vec<RgbaImage>,
}

impl Frozen {
    /// The desktop rectangle composed from the frozen monitors; uncovered parts stay black.
    fn crop(&self, rect: Rect) -> RgbaImage {
        let mut out = RgbaImage::new(rect.width, rect.height);
        for (m, image) in self.info.monitors.iter().zip(&self.images) {
            let Some(part) = m.rect.intersect(&rect) else { continue };
            let piece = image::imageops::crop_imm(
                image,
                (part.x - m.rect.x) as u32,
                (part.y - m.rect.y) as u32,
                part.width,
                part.height,
            );
            image::imageops::replace(
                &mut out,
                &piece.to_image(),
                i64::from(part.x - rect.x),
                i64::from(part.y - rect.y),
            );
        }
        out
    }
}

/// The engine's captures: the shelf and, while the overlay is open, the frozen screen.
pub struct Captures {
    shelf: std::sync::Arc<Shelf>,
    frozen: Mutex<Option<std::sync::Arc<Frozen>>>,
}

impl std::fmt::Debug for Captures {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Captures").field("dir", &self.shelf.dir()).finish_non_exhaustive()
    }
}

fn check_size(rect: &Rect) -> Result<(), CaptureError> {
    if rect.area() > MAX_PIXELS {
        return Err(CaptureError::TooLarge {
            width: rect.width,
            height: rect.height,
            megapixels: rect.area() / 1_000_000,
            limit: MAX_PIXELS / 1_000_000,
        });
    }
    Ok(())
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, CaptureError> + Send + 'static,
) -> Result<T, CaptureError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| CaptureError::Backend(e.to_string()))?
}

impl Captures {
    pub fn open(dir: PathBuf, keep: Duration) -> Self {
        Self { shelf: std::sync::Arc::new(Shelf::open(dir, keep)), frozen: Mutex::new(None) }
    }

    pub fn shelf(&self) -> &Shelf {
        &self.shelf
    }

    pub fn pending(&self) -> Vec<Capture> {
        self.shelf.pending()
    }

    /// Captures `target` now and puts it on the shelf.
    pub async fn capture(&self, target: Target, settings: &CaptureSettings) -> Result<Capture, CaptureError> {
        let (shelf, prepare) = (self.shelf.clone(), settings.prepare());
        blocking(move || {
            let monitors = screen::monitors()?;
            let (rect, source) = resolve(&target, &monitors)?;
            check_size(&rect)?;
            let image = screen::grab(rect, &monitors)?;
            store(&shelf, &image, source, prepare)
        })
        .await
    }

    /// Freezes the screen for the overlay: every monitor's pixels and the windows on them.
    pub async fn freeze(&self) -> Result<FrozenScreen, CaptureError> {
        let frozen = blocking(|| {
            let monitors = screen::monitors()?;
            let total: u64 = monitors.iter().map(|m| m.rect.area()).sum();
            if let Some(bounds) = geometry::desktop_bounds(&monitors)
                && total > MAX_PIXELS
            {
                check_size(&bounds)?;
            }
            let images =
                monitors.iter().map(|m| screen::grab(m.rect, &monitors)).collect::<Result<Vec<_>, _>>()?;
            let windows = screen::windows(std::process::id()).unwrap_or_default();
            Ok(Frozen { info: FrozenScreen { monitors, windows }, images })
        })
        .await?;
        let info = frozen.info.clone();
        *self.frozen.lock().unwrap_or_else(|p| p.into_inner()) = Some(std::sync::Arc::new(frozen));
        Ok(info)
    }

    fn frozen(&self) -> Result<std::sync::Arc<Frozen>, CaptureError> {
        self.frozen.lock().unwrap_or_else(|p| p.into_inner()).clone().ok_or(CaptureError::NotSelecting)
    }

    /// A frozen monitor as a JPEG no larger than `max_width` x `max_height`, for the overlay.
    pub async fn frozen_preview(
        &self,
        monitor_id: &str,
        max_width: u32,
        max_height: u32,
    ) -> Result<Vec<u8>, CaptureError> {
        let frozen = self.frozen()?;
        let id = monitor_id.to_owned();
        blocking(move || {
            let i =
                frozen.info.monitors.iter().position(|m| m.id == id).ok_or(CaptureError::MonitorGone(id))?;
            let image = &frozen.images[i];
            let (w, h) = image.dimensions();
            let scale =
                (f64::from(max_width) / f64::from(w)).min(f64::from(max_height) / f64::from(h)).min(1.0);
            let small = if scale < 1.0 {
                let size = |v: u32| ((f64::from(v) * scale).round() as u32).max(1);
                image::imageops::resize(image, size(w), size(h), image::imageops::FilterType::Triangle)
            } else {
                image.clone()
            };
            encode::encode(&small, Format::Jpeg, 80).map_err(|e| CaptureError::Backend(e.to_string()))
        })
        .await
    }

    /// Cuts a region of the frozen screen, puts it on the shelf and closes the selection.
    pub async fn take_frozen(
        &self,
        rect: Rect,
        source: String,
        settings: &CaptureSettings,
    ) -> Result<Capture, CaptureError> {
        let frozen = self.frozen()?;
        if rect.is_empty() {
            return Err(CaptureError::EmptySelection);
        }
        check_size(&rect)?;
        let (shelf, prepare) = (self.shelf.clone(), settings.prepare());
        let capture = blocking(move || store(&shelf, &frozen.crop(rect), source, prepare)).await;
        self.discard_frozen();
        capture
    }

    /// Forgets the frozen screen (the overlay was cancelled or closed).
    pub fn discard_frozen(&self) {
        self.frozen.lock().unwrap_or_else(|p| p.into_inner()).take();
    }

    pub fn remove(&self, id: &str) -> Result<(), CaptureError> {
        if self.shelf.remove(id) { Ok(()) } else { Err(CaptureError::NotFound(id.to_owned())) }
    }

    /// The model's copy, the original and the chip of a capture, read off the runtime.
    pub async fn files(&self, id: &str) -> Result<CaptureFiles, CaptureError> {
        let (shelf, id) = (self.shelf.clone(), id.to_owned());
        blocking(move || shelf.files(&id)).await
    }

    /// The original's pixels (for the clipboard).
    pub async fn original_pixels(&self, id: &str) -> Result<RgbaImage, CaptureError> {
        let files = self.files(id).await?;
        blocking(move || {
            image::load_from_memory(&files.original)
                .map(|i| i.to_rgba8())
                .map_err(|e| CaptureError::Backend(format!("the capture could not be read: {e}")))
        })
        .await
    }
}

fn store(
    shelf: &Shelf,
    image: &RgbaImage,
    source: String,
    prepare: Prepare,
) -> Result<Capture, CaptureError> {
    if encode::is_blank(image) {
        return Err(CaptureError::AllBlack { hint: all_black_hint() });
    }
    shelf.add(image, source, prepare)
}

/// The desktop rectangle a target names, and how to describe it.
fn resolve(target: &Target, monitors: &[MonitorInfo]) -> Result<(Rect, String), CaptureError> {
    let monitor_source = |m: &MonitorInfo| (m.rect, format!("Monitor {}", m.name));
    match target {
        Target::Cursor { point } => {
            let (x, y) = point.or_else(screen::cursor).unwrap_or_else(|| {
                let primary = monitors.iter().find(|m| m.primary).unwrap_or(&monitors[0]);
                (primary.rect.x, primary.rect.y)
            });
            geometry::monitor_at(monitors, x, y).map(monitor_source).ok_or(CaptureError::NoMonitors)
        }
        Target::AllMonitors => {
            let bounds = geometry::desktop_bounds(monitors).ok_or(CaptureError::NoMonitors)?;
            Ok((
                bounds,
                if monitors.len() == 1 {
                    format!("Monitor {}", monitors[0].name)
                } else {
                    "All monitors".into()
                },
            ))
        }
        Target::Monitor { id } => monitors
            .iter()
            .find(|m| &m.id == id)
            .map(monitor_source)
            .ok_or_else(|| CaptureError::MonitorGone(id.clone())),
        Target::Region { rect } => {
            let bounds = geometry::desktop_bounds(monitors).ok_or(CaptureError::NoMonitors)?;
            let rect = rect.intersect(&bounds).ok_or(CaptureError::EmptySelection)?;
            Ok((rect, format!("Region {} x {}", rect.width, rect.height)))
        }
        Target::FocusedWindow | Target::Window { .. } => {
            let windows = screen::windows(std::process::id())?;
            let found = match target {
                Target::Window { id } => windows.iter().find(|w| w.id == *id),
                _ => windows.iter().find(|w| w.focused),
            };
            let window = found.ok_or(CaptureError::WindowGone)?;
            Ok((window_rect(window, monitors)?, window_source(window)))
        }
    }
}

/// A window's rectangle cut to the desktop (a window half off screen keeps its visible half).
pub fn window_rect(window: &WindowInfo, monitors: &[MonitorInfo]) -> Result<Rect, CaptureError> {
    let bounds = geometry::desktop_bounds(monitors).ok_or(CaptureError::NoMonitors)?;
    window.rect.intersect(&bounds).ok_or(CaptureError::WindowGone)
}

pub fn window_source(window: &WindowInfo) -> String {
    let name = if window.title.trim().is_empty() { &window.app } else { &window.title };
    format!("Window: {}", name.trim())
}

/// What `perch doctor` says about capturing on this machine: the backend and the monitors, or
/// what is missing.
pub fn probe() -> perch_foundation::probe::Probe {
    let name = "screen capture";
    let result = screen::backend().and_then(|backend| {
        let monitors = screen::monitors()?;
        // A test grab of the primary monitor: a denied permission or an empty answer shows up
        // as black pixels, not as an error. Not on Wayland, where a grab goes through the
        // Screenshot portal, which may put a dialog in front of the user (and wait for it):
        // `perch doctor` must not ask for a permission.
        if backend != Backend::Wayland {
            let primary = monitors.iter().find(|m| m.primary).unwrap_or(&monitors[0]);
            if encode::is_blank(&screen::grab(primary.rect, &monitors)?) {
                return Err(CaptureError::AllBlack { hint: all_black_hint() });
            }
        }
        let list: Vec<String> = monitors
            .iter()
            .map(|m| {
                format!(
                    "{} {}x{}{}",
                    m.name,
                    m.rect.width,
                    m.rect.height,
                    if m.scale == 1.0 { String::new() } else { format!(" at {}x", m.scale) }
                )
            })
            .collect();
        let transport = screen::last_transport().map(|t| format!(" through {t}")).unwrap_or_default();
        Ok(format!("{backend:?}{transport}: {}", list.join(", ")))
    });
    match result {
        Ok(detail) => perch_foundation::probe::Probe { name: name.into(), available: true, detail },
        Err(e) => {
            perch_foundation::probe::Probe { name: name.into(), available: false, detail: e.to_string() }
        }
    }
}

#[cfg(test)]
mod tests {
    use image::Rgba;

    use super::*;

    fn monitor(id: &str, rect: Rect) -> MonitorInfo {
        MonitorInfo { id: id.into(), name: id.into(), rect, scale: 1.0, primary: false }
    }

    #[test]
    fn a_frozen_region_spanning_two_monitors_is_composed_from_both() {
        let left = monitor("left", Rect::new(-100, 0, 100, 50));
        let right = monitor("right", Rect::new(0, 10, 100, 50));
        let frozen = Frozen {
            info: FrozenScreen { monitors: vec![left, right], windows: vec![] },
            images: vec![
                RgbaImage::from_pixel(100, 50, Rgba([255, 0, 0, 255])),
                RgbaImage::from_pixel(100, 50, Rgba([0, 0, 255, 255])),
            ],
        };
        let cut = frozen.crop(Rect::new(-10, 5, 20, 10));
        assert_eq!(cut.get_pixel(0, 0).0, [255, 0, 0, 255]);
        assert_eq!(cut.get_pixel(15, 9).0, [0, 0, 255, 255]);
        // Above the right monitor's top edge (y 5..10) nothing was on screen.
        assert_eq!(cut.get_pixel(15, 0).0, [0, 0, 0, 0]);
    }

    #[test]
    fn targets_resolve_to_desktop_rectangles() {
        let monitors =
            [monitor("a", Rect::new(-1920, 0, 1920, 1080)), monitor("b", Rect::new(0, 0, 2560, 1440))];
        let at = |x, y| resolve(&Target::Cursor { point: Some((x, y)) }, &monitors).unwrap();
        assert_eq!(at(-5, 5), (Rect::new(-1920, 0, 1920, 1080), "Monitor a".into()));
        assert_eq!(at(5, 5).0, Rect::new(0, 0, 2560, 1440));
        assert_eq!(resolve(&Target::AllMonitors, &monitors).unwrap().0, Rect::new(-1920, 0, 4480, 1440));
        let gone = resolve(&Target::Monitor { id: "c".into() }, &monitors).unwrap_err();
        assert!(matches!(gone, CaptureError::MonitorGone(_)));
        let region = resolve(&Target::Region { rect: Rect::new(2000, 1000, 1000, 1000) }, &monitors).unwrap();
        assert_eq!(region.0, Rect::new(2000, 1000, 560, 440));
    }

    #[test]
    fn huge_captures_are_refused_before_reading_a_pixel() {
        let three_8k = Rect::new(0, 0, 3 * 7680, 4320);
        let err = check_size(&three_8k).unwrap_err();
        assert!(matches!(err, CaptureError::TooLarge { megapixels: 99, limit: 64, .. }));
        assert!(err.to_string().contains("capture one monitor or a region"));
        assert!(check_size(&Rect::new(0, 0, 7680, 4320)).is_ok());
    }
}
