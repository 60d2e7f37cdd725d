//! A tool card's app (MCP Apps): open it, relay its requests to its own server, close it. The
//! frame itself never calls these: the page's bridge (`ui/src/lib/mcpApps`) does, after checking
//! each message; these commands check again against the session.

use perch_core::engine::app_calls::AppOpen;
use perch_core::mcp::apps::sessions::AppError;
use perch_core::store::tool_calls::ToolCallRecord;
use serde::Serialize;
use serde_json::Value;
use tauri::{AppHandle, State};

use crate::error::CommandResult;
use crate::state::AppState;

/// An opened app and the address its frame loads (once).
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct OpenedApp {
    pub app: AppOpen,
    pub url: String,
    /// Perch's version, for the app's `hostInfo`.
    pub host_version: String,
}

#[tauri::command]
#[specta::specta]
pub async fn mcp_app_open(
    app: AppHandle,
    state: State<'_, AppState>,
    call_id: String,
) -> CommandResult<Result<OpenedApp, AppError>> {
    let engine = state.engine()?;
    if let Err(e) = crate::speculation::apps_contained() {
        return Ok(Err(AppError::refused(e.to_string())));
    }
    let opened = engine.open_app(&call_id).await;
    if let Ok(opened) = &opened {
        crate::window::apps::watch_memory(&app, &opened.session);
    }
    let host_version = app.package_info().version.to_string();
    Ok(opened.map(|app| OpenedApp { url: crate::window::apps::frame_url(&app.token), app, host_version }))
}

/// One request from an app; its answer or its JSON-RPC error.
#[tauri::command]
#[specta::specta]
pub async fn mcp_app_request(
    state: State<'_, AppState>,
    session: String,
    method: String,
    params: Value,
) -> CommandResult<Result<Value, AppError>> {
    Ok(state.engine()?.app_request(&session, &method, params).await)
}

#[tauri::command]
#[specta::specta]
pub fn mcp_app_close(state: State<'_, AppState>, session: String) -> CommandResult<()> {
    state.engine()?.close_app(&session);
    Ok(())
}

/// What the app in one tool card has called, as saved (the card lists it).
#[tauri::command]
#[specta::specta]
pub async fn mcp_app_calls(
    state: State<'_, AppState>,
    call_id: String,
) -> CommandResult<Result<Vec<ToolCallRecord>, AppError>> {
    Ok(state.engine()?.app_calls(&call_id).await)
}
