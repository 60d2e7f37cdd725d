//! Settings' offer, on GNOME, to add a shortcut the desktop did not bind to GNOME's own custom
//! shortcuts, running the `perch` command that does the same (perch_core's
//! `desktop_shortcuts::gnome`), and to take it out again. Each asks gsettings, a child process,
//! away from the main thread.

use perch_core::desktop_shortcuts::gnome::{self, GnomeShortcut, GnomeShortcutError, Gsettings};
use perch_core::desktop_shortcuts::{Desktop, readable};
use serde::Serialize;
use tauri::State;

use crate::error::{CommandError, CommandResult, ErrorKind};
use crate::shortcuts::Shortcuts;

/// A shortcut's custom shortcut in GNOME: the one Perch would add, and the one it added.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct DesktopShortcut {
    /// The shortcut's name ("screenshot").
    pub name: String,
    /// Its keys as a person reads them ("Alt+.").
    pub keys: String,
    /// What Perch adds for it now.
    pub offer: GnomeShortcut,
    /// What GNOME has at Perch's entry for it, if anything.
    pub added: Option<GnomeShortcut>,
    /// The keys of `added`, as a person reads them.
    pub added_keys: Option<String>,
}

enum Change {
    None,
    Add,
    Remove,
}

/// What Settings offers for the shortcut `name`: nothing unless the desktop is GNOME, the
/// shortcut has keys and a `perch` command, and GNOME's settings can be written; and then
/// only where the desktop did not bind it, or Perch added it before.
#[tauri::command]
#[specta::specta]
pub async fn desktop_shortcut(
    shortcuts: State<'_, Shortcuts>,
    name: String,
) -> CommandResult<Option<DesktopShortcut>> {
    let (accelerator, active) = configured(&shortcuts, &name);
    blocking(move || change(&name, &accelerator, active, Change::None)).await
}

/// Adds (or updates) Perch's custom shortcut in GNOME for `name`, after the user's yes.
#[tauri::command]
#[specta::specta]
pub async fn desktop_shortcut_add(
    shortcuts: State<'_, Shortcuts>,
    name: String,
) -> CommandResult<Option<DesktopShortcut>> {
    let (accelerator, active) = configured(&shortcuts, &name);
    blocking(move || change(&name, &accelerator, active, Change::Add)).await
}

/// Removes Perch's custom shortcut in GNOME for `name`.
#[tauri::command]
#[specta::specta]
pub async fn desktop_shortcut_remove(
    shortcuts: State<'_, Shortcuts>,
    name: String,
) -> CommandResult<Option<DesktopShortcut>> {
    let (accelerator, active) = configured(&shortcuts, &name);
    blocking(move || change(&name, &accelerator, active, Change::Remove)).await
}

/// The keys configured for `name` and whether the desktop bound them.
fn configured(shortcuts: &Shortcuts, name: &str) -> (String, bool) {
    shortcuts
        .statuses()
        .into_iter()
        .find(|s| s.name == name)
        .map(|s| (s.accelerator, s.active))
        .unwrap_or_default()
}

fn change(
    name: &str,
    accelerator: &str,
    active: bool,
    change: Change,
) -> Result<Option<DesktopShortcut>, GnomeShortcutError> {
    if Desktop::current() != Desktop::Gnome
        || accelerator.is_empty()
        || perch_core::desktop_shortcuts::command_for(name).is_none()
    {
        return Ok(None);
    }
    let gsettings = match (Gsettings::find(), &change) {
        (Ok(g), _) => g,
        // Nothing to offer where GNOME's settings cannot be written; Settings keeps its hint.
        (Err(e), Change::None) => {
            tracing::info!(reason = %e, "no GNOME custom shortcut offered");
            return Ok(None);
        }
        (Err(e), _) => return Err(e),
    };
    let offer = gnome::perch_shortcut(name, accelerator, &gnome::installed_cli()?)?;
    match change {
        Change::None => {}
        Change::Add => {
            gsettings.write(name, &offer)?;
            tracing::info!(name, binding = %offer.binding, command = %offer.command, "added a GNOME custom shortcut");
        }
        Change::Remove => {
            gsettings.remove(name)?;
            tracing::info!(name, "removed Perch's GNOME custom shortcut");
        }
    }
    let added = gsettings.read(name)?;
    if active && added.is_none() {
        return Ok(None);
    }
    Ok(Some(DesktopShortcut {
        name: name.to_owned(),
        keys: readable(accelerator),
        added_keys: added.as_ref().map(|a| gnome::readable_binding(&a.binding)),
        offer,
        added,
    }))
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, GnomeShortcutError> + Send + 'static,
) -> CommandResult<T> {
    tauri::async_runtime::spawn_blocking(work)
        .await
        .map_err(|e| CommandError::new(ErrorKind::External, e.to_string()))?
        .map_err(|e| CommandError::new(ErrorKind::External, e.to_string()))
}
