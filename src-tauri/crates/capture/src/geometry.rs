//! Desktop geometry for captures, in physical pixels. Monitors may sit left of or above the
//! primary one (negative origins) and each may have its own scale factor; the overlay reports
//! a selection in its own CSS pixels, which this module turns into desktop pixels.

use serde::{Deserialize, Serialize};

/// Desktop rectangles are the window geometry's `Rect`, here in physical pixels; `x` and `y`
/// may be negative.
pub use perch_foundation::window_state::Rect;

/// A monitor as the capture sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct MonitorInfo {
    /// Stable while the monitor stays plugged in (the name where the system gives one).
    pub id: String,
    pub name: String,
    /// Where it is on the desktop, in physical pixels.
    pub rect: Rect,
    /// Physical pixels per logical pixel (2.0 on a "200%" display).
    pub scale: f64,
    pub primary: bool,
}

/// The monitor containing the point, else the one nearest to it (a cursor can sit on the edge
/// between monitors, or in a gap of an irregular layout).
pub fn monitor_at(monitors: &[MonitorInfo], x: i32, y: i32) -> Option<&MonitorInfo> {
    monitors.iter().find(|m| m.rect.contains(x, y)).or_else(|| {
        monitors.iter().min_by_key(|m| {
            let dx = distance(x, m.rect.x, i64::from(m.rect.right()));
            let dy = distance(y, m.rect.y, i64::from(m.rect.bottom()));
            dx * dx + dy * dy
        })
    })
}

fn distance(v: i32, start: i32, end: i64) -> i64 {
    let v = i64::from(v);
    if v < i64::from(start) {
        i64::from(start) - v
    } else if v >= end {
        v - end + 1
    } else {
        0
    }
}

/// The rectangle covering every monitor: what "all monitors" stitches.
pub fn desktop_bounds(monitors: &[MonitorInfo]) -> Option<Rect> {
    monitors.iter().map(|m| m.rect).reduce(|a, b| a.union(&b))
}

/// A selection made on a monitor's overlay, in the overlay's CSS pixels (what the webview
/// reports), measured from the overlay's top-left corner.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Selection {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

/// Turns a selection on `monitor`'s overlay into desktop pixels. `css_scale` is the overlay's
/// device pixel ratio, which is the monitor's scale factor when the system placed the overlay
/// where we asked. The result is clamped to the monitor; a drag that ended outside the overlay
/// (the pointer stays grabbed) therefore stops at its edge. Negative widths (a drag up or to the
/// left) are normalised. None when nothing is left.
pub fn selection_to_desktop(monitor: &Rect, selection: &Selection, css_scale: f64) -> Option<Rect> {
    if !(css_scale.is_finite() && css_scale > 0.0) {
        return None;
    }
    let values = [selection.x, selection.y, selection.width, selection.height];
    if values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let (x0, x1) = ordered(selection.x, selection.x + selection.width);
    let (y0, y1) = ordered(selection.y, selection.y + selection.height);
    // Round outward so the pixels the user saw inside the frame are all kept.
    let to_px = |v: f64, round: fn(f64) -> f64| round(v * css_scale).clamp(-1e9, 1e9) as i64;
    let left = i64::from(monitor.x) + to_px(x0, f64::floor);
    let top = i64::from(monitor.y) + to_px(y0, f64::floor);
    let right = i64::from(monitor.x) + to_px(x1, f64::ceil);
    let bottom = i64::from(monitor.y) + to_px(y1, f64::ceil);
    let (max_x, max_y) = (i64::from(monitor.right()), i64::from(monitor.bottom()));
    let left = left.clamp(i64::from(monitor.x), max_x);
    let top = top.clamp(i64::from(monitor.y), max_y);
    let right = right.clamp(i64::from(monitor.x), max_x);
    let bottom = bottom.clamp(i64::from(monitor.y), max_y);
    let rect = Rect::new(left as i32, top as i32, (right - left) as u32, (bottom - top) as u32);
    (!rect.is_empty()).then_some(rect)
}

fn ordered(a: f64, b: f64) -> (f64, f64) {
    if a <= b { (a, b) } else { (b, a) }
}

