//! The last dictations of dictate-anywhere, kept in memory for a day: words typed into a window
//! that lost the focus, or refused by it, are never lost. Only in memory, so a dictation is
//! never written to disk (it may be a password or a private note).

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;

/// How many dictations are kept.
pub const KEPT: usize = 20;
/// How long a dictation is kept.
pub const KEPT_FOR: Duration = Duration::from_secs(24 * 60 * 60);

/// Where a dictation's words went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Outcome {
    /// Typed into this application (its window's title).
    Typed { app: String },
    /// Not typed (the reason); the words were put on the clipboard.
    Copied { reason: String },
    /// Neither typed nor copied (the reason): only here.
    Kept { reason: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct RecentDictation {
    pub text: String,
    /// When it ended, in milliseconds since 1970.
    pub at_ms: f64,
    pub outcome: Outcome,
}

#[derive(Default)]
pub struct RecentDictations {
    entries: Mutex<VecDeque<RecentDictation>>,
}

fn now_ms() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_millis() as f64)
}

impl RecentDictations {
    pub fn add(&self, text: &str, outcome: Outcome) {
        self.add_at(text, outcome, now_ms());
    }

    fn add_at(&self, text: &str, outcome: Outcome, at_ms: f64) {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.push_front(RecentDictation { text: text.to_owned(), at_ms, outcome });
        entries.truncate(KEPT);
        // Also here, not only when listed: words are kept a day even if nobody looks.
        let oldest = at_ms - KEPT_FOR.as_millis() as f64;
        entries.retain(|e| e.at_ms >= oldest);
    }

    /// The dictations of the last day, newest first.
    pub fn list(&self) -> Vec<RecentDictation> {
        self.list_at(now_ms())
    }

    fn list_at(&self, now_ms: f64) -> Vec<RecentDictation> {
        let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let oldest = now_ms - KEPT_FOR.as_millis() as f64;
        entries.retain(|e| e.at_ms >= oldest);
        entries.iter().cloned().collect()
    }

    pub fn clear(&self) {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typed(app: &str) -> Outcome {
        Outcome::Typed { app: app.into() }
    }

    #[test]
    fn keeps_the_newest_twenty_for_a_day_newest_first() {
        let recent = RecentDictations::default();
        let day = KEPT_FOR.as_millis() as f64;
        recent.add_at("yesterday's", typed("Notes"), 0.0);
        for i in 0..KEPT {
            recent.add_at(&format!("dictation {i}"), typed("Editor"), day / 2.0 + i as f64);
        }
        // Twenty kept: the oldest went to make room.
        let now = recent.list_at(day / 2.0 + 100.0);
        assert_eq!(now.len(), KEPT);
        assert_eq!(now[0].text, "dictation 19");
        assert_eq!(now[KEPT - 1].text, "dictation 0");

        let refused = Outcome::Copied { reason: "KeePassXC is on the never-type list".into() };
        recent.add_at("a secret", refused.clone(), day);
        assert_eq!(recent.list_at(day)[0].outcome, refused);
        // A day after, the ones from half a day earlier are gone; the latest stays.
        let later = recent.list_at(day * 1.5 + 50.0);
        assert_eq!(later.iter().map(|e| e.text.as_str()).collect::<Vec<_>>(), ["a secret"]);
        recent.clear();
        assert!(recent.list_at(day).is_empty());
    }
}
