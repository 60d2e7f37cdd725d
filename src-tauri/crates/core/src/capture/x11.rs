//! X11 through xcb: the RandR monitor list (virtual monitors made with `xrandr --setmonitor`
//! included, which xcap 0.9 skips because they have no output), the pointer, and grabs of any
//! rectangle of the root window. One connection per call: captures are rare and short.

use image::RgbaImage;
use xcb::randr::GetMonitors;
use xcb::x::{self, Drawable, GetImage, ImageFormat, ImageOrder, QueryPointer};

use super::CaptureError;
use super::geometry::{MonitorInfo, Rect};

/// Replies are read in strips of at most this many bytes, so a large grab never asks the
/// server for one huge reply.
const STRIP_BYTES: usize = 16 << 20;

struct Display {
    conn: xcb::Connection,
    root: x::Window,
    byte_order: ImageOrder,
    /// Bits per pixel of the root's depth.
    bpp: u8,
    size: (u16, u16),
}

fn backend(e: impl std::fmt::Display) -> CaptureError {
    CaptureError::Backend(e.to_string())
}

fn open() -> Result<Display, CaptureError> {
    let (conn, screen) = xcb::Connection::connect_with_extensions(None, &[xcb::Extension::RandR], &[])
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
    let d = open()?;
    if d.bpp != 32 && d.bpp != 24 {
        return Err(CaptureError::Backend(format!(
            "the X screen uses {} bits per pixel; Perch reads 24 and 32",
            d.bpp
        )));
    }
    let mut image = RgbaImage::new(rect.width, rect.height);
    let screen = Rect::new(0, 0, d.size.0.into(), d.size.1.into());
    let Some(visible) = rect.intersect(&screen) else { return Ok(image) };
    let bytes_pp = usize::from(d.bpp / 8);
    let rows_per_strip =
        (STRIP_BYTES / (visible.width as usize * bytes_pp)).clamp(1, u16::MAX as usize) as u32;
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
        let data = reply.data();
        // Scanlines are padded to 32 bits; rows are copied straight into the image's buffer.
        let stride = (visible.width as usize * bytes_pp).div_ceil(4) * 4;
        let out_width = rect.width as usize * 4;
        let out_x = (visible.x - rect.x) as usize * 4;
        let out: &mut [u8] = image.as_mut();
        for y in 0..rows as usize {
            let line = &data[y * stride..y * stride + visible.width as usize * bytes_pp];
            let out_y = (visible.y - rect.y) as usize + row as usize + y;
            let target = &mut out[out_y * out_width + out_x..][..visible.width as usize * 4];
            for (p, o) in line.chunks_exact(bytes_pp).zip(target.chunks_exact_mut(4)) {
                // LSB first: B, G, R(, pad); MSB first: (pad,) R, G, B.
                let rgb = match d.byte_order {
                    ImageOrder::LsbFirst => [p[2], p[1], p[0]],
                    _ => [p[bytes_pp - 3], p[bytes_pp - 2], p[bytes_pp - 1]],
                };
                o.copy_from_slice(&[rgb[0], rgb[1], rgb[2], 255]);
            }
        }
        row += rows;
    }
    Ok(image)
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