/// A desktop rectangle in a monitor's overlay CSS pixels (to draw window outlines on it).
pub fn desktop_to_css(monitor: &Rect, rect: &Rect, css_scale: f64) -> Selection {
    Selection {
        x: f64::from(rect.x - monitor.x) / css_scale,
        y: f64::from(rect.y - monitor.y) / css_scale,
        width: f64::from(rect.width) / css_scale,
        height: f64::from(rect.height) / css_scale,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn monitor(id: &str, rect: Rect, scale: f64) -> MonitorInfo {
        MonitorInfo { id: id.into(), name: id.into(), rect, scale, primary: false }
    }

    #[test]
    fn intersections_and_unions_handle_negative_origins() {
        let left = Rect::new(-1920, -200, 1920, 1080);
        let main = Rect::new(0, 0, 2560, 1440);
        assert_eq!(left.intersect(&main), None);
        assert_eq!(left.union(&main), Rect::new(-1920, -200, 4480, 1640));
        let window = Rect::new(-100, 100, 300, 50);
        assert_eq!(window.intersect(&left), Some(Rect::new(-100, 100, 100, 50)));
        assert_eq!(window.intersect(&main), Some(Rect::new(0, 100, 200, 50)));
        assert!(left.contains(-1920, -200));
        assert!(!left.contains(0, 0));
    }

    #[test]
    fn the_monitor_under_the_cursor_or_the_nearest() {
        let monitors = [
            monitor("left", Rect::new(-1280, 0, 1280, 1024), 1.0),
            monitor("main", Rect::new(0, 0, 3840, 2160), 2.0),
        ];
        assert_eq!(monitor_at(&monitors, -1, 10).unwrap().id, "left");
        assert_eq!(monitor_at(&monitors, 0, 10).unwrap().id, "main");
        // Below the shorter monitor, in the gap of the layout: the nearest one.
        assert_eq!(monitor_at(&monitors, -600, 1500).unwrap().id, "left");
        assert_eq!(monitor_at(&monitors, -5, 1500).unwrap().id, "main");
        assert_eq!(monitor_at(&monitors, 4000, 2200).unwrap().id, "main");
        assert!(monitor_at(&[], 0, 0).is_none());
        assert_eq!(desktop_bounds(&monitors), Some(Rect::new(-1280, 0, 5120, 2160)));
    }

    #[test]
    fn a_selection_on_a_scaled_monitor_becomes_desktop_pixels() {
        // A 4K monitor at 200% to the right of a 1080p one: the overlay is 1920x1080 CSS pixels.
        let monitor = Rect::new(1920, 0, 3840, 2160);
        let sel = Selection { x: 100.0, y: 50.0, width: 200.0, height: 100.0 };
        assert_eq!(selection_to_desktop(&monitor, &sel, 2.0), Some(Rect::new(2120, 100, 400, 200)));
        // Fractional scales round outward, keeping every pixel the frame touched.
        let sel = Selection { x: 10.5, y: 0.0, width: 10.0, height: 10.0 };
        assert_eq!(selection_to_desktop(&monitor, &sel, 1.5), Some(Rect::new(1935, 0, 16, 15)));
    }

    #[test]
    fn a_selection_on_a_monitor_left_of_the_primary() {
        let monitor = Rect::new(-2560, -360, 2560, 1440);
        let sel = Selection { x: 0.0, y: 0.0, width: 640.0, height: 360.0 };
        assert_eq!(selection_to_desktop(&monitor, &sel, 1.0), Some(Rect::new(-2560, -360, 640, 360)));
        let back = desktop_to_css(&monitor, &Rect::new(-2560, -360, 640, 360), 1.0);
        assert_eq!(back, sel);
    }

    #[test]
    fn drags_up_left_and_past_the_edge_are_normalised_and_clamped() {
        let monitor = Rect::new(0, 0, 1280, 800);
        let up_left = Selection { x: 300.0, y: 300.0, width: -100.0, height: -50.0 };
        assert_eq!(selection_to_desktop(&monitor, &up_left, 1.0), Some(Rect::new(200, 250, 100, 50)));
        let past = Selection { x: 1200.0, y: 700.0, width: 500.0, height: 500.0 };
        assert_eq!(selection_to_desktop(&monitor, &past, 1.0), Some(Rect::new(1200, 700, 80, 100)));
        let outside = Selection { x: -50.0, y: -50.0, width: 20.0, height: 20.0 };
        assert_eq!(selection_to_desktop(&monitor, &outside, 1.0), None);
        let click = Selection { x: 5.0, y: 5.0, width: 0.0, height: 0.0 };
        assert_eq!(selection_to_desktop(&monitor, &click, 1.0), None);
        let nan = Selection { x: f64::NAN, y: 0.0, width: 1.0, height: 1.0 };
        assert_eq!(selection_to_desktop(&monitor, &nan, 1.0), None);
        assert_eq!(selection_to_desktop(&monitor, &click, 0.0), None);
    }
}
