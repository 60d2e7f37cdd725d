//! The shell's side of tools: start the MCP servers with the app, and forward server changes
//! and questions for the user to the window. Questions also bring the window up, since a
//! tool waits on them. Servers start after the first paint, so spawning them (and asking the
//! login shell for its PATH) never competes with the window appearing.

use std::sync::Arc;

use perch_core::Engine;
use tauri::AppHandle;
use tauri_specta::Event;
use tokio::sync::Notify;
use tokio::sync::broadcast::error::RecvError;

use crate::events::{McpChanged, QuestionEvent};
use crate::window;

/// Servers start at the UI's first paint, or after this long if it never comes.
const START_AFTER_AT_MOST: std::time::Duration = std::time::Duration::from_secs(5);

pub fn start(app: &AppHandle, engine: &Engine, first_paint: Arc<Notify>) {
    let mut changes = engine.mcp().subscribe();
    let handle = app.clone();
    tauri::async_runtime::spawn(async move {
        loop {
            match changes.recv().await {
                Ok(event) => {
                    let _ = McpChanged { event }.emit(&handle);
                }
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => break,
            }
        }
    });
    let mut speech = engine.speech().subscribe();
    let handle = app.clone();
    tauri::async_runtime::spawn(async move {
        loop {
            match speech.recv().await {
                Ok(event) => {
                    let _ = crate::events::SpeechUpdate { event }.emit(&handle);
                }
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => break,
            }
        }
    });
    let mut questions = engine.questions().subscribe();
    let handle = app.clone();
    tauri::async_runtime::spawn(async move {
        loop {
            match questions.recv().await {
                Ok(event) => {
                    if matches!(event, perch_core::questions::QuestionChange::Asked(_))
                        && let Err(e) = window::show(&handle)
                    {
                        tracing::warn!(error = %e, "could not show the window for a question");
                    }
                    let _ = QuestionEvent { event }.emit(&handle);
                }
                Err(RecvError::Lagged(_)) => continue,
                Err(RecvError::Closed) => break,
            }
        }
    });
    let engine = engine.clone();
    tauri::async_runtime::spawn(async move {
        let _ = tokio::time::timeout(START_AFTER_AT_MOST, first_paint.notified()).await;
        engine.start_mcp_servers().await;
        engine.knowledge().start();
    });
}
