//! perch-core: the Perch engine. It knows nothing of windows or Tauri; the desktop shell and
//! the `perch` CLI are thin layers over it.

pub mod agent;
pub mod crash;
pub mod diagnostics;
pub mod doctor;
pub mod engine;
pub mod knowledge;
pub mod logs;
pub mod mcp;
pub mod memories;
pub mod notices;
pub mod prices;
pub mod probes;
pub mod read_aloud;
pub mod settings;
pub mod socket_requests;

// The foundation's modules, where the engine's code and its users have always found them.
pub use perch_foundation::{
    autostart, crash_loop, keys, locale, logging, memory, network, owner, paths, shell_path, window_state,
};
pub use perch_portals::{desktop, desktop_shortcuts};
#[cfg(target_os = "linux")]
pub use perch_portals::{portal, shortcut_portal};
pub use perch_tools::questions;
// The parts that became crates of their own, under the names the engine's users know.
pub use {
    perch_capture as capture, perch_files as files, perch_google as google, perch_local as local,
    perch_oauth as oauth, perch_providers as providers, perch_review as review, perch_speech as speech,
    perch_store as store, perch_terminal as terminal, perch_voice as voice,
};

pub use engine::{Engine, StartError};

/// The version of this build, shared by the app, the CLI and the doctor report.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
