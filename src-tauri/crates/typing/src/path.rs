//! Which way text reaches other applications in this session: the choice is pure (a [`Session`]
//! of facts in, a [`TypingPath`] out), so every branch is tested without a desktop; gathering
//! the facts is [`detect`] (environment and PATH only) and, for the portal, `typing_path` in
//! `mod.rs` (which asks it over D-Bus).
//!
//! The order on Wayland: the RemoteDesktop portal first, because it is the desktop's own,
//! supported way (GNOME and KDE offer it; it types any keysym and asks the user once, remembered
//! with a restore token); then wtype, which needs the compositor's virtual-keyboard protocol
//! (wlroots compositors such as Sway and Hyprland have it; GNOME's Mutter and KDE's KWin do not:
//! atx/wtype#22, #29, #45, #53, where wtype fails with "Compositor does not support the virtual
//! keyboard protocol"); then ydotool, which works on any compositor because it writes to
//! /dev/uinput through its daemon, but types US-layout key codes for ASCII characters only.

use std::path::PathBuf;

/// What is known about this session, as far as typing into other applications goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Session {
    /// An X11 session: `DISPLAY` is set and the session is not Wayland (under Wayland `DISPLAY`
    /// is XWayland's, and XTest would reach only X clients).
    pub x11: bool,
    /// A Wayland session: `WAYLAND_DISPLAY` is set or `XDG_SESSION_TYPE` is `wayland`.
    pub wayland: bool,
    /// The RemoteDesktop portal is on the session bus and lists the keyboard (bit 1) in its
    /// `AvailableDeviceTypes`.
    pub portal_keyboard: bool,
    /// `wtype` is on PATH.
    pub wtype: bool,
    /// The compositor is thought to offer the virtual-keyboard protocol wtype needs: false when
    /// `XDG_CURRENT_DESKTOP` names GNOME or KDE (their compositors do not), true otherwise.
    pub virtual_keyboard: bool,
    /// `ydotool` is on PATH and its daemon's socket accepts a connection ([`ydotool_socket`]).
    pub ydotool: bool,
}

/// How text is typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypingPath {
    XTest,
    Portal,
    Wtype,
    Ydotool,
}

impl TypingPath {
    /// The path as Settings and `perch doctor` name it.
    pub fn label(&self) -> &'static str {
        match self {
            Self::XTest => "X11 (XTest)",
            Self::Portal => "Wayland (the desktop's remote-desktop portal)",
            Self::Wtype => "Wayland (wtype)",
            Self::Ydotool => "Wayland (ydotool)",
        }
    }
}

/// Why a session offers no way to type, saying what to install or enable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NoPath {
    #[error("neither an X11 nor a Wayland session was found (DISPLAY and WAYLAND_DISPLAY are unset)")]
    NoSession,
    /// Wayland without the portal's keyboard, a usable wtype or ydotool.
    #[error(
        "this Wayland desktop offers no remote-desktop portal keyboard{}",
        wayland_advice(*wtype_installed, *virtual_keyboard)
    )]
    Wayland { wtype_installed: bool, virtual_keyboard: bool },
}

fn wayland_advice(wtype_installed: bool, virtual_keyboard: bool) -> &'static str {
    if wtype_installed {
        // Installed but useless here: say so, or the user wonders why it is not used.
        ", wtype cannot work on it (its compositor lacks the virtual-keyboard protocol), and ydotool is not installed with its daemon running: install ydotool and start ydotoold, or update the desktop's portal (xdg-desktop-portal-gnome or -kde) for its remote-desktop keyboard"
    } else if virtual_keyboard {
        ", and neither wtype nor ydotool is installed: install one (wtype on wlroots desktops such as Sway and Hyprland; ydotool with its daemon ydotoold elsewhere)"
    } else {
        ", and ydotool is not installed with its daemon running (wtype cannot work on GNOME or KDE): install ydotool and start ydotoold, or update the desktop's portal (xdg-desktop-portal-gnome or -kde) for its remote-desktop keyboard"
    }
}

