//! What the shell keeps in Tauri's managed state.

use std::time::Instant;

use perch_core::Engine;

use crate::error::{CommandError, ErrorKind};

/// The engine, or why it could not start. The window opens either way, so a broken data
/// folder or a too-new database is explained on screen instead of a silent exit.
pub struct AppState {
    pub engine: Result<Engine, String>,
    pub started_at: Instant,
}

impl AppState {
    pub fn engine(&self) -> Result<&Engine, CommandError> {
        self.engine.as_ref().map_err(|reason| CommandError::new(ErrorKind::Unavailable, reason.clone()))
    }
}
