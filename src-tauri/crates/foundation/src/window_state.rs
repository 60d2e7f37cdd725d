//! Window geometry: the normal bounds, mini mode's 52x52 square, and clamping saved bounds
//! onto the monitors that exist now. Pure functions in logical pixels, so the shell only
//! reads monitors and applies the result.

use serde::{Deserialize, Serialize};

pub const DEFAULT_SIZE: u32 = 450;
pub const MINI_SIZE: u32 = 52;
pub const MIN_WIDTH: u32 = 320;
pub const MIN_HEIGHT: u32 = 360;
/// Gap kept from the monitor's edges when placing the window for the first time.
const EDGE_MARGIN: i32 = 24;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
}

impl Rect {
    pub const fn new(x: i32, y: i32, width: u32, height: u32) -> Self {
        Self { x, y, width, height }
    }
    pub fn right(&self) -> i32 {
        self.x.saturating_add_unsigned(self.width)
    }
    pub fn bottom(&self) -> i32 {
        self.y.saturating_add_unsigned(self.height)
    }
    pub fn area(&self) -> u64 {
        u64::from(self.width) * u64::from(self.height)
    }
    pub fn is_empty(&self) -> bool {
        self.width == 0 || self.height == 0
    }
    pub fn contains(&self, x: i32, y: i32) -> bool {
        x >= self.x && y >= self.y && x < self.right() && y < self.bottom()
    }
    /// The part both rectangles cover, if any.
    pub fn intersect(&self, other: &Rect) -> Option<Rect> {
        let (left, top) = (self.x.max(other.x), self.y.max(other.y));
        let (right, bottom) = (self.right().min(other.right()), self.bottom().min(other.bottom()));
        (right > left && bottom > top).then(|| Rect {
            x: left,
            y: top,
            width: right.abs_diff(left),
            height: bottom.abs_diff(top),
        })
    }
    /// The smallest rectangle covering both.
    pub fn union(&self, other: &Rect) -> Rect {
        let (left, top) = (self.x.min(other.x), self.y.min(other.y));
        let (right, bottom) = (self.right().max(other.right()), self.bottom().max(other.bottom()));
        Rect { x: left, y: top, width: right.abs_diff(left), height: bottom.abs_diff(top) }
    }
    fn overlap_area(&self, other: &Rect) -> i64 {
        let w = (self.right().min(other.right()) - self.x.max(other.x)).max(0) as i64;
        let h = (self.bottom().min(other.bottom()) - self.y.max(other.y)).max(0) as i64;
        w * h
    }
    fn center_distance2(&self, other: &Rect) -> i64 {
        let dx = (self.x as i64 * 2 + self.width as i64) - (other.x as i64 * 2 + other.width as i64);
        let dy = (self.y as i64 * 2 + self.height as i64) - (other.y as i64 * 2 + other.height as i64);
        dx * dx + dy * dy
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum WindowMode {
    #[default]
    Normal,
    Mini,
}

/// What Perch gives back while the window is hidden (to the tray, or by the shortcut).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct HiddenSettings {
    /// After this many seconds the page's web process, the largest part of Perch at rest, is
    /// ended to give its memory back, and the page loads again when the window shows. 0 keeps it.
    pub release_page_after_secs: u32,
    /// After this many seconds a page that has grown well past what it took when it loaded (a
    /// long conversation, a flood of terminal output) is loaded again at once, still hidden, so
    /// the memory comes back and the next show stays instant. 0 never; so does a 0 above.
    pub reload_grown_page_after_secs: u32,
}

impl Default for HiddenSettings {
    fn default() -> Self {
        // Long enough that hiding for a moment (a screenshot, a quick look elsewhere) keeps an
        // instant summon and the reading place; short enough that a Perch hidden for the
        // afternoon costs little.
        Self { release_page_after_secs: 180, reload_grown_page_after_secs: 30 }
    }
}

/// What is saved between runs. `bounds` are always the normal-mode bounds, so leaving mini
/// mode returns exactly there; `mini_origin` is where the mini square was dragged to, if moved.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct WindowPlacement {
    pub mode: WindowMode,
    pub bounds: Option<Rect>,
    pub mini_origin: Option<(i32, i32)>,
}

/// First-run bounds: the default size near the top-right of the primary monitor, beside
/// where an editor usually sits.
pub fn default_bounds(primary: Rect) -> Rect {
    let width = DEFAULT_SIZE.min(primary.width);
    let height = DEFAULT_SIZE.min(primary.height);
    let x = (primary.right() - width as i32 - EDGE_MARGIN).max(primary.x);
    let y = (primary.y + EDGE_MARGIN).min(primary.bottom() - height as i32).max(primary.y);
    Rect { x, y, width, height }
}

/// The mini square sits at the top-right corner of the bounds it replaces.
pub fn mini_rect(bounds: Rect) -> Rect {
    Rect { x: bounds.right() - MINI_SIZE as i32, y: bounds.y, width: MINI_SIZE, height: MINI_SIZE }
}

