//! Global shortcuts as a small registry of named actions ("screenshot", "screenshot_window",
//! and whatever else binds here, such as push-to-talk): each name has one accelerator and one
//! action that hears both the press and the release. Binding reports what happened, so
//! Settings can say "another application holds Alt+." or "Wayland ignores global shortcuts"
//! instead of failing silently.

use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use tauri::{AppHandle, Manager};
use tauri_plugin_global_shortcut::{GlobalShortcutExt, Shortcut, ShortcutState};

/// Which way a key went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    Pressed,
    Released,
}

pub type Action = Arc<dyn Fn(&AppHandle, Phase) + Send + Sync>;

/// A binding as Settings shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct ShortcutStatus {
    /// The action's name.
    pub name: String,
    /// As configured ("Alt+Period"); empty when turned off.
    pub accelerator: String,
    /// True when the shortcut works system-wide.
    pub active: bool,
    /// What stops it, in words a user can act on.
    pub problem: Option<String>,
}

struct Binding {
    accelerator: String,
    shortcut: Option<Shortcut>,
    action: Action,
    problem: Option<String>,
}

#[derive(Default)]
pub struct Shortcuts {
    bindings: Mutex<BTreeMap<String, Binding>>,
}

fn lock(shortcuts: &Shortcuts) -> std::sync::MutexGuard<'_, BTreeMap<String, Binding>> {
    shortcuts.bindings.lock().unwrap_or_else(|p| p.into_inner())
}

/// Why global shortcuts cannot work in this session at all, if they cannot.
fn session_problem() -> Option<String> {
    let wayland = std::env::var_os("WAYLAND_DISPLAY").is_some_and(|v| !v.is_empty())
        || std::env::var("XDG_SESSION_TYPE").is_ok_and(|t| t == "wayland");
    (cfg!(target_os = "linux") && wayland).then(|| {
        let portal = if perch_core::probes::global_shortcuts_portal().available {
            "Your desktop offers the GlobalShortcuts portal, which Perch does not use yet: bind `perch screenshot` (or `perch toggle`) to a key in your desktop's keyboard settings."
        } else {
            "Bind `perch screenshot` (or `perch toggle`) to a key in your desktop's keyboard settings instead."
        };
        format!("Wayland does not let applications grab keys for the whole desktop; this shortcut works only while Perch has focus. {portal}")
    })
}

impl Shortcuts {
    /// Binds `name` to `accelerator` (empty: unbinds it), replacing the name's earlier binding.
    pub fn bind(&self, app: &AppHandle, name: &str, accelerator: &str, action: Action) -> ShortcutStatus {
        let accelerator = accelerator.trim().to_owned();
        self.unbind(app, name);
        let mut binding = Binding { accelerator: accelerator.clone(), shortcut: None, action, problem: None };
        if !accelerator.is_empty() {
            match Shortcut::from_str(&accelerator) {
                Err(e) => {
                    binding.problem =
                        Some(format!("{accelerator:?} is not a shortcut Perch understands ({e})"))
                }
                Ok(shortcut) => {
                    let taken_by = lock(self)
                        .iter()
                        .find(|(_, b)| b.shortcut.as_ref().is_some_and(|s| s.id() == shortcut.id()))
                        .map(|(other, _)| other.clone());
                    binding.problem = match taken_by {
                        Some(other) => {
                            Some(format!("{accelerator} is already Perch's {} shortcut", label(&other)))
                        }
                        None => register(app, name, shortcut).err(),
                    };
                    if binding.problem.is_none() {
                        binding.shortcut = Some(shortcut);
                        binding.problem = session_problem();
                    }
                }
            }
        }
        if let Some(problem) = &binding.problem {
            tracing::warn!(name, %accelerator, %problem, "global shortcut not active");
        }
        let status = status_of(name, &binding);
        lock(self).insert(name.to_owned(), binding);
        status
    }

    fn unbind(&self, app: &AppHandle, name: &str) {
        let old = lock(self).remove(name);
        if let Some(shortcut) = old.and_then(|b| b.shortcut) {
            let _ = app.global_shortcut().unregister(shortcut);
        }
    }

    /// Every binding, for Settings.
    pub fn statuses(&self) -> Vec<ShortcutStatus> {
        lock(self).iter().map(|(name, b)| status_of(name, b)).collect()
    }

    fn action_for(&self, name: &str) -> Option<Action> {
        lock(self).get(name).map(|b| b.action.clone())
    }
}

fn status_of(name: &str, b: &Binding) -> ShortcutStatus {
    ShortcutStatus {
        name: name.to_owned(),
        accelerator: b.accelerator.clone(),
        active: b.shortcut.is_some() && b.problem.is_none(),
        problem: b.problem.clone(),
    }
}

fn label(name: &str) -> String {
    name.replace('_', " ")
}

/// Registers with the plugin; the handler looks the action up by name at each event, so a
/// rebinding never leaves a stale action behind.
fn register(app: &AppHandle, name: &str, shortcut: Shortcut) -> Result<(), String> {
    let name = name.to_owned();
    app.global_shortcut()
        .on_shortcut(shortcut, move |app, _, event| {
            let phase = match event.state() {
                ShortcutState::Pressed => Phase::Pressed,
                ShortcutState::Released => Phase::Released,
            };
            if let Some(action) = app.state::<Shortcuts>().action_for(&name) {
                action(app, phase);
            }
        })
        .map_err(|e| describe(&shortcut, e))
}

fn describe(shortcut: &Shortcut, e: tauri_plugin_global_shortcut::Error) -> String {
    let text = e.to_string();
    if text.contains("already registered") || text.contains("AlreadyRegistered") {
        format!("another application already uses {}; pick another shortcut", shortcut.into_string())
    } else {
        format!("the system refused {}: {text}", shortcut.into_string())
    }
}
