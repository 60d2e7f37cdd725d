//! A Wayland session's shortcuts through the desktop's GlobalShortcuts portal: all of them in
//! one portal session, asked for with one `BindShortcuts` call, as the specification and KDE
//! Plasma (which opens its System Settings for each session) expect. Which shortcuts the
//! session holds and where each stands is `perch_core::shortcut_portal::SessionPlan`'s; this
//! module runs its batches. The desktop answers later (possibly after a dialog), so the
//! shortcuts are pending until then; each one it does not bind (no portal, a refusal, or left
//! out of its answer) falls back to the plugin's X grab with the reason.

use std::sync::MutexGuard;

use perch_core::shortcut_portal::{
    PortalError, PortalShortcuts, SessionPlan, ShortcutEvent, ShortcutRequest, Standing,
};
use tauri::{AppHandle, Manager};
use tauri_plugin_global_shortcut::GlobalShortcutExt;

use super::{Phase, ShortcutStatus, Shortcuts, lock};

/// The one portal session, and the plan of what it holds.
#[derive(Default)]
pub(super) struct Portal {
    plan: SessionPlan,
    session: Option<PortalShortcuts>,
}

fn portal(shortcuts: &Shortcuts) -> MutexGuard<'_, Portal> {
    shortcuts.portal.lock().unwrap_or_else(|p| p.into_inner())
}

/// `name` is to be bound to `accelerator` through the portal at the next [`apply`].
pub(super) fn want(shortcuts: &Shortcuts, name: &str, accelerator: &str) {
    let request = ShortcutRequest {
        id: name.to_owned(),
        description: describe(name),
        accelerator: accelerator.to_owned(),
    };
    portal(shortcuts).plan.want(request);
}

/// `name` is no longer bound through the portal (turned off).
pub(super) fn forget(shortcuts: &Shortcuts, name: &str) {
    portal(shortcuts).plan.forget(name);
}

pub(super) fn is_pending(shortcuts: &Shortcuts) -> bool {
    portal(shortcuts).plan.is_pending()
}

/// The status of `name` while the portal has it; None when the plugin's status applies (not
/// asked of the portal, or fallen back to an X grab).
pub(super) fn status(shortcuts: &Shortcuts, name: &str, accelerator: &str) -> Option<ShortcutStatus> {
    let portal = portal(shortcuts);
    let (active, problem, assigned) = match portal.plan.standing(name)? {
        Standing::NotBound(_) => return None,
        Standing::Pending => (
            false,
            Some(format!("Waiting for the desktop to bind {accelerator}; it may ask in a dialog.")),
            None,
        ),
        Standing::Bound => {
            let assigned = portal
                .session
                .as_ref()
                .and_then(|s| s.assigned().into_iter().find(|a| a.id == name).and_then(|a| a.trigger));
            (true, None, assigned)
        }
        Standing::Closed => (
            false,
            Some("The desktop closed Perch's shortcut session; set the shortcut again to bind it.".into()),
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

/// Asks the desktop for every shortcut wanted, in a new session replacing the old one, if
/// anything changed since the last batch; the answer lands in the registry.
pub(super) fn apply(app: &AppHandle) {
    let shortcuts = app.state::<Shortcuts>();
    let (batch, old) = {
        let mut portal = portal(&shortcuts);
        let Some(batch) = portal.plan.batch() else { return };
        (batch, portal.session.take())
    };
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        // Closed first: the new session asks for the same ids, which a desktop may refuse
        // while another session of Perch holds them.
        if let Some(old) = old {
            old.close().await;
        }
        if batch.shortcuts.is_empty() {
            return;
        }
        let ticket = batch.ticket;
        let events = {
            let app = app.clone();
            move |event| on_event(&app, ticket, event)
        };
        let result = PortalShortcuts::bind_on_session_bus(&batch.shortcuts, events).await;
        settle(&app, ticket, result);
    });
}

fn describe(name: &str) -> String {
    match name {
        "screenshot" => "Perch: capture the screen for the next question".into(),
        "screenshot_window" => "Perch: capture the focused window for the next question".into(),
        "push_to_talk" => "Perch: push to talk".into(),
        other => format!("Perch: {}", other.replace('_', " ")),
    }
}

fn on_event(app: &AppHandle, ticket: u64, event: ShortcutEvent) {
    let shortcuts = app.state::<Shortcuts>();
    let (name, phase) = match event {
        ShortcutEvent::Pressed(id) => (id, Phase::Pressed),
        ShortcutEvent::Released(id) => (id, Phase::Released),
        ShortcutEvent::Closed => {
            tracing::warn!("the desktop closed the shortcut portal session");
            portal(&shortcuts).plan.closed(ticket);
            return;
        }
        // The registry reads the new triggers from the session when asked.
        _ => return,
    };
    if let Some(action) = shortcuts.action_for(&name) {
        action(app, phase);
    }
}

/// Records the desktop's answer to batch `ticket`, unless a later batch replaced it (then the
/// session, if any, is dropped and so closed). Each shortcut bound lets go of the X grab it
/// held as a fallback; each one not bound gets one, with the reason.
fn settle(app: &AppHandle, ticket: u64, result: Result<PortalShortcuts, PortalError>) {
    let shortcuts = app.state::<Shortcuts>();
    let not_bound = {
        let mut bindings = lock(&shortcuts);
        let mut portal = portal(&shortcuts);
        let Some(not_bound) = portal.plan.settle(ticket, result.as_ref().map(|s| s.unassigned())) else {
            return;
        };
        match result {
            Ok(session) => {
                tracing::info!(assigned = ?session.assigned(), unassigned = ?session.unassigned(), "bound through the GlobalShortcuts portal");
                portal.session = Some(session);
            }
            Err(e) => tracing::warn!(error = %e, "the GlobalShortcuts portal did not bind"),
        }
        for (name, b) in bindings.iter_mut() {
            if portal.plan.standing(name) == Some(&Standing::Bound) {
                if let Some(grab) = b.shortcut.take() {
                    let _ = app.global_shortcut().unregister(grab);
                }
                b.problem = None;
            }
        }
        not_bound
            .into_iter()
            .filter_map(|(name, why)| bindings.remove(&name).map(|b| (name, b, why)))
            .collect::<Vec<_>>()
    };
    for (name, binding, why) in not_bound {
        shortcuts.fall_back(app, &name, binding, &why);
    }
    shortcuts.settled.notify_waiters();
}
