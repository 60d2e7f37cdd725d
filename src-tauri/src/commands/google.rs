//! Settings -> Connections -> Google: the user's OAuth client, connecting (Google's page in the
//! browser), the status, disconnecting. Tokens never cross to the UI.

use perch_core::google::{GoogleClient, GoogleStatus, Service};
use tauri::State;

use crate::error::CommandResult;
use crate::state::AppState;

#[tauri::command]
#[specta::specta]
pub async fn google_status(state: State<'_, AppState>) -> CommandResult<GoogleStatus> {
    Ok(state.engine()?.google_status().await?)
}

/// Keeps the user's client, typed in (`client_secret` may be left out) or as the text of the
/// `client_secret.json` Google gives (`file`).
#[tauri::command]
#[specta::specta]
pub async fn google_set_client(
    state: State<'_, AppState>,
    client_id: Option<String>,
    client_secret: Option<String>,
    file: Option<String>,
) -> CommandResult<GoogleStatus> {
    let engine = state.engine()?;
    let strict = engine.google().strict();
    let client = match file {
        Some(text) => GoogleClient::from_file(&text, strict)?,
        None => {
            GoogleClient::new(client_id.as_deref().unwrap_or_default(), client_secret.as_deref(), strict)?
        }
    };
    Ok(engine.google().set_client(&client).await?)
}

/// Connects (or adds services); returns when Google's page came back, or failed.
#[tauri::command]
#[specta::specta]
pub async fn google_connect(
    state: State<'_, AppState>,
    services: Vec<Service>,
) -> CommandResult<GoogleStatus> {
    let engine = state.engine()?;
    let open = Box::new(|page: &str| {
        // Where no browser opens, the card offers the address to copy.
        if let Err(e) = perch_core::oauth::browser::open(page) {
            tracing::warn!(error = %e, "could not open Google's page in a browser");
        }
    });
    Ok(engine.google_connect(&services, open).await?)
}

/// Stops waiting for Google's page.
#[tauri::command]
#[specta::specta]
pub fn google_cancel_connect(state: State<'_, AppState>) -> CommandResult<()> {
    state.engine()?.google_cancel_connect();
    Ok(())
}

/// Revokes at Google and forgets the connection (and the client, with `forget_client`). True
/// when Google was told.
#[tauri::command]
#[specta::specta]
pub async fn google_disconnect(state: State<'_, AppState>, forget_client: bool) -> CommandResult<bool> {
    Ok(state.engine()?.google_disconnect(forget_client).await?)
}
