//! X11 through xcb: the RandR monitor list (virtual monitors made with `xrandr --setmonitor`
//! included, which xcap 0.9 skips because they have no output), the pointer, and grabs of any
//! rectangle of the root window. One connection per call: captures are rare and short.
//!
//! A grab goes through MIT-SHM when the server offers it (`shm.rs`: the server writes the
//! pixels into memory Perch maps, instead of sending them down the socket), else through plain
//! GetImage in strips; both end in one conversion to RGBA (`pixels.rs`).

use image::RgbaImage;
use xcb::randr::GetMonitors;
use xcb::x::{self, Drawable, GetImage, ImageFormat, ImageOrder, QueryPointer};

use super::CaptureError;
use super::geometry::{MonitorInfo, Rect};
use super::pixels::{self, PixelFormat};
use super::shm;

/// Set (to anything) to read the screen with plain GetImage, as Qt's `QT_X11_NO_MITSHM`: for
/// X servers whose shared memory misbehaves, and for testing the fallback.
const NO_MITSHM: &str = "PERCH_X11_NO_MITSHM";

/// How the last grab read the screen, for `perch doctor`: 0 none yet, 1 MIT-SHM, 2 GetImage.
static LAST_TRANSPORT: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// How the last grab in this process read the screen.
pub fn last_transport() -> Option<&'static str> {
    match LAST_TRANSPORT.load(std::sync::atomic::Ordering::Relaxed) {
        1 => Some("MIT-SHM"),
        2 => Some("GetImage"),
        _ => None,
    }
}

fn set_transport(shm: bool) {
    LAST_TRANSPORT.store(if shm { 1 } else { 2 }, std::sync::atomic::Ordering::Relaxed);
}

/// Pixels are read in strips of at most this many bytes, so a large grab never asks the server
/// for one huge reply, nor holds a second full copy of the screen.
const STRIP_BYTES: usize = 16 << 20;

pub(super) struct Display {
    pub(super) conn: xcb::Connection,
    pub(super) root: x::Window,
    byte_order: ImageOrder,
    /// Bits per pixel of the root's depth.
    bpp: u8,
    pub(super) size: (u16, u16),
}

fn backend(e: impl std::fmt::Display) -> CaptureError {
    CaptureError::Backend(e.to_string())
}

fn open() -> Result<Display, CaptureError> {
    let (conn, screen) =
        xcb::Connection::connect_with_extensions(None, &[xcb::Extension::RandR], &[xcb::Extension::Shm])
            .map_err(|e| CaptureError::Backend(format!("the X server at DISPLAY did not answer: {e}")))?;
    let setup = conn.get_setup();
    let root = setup.roots().nth(usize::try_from(screen).unwrap_or(0)).ok_or(CaptureError::NoMonitors)?;
    let depth = root.root_depth();
    let bpp =
        setup.pixmap_formats().iter().find(|f| f.depth() == depth).map(|f| f.bits_per_pixel()).unwrap_or(32);
    let (byte_order, window, size) =
        (setup.image_byte_order(), root.root(), (root.width_in_pixels(), root.height_in_pixels()));
    Ok(Display { conn, root: window, byte_order, bpp, size })
}

/// Every active monitor, in physical pixels; the scale comes from `Xft.dpi` (one for all).
pub fn monitors() -> Result<Vec<MonitorInfo>, CaptureError> {
    let d = open()?;
    let reply = d
        .conn
        .wait_for_reply(d.conn.send_request(&GetMonitors { window: d.root, get_active: true }))
        .map_err(backend)?;
    let scale = xft_scale(&d).unwrap_or(1.0);
    let mut out = Vec::new();
    for m in reply.monitors() {
        let name = d
            .conn
            .wait_for_reply(d.conn.send_request(&x::GetAtomName { atom: m.name() }))
            .map(|r| r.name().to_utf8().into_owned())
            .unwrap_or_else(|_| format!("monitor-{}", out.len() + 1));
        let rect = Rect::new(m.x().into(), m.y().into(), m.width().into(), m.height().into());
        if !rect.is_empty() {
            out.push(MonitorInfo { id: name.clone(), name, rect, scale, primary: m.primary() });
        }
    }
    if out.is_empty() {
        // RandR without monitors (old servers): the whole screen is one.
        let rect = Rect::new(0, 0, d.size.0.into(), d.size.1.into());
        out.push(MonitorInfo { id: "screen".into(), name: "screen".into(), rect, scale, primary: true });
    }
    Ok(out)
}

/// `Xft.dpi` from the root's resource database, as a scale (96 dpi = 1.0).
fn xft_scale(d: &Display) -> Option<f64> {
    let reply = d
        .conn
        .wait_for_reply(d.conn.send_request(&x::GetProperty {
            delete: false,
            window: d.root,
            property: x::ATOM_RESOURCE_MANAGER,
            r#type: x::ATOM_STRING,
            long_offset: 0,
            long_length: 16 * 1024,
        }))
        .ok()?;
    let text = String::from_utf8_lossy(reply.value::<u8>()).into_owned();
    parse_xft_dpi(&text).map(|dpi| dpi / 96.0)
}

pub(super) fn parse_xft_dpi(resources: &str) -> Option<f64> {
    resources
        .lines()
        .find_map(|l| l.strip_prefix("Xft.dpi:"))
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|dpi| *dpi > 0.0)
}

/// The pointer's position on the root window.
pub fn cursor() -> Result<(i32, i32), CaptureError> {
    let d = open()?;
    let reply =
        d.conn.wait_for_reply(d.conn.send_request(&QueryPointer { window: d.root })).map_err(backend)?;
    Ok((reply.root_x().into(), reply.root_y().into()))
}