/// The way to type in `session`, or why there is none.
pub fn choose(session: &Session) -> Result<TypingPath, NoPath> {
    if session.x11 {
        return Ok(TypingPath::XTest);
    }
    if !session.wayland {
        return Err(NoPath::NoSession);
    }
    if session.portal_keyboard {
        return Ok(TypingPath::Portal);
    }
    let wtype_usable = session.wtype && session.virtual_keyboard;
    if wtype_usable {
        return Ok(TypingPath::Wtype);
    }
    if session.ydotool {
        return Ok(TypingPath::Ydotool);
    }
    Err(NoPath::Wayland { wtype_installed: session.wtype, virtual_keyboard: session.virtual_keyboard })
}

/// The facts that need no D-Bus (blocking, cheap: the environment, PATH, one socket connect).
/// `portal_keyboard` is left false (`typing_path` fills it in), and so are `wtype` and
/// `ydotool` outside Wayland, where they are not looked for.
pub fn detect() -> Session {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let mut session = from_env(env);
    if session.wayland {
        session.wtype = which::which("wtype").is_ok();
        session.ydotool = which::which("ydotool").is_ok() && ydotool_socket().is_some();
    }
    session
}

/// The session kind and the compositor from environment variables (`env` gives a variable's
/// non-empty value).
fn from_env(env: impl Fn(&str) -> Option<String>) -> Session {
    let wayland = env("WAYLAND_DISPLAY").is_some() || env("XDG_SESSION_TYPE").is_some_and(|t| t == "wayland");
    let x11 = env("DISPLAY").is_some() && !wayland;
    // A colon-separated list, such as "ubuntu:GNOME" or "KDE".
    let desktops = env("XDG_CURRENT_DESKTOP").unwrap_or_default().to_ascii_lowercase();
    let no_virtual_keyboard = desktops.split(':').any(|d| matches!(d, "gnome" | "kde"));
    Session { x11, wayland, virtual_keyboard: !no_virtual_keyboard, ..Session::default() }
}

/// Where ydotool's daemon listens, if something accepts connections there. The ydotool 1.x
/// client connects to `$YDOTOOL_SOCKET`, else `$XDG_RUNTIME_DIR/.ydotool_socket`, else
/// `/tmp/.ydotool_socket`; but the daemon, often started as root by systemd without
/// `XDG_RUNTIME_DIR`, listens at `/tmp/.ydotool_socket`. So every place is tried, and the one
/// found is passed to the client in `YDOTOOL_SOCKET`.
pub fn ydotool_socket() -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(p) = std::env::var_os("YDOTOOL_SOCKET").filter(|p| !p.is_empty()) {
        candidates.push(PathBuf::from(p));
    }
    if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR").filter(|p| !p.is_empty()) {
        candidates.push(PathBuf::from(dir).join(".ydotool_socket"));
    }
    candidates.push(PathBuf::from("/tmp/.ydotool_socket"));
    candidates.into_iter().find(|p| accepts(p))
}

/// Whether a Unix socket at `path` takes a connection: datagram for ydotoold 1.x, stream for
/// 0.1.x. Connecting sends nothing, so the daemon types nothing.
#[cfg(unix)]
fn accepts(path: &std::path::Path) -> bool {
    use std::os::unix::net::{UnixDatagram, UnixStream};
    UnixDatagram::unbound().is_ok_and(|s| s.connect(path).is_ok()) || UnixStream::connect(path).is_ok()
}

