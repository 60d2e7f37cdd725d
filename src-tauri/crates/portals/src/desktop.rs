//! What the desktop offers the window. A compositor: without one (a bare X11 window manager
//! such as openbox, or a remote desktop), transparent pixels are black, so the rounded window
//! shows black corners and the round bubble a black square; the UI then draws square corners
//! and an opaque bubble. A system tray: without one, "Close to tray" would hide Perch where
//! nobody can reach it; the UI closes to the bubble instead. Always on top: only X11 lets an
//! application keep its own window above the others; on Wayland Settings says how the
//! desktop's own way does it.

use crate::desktop_shortcuts::Desktop;

/// What the window can count on here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, specta::Type)]
pub struct DesktopStatus {
    /// Windows are composited: transparency is drawn, not black.
    pub composited: bool,
    /// Tray icons are shown, so Close can hide Perch into one.
    pub tray: bool,
    /// Whether the window is kept above the others, or how the desktop does it.
    pub on_top: OnTop,
}

/// Whether Perch's window stays above the others here, and where not, the desktop's own way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum OnTop {
    /// X11 (and the other systems): the window keeps itself on top.
    Kept,
    /// GNOME on Wayland lets no application do it: the window menu (Alt+Space) has Always on
    /// Top.
    GnomeWindowMenu,
    /// sway: floating windows are above tiled ones; README's `for_window` rule floats Perch.
    SwayRule,
    /// KDE Plasma on Wayland: the window menu (Alt+F3) has More Actions -> Keep Above Others.
    KdeWindowMenu,
    /// Another Wayland desktop decides, perhaps through its own window menu.
    DesktopDecides,
}

/// Whether the window can keep itself on top on `desktop`: only when it is not a Wayland
/// window (`wayland`: GTK draws it through Wayland), as Wayland gives that to the compositor.
pub fn on_top(desktop: Desktop, wayland: bool) -> OnTop {
    if !wayland {
        return OnTop::Kept;
    }
    match desktop {
        Desktop::Gnome => OnTop::GnomeWindowMenu,
        Desktop::Sway => OnTop::SwayRule,
        Desktop::Kde => OnTop::KdeWindowMenu,
        Desktop::Other => OnTop::DesktopDecides,
    }
}

/// Whether GTK draws Perch's windows through Wayland: a Wayland display is there, and
/// `GDK_BACKEND` does not send GTK to XWayland.
pub fn wayland_window() -> bool {
    cfg!(target_os = "linux")
        && std::env::var_os("WAYLAND_DISPLAY").is_some_and(|v| !v.is_empty())
        && !std::env::var("GDK_BACKEND").is_ok_and(|b| b.trim_start().starts_with("x11"))
}

/// Asks the display and the session bus; never on the way to the window's first paint (the
/// bus may be slow to answer, or not at all).
pub async fn status() -> DesktopStatus {
    DesktopStatus {
        composited: composited(None),
        tray: has_tray().await,
        on_top: on_top(Desktop::current(), wayland_window()),
    }
}

/// Whether windows are composited on the display named by `DISPLAY` (or `display`): the X11
/// compositing manager owns the `_NET_WM_CM_S<screen>` selection. A Wayland session always
/// composites; where nothing can be asked (no display, another platform), `true`, so nothing
/// changes on a desktop that cannot be read.
pub fn composited(display: Option<&str>) -> bool {
    #[cfg(target_os = "linux")]
    {
        if display.is_none() && std::env::var_os("DISPLAY").is_none() {
            return true;
        }
        x11_composited(display).unwrap_or(true)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = display;
        true
    }
}

#[cfg(target_os = "linux")]
fn x11_composited(display: Option<&str>) -> Option<bool> {
    selection_owned(display, "_NET_WM_CM_S")
}

/// Whether a client owns the selection `<prefix><screen>` on `display`.
#[cfg(target_os = "linux")]
fn selection_owned(display: Option<&str>, prefix: &str) -> Option<bool> {
    use xcb::{Xid, x};
    let (conn, screen) = xcb::Connection::connect(display).ok()?;
    let name = format!("{prefix}{screen}");
    let atom = conn
        .wait_for_reply(conn.send_request(&x::InternAtom { only_if_exists: false, name: name.as_bytes() }))
        .ok()?
        .atom();
    let owner =
        conn.wait_for_reply(conn.send_request(&x::GetSelectionOwner { selection: atom })).ok()?.owner();
    Some(!owner.is_none())
}

/// Whether the desktop shows tray icons: an X11 tray manager owns `_NET_SYSTEM_TRAY_S<screen>`,
/// or a StatusNotifier host watches on the session bus (GNOME's AppIndicator extension, KDE,
/// waybar). Where neither can be asked (not Linux), `true`.
pub async fn has_tray() -> bool {
    #[cfg(target_os = "linux")]
    {
        let x11 = tray_on_x11(None);
        if x11 == Some(true) {
            return true;
        }
        match status_notifier_watched().await {
            Some(watched) => watched,
            // No session bus: X11's answer, or (nothing could be asked) keep the tray.
            None => x11.unwrap_or(true),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        true
    }
}

/// Whether an X11 tray manager runs on `display` (`None`: DISPLAY); `None` when there is no X
/// server to ask.
#[cfg(target_os = "linux")]
pub fn tray_on_x11(display: Option<&str>) -> Option<bool> {
    if display.is_none() && std::env::var_os("DISPLAY").is_none() {
        return None;
    }
    selection_owned(display, "_NET_SYSTEM_TRAY_S")
}

#[cfg(target_os = "linux")]
async fn status_notifier_watched() -> Option<bool> {
    let bus = zbus::Connection::session().await.ok()?;
    let dbus = zbus::fdo::DBusProxy::new(&bus).await.ok()?;
    let name = zbus::names::BusName::try_from("org.kde.StatusNotifierWatcher").ok()?;
    dbus.name_has_owner(name).await.ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_window_outside_wayland_keeps_itself_on_top() {
        assert_eq!(on_top(Desktop::Gnome, false), OnTop::Kept);
        assert_eq!(on_top(Desktop::Other, false), OnTop::Kept);
        assert_eq!(on_top(Desktop::Gnome, true), OnTop::GnomeWindowMenu);
        assert_eq!(on_top(Desktop::Sway, true), OnTop::SwayRule);
        assert_eq!(on_top(Desktop::Kde, true), OnTop::KdeWindowMenu);
        assert_eq!(on_top(Desktop::Other, true), OnTop::DesktopDecides);
    }
}
