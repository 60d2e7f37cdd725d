//! Runs in flight and their cancellation tokens: `cancel` stops one (the Stop button, Esc,
//! Ctrl-C), `cancel_all` stops every one (quitting).

use std::collections::HashMap;
use std::sync::Mutex;

use tokio_util::sync::CancellationToken;

#[derive(Debug, Default)]
pub struct Runs {
    /// Each run's stop token and the token that fires when it has ended.
    active: Mutex<HashMap<String, (CancellationToken, CancellationToken)>>,
}

/// Removes its run from the registry when the run ends, however it ends.
pub struct RunGuard<'a> {
    runs: &'a Runs,
    pub id: String,
    pub token: CancellationToken,
    ended: CancellationToken,
}

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        self.runs.lock().remove(&self.id);
        self.ended.cancel();
    }
}

impl Runs {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (CancellationToken, CancellationToken)>> {
        self.active.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a run under `id` (a fresh id when none is given).
    pub fn start(&self, id: Option<String>) -> RunGuard<'_> {
        let id = id.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let (token, ended) = (CancellationToken::new(), CancellationToken::new());
        self.lock().insert(id.clone(), (token.clone(), ended.clone()));
        RunGuard { runs: self, id, token, ended }
    }

    /// Stops the run; false when no such run is in flight.
    pub fn cancel(&self, id: &str) -> bool {
        self.lock().get(id).map(|(t, _)| t.cancel()).is_some()
    }

    /// A token that fires when the run has ended (what it started can then be cleaned up).
    pub fn ended(&self, id: &str) -> Option<CancellationToken> {
        self.lock().get(id).map(|(_, e)| e.clone())
    }

    pub fn cancel_all(&self) -> usize {
        let active = self.lock();
        active.values().for_each(|(t, _)| t.cancel());
        active.len()
    }

    pub fn active(&self) -> usize {
        self.lock().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_cancel_one_or_all_and_leave_when_done() {
        let runs = Runs::default();
        let a = runs.start(Some("a".into()));
        let b = runs.start(None);
        assert_eq!(runs.active(), 2);
        assert!(runs.cancel("a"));
        assert!(a.token.is_cancelled() && !b.token.is_cancelled());
        assert!(!runs.cancel("nope"));
        assert_eq!(runs.cancel_all(), 2);
        assert!(b.token.is_cancelled());
        let ended = runs.ended(&b.id).unwrap();
        drop(a);
        drop(b);
        assert!(ended.is_cancelled());
        assert_eq!(runs.active(), 0);
    }
}
