//! What a probe of one optional part of the machine answers. Each capability probes its own
//! parts (capture its backends, typing its path, voice its microphone); `perch doctor` and
//! Settings list the answers.

use serde::Serialize;

/// One optional part and whether this machine has it.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct Probe {
    pub name: String,
    pub available: bool,
    pub detail: String,
}

impl Probe {
    /// The part is there; `detail` says which or how.
    pub fn yes(name: &str, detail: impl Into<String>) -> Self {
        Self { name: name.into(), available: true, detail: detail.into() }
    }
    /// The part is missing; `detail` says why, or what to install.
    pub fn no(name: &str, detail: impl Into<String>) -> Self {
        Self { name: name.into(), available: false, detail: detail.into() }
    }
}
