//! Global shortcuts as a small registry of named actions ("screenshot", "screenshot_window",
//! and whatever else binds here, such as push-to-talk): each name has one accelerator and one
//! action that hears both the press and the release. Binding reports what happened, so
//! Settings can say "another application holds Alt+." or "the desktop assigned Super+S"
//! instead of failing silently.
//!
//! X11 (and Windows, macOS): tauri's global-shortcut plugin. A Wayland session: the XDG
//! GlobalShortcuts portal (`portal.rs` over `perch_core::shortcut_portal`), all shortcuts in
//! one session asked for by [`Shortcuts::apply`] once they are registered, which answers
//! later, possibly after a dialog; for each one the desktop does not bind, the plugin's X grab
//! (which reaches only XWayland windows) and a message saying how to bind it instead.

#[cfg(target_os = "linux")]
mod portal;

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
    /// The trigger the desktop assigned, in its words, when the desktop binds the shortcut
    /// (Wayland's portal): the user may have picked another key in its dialog.
    pub assigned: Option<String>,
}

struct Binding {
    accelerator: String,
    shortcut: Option<Shortcut>,
    action: Action,
    problem: Option<String>,
    /// Held only while something is under way (Esc during a dictation): never in Settings.
    transient: bool,
}

impl Binding {
    fn new(accelerator: String, action: Action) -> Self {
        Self { accelerator, shortcut: None, action, problem: None, transient: false }
    }
}

/// How long saving a shortcut waits for the desktop's dialog.
const SETTLE_WAIT: std::time::Duration = std::time::Duration::from_secs(120);

#[derive(Default)]
pub struct Shortcuts {
    bindings: Mutex<BTreeMap<String, Binding>>,
    /// The portal session and where each shortcut asked of it stands; locked after `bindings`.
    #[cfg(target_os = "linux")]
    portal: Mutex<portal::Portal>,
    /// Woken whenever a binding the desktop was asked for is settled.
    settled: tokio::sync::Notify,
}

fn lock(shortcuts: &Shortcuts) -> std::sync::MutexGuard<'_, BTreeMap<String, Binding>> {
    shortcuts.bindings.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(target_os = "linux")]
fn wayland_session() -> bool {
    std::env::var_os("WAYLAND_DISPLAY").is_some_and(|v| !v.is_empty())
        || std::env::var("XDG_SESSION_TYPE").is_ok_and(|t| t == "wayland")
}

/// What the user is told when the desktop did not bind `name`'s `accelerator` (`why`, the
/// portal's reason): the X grab tried instead reaches only XWayland windows, so the way that
/// works is the desktop's own shortcut settings, named for this desktop.
#[cfg(target_os = "linux")]
fn session_problem(name: &str, accelerator: &str, why: &str) -> String {
    use perch_core::desktop_shortcuts::{Desktop, how_to_bind};
    format!("{}. {}", crate::error::capitalised(why), how_to_bind(Desktop::current(), name, accelerator))
}

impl Shortcuts {
    /// Binds `name` to `accelerator` (empty: unbinds it), replacing the name's earlier binding.
    /// On Wayland the desktop is asked by [`Shortcuts::apply`], for all shortcuts at once: call
    /// it once the shortcuts registered together are.
    pub fn bind(&self, app: &AppHandle, name: &str, accelerator: &str, action: Action) -> ShortcutStatus {
        let accelerator = accelerator.trim().to_owned();
        self.unbind(app, name);
        let binding = Binding::new(accelerator.clone(), action);
        #[cfg(target_os = "linux")]
        if wayland_session() {
            // One the desktop cannot be offered stays out of the session, or it would fail
            // the whole batch.
            let no_trigger = match perch_core::shortcut_portal::portal_trigger(&accelerator) {
                _ if accelerator.is_empty() => None,
                Ok(_) => {
                    lock(self).insert(name.to_owned(), binding);
                    portal::want(self, name, &accelerator);
                    return self.status(name);
                }
                Err(reason) => Some(format!("{accelerator:?} cannot be offered to the desktop: {reason}")),
            };
            portal::forget(self, name);
            if let Some(why) = no_trigger {
                self.fall_back(app, name, binding, &why);
                return self.status(name);
            }
        }
        self.grab(app, name, binding)
    }

