//! Act on the selection: a global shortcut takes the text selected in the focused application
//! (`perch_core::anywhere`) and opens Perch with it as a chip in the composer; an answer can
//! then be typed back in its place, as plain text and never into a terminal or a never-type
//! application (`perch_typing::may_type`), once the window has shown exactly what will be typed.
//! The selection waits here (the page may be unloaded while Perch is hidden) until the window
//! takes it; it is kept in memory only, since a selection may be a password, and nothing is
//! sent anywhere until the user sends a question with it.

use std::sync::{Arc, Mutex};

use perch_core::window_state::WindowMode;
use perch_typing::{self as typing, Replacement, SelectedText};
use serde::Serialize;
use tauri::{AppHandle, Manager};
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
        let never = never_type(&app).await;
        let read = tauri::async_runtime::spawn_blocking(move || typing::take_selection(&never)).await;
        let taken = match read {
            Ok(Ok(selection)) => TakenSelection { selection: Some(selection), problem: None },
            Ok(Err(e)) => {
                TakenSelection { selection: None, problem: Some(crate::error::capitalised(&e.to_string())) }
            }
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

/// The selection the shortcut took, once (the window asks when it hears `SelectionTaken`, and
/// when it loads).
#[tauri::command]
#[specta::specta]
pub fn selection_take(pending: tauri::State<'_, PendingSelection>) -> Option<TakenSelection> {
    pending.0.lock().unwrap_or_else(|p| p.into_inner()).take()
}

/// Settings -> Voice's never-type list (empty when the engine did not start).
async fn never_type(app: &AppHandle) -> Vec<String> {
    match app.state::<crate::state::AppState>().engine() {
        Ok(engine) => engine.settings().get().await.voice.never_type_into,
        Err(_) => Vec::new(),
    }
}

/// What "Replace in <app>" would do with `answer`: the exact plain text, and whether it is
/// typed, pasted, or only put on the clipboard (and why). The window shows it before the user
/// confirms.
#[tauri::command]
#[specta::specta]
pub async fn selection_replacement(
    app: AppHandle,
    selection: SelectedText,
    answer: String,
) -> crate::error::CommandResult<Replacement> {
    let never = never_type(&app).await;
    tauri::async_runtime::spawn_blocking(move || typing::replacement(&selection, &answer, &never))
        .await
        .map_err(|e| crate::error::CommandError::new(crate::error::ErrorKind::External, e.to_string()))
}

/// What "Replace in <app>" did.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Replaced {
    /// Typed or pasted over the selection.
    Typed,
    /// Not typed there (a terminal, the never-type list, the selection gone...): the text is
    /// on the clipboard, and `message` says why and what to do.
    OnClipboard { message: String },
}

/// Types `answer`, as the plain text `selection_replacement` showed, in place of `selection`
/// in its application. Where that is refused or cannot be done, the engine puts the text on
/// the clipboard, and the answer says why and how to paste it.
#[tauri::command]
#[specta::specta]
pub async fn selection_replace(
    app: AppHandle,
    selection: SelectedText,
    answer: String,
) -> crate::error::CommandResult<Replaced> {
    let never = never_type(&app).await;
    let name = if selection.app.is_empty() { "the application".to_owned() } else { selection.app.clone() };
    let done =
        tauri::async_runtime::spawn_blocking(move || typing::replace_selection(&selection, &answer, &never))
            .await;
    let why = match done {
        Ok(Ok(typing::Replaced::Typed(_))) => return Ok(Replaced::Typed),
        Ok(Ok(typing::Replaced::OnClipboard(why))) => why,
        Ok(Err(why)) => {
            return Err(crate::error::CommandError::new(
                crate::error::ErrorKind::External,
                format!(
                    "Perch did not type the text into {name} ({why}), and could not put it on the clipboard either: copy the answer with its Copy button."
                ),
            ));
        }
        Err(e) => {
            return Err(crate::error::CommandError::new(crate::error::ErrorKind::External, e.to_string()));
        }
    };
    tracing::info!(%why, "the answer was not typed over the selection");
    // A terminal pastes with Ctrl+Shift+V (Ctrl+V there is a key for the shell).
    let keys = if matches!(why, typing::TypingError::Terminal(_)) { "Ctrl+Shift+V" } else { "Ctrl+V" };
    Ok(Replaced::OnClipboard {
        message: format!(
            "{}. The text is on the clipboard instead: paste it into {name} yourself with {keys}.",
            crate::error::capitalised(&why.to_string())
        ),
    })
}