/// Moves (and if needed shrinks) `rect` so it lies wholly on one monitor: the one it overlaps
/// most, or the nearest when it is on none (a monitor was unplugged since it was saved).
/// `min` is the smallest size the window accepts.
pub fn clamp_to_monitors(rect: Rect, monitors: &[Rect], min: (u32, u32)) -> Rect {
    let Some(target) =
        monitors.iter().max_by_key(|m| (rect.overlap_area(m), -rect.center_distance2(m))).copied()
    else {
        return rect;
    };
    let width = rect.width.max(min.0).min(target.width);
    let height = rect.height.max(min.1).min(target.height);
    let x = rect.x.clamp(target.x, target.right() - width as i32);
    let y = rect.y.clamp(target.y, target.bottom() - height as i32);
    Rect { x, y, width, height }
}

/// The normal bounds to use at start: the saved ones clamped to the monitors, or the default.
pub fn initial_bounds(saved: Option<Rect>, monitors: &[Rect], primary: Rect) -> Rect {
    let min = (MIN_WIDTH, MIN_HEIGHT);
    match saved {
        Some(rect) if rect.width > 0 && rect.height > 0 => clamp_to_monitors(rect, monitors, min),
        _ => default_bounds(primary),
    }
}

/// Where the mini square goes at start: where it was dragged, or the corner of the bounds.
pub fn initial_mini_rect(placement: &WindowPlacement, bounds: Rect, monitors: &[Rect]) -> Rect {
    let rect = match placement.mini_origin {
        Some((x, y)) => Rect { x, y, width: MINI_SIZE, height: MINI_SIZE },
        None => mini_rect(bounds),
    };
    clamp_to_monitors(rect, monitors, (MINI_SIZE, MINI_SIZE))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCREEN: Rect = Rect { x: 0, y: 0, width: 1280, height: 800 };
    const RIGHT: Rect = Rect { x: 1280, y: 0, width: 1920, height: 1080 };

    #[test]
    fn mini_sits_at_the_top_right_corner_of_the_bounds() {
        let b = Rect { x: 100, y: 200, width: 450, height: 450 };
        assert_eq!(mini_rect(b), Rect { x: 498, y: 200, width: 52, height: 52 });
    }

    #[test]
    fn default_bounds_fit_near_the_top_right() {
        let b = default_bounds(SCREEN);
        assert_eq!(b, Rect { x: 1280 - 450 - 24, y: 24, width: 450, height: 450 });
        let tiny = Rect { x: 0, y: 0, width: 300, height: 200 };
        let b = default_bounds(tiny);
        assert!(b.width <= 300 && b.height <= 200 && b.x >= 0 && b.y >= 0);
    }

    #[test]
    fn bounds_on_screen_are_kept_as_they_are() {
        let b = Rect { x: 10, y: 20, width: 500, height: 400 };
        assert_eq!(clamp_to_monitors(b, &[SCREEN, RIGHT], (MIN_WIDTH, MIN_HEIGHT)), b);
        let on_right = Rect { x: 2000, y: 100, width: 450, height: 450 };
        assert_eq!(clamp_to_monitors(on_right, &[SCREEN, RIGHT], (MIN_WIDTH, MIN_HEIGHT)), on_right);
    }

    #[test]
    fn bounds_from_an_unplugged_monitor_come_back_on_screen() {
        let gone = Rect { x: 2000, y: 100, width: 450, height: 450 };
        let r = clamp_to_monitors(gone, &[SCREEN], (MIN_WIDTH, MIN_HEIGHT));
        assert_eq!(r, Rect { x: 1280 - 450, y: 100, width: 450, height: 450 });
    }

    #[test]
    fn half_off_screen_is_pulled_in_and_oversize_is_shrunk() {
        let r = clamp_to_monitors(Rect { x: -200, y: 700, width: 450, height: 450 }, &[SCREEN], (320, 360));
        assert_eq!(r, Rect { x: 0, y: 350, width: 450, height: 450 });
        let r = clamp_to_monitors(Rect { x: 0, y: 0, width: 5000, height: 5000 }, &[SCREEN], (320, 360));
        assert_eq!(r, SCREEN);
        let r = clamp_to_monitors(Rect { x: 5, y: 5, width: 10, height: 10 }, &[SCREEN], (320, 360));
        assert_eq!((r.width, r.height), (320, 360));
    }

    #[test]
    fn straddling_two_monitors_lands_on_the_one_with_more_of_it() {
        let r =
            clamp_to_monitors(Rect { x: 1100, y: 0, width: 450, height: 450 }, &[SCREEN, RIGHT], (320, 360));
        assert_eq!(r.x, 1280);
    }

    #[test]
    fn initial_bounds_use_the_default_when_nothing_was_saved() {
        assert_eq!(initial_bounds(None, &[SCREEN], SCREEN), default_bounds(SCREEN));
        let zero = Rect { x: 0, y: 0, width: 0, height: 0 };
        assert_eq!(initial_bounds(Some(zero), &[SCREEN], SCREEN), default_bounds(SCREEN));
    }

    #[test]
    fn mini_keeps_where_it_was_dragged_but_stays_on_screen() {
        let bounds = Rect { x: 100, y: 100, width: 450, height: 450 };
        let p =
            WindowPlacement { mode: WindowMode::Mini, bounds: Some(bounds), mini_origin: Some((1270, 10)) };
        assert_eq!(initial_mini_rect(&p, bounds, &[SCREEN]), Rect { x: 1228, y: 10, width: 52, height: 52 });
        let p = WindowPlacement { mini_origin: None, ..p };
        assert_eq!(initial_mini_rect(&p, bounds, &[SCREEN]), mini_rect(bounds));
    }
}
