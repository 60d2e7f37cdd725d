//! The notices shown once at start: a damaged history replaced, a crash report, a broken MCP
//! servers file. The crash reports are found by `crash`; the engine gathers the rest.

use serde::Serialize;

/// What happened at start that a person should hear about.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct StartupNotice {
    pub title: String,
    pub detail: String,
    /// The Settings section that shows more (`Logs` for a crash report), if any.
    pub section: Option<String>,
}