/// The pixels of `rect` (desktop pixels), clipped to the screen; outside stays black.
pub fn grab(rect: Rect) -> Result<RgbaImage, CaptureError> {
    if std::env::var_os(NO_MITSHM).is_some() {
        tracing::debug!("{NO_MITSHM} is set: reading the screen through GetImage");
        return grab_through_replies(&open()?, rect);
    }
    shm::with_warm(open, |warm| {
        // The screen may have been resized since the connection was opened.
        let geometry = warm
            .display
            .conn
            .wait_for_reply(
                warm.display
                    .conn
                    .send_request(&x::GetGeometry { drawable: Drawable::Window(warm.display.root) }),
            )
            .map_err(backend)?;
        warm.display.size = (geometry.width(), geometry.height());
        grab_warm(warm, rect)
    })
}

/// A grab through the warm connection's shared memory, else its GetImage replies.
fn grab_warm(warm: &mut shm::Warm, rect: Rect) -> Result<RgbaImage, CaptureError> {
    let Some(target) = Target::new(&warm.display, rect)? else {
        return Ok(RgbaImage::new(rect.width, rect.height));
    };
    let len = target.stride() * target.visible.height as usize;
    let image = match warm.grab(target.visible, len) {
        // The whole grab on screen in 32-bit pixels: converted straight into a new buffer,
        // without zeroing it first.
        Ok(bytes) if target.format == PixelFormat::Bgrx && target.visible == rect => {
            RgbaImage::from_raw(rect.width, rect.height, pixels::bgrx_to_rgba(bytes))
                .ok_or_else(|| CaptureError::Backend("the grab has the wrong size".into()))?
        }
        Ok(bytes) => {
            let mut image = RgbaImage::new(rect.width, rect.height);
            target.place(&mut image, 0, target.visible.height, bytes);
            image
        }
        Err(why) => {
            tracing::debug!(%why, "reading the screen through GetImage instead of MIT-SHM");
            return grab_through_replies(&warm.display, rect);
        }
    };
    set_transport(true);
    Ok(image)
}

/// A grab through GetImage replies alone.
fn grab_through_replies(d: &Display, rect: Rect) -> Result<RgbaImage, CaptureError> {
    let mut image = RgbaImage::new(rect.width, rect.height);
    if let Some(target) = Target::new(d, rect)? {
        target.read_replies(d, &mut image)?;
    }
    set_transport(false);
    Ok(image)
}

/// Where the server's pixels go: `visible` (on screen) of `rect` (the image).
struct Target {
    format: PixelFormat,
    rect: Rect,
    visible: Rect,
}

impl Target {
    /// None when `rect` is off the screen (its image stays black).
    fn new(d: &Display, rect: Rect) -> Result<Option<Self>, CaptureError> {
        let format = PixelFormat::of(d.bpp, d.byte_order == ImageOrder::LsbFirst).ok_or_else(|| {
            CaptureError::Backend(format!(
                "the X screen uses {} bits per pixel; Perch reads 24 and 32",
                d.bpp
            ))
        })?;
        let screen = Rect::new(0, 0, d.size.0.into(), d.size.1.into());
        Ok(rect.intersect(&screen).map(|visible| Self { format, rect, visible }))
    }

    fn stride(&self) -> usize {
        self.format.stride(self.visible.width as usize)
    }

    /// Converts `rows` server scanlines, starting at the visible part's `first_row`, into place.
    fn place(&self, image: &mut RgbaImage, first_row: u32, rows: u32, data: &[u8]) {
        let (rect, visible) = (self.rect, self.visible);
        let out_width = rect.width as usize * 4;
        let out_x = (visible.x - rect.x) as usize * 4;
        let out_y = (visible.y - rect.y) as usize + first_row as usize;
        let out: &mut [u8] = image.as_mut();
        let width = visible.width as usize;
        pixels::to_rgba(
            self.format,
            width,
            rows as usize,
            data,
            &mut out[out_y * out_width + out_x..],
            out_width,
        );
    }

    /// Through GetImage replies, in strips.
    fn read_replies(&self, d: &Display, image: &mut RgbaImage) -> Result<(), CaptureError> {
        let visible = self.visible;
        let rows_per_strip = (STRIP_BYTES / self.stride()).clamp(1, u16::MAX as usize) as u32;
        let mut row = 0;
        while row < visible.height {
            let rows = rows_per_strip.min(visible.height - row);
            let reply = d
                .conn
                .wait_for_reply(d.conn.send_request(&GetImage {
                    format: ImageFormat::ZPixmap,
                    drawable: Drawable::Window(d.root),
                    x: visible.x as i16,
                    y: (visible.y + row as i32) as i16,
                    width: visible.width as u16,
                    height: rows as u16,
                    plane_mask: u32::MAX,
                }))
                .map_err(backend)?;
            self.place(image, row, rows, reply.data());
            row += rows;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn xft_dpi_is_read_from_the_resource_database() {
        assert_eq!(super::parse_xft_dpi("Xft.antialias:\t1\nXft.dpi:\t192\n"), Some(192.0));
        assert_eq!(super::parse_xft_dpi("Xft.dpi: 120"), Some(120.0));
        assert_eq!(super::parse_xft_dpi("Xcursor.size: 24"), None);
        assert_eq!(super::parse_xft_dpi("Xft.dpi:\tlarge"), None);
    }
}