    /// Binds through the plugin's X grab (unless `binding` holds one already) after the desktop
    /// did not bind it (`why`), and says so.
    #[cfg(target_os = "linux")]
    fn fall_back(&self, app: &AppHandle, name: &str, binding: Binding, why: &str) {
        tracing::warn!(name, reason = %why, "falling back to an X grab");
        if binding.shortcut.is_some() {
            lock(self).insert(name.to_owned(), binding);
        } else {
            self.grab(app, name, binding);
        }
        // The desktop's way replaces the X grab's own complaint, if any (on XWayland without a
        // keyboard: "Unable to find keycode"), which is not the user's to act on.
        if let Some(b) = lock(self).get_mut(name) {
            b.problem = Some(session_problem(name, &b.accelerator, why));
        }
    }

    /// Asks the desktop (Wayland's portal) to bind every shortcut registered through
    /// [`Shortcuts::bind`], in one session replacing the previous one, if any changed since the
    /// last call; elsewhere the shortcuts are bound already.
    pub fn apply(&self, app: &AppHandle) {
        #[cfg(target_os = "linux")]
        portal::apply(app);
        #[cfg(not(target_os = "linux"))]
        let _ = app;
    }

    fn status(&self, name: &str) -> ShortcutStatus {
        let bindings = lock(self);
        match bindings.get(name) {
            Some(b) => self.status_of(name, b),
            None => ShortcutStatus {
                name: name.to_owned(),
                accelerator: String::new(),
                active: false,
                problem: None,
                assigned: None,
            },
        }
    }

    /// Binds through the plugin (an X grab on Linux).
    fn grab(&self, app: &AppHandle, name: &str, mut binding: Binding) -> ShortcutStatus {
        let accelerator = binding.accelerator.clone();
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
                    }
                }
            }
        }
        if let Some(problem) = &binding.problem {
            tracing::warn!(name, %accelerator, %problem, "global shortcut not active");
        }
        lock(self).insert(name.to_owned(), binding);
        self.status(name)
    }

    /// Holds `accelerator` for `name` until [`Shortcuts::release`], for a key that means
    /// something only while an action is under way (Esc cancelling a dictation). An X grab
    /// only: asking a Wayland desktop's portal would open its dialog for a key held for seconds.
    /// Returns whether the key is held.
    pub fn hold(&self, app: &AppHandle, name: &str, accelerator: &str, action: Action) -> bool {
        self.unbind(app, name);
        let binding = Binding { transient: true, ..Binding::new(accelerator.to_owned(), action) };
        self.grab(app, name, binding).active
    }

    /// Lets go of what [`Shortcuts::hold`] held (nothing when it holds nothing).
    pub fn release(&self, app: &AppHandle, name: &str) {
        self.unbind(app, name);
    }

    /// Unbinds `name` from the plugin; the portal session is changed by the next
    /// [`Shortcuts::apply`], and only if the shortcut was turned off or changed.
    fn unbind(&self, app: &AppHandle, name: &str) {
        let Some(old) = lock(self).remove(name) else { return };
        if let Some(shortcut) = old.shortcut {
            let _ = app.global_shortcut().unregister(shortcut);
        }
    }

    /// Waits until the desktop has answered every binding asked of it (a portal dialog may be
    /// open meanwhile), so Settings shows what it assigned rather than "waiting"; at most
    /// `SETTLE_WAIT`, after which the statuses still say "waiting" and update when it answers.
    pub async fn settled(&self) {
        let all_answered = async {
            loop {
                let notified = self.settled.notified();
                #[cfg(target_os = "linux")]
                if portal::is_pending(self) {
                    notified.await;
                    continue;
                }
                drop(notified);
                return;
            }
        };
        let _ = tokio::time::timeout(SETTLE_WAIT, all_answered).await;
    }

    /// Every binding, for Settings.
    pub fn statuses(&self) -> Vec<ShortcutStatus> {
        lock(self).iter().filter(|(_, b)| !b.transient).map(|(name, b)| self.status_of(name, b)).collect()
    }

    fn status_of(&self, name: &str, b: &Binding) -> ShortcutStatus {
        #[cfg(target_os = "linux")]
        if let Some(status) = portal::status(self, name, &b.accelerator) {
            return status;
        }
        ShortcutStatus {
            name: name.to_owned(),
            accelerator: b.accelerator.clone(),
            active: b.shortcut.is_some() && b.problem.is_none(),
            problem: b.problem.clone(),
            assigned: None,
        }
    }

    fn action_for(&self, name: &str) -> Option<Action> {
        lock(self).get(name).map(|b| b.action.clone())
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
