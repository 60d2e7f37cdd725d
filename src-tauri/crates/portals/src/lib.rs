//! perch-portals: talking to the desktop Perch runs on. The XDG desktop portal's request and
//! session exchange (`portal`), global shortcuts and the remote-desktop keyboard through it
//! (`shortcut_portal`), the desktop's own keyboard shortcuts where no portal binds keys
//! (`desktop_shortcuts`), and what the desktop offers the window: a compositor, a tray, always
//! on top (`desktop`).
//!
//! Capabilities that need a portal (capture's Screenshot, typing's RemoteDesktop) build on
//! `portal`; nothing here knows them.

pub mod desktop;
pub mod desktop_shortcuts;
#[cfg(target_os = "linux")]
pub mod portal;
#[cfg(target_os = "linux")]
pub mod shortcut_portal;
