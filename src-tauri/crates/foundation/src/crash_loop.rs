//! Telling a crash from a crash loop, for everything Perch starts again by itself when it dies
//! (MCP servers, the local model runtime, the window's web process).
//!
//! What counts is how long the thing ran, not how many crashes fell in some window of time: a
//! process that dies while loading for 25 s, every time, is a loop even though only two of its
//! crashes fit in a minute. A run that lasted `healthy_after` proves it can work, and the count
//! starts over.

use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct CrashLoop {
    /// Crashes in a row that are answered with a restart; the one after is a loop.
    restarts: u32,
    healthy_after: Duration,
    started: Option<Instant>,
    in_a_row: u32,
}

impl CrashLoop {
    pub const fn new(restarts: u32, healthy_after: Duration) -> Self {
        Self { restarts, healthy_after, started: None, in_a_row: 0 }
    }

    /// It was started (or started again) at `now`.
    pub fn started(&mut self, now: Instant) {
        self.started = Some(now);
    }

    /// Counts a crash at `now`. `Some(n)` when it should be started again, `n` being how many
    /// crashes in a row this makes (for a backoff); `None` when this crash is one too many, with
    /// no healthy run between them.
    pub fn crashed(&mut self, now: Instant) -> Option<u32> {
        // A crash ends the run: another without a new start is not healthy.
        if self.started.take().is_some_and(|at| now.saturating_duration_since(at) >= self.healthy_after) {
            self.in_a_row = 0;
        }
        self.in_a_row = self.in_a_row.saturating_add(1);
        (self.in_a_row <= self.restarts).then_some(self.in_a_row)
    }

    /// A failure that starting again cannot fix (a missing program, a refused configuration):
    /// the next crash is a loop at once, unless a healthy run comes first.
    pub fn give_up(&mut self) {
        self.in_a_row = self.restarts;
    }

    /// The user asked for it again: whatever came before no longer counts.
    pub fn forgive(&mut self) {
        self.in_a_row = 0;
    }

    pub fn restarts(&self) -> u32 {
        self.restarts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINUTE: Duration = Duration::from_secs(60);

    /// Crashes `every` after each start, `times` times; the verdicts.
    fn crash_every(every: Duration, times: u32) -> Vec<Option<u32>> {
        let mut crashes = CrashLoop::new(3, MINUTE);
        let mut now = Instant::now();
        (0..times)
            .map(|_| {
                crashes.started(now);
                now += every;
                crashes.crashed(now)
            })
            .collect()
    }

    #[test]
    fn a_slow_crash_loop_is_a_loop_and_rare_crashes_are_not() {
        // Dying 25 s into every load: only two crashes fit in any minute, still a loop.
        assert_eq!(crash_every(Duration::from_secs(25), 4), [Some(1), Some(2), Some(3), None]);
        assert_eq!(crash_every(Duration::from_millis(50), 4), [Some(1), Some(2), Some(3), None]);
        // Running an hour between crashes: started again every time.
        assert_eq!(crash_every(Duration::from_secs(3600), 6), [Some(1); 6]);
    }

    #[test]
    fn a_healthy_run_or_the_user_starts_the_count_over_and_a_permanent_failure_ends_it() {
        let mut crashes = CrashLoop::new(2, MINUTE);
        let start = Instant::now();
        crashes.started(start);
        assert_eq!(crashes.crashed(start + Duration::from_secs(1)), Some(1));
        crashes.started(start + Duration::from_secs(1));
        assert_eq!(crashes.crashed(start + Duration::from_secs(2)), Some(2));
        crashes.started(start + Duration::from_secs(2));
        assert_eq!(crashes.crashed(start + Duration::from_secs(200)), Some(1), "ran healthily first");
        assert_eq!(crashes.crashed(start + Duration::from_secs(200)), Some(2), "no new start");
        assert_eq!(crashes.crashed(start + Duration::from_secs(200)), None);
        crashes.forgive();
        assert_eq!(crashes.crashed(start + Duration::from_secs(200)), Some(1));
        crashes.give_up();
        assert_eq!(crashes.crashed(start + Duration::from_secs(200)), None);
    }
}
