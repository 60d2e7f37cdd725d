//! perch-test-support: what the tests of several crates share, none of it Perch's own code.
//! A private X server (`xvfb`), waiting by polling (`poll`), every log line of a test binary
//! (`logs`), and fake XDG desktop portals on a real private D-Bus daemon that keep the
//! documented rules: GlobalShortcuts (`portal`), RemoteDesktop (`remote_desktop`) and
//! Screenshot (`screenshot`); the sandbox launcher built and probed (`sandbox`). Only ever a
//! dev-dependency.

pub mod logs;
pub mod poll;
pub mod portal;
pub mod remote_desktop;
pub mod sandbox;
pub mod screenshot;
pub mod xvfb;
