//! Settings -> Permissions: every permission given (tool rules, grants for a conversation,
//! commands always allowed, conversations' folders, sessions), added and revoked in one place.

use perch_core::engine::permissions::{self, Permission, PermissionError};
use perch_core::settings::RuleDecision;
use tauri::State;

use crate::error::{CommandError, CommandResult, ErrorKind};
use crate::state::AppState;

impl From<PermissionError> for CommandError {
    fn from(e: PermissionError) -> Self {
        match e {
            PermissionError::Store(e) => e.into(),
            PermissionError::NotFound(_) => Self::new(ErrorKind::NotFound, e.to_string()),
            _ => Self::new(ErrorKind::Invalid, e.to_string()),
        }
    }
}

#[tauri::command]
#[specta::specta]
pub async fn permissions_list(state: State<'_, AppState>) -> CommandResult<Vec<Permission>> {
    let engine = state.engine()?;
    Ok(permissions::list(engine).await?)
}

/// Revokes one permission by the id the list gave it; returns what was revoked.
#[tauri::command]
#[specta::specta]
pub async fn permissions_revoke(state: State<'_, AppState>, id: String) -> CommandResult<Permission> {
    let engine = state.engine()?;
    Ok(permissions::revoke(engine, &id).await?)
}

/// Adds a tool rule for every conversation (`server:tool`, either part may be `*`).
#[tauri::command]
#[specta::specta]
pub async fn permissions_add_rule(
    state: State<'_, AppState>,
    pattern: String,
    decision: RuleDecision,
) -> CommandResult<Permission> {
    let engine = state.engine()?;
    Ok(permissions::add_rule(engine, &pattern, decision).await?)
}
