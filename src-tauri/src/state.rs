//! What the shell keeps in Tauri's managed state.

use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

use perch_core::review::server::ServerError;
use perch_core::{Engine, StartError};

use crate::error::CommandError;

/// The engine, or why it could not start. The window opens either way, so a broken data
/// folder or a too-new database is explained on screen instead of a silent exit.
pub struct AppState {
    pub engine: Result<Engine, StartError>,
    pub started_at: Instant,
    pub review_socket: Mutex<ReviewSocketStatus>,
    /// Signalled at the UI's first paint; MCP servers start after it, so they never slow it.
    pub first_paint: std::sync::Arc<tokio::sync::Notify>,
}

impl AppState {
    pub fn new(engine: Result<Engine, StartError>, started_at: Instant) -> Self {
        Self { engine, started_at, review_socket: Mutex::default(), first_paint: Default::default() }
    }

    pub fn engine(&self) -> Result<&Engine, CommandError> {
        self.engine.as_ref().map_err(CommandError::from)
    }

    /// Records the outcome of starting (or stopping) the review socket, for Settings.
    pub fn set_review_socket(&self, outcome: Result<Option<PathBuf>, ServerError>) {
        let status = match outcome {
            Ok(path) => ReviewSocketStatus { path: path.map(|p| p.display().to_string()), error: None },
            Err(e) => {
                tracing::warn!(error = %e, "the review socket is not running");
                ReviewSocketStatus { path: None, error: Some(e.to_string()) }
            }
        };
        *self.review_socket.lock().unwrap_or_else(|p| p.into_inner()) = status;
    }
}

/// Whether the review socket runs, where, and why not.
#[derive(Debug, Clone, Default, serde::Serialize, specta::Type)]
pub struct ReviewSocketStatus {
    pub path: Option<String>,
    pub error: Option<String>,
}
