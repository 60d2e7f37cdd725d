//! A Wayland session's shortcuts through the desktop's GlobalShortcuts portal: one portal
//! session per named action, so each rebinding replaces only its own. The desktop answers
//! later (possibly after a dialog), so a binding is pending until then; if there is no portal
//! (or it refuses), the registry falls back to the plugin's X grab with the reason.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use perch_core::shortcut_portal::{PortalError, PortalShortcuts, ShortcutEvent, ShortcutRequest};
use tauri::{AppHandle, Manager};

use super::{Phase, ShortcutStatus, Shortcuts, lock, session_problem};

/// Where a binding stands with the portal.
#[derive(Default)]
pub(super) enum PortalState {
    /// Bound through the plugin instead (not Wayland, turned off, or after a fallback).
    #[default]
    Unused,
    /// Asked; `ticket` tells this request's answer from an older one's.
    Pending {
        ticket: u64,
    },
    Bound(PortalShortcuts),
    /// The desktop ended the session.
    Closed,
}

impl PortalState {
    pub(super) fn is_pending(&self) -> bool {
        matches!(self, Self::Pending { .. })
    }

    pub(super) fn status(&self, name: &str, accelerator: &str) -> Option<ShortcutStatus> {
        let (active, problem, assigned) = match self {
            Self::Unused => return None,
            Self::Pending { .. } => (
                false,
                Some(format!("Waiting for the desktop to bind {accelerator}; it may ask in a dialog.")),
                None,
            ),
            Self::Bound(session) => {
                let assigned = session.assigned().into_iter().find(|a| a.id == name).and_then(|a| a.trigger);
                (true, None, assigned)
            }
            Self::Closed => (
                false,
                Some(
                    "The desktop closed Perch's shortcut session; set the shortcut again to bind it.".into(),
                ),
                None,
            ),
        };
        Some(ShortcutStatus {
            name: name.to_owned(),
            accelerator: accelerator.to_owned(),
            active,
            problem,
            assigned,
        })
    }

    /// Closes the portal session, if any, off the caller's thread.
    pub(super) fn release(self) {
        if let Self::Bound(session) = self {
            tauri::async_runtime::spawn(session.close());
        }
    }
}

/// Asks the desktop to bind `accelerator` for `name`; the answer lands in the registry.
pub(super) fn request(app: &AppHandle, name: &str, accelerator: &str) -> PortalState {
    static TICKETS: AtomicU64 = AtomicU64::new(1);
    let ticket = TICKETS.fetch_add(1, Ordering::Relaxed);
    let shortcut = ShortcutRequest {
        id: name.to_owned(),
        description: describe(name),
        accelerator: accelerator.to_owned(),
    };
    let (app, name) = (app.clone(), name.to_owned());
    tauri::async_runtime::spawn(async move {
        let events = {
            let (app, name) = (app.clone(), Arc::<str>::from(name.as_str()));
            move |event| on_event(&app, &name, event)
        };
        let result = PortalShortcuts::bind_on_session_bus(&[shortcut], events).await;
        settle(&app, &name, ticket, result);
    });
    PortalState::Pending { ticket }
}

fn describe(name: &str) -> String {
    match name {
        "screenshot" => "Perch: capture the screen for the next question".into(),
        "screenshot_window" => "Perch: capture the focused window for the next question".into(),
        "push_to_talk" => "Perch: push to talk".into(),
        other => format!("Perch: {}", other.replace('_', " ")),
    }
}

fn on_event(app: &AppHandle, name: &str, event: ShortcutEvent) {
    let phase = match event {
        ShortcutEvent::Pressed(id) if id == name => Phase::Pressed,
        ShortcutEvent::Released(id) if id == name => Phase::Released,
        ShortcutEvent::Closed => {
            tracing::warn!(name, "the desktop closed the shortcut portal session");
            if let Some(binding) = lock(&app.state::<Shortcuts>()).get_mut(name) {
                binding.portal = PortalState::Closed;
            }
            return;
        }
        // The registry reads the new triggers from the session when asked.
        _ => return,
    };
    if let Some(action) = app.state::<Shortcuts>().action_for(name) {
        action(app, phase);
    }
}

/// Records the desktop's answer, unless the binding was replaced meanwhile (then the session,
/// if any, is dropped and so closed). Without a portal, or refused, the plugin's grab is used.
fn settle(app: &AppHandle, name: &str, ticket: u64, result: Result<PortalShortcuts, PortalError>) {
    let shortcuts = app.state::<Shortcuts>();
    let fallback = {
        let mut bindings = lock(&shortcuts);
        match bindings.get_mut(name) {
            Some(b) if matches!(b.portal, PortalState::Pending { ticket: t } if t == ticket) => {
                match result {
                    Ok(session) => {
                        tracing::info!(name, assigned = ?session.assigned(), "bound through the GlobalShortcuts portal");
                        b.portal = PortalState::Bound(session);
                        None
                    }
                    Err(e) => {
                        tracing::warn!(name, error = %e, "the GlobalShortcuts portal did not bind");
                        b.portal = PortalState::Unused;
                        bindings.remove(name).map(|b| (b, e))
                    }
                }
            }
            _ => None,
        }
    };
    if let Some((binding, why)) = fallback {
        shortcuts.grab(app, name, binding);
        // The desktop's way replaces the X grab's own complaint (on XWayland without a
        // keyboard: "Unable to find keycode"), which is not the user's to act on.
        if let Some(b) = lock(&shortcuts).get_mut(name) {
            b.problem = Some(session_problem(name, &b.accelerator, &why));
        }
    }
    shortcuts.settled.notify_waiters();
}
