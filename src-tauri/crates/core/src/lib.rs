//! perch-core: the Perch engine. It knows nothing of windows or Tauri; the desktop shell and
//! the `perch` CLI are thin layers over it.

pub mod agent;
pub mod anywhere;
pub mod capture;
pub mod crash;
pub mod crash_loop;
pub mod desktop;
pub mod desktop_shortcuts;
pub mod diagnostics;
pub mod doctor;
pub mod engine;
pub mod files;
pub mod google;
pub mod keys;
pub mod local;
pub mod locale;
pub mod logging;
pub mod logs;
pub mod mcp;
pub mod network;
pub mod oauth;
pub mod owner;
pub mod paths;
pub mod permissions;
#[cfg(target_os = "linux")]
pub mod portal;
pub mod prices;
pub mod probes;
pub mod providers;
pub mod questions;
pub mod review;
pub mod settings;
pub mod shell_path;
#[cfg(target_os = "linux")]
pub mod shortcut_portal;
pub mod socket_requests;
pub mod store;
pub mod terminal;
pub mod voice;
pub mod window_state;

pub use engine::{Engine, StartError};

/// The version of this build, shared by the app, the CLI and the doctor report.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
