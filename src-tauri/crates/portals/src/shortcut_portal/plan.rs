//! Which shortcuts Perch keeps in its one portal session, and where each stands.
//!
//! The specification (and KDE Plasma 5.27, which opens System Settings for every session)
//! expects an application to bind all its shortcuts in one session with one `BindShortcuts`
//! call. So the shortcuts wanted are collected here ([`SessionPlan::want`]), and one
//! [`Batch`] holding all of them is asked for at once ([`SessionPlan::batch`]); a later change
//! of any one replaces the session with a new one holding all of them again, and asking again
//! for what the session already holds changes nothing. The answer is checked against the
//! batch's ticket, so the answer of a session already replaced is not taken for the new one's.

use std::collections::BTreeMap;

use super::{PortalError, ShortcutRequest};

/// Where a wanted shortcut stands with the desktop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Asked for (or about to be); the desktop has not answered.
    Pending,
    Bound,
    /// The desktop did not bind it; why, in words a user can act on.
    NotBound(String),
    /// The desktop ended the session that held it.
    Closed,
}

/// One `BindShortcuts` request for every shortcut wanted. Empty: the old session is to be
/// closed and none opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    pub ticket: u64,
    pub shortcuts: Vec<ShortcutRequest>,
}

#[derive(Debug, Default)]
pub struct SessionPlan {
    wanted: BTreeMap<String, (ShortcutRequest, Standing)>,
    /// The ticket of the latest batch; an answer with another one is stale.
    ticket: u64,
    /// Whether what is wanted differs from what the latest batch asked for.
    changed: bool,
}

impl SessionPlan {
    /// Perch wants `request` bound through the portal, replacing its id's earlier request. The
    /// same request again changes nothing, unless the desktop did not bind it or closed its
    /// session: then it is asked again (the user set the shortcut again).
    pub fn want(&mut self, request: ShortcutRequest) {
        if let Some((old, standing)) = self.wanted.get(&request.id)
            && *old == request
            && matches!(standing, Standing::Pending | Standing::Bound)
        {
            return;
        }
        self.wanted.insert(request.id.clone(), (request, Standing::Pending));
        self.changed = true;
    }

    /// Perch no longer wants `id` bound through the portal.
    pub fn forget(&mut self, id: &str) {
        if self.wanted.remove(id).is_some() {
            self.changed = true;
        }
    }

    /// The request to make now, if what is wanted changed since the last one: every shortcut
    /// wanted, all pending until it is answered.
    pub fn batch(&mut self) -> Option<Batch> {
        if !std::mem::take(&mut self.changed) {
            return None;
        }
        self.ticket += 1;
        let shortcuts = self
            .wanted
            .values_mut()
            .map(|(request, standing)| {
                *standing = Standing::Pending;
                request.clone()
            })
            .collect();
        Some(Batch { ticket: self.ticket, shortcuts })
    }

    /// Records the desktop's answer to batch `ticket`: `Ok` with the ids it left unassigned,
    /// or why it bound nothing. Returns the shortcuts not bound with the reason of each (for a
    /// fallback), or None when the answer is stale (a later batch replaced it: drop its
    /// session).
    pub fn settle(
        &mut self,
        ticket: u64,
        answer: Result<&[String], &PortalError>,
    ) -> Option<Vec<(String, String)>> {
        if ticket != self.ticket {
            return None;
        }
        let mut not_bound = Vec::new();
        for (id, (_, standing)) in &mut self.wanted {
            let reason = match answer {
                Err(e) => Some(e.to_string()),
                Ok(unassigned) if unassigned.contains(id) => {
                    Some(PortalError::NotAssigned(vec![id.clone()]).to_string())
                }
                Ok(_) => None,
            };
            *standing = match reason {
                Some(reason) => {
                    not_bound.push((id.clone(), reason.clone()));
                    Standing::NotBound(reason)
                }
                None => Standing::Bound,
            };
        }
        Some(not_bound)
    }

    /// The desktop closed the session of batch `ticket`: what it bound no longer works.
    pub fn closed(&mut self, ticket: u64) {
        if ticket != self.ticket {
            return;
        }
        for (_, standing) in self.wanted.values_mut() {
            if *standing == Standing::Bound {
                *standing = Standing::Closed;
            }
        }
    }

    /// Where `id` stands, or None if it is not wanted through the portal.
    pub fn standing(&self, id: &str) -> Option<&Standing> {
        self.wanted.get(id).map(|(_, standing)| standing)
    }

