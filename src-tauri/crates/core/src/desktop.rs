//! What the desktop draws for the window: whether a compositor runs. Without one (a bare X11
//! window manager such as openbox, or a remote desktop), transparent pixels are black, so the
//! rounded window shows black corners and the round bubble a black square; the UI then draws
//! square corners and an opaque bubble.

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
    use xcb::{Xid, x};
    let (conn, screen) = xcb::Connection::connect(display).ok()?;
    let name = format!("_NET_WM_CM_S{screen}");
    let atom = conn
        .wait_for_reply(conn.send_request(&x::InternAtom { only_if_exists: false, name: name.as_bytes() }))
        .ok()?
        .atom();
    let owner =
        conn.wait_for_reply(conn.send_request(&x::GetSelectionOwner { selection: atom })).ok()?.owner();
    Some(!owner.is_none())
}
