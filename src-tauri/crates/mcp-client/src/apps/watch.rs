//! When Perch stops the open apps on its own: the page they share grew too much, or it stopped
//! answering. An app runs in the window page's own web process (WebKitGTK gives a sandboxed
//! frame no process of its own), so the whole page's memory and responsiveness are what can be
//! watched. This is the rule; the desktop reads the page's memory, sends the probes, and stops
//! the apps (`perch-desktop`'s `window/apps.rs`).

use std::time::{Duration, Instant};

/// How much the page may grow over its size when the oldest open app opened.
pub const MEMORY_BUDGET: u64 = 160 * 1024 * 1024;
/// How often the desktop looks, while apps are open.
pub const WATCH_EVERY: Duration = Duration::from_secs(2);
/// How long the page may leave a probe unanswered, with apps open, before it is taken for hung.
/// A page that answers at all answers in milliseconds; this leaves room for a loaded machine.
pub const HUNG_AFTER: Duration = Duration::from_secs(10);

/// The page's memory when each open app opened. Measuring from the oldest open app (not from
/// the first app ever) keeps the memory of apps already closed, which WebKit gives back slowly,
/// from being charged to the ones open now.
#[derive(Debug, Default)]
pub struct MemoryWatch {
    opened_at: Vec<(String, u64)>,
}

impl MemoryWatch {
    pub const fn new() -> Self {
        Self { opened_at: Vec::new() }
    }

    /// `session` opened with the page at `memory` bytes.
    pub fn opened(&mut self, session: &str, memory: u64) {
        self.opened_at.push((session.to_owned(), memory));
    }

    /// Whether the page, now at `memory` bytes with `open` apps, has grown past the budget
    /// since the oldest of them opened. Apps no longer open are forgotten.
    pub fn over_budget(&mut self, open: &[String], memory: u64) -> bool {
        self.opened_at.retain(|(session, _)| open.contains(session));
        self.base().is_some_and(|base| memory > base + MEMORY_BUDGET)
    }

    /// The page's memory when the oldest open app opened, for the log.
    pub fn base(&self) -> Option<u64> {
        self.opened_at.iter().map(|(_, at)| *at).min()
    }

    /// No app is open any more.
    pub fn clear(&mut self) {
        self.opened_at.clear();
    }
}

/// One probe out at a time: a trivial script sent to the page, answered or not.
#[derive(Debug, Default)]
pub struct Liveness {
    /// When the probe out now was sent, if one is.
    out: Option<Instant>,
}

/// What to do at a look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// The probe out is still waiting, within [`HUNG_AFTER`].
    Waiting,
    /// Send the next probe (the last one came back, or none was out).
    SendNext,
    /// The probe went unanswered for [`HUNG_AFTER`]: the page is hung.
    Hung,
}

impl Liveness {
    /// At `now`, with the probe out `answered` or not.
    pub fn look(&mut self, now: Instant, answered: bool) -> Probe {
        match self.out {
            Some(sent) if !answered => {
                if now.duration_since(sent) >= HUNG_AFTER {
                    self.out = None;
                    Probe::Hung
                } else {
                    Probe::Waiting
                }
            }
            _ => {
                self.out = None;
                Probe::SendNext
            }
        }
    }

    /// The next probe left at `now`.
    pub fn sent(&mut self, now: Instant) {
        self.out = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1 << 20;

    #[test]
    fn the_budget_counts_from_the_oldest_app_still_open() {
        let mut watch = MemoryWatch::default();
        watch.opened("a", 300 * MIB);
        watch.opened("b", 400 * MIB);
        let both = ["a".to_owned(), "b".to_owned()];
        assert!(!watch.over_budget(&both, 460 * MIB), "exactly the budget is allowed");
        assert!(watch.over_budget(&both, 461 * MIB));
        // Once the oldest is closed, the memory it left behind is not charged to the other.
        assert!(!watch.over_budget(&["b".to_owned()], 461 * MIB));
        assert_eq!(watch.base(), Some(400 * MIB));
        assert!(watch.over_budget(&["b".to_owned()], 561 * MIB));
        assert!(!watch.over_budget(&[], 10_000 * MIB), "no app open: nothing to stop");
        watch.opened("c", 500 * MIB);
        watch.clear();
        assert_eq!(watch.base(), None);
    }

    #[test]
    fn only_a_probe_left_unanswered_for_ten_seconds_is_a_hang() {
        let start = Instant::now();
        let mut page = Liveness::default();
        assert_eq!(page.look(start, false), Probe::SendNext, "none out yet");
        page.sent(start);
        assert_eq!(page.look(start + Duration::from_secs(9), false), Probe::Waiting);
        assert_eq!(page.look(start + Duration::from_secs(9), true), Probe::SendNext, "it came back");
        page.sent(start + Duration::from_secs(9));
        assert_eq!(page.look(start + Duration::from_secs(19), false), Probe::Hung);
        // After a hang the page is loaded again: the next look starts over.
        assert_eq!(page.look(start + Duration::from_secs(20), false), Probe::SendNext);
    }
}