    /// Whether an answer is still awaited (or a batch still to be asked for).
    pub fn is_pending(&self) -> bool {
        self.wanted.values().any(|(_, standing)| *standing == Standing::Pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(id: &str, accelerator: &str) -> ShortcutRequest {
        ShortcutRequest {
            id: id.into(),
            description: format!("Perch: {id}"),
            accelerator: accelerator.into(),
        }
    }

    fn ids(batch: &Batch) -> Vec<&str> {
        batch.shortcuts.iter().map(|s| s.id.as_str()).collect()
    }

    #[test]
    fn shortcuts_wanted_together_are_asked_for_in_one_batch() {
        let mut plan = SessionPlan::default();
        for id in ["screenshot", "selection", "push_to_talk"] {
            plan.want(request(id, "Alt+Period"));
        }
        let batch = plan.batch().unwrap();
        assert_eq!(ids(&batch), ["push_to_talk", "screenshot", "selection"]);
        assert!(plan.batch().is_none(), "nothing changed, so no second session");
        assert!(plan.is_pending());
        assert_eq!(plan.settle(batch.ticket, Ok(&[])), Some(vec![]));
        assert_eq!(plan.standing("selection"), Some(&Standing::Bound));
        assert!(!plan.is_pending());
    }

    #[test]
    fn changing_one_shortcut_asks_again_for_all_and_the_same_one_again_for_none() {
        let mut plan = SessionPlan::default();
        plan.want(request("screenshot", "Alt+Period"));
        plan.want(request("selection", "Alt+Comma"));
        let first = plan.batch().unwrap();
        plan.settle(first.ticket, Ok(&[])).unwrap();

        // Settings saved unchanged: the session is kept.
        plan.want(request("screenshot", "Alt+Period"));
        plan.want(request("selection", "Alt+Comma"));
        assert!(plan.batch().is_none());
        assert_eq!(plan.standing("screenshot"), Some(&Standing::Bound));

        plan.want(request("selection", "Alt+Slash"));
        let second = plan.batch().unwrap();
        assert_eq!(ids(&second), ["screenshot", "selection"]);
        assert_eq!(second.shortcuts[1].accelerator, "Alt+Slash");
        assert_eq!(plan.standing("screenshot"), Some(&Standing::Pending));

        // Turned off: the next session holds the rest; none at all closes it.
        plan.forget("selection");
        assert_eq!(ids(&plan.batch().unwrap()), ["screenshot"]);
        plan.forget("screenshot");
        assert!(plan.batch().unwrap().shortcuts.is_empty());
        plan.forget("screenshot");
        assert!(plan.batch().is_none());
    }

    #[test]
    fn a_replaced_batch_s_answer_is_stale() {
        let mut plan = SessionPlan::default();
        plan.want(request("screenshot", "Alt+Period"));
        let first = plan.batch().unwrap();
        plan.want(request("screenshot", "Alt+Slash"));
        let second = plan.batch().unwrap();
        assert_eq!(plan.settle(first.ticket, Ok(&[])), None);
        assert_eq!(plan.standing("screenshot"), Some(&Standing::Pending));
        plan.closed(first.ticket);
        assert_eq!(plan.settle(second.ticket, Ok(&[])), Some(vec![]));
        plan.closed(first.ticket);
        assert_eq!(plan.standing("screenshot"), Some(&Standing::Bound));
    }

    #[test]
    fn exactly_the_shortcuts_left_unassigned_are_not_bound() {
        let mut plan = SessionPlan::default();
        plan.want(request("screenshot", "Alt+Period"));
        plan.want(request("selection", "Alt+Comma"));
        let batch = plan.batch().unwrap();
        let not_bound = plan.settle(batch.ticket, Ok(&["selection".to_owned()])).unwrap();
        assert_eq!(not_bound.len(), 1);
        assert_eq!(not_bound[0].0, "selection");
        assert!(not_bound[0].1.contains("did not assign a key to selection"), "{}", not_bound[0].1);
        assert_eq!(plan.standing("screenshot"), Some(&Standing::Bound));
        assert!(matches!(plan.standing("selection"), Some(Standing::NotBound(_))));

        // Set again in Settings, unchanged: asked again, with the rest.
        plan.want(request("selection", "Alt+Comma"));
        assert_eq!(ids(&plan.batch().unwrap()), ["screenshot", "selection"]);
    }

    #[test]
    fn a_refusal_leaves_every_shortcut_unbound_and_a_closed_session_is_said() {
        let mut plan = SessionPlan::default();
        plan.want(request("screenshot", "Alt+Period"));
        plan.want(request("selection", "Alt+Comma"));
        let batch = plan.batch().unwrap();
        let refused = PortalError::Refused("screenshot, selection".into());
        let not_bound = plan.settle(batch.ticket, Err(&refused)).unwrap();
        assert_eq!(
            not_bound.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(),
            ["screenshot", "selection"]
        );
        assert!(not_bound[0].1.contains("refused to bind"), "{}", not_bound[0].1);

        plan.want(request("screenshot", "Alt+Period"));
        plan.want(request("selection", "Alt+Comma"));
        let again = plan.batch().unwrap();
        plan.settle(again.ticket, Ok(&[])).unwrap();
        plan.closed(again.ticket);
        assert_eq!(plan.standing("screenshot"), Some(&Standing::Closed));
        plan.want(request("screenshot", "Alt+Period"));
        assert!(plan.batch().is_some(), "setting a closed shortcut again asks the desktop again");
    }
}
