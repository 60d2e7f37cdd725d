//! What the desktop offers the window. A compositor: without one (a bare X11 window manager
//! such as openbox, or a remote desktop), transparent pixels are black, so the rounded window
//! shows black corners and the round bubble a black square; the UI then draws square corners
//! and an opaque bubble. A system tray: without one, "Close to tray" would hide Perch where
//! nobody can reach it; the UI closes to the bubble instead.

/// What the window can count on here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, specta::Type)]
pub struct DesktopStatus {
    /// Windows are composited: transparency is drawn, not black.
    pub composited: bool,
    /// Tray icons are shown, so Close can hide Perch into one.
    pub tray: bool,
}

/// Asks the display and the session bus; never on the way to the window's first paint (the
/// bus may be slow to answer, or not at all).
pub async fn status() -> DesktopStatus {
    DesktopStatus { composited: composited(None), tray: has_tray().await }
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
