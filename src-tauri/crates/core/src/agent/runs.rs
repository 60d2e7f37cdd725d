//! Runs in flight and their cancellation tokens: `cancel` stops one (the Stop button, Esc,
//! Ctrl-C), `cancel_all` stops every one (quitting).
//!
//! The UI picks a run's id before it asks for the answer, so a Stop can reach the engine before
//! the run is registered (the two requests race). Such a Stop is kept, and the run with that id
//! starts already stopped: a Stop is never lost.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

/// How many early stops are kept, and for how long: a run starts within moments of its Stop,
/// and a Stop for a run that already ended must not pile up.
const EARLY_STOPS: usize = 64;
const EARLY_STOP_TTL: Duration = Duration::from_secs(120);

#[derive(Debug, Default)]
pub struct Runs {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    /// Each run's stop token and the token that fires when it has ended.
    active: HashMap<String, (CancellationToken, CancellationToken)>,
    /// Stops for ids no run had yet, newest last.
    early: VecDeque<(String, Instant)>,
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
        self.runs.lock().active.remove(&self.id);
        self.ended.cancel();
    }
}

impl Runs {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a run under `id` (a fresh id when none is given); it starts stopped when a
    /// Stop for that id came first.
    pub fn start(&self, id: Option<String>) -> RunGuard<'_> {
        let id = id.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let (token, ended) = (CancellationToken::new(), CancellationToken::new());
        let mut inner = self.lock();
        if let Some(i) = inner.early.iter().position(|(early, _)| *early == id) {
            inner.early.remove(i);
            token.cancel();
        }
        inner.active.insert(id.clone(), (token.clone(), ended.clone()));
        RunGuard { runs: self, id, token, ended }
    }

    /// Stops the run. True when it was in flight; false when it was not (yet): the Stop is
    /// then kept for a while, in case the run is about to start.
    pub fn cancel(&self, id: &str) -> bool {
        let mut inner = self.lock();
        if let Some((token, _)) = inner.active.get(id) {
            token.cancel();
            return true;
        }
        let now = Instant::now();
        inner.early.retain(|(_, at)| now.duration_since(*at) < EARLY_STOP_TTL);
        if inner.early.len() >= EARLY_STOPS {
            inner.early.pop_front();
        }
        inner.early.push_back((id.to_owned(), now));
        false
    }

    /// A token that fires when the run has ended (what it started can then be cleaned up).
    pub fn ended(&self, id: &str) -> Option<CancellationToken> {
        self.lock().active.get(id).map(|(_, e)| e.clone())
    }

    pub fn cancel_all(&self) -> usize {
        let inner = self.lock();
        inner.active.values().for_each(|(t, _)| t.cancel());
        inner.active.len()
    }

    pub fn active(&self) -> usize {
        self.lock().active.len()
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

    #[test]
    fn a_stop_that_arrives_before_its_run_stops_the_run_as_it_starts() {
        let runs = Runs::default();
        assert!(!runs.cancel("early"));
        let run = runs.start(Some("early".into()));
        assert!(run.token.is_cancelled());
        drop(run);
        // Used once: the same id later starts normally.
        assert!(!runs.start(Some("early".into())).token.is_cancelled());
        assert!(!runs.start(Some("other".into())).token.is_cancelled());
    }

    #[test]
    fn early_stops_are_bounded() {
        let runs = Runs::default();
        for i in 0..EARLY_STOPS + 10 {
            runs.cancel(&format!("gone-{i}"));
        }
        assert_eq!(runs.lock().early.len(), EARLY_STOPS);
        assert!(!runs.start(Some("gone-0".into())).token.is_cancelled(), "the oldest was dropped");
        assert!(runs.start(Some(format!("gone-{}", EARLY_STOPS + 9))).token.is_cancelled());
    }
}
