//! What every XDG desktop portal call of Perch's shares (GlobalShortcuts, RemoteDesktop,
//! Screenshot): the Request/Response exchange ([`request`]) and the Request and Session
//! interfaces, as documented in <https://flatpak.github.io/xdg-desktop-portal/docs/>. Each
//! portal's module turns the answers into its own errors, in words about what it does.

pub mod request;

use std::collections::HashMap;

use zbus::proxy;
use zbus::zvariant::OwnedValue;

/// Why a portal call got no answer.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("there is no D-Bus session bus ({0})")]
    NoBus(String),
    /// The portal, or the method, is not there.
    #[error("{0}")]
    NoPortal(String),
    #[error("{0}")]
    Protocol(String),
    #[error(transparent)]
    Bus(#[from] zbus::Error),
}

/// A Request's `Response`: its code and results.
#[derive(Debug)]
pub enum Answer {
    /// 0: the results.
    Success(HashMap<String, OwnedValue>),
    /// 1: the user cancelled, or the desktop declined on the user's behalf.
    Cancelled,
    /// 2: the interaction ended some other way (the backend failed).
    Ended,
}

#[proxy(interface = "org.freedesktop.portal.Request", default_service = "org.freedesktop.portal.Desktop")]
pub trait Request {
    #[zbus(signal)]
    fn response(&self, response: u32, results: HashMap<String, OwnedValue>) -> zbus::Result<()>;
}

#[proxy(interface = "org.freedesktop.portal.Session", default_service = "org.freedesktop.portal.Desktop")]
pub trait Session {
    fn close(&self) -> zbus::Result<()>;

    #[zbus(signal)]
    fn closed(&self, details: HashMap<String, OwnedValue>) -> zbus::Result<()>;
}