#[cfg(not(unix))]
fn accepts(_path: &std::path::Path) -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wayland() -> Session {
        Session { wayland: true, virtual_keyboard: true, ..Session::default() }
    }

    #[test]
    fn x11_types_through_xtest_whatever_else_is_installed() {
        let s = Session { x11: true, wtype: true, ydotool: true, ..Session::default() };
        assert_eq!(choose(&s), Ok(TypingPath::XTest));
        assert_eq!(TypingPath::XTest.label(), "X11 (XTest)");
    }

    #[test]
    fn wayland_prefers_the_portal_then_wtype_then_ydotool() {
        let all = Session { portal_keyboard: true, wtype: true, ydotool: true, ..wayland() };
        assert_eq!(choose(&all), Ok(TypingPath::Portal));
        let no_portal = Session { portal_keyboard: false, ..all };
        assert_eq!(choose(&no_portal), Ok(TypingPath::Wtype));
        let ydotool_only = Session { wtype: false, ..no_portal };
        assert_eq!(choose(&ydotool_only), Ok(TypingPath::Ydotool));
        assert_eq!(TypingPath::Portal.label(), "Wayland (the desktop's remote-desktop portal)");
        assert_eq!(TypingPath::Wtype.label(), "Wayland (wtype)");
        assert_eq!(TypingPath::Ydotool.label(), "Wayland (ydotool)");
    }

    #[test]
    fn wtype_is_passed_over_where_the_compositor_lacks_the_virtual_keyboard() {
        let gnome = Session { wtype: true, ydotool: true, virtual_keyboard: false, ..wayland() };
        assert_eq!(choose(&gnome), Ok(TypingPath::Ydotool));
        let only_wtype = Session { ydotool: false, ..gnome };
        let reason = choose(&only_wtype).unwrap_err().to_string();
        assert!(reason.contains("wtype cannot work on it"), "{reason}");
        assert!(reason.contains("install ydotool and start ydotoold"), "{reason}");
    }

    #[test]
    fn nothing_to_type_with_says_what_to_install() {
        let reason = choose(&wayland()).unwrap_err().to_string();
        assert!(
            reason.starts_with("this Wayland desktop offers no remote-desktop portal keyboard"),
            "{reason}"
        );
        assert!(reason.contains("neither wtype nor ydotool is installed"), "{reason}");
        assert!(reason.contains("wtype on wlroots desktops such as Sway"), "{reason}");
        let gnome = Session { virtual_keyboard: false, ..wayland() };
        let reason = choose(&gnome).unwrap_err().to_string();
        assert!(reason.contains("wtype cannot work on GNOME or KDE"), "{reason}");
        assert!(reason.contains("xdg-desktop-portal-gnome"), "{reason}");
    }

    #[test]
    fn no_display_at_all_is_its_own_reason() {
        let reason = choose(&Session { wtype: true, ..Session::default() }).unwrap_err().to_string();
        assert!(reason.contains("neither an X11 nor a Wayland session"), "{reason}");
    }

    #[test]
    fn the_session_kind_and_compositor_come_from_the_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| pairs.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
        };
        let x = from_env(env(&[("DISPLAY", ":0"), ("XDG_SESSION_TYPE", "x11")]));
        assert!(x.x11 && !x.wayland);
        // XWayland's DISPLAY does not make a Wayland session X11.
        let gnome = from_env(env(&[
            ("DISPLAY", ":0"),
            ("WAYLAND_DISPLAY", "wayland-0"),
            ("XDG_CURRENT_DESKTOP", "ubuntu:GNOME"),
        ]));
        assert!(gnome.wayland && !gnome.x11 && !gnome.virtual_keyboard);
        let kde = from_env(env(&[("XDG_SESSION_TYPE", "wayland"), ("XDG_CURRENT_DESKTOP", "KDE")]));
        assert!(kde.wayland && !kde.virtual_keyboard);
        let sway = from_env(env(&[("WAYLAND_DISPLAY", "wayland-1"), ("XDG_CURRENT_DESKTOP", "sway")]));
        assert!(sway.wayland && sway.virtual_keyboard);
        assert_eq!(from_env(env(&[])), Session { virtual_keyboard: true, ..Session::default() });
    }
}
