//! Act on the selection: a global shortcut takes the text selected in the focused application
//! (`perch_core::anywhere`) and opens Perch with it as a chip in the composer; an answer can
//! then be typed back in its place. The selection waits here (the page may be unloaded while
//! Perch is hidden) until the window takes it; it is kept in memory only, since a selection may
//! be a password, and nothing is sent anywhere until the user sends a question with it.

use std::sync::{Arc, Mutex};

use perch_core::anywhere::{self, SelectedText};
use perch_core::window_state::WindowMode;
use serde::Serialize;
use tauri::{AppHandle, Manager};
use tauri_plugin_clipboard_manager::ClipboardExt;
use tauri_specta::Event;

use crate::events::SelectionTaken;
use crate::shortcuts::{Phase, ShortcutStatus, Shortcuts};

/// What the shortcut took, waiting for the window.
#[derive(Default)]
pub struct PendingSelection(Mutex<Option<TakenSelection>>);

/// A taken selection, or why there is none (no text selected, binary data, too large...).
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct TakenSelection {
    pub selection: Option<SelectedText>,
    pub problem: Option<String>,
}

/// Binds the selection shortcut; returns how it went.
pub fn bind(app: &AppHandle, accelerator: &str) -> ShortcutStatus {
    let action: crate::shortcuts::Action = Arc::new(|app, phase| {
        if phase == Phase::Pressed {
            take(app);
        }
    });
    app.state::<Shortcuts>().bind(app, "selection", accelerator, action)
}

/// Takes the focused application's selection (before Perch comes forward and takes the focus),
/// then shows Perch with it.
pub fn take(app: &AppHandle) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        // Where Perch never types, it never presses Ctrl+C to find a selection either.
        let never = match app.state::<crate::state::AppState>().engine() {
            Ok(engine) => engine.settings().get().await.voice.never_type_into,
            Err(_) => Vec::new(),
        };
        let read = tauri::async_runtime::spawn_blocking(move || anywhere::take_selection(&never)).await;
        let taken = match read {
            Ok(Ok(selection)) => TakenSelection { selection: Some(selection), problem: None },
            Ok(Err(e)) => TakenSelection { selection: None, problem: Some(capitalised(&e.to_string())) },
            Err(e) => TakenSelection {
                selection: None,
                problem: Some(format!("Reading the selection failed: {e}")),
            },
        };
        if let Some(problem) = &taken.problem {
            tracing::info!(%problem, "no selection taken");
        }
        *app.state::<PendingSelection>().0.lock().unwrap_or_else(|p| p.into_inner()) = Some(taken);
        let shown =
            crate::window::set_mode(&app, WindowMode::Normal).and_then(|()| crate::window::show(&app));
        if let Err(e) = shown {
            tracing::warn!(error = %e, "could not show Perch for the selection");
        }
        let _ = SelectionTaken {}.emit(&app);
    });
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// The selection the shortcut took, once (the window asks when it hears `SelectionTaken`, and
/// when it loads).
#[tauri::command]
#[specta::specta]
pub fn selection_take(pending: tauri::State<'_, PendingSelection>) -> Option<TakenSelection> {
    pending.0.lock().unwrap_or_else(|p| p.into_inner()).take()
}

/// Types `text` in place of `selection` in its application. When that cannot be done (the
/// window is gone, its selection is no longer there), the text goes on the clipboard and the
/// error says so.
#[tauri::command]
#[specta::specta]
pub async fn selection_replace(
    app: AppHandle,
    selection: SelectedText,
    text: String,
) -> crate::error::CommandResult<()> {
    let typed = {
        let text = text.clone();
        tauri::async_runtime::spawn_blocking(move || anywhere::replace_selection(&selection, &text)).await
    };
    let why = match typed {
        Ok(Ok(_)) => return Ok(()),
        Ok(Err(e)) => e.to_string(),
        Err(e) => e.to_string(),
    };
    let next = if app.clipboard().write_text(text).is_ok() {
        "the text is on the clipboard: paste it with Ctrl+V"
    } else {
        "copy the answer instead"
    };
    Err(crate::error::CommandError::new(
        crate::error::ErrorKind::External,
        format!("Perch could not type the text there ({why}); {next}."),
    ))
}
