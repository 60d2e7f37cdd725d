//! Paces the terminal's updates for a view that draws them (the panel). A command can print
//! tens of MB/s; a web page that is sent all of it keeps most of that memory afterwards
//! (WebKit gives little of its heap back: 50 MB of output once cost the page 300 MiB), while
//! the panel can show only its last lines. So each command's output is sent at most once per
//! [`TICK`], as the newest [`MAX_BATCH`] bytes of what arrived since, with a line naming what
//! was left out; a command printing less than that is sent whole and at once. Everything else
//! passes straight through, after its command's pending output, so the order is kept.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use tokio::sync::broadcast::{self, error::RecvError};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::TerminalUpdate;

/// How often a command's output is sent at most.
pub const TICK: Duration = Duration::from_millis(50);
/// The most output of one command sent per tick: 2.5 MB/s, some 30,000 lines a second.
pub const MAX_BATCH: usize = 128 * 1024;

/// The line standing in for output that was not sent.
pub fn skipped_note(bytes: usize) -> String {
    let size = if bytes >= 1_000_000 {
        format!("{:.1} MB", bytes as f64 / 1e6)
    } else if bytes >= 1_000 {
        format!("{} KB", bytes / 1_000)
    } else {
        format!("{bytes} bytes")
    };
    format!("\x1b[0m\r\n\x1b[2m[{size} of output skipped: it came faster than the panel can show]\x1b[0m\r\n")
}

#[derive(Default)]
struct Pending {
    text: String,
    /// Bytes dropped from the front of `text` since the last send.
    skipped: usize,
}

impl Pending {
    fn push(&mut self, data: &str) {
        self.text.push_str(data);
        let excess = self.text.len().saturating_sub(MAX_BATCH);
        if excess == 0 {
            return;
        }
        // Never inside a character, and at the start of a line where one starts soon after.
        let len = self.text.len();
        let boundary = (excess..=len).find(|&i| self.text.is_char_boundary(i)).unwrap_or(len);
        let cut = match self.text[boundary..].find('\n') {
            Some(i) if boundary + i + 1 < len => boundary + i + 1,
            _ => boundary,
        };
        self.text.drain(..cut);
        self.skipped += cut;
    }

    fn take(&mut self) -> String {
        let text = std::mem::take(&mut self.text);
        match std::mem::take(&mut self.skipped) {
            0 => text,
            skipped => skipped_note(skipped) + &text,
        }
    }
}

/// The command whose output must go before this update (none can precede its start).
fn job_of(update: &TerminalUpdate) -> Option<u32> {
    match update {
        TerminalUpdate::Running { job, .. } | TerminalUpdate::Finished { job, .. } => Some(*job),
        TerminalUpdate::Started(_) | TerminalUpdate::Output { .. } | TerminalUpdate::Session { .. } => None,
    }
}

/// The terminal's updates, paced for the panel.
pub struct PanelFeed {
    updates: broadcast::Receiver<TerminalUpdate>,
    /// Output waiting for its command's next tick.
    pending: BTreeMap<u32, Pending>,
    /// When each command's output was last sent.
    sent: BTreeMap<u32, Instant>,
    ready: VecDeque<TerminalUpdate>,
    closed: bool,
    /// Cancelled when a newer feed replaces this one.
    replaced: CancellationToken,
}

impl PanelFeed {
    pub fn new(updates: broadcast::Receiver<TerminalUpdate>) -> Self {
        Self {
            updates,
            pending: BTreeMap::new(),
            sent: BTreeMap::new(),
            ready: VecDeque::new(),
            closed: false,
            replaced: CancellationToken::new(),
        }
    }

    /// The same feed, ending (`next` gives `None`) once `replaced` is cancelled.
    pub fn until(mut self, replaced: CancellationToken) -> Self {
        self.replaced = replaced;
        self
    }

    /// The next update to show; None once the terminal is gone and everything was given.
    pub async fn next(&mut self) -> Option<TerminalUpdate> {
        loop {
            if self.replaced.is_cancelled() {
                return None;
            }
            if let Some(update) = self.ready.pop_front() {
                return Some(update);
            }
            if self.closed {
                let job = *self.pending.keys().next()?;
                self.send(job);
                continue;
            }
            let due = self.pending.keys().map(|job| self.due(*job)).min();
            tokio::select! {
                biased;
                () = self.replaced.cancelled() => return None,
                received = self.updates.recv() => self.receive(received),
                () = sleep_until(due) => {
                    let now = Instant::now();
                    let jobs: Vec<u32> = self.pending.keys().copied().filter(|job| self.due(*job) <= now).collect();
                    jobs.into_iter().for_each(|job| self.send(job));
                }
            }
        }
    }

    fn due(&self, job: u32) -> Instant {
        self.sent.get(&job).map_or_else(Instant::now, |at| *at + TICK)
    }

    fn receive(&mut self, received: Result<TerminalUpdate, RecvError>) {
        match received {
            Ok(TerminalUpdate::Output { job, data }) => {
                self.pending.entry(job).or_default().push(&data);
                if self.due(job) <= Instant::now() {
                    self.send(job);
                }
            }
            Ok(update) => {
                if let Some(job) = job_of(&update) {
                    self.send(job);
                    if matches!(update, TerminalUpdate::Finished { .. }) {
                        self.sent.remove(&job);
                    }
                }
                self.ready.push_back(update);
            }
            // The app fell behind the terminal itself (not the page): say so in every panel.
            Err(RecvError::Lagged(n)) => self.ready.push_back(TerminalUpdate::Output {
                job: 0,
                data: format!("\r\n[{n} updates skipped: the panel fell behind]\r\n"),
            }),
            Err(RecvError::Closed) => self.closed = true,
        }
    }

    /// Queues the command's pending output, if any.
    fn send(&mut self, job: u32) {
        let Some(mut pending) = self.pending.remove(&job) else { return };
        self.sent.insert(job, Instant::now());
        self.ready.push_back(TerminalUpdate::Output { job, data: pending.take() });
    }
}

async fn sleep_until(due: Option<Instant>) {
    match due {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use perch_store::terminal::TerminalEvent;

    fn output(job: u32, data: &str) -> TerminalUpdate {
        TerminalUpdate::Output { job, data: data.to_owned() }
    }

    fn finished(job: u32) -> TerminalUpdate {
        TerminalUpdate::Finished { job, event: Box::new(TerminalEvent::default()) }
    }

    /// Everything the feed gives before `quiet` passes with nothing, with when it came.
    async fn drain(feed: &mut PanelFeed, quiet: Duration) -> Vec<(Duration, TerminalUpdate)> {
        let start = Instant::now();
        let mut got = Vec::new();
        while let Ok(Some(update)) = tokio::time::timeout(quiet, feed.next()).await {
            got.push((start.elapsed(), update));
        }
        got
    }

    fn text_of(updates: &[(Duration, TerminalUpdate)], of: u32) -> String {
        updates
            .iter()
            .filter_map(|(_, u)| match u {
                TerminalUpdate::Output { job, data } if *job == of => Some(data.as_str()),
                _ => None,
            })
            .collect()
    }

    #[tokio::test(start_paused = true)]
    async fn a_quiet_command_is_sent_whole_and_at_once() {
        let (tx, rx) = broadcast::channel(64);
        let mut feed = PanelFeed::new(rx);
        tx.send(output(1, "hello\r\n")).unwrap();
        let got = drain(&mut feed, Duration::from_millis(1)).await;
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, Duration::ZERO, "the first output waits for nothing");
        assert_eq!(text_of(&got, 1), "hello\r\n");

        // More within the tick waits for it, then comes as one update.
        tx.send(output(1, "a\r\n")).unwrap();
        tx.send(output(1, "b\r\n")).unwrap();
        let got = drain(&mut feed, TICK * 2).await;
        assert_eq!(got.len(), 1);
        assert_eq!(text_of(&got, 1), "a\r\nb\r\n");
    }

    #[tokio::test(start_paused = true)]
    async fn a_flood_is_paced_to_its_newest_lines_with_what_was_skipped_named() {
        let (tx, rx) = broadcast::channel(4096);
        let mut feed = PanelFeed::new(rx);
        let line = |n: usize| format!("line {n:06} {}\r\n", "A".repeat(60));
        let lines = 20_000_000 / line(0).len();
        let total = lines * line(0).len();
        // 20 MB in 64 KB chunks over one second, as a command printing 20 MB/s would.
        let producer = tokio::spawn(async move {
            let start = Instant::now();
            let mut chunk = String::new();
            let chunks = total / (64 * 1024) + 1;
            let mut sent = 0;
            for n in 0..lines {
                chunk.push_str(&line(n));
                if chunk.len() >= 64 * 1024 || n + 1 == lines {
                    tx.send(output(7, &std::mem::take(&mut chunk))).unwrap();
                    sent += 1;
                    tokio::time::sleep(Duration::from_secs(1) / chunks as u32).await;
                }
            }
            tx.send(finished(7)).unwrap();
            (sent, start.elapsed())
        });
        let got = drain(&mut feed, Duration::from_secs(2)).await;
        let (chunks, took) = producer.await.unwrap();
        let outputs = got.iter().filter(|(_, u)| matches!(u, TerminalUpdate::Output { .. })).count();
        assert!(outputs < chunks / 5, "{outputs} updates for {chunks} chunks");
        // One send per tick while it lasts, each at most a batch and its note.
        let ticks = (took.as_millis() / TICK.as_millis()) as usize;
        assert!(outputs <= ticks + 2, "{outputs} updates over {took:?}");
        let text = text_of(&got, 7);
        assert!(text.len() < outputs * (MAX_BATCH + 200), "{} bytes sent", text.len());
        // The newest line arrives whole, last, and before the command's end.
        assert!(text.ends_with(&line(lines - 1)));
        assert!(matches!(got.last().unwrap().1, TerminalUpdate::Finished { job: 7, .. }));
        // What was skipped is named, and with what was sent makes up the whole.
        let skipped: usize = text
            .split("[")
            .filter_map(|s| s.split_once(" of output skipped"))
            .map(|(size, _)| {
                let (n, unit) = size.split_once(' ').unwrap();
                let n: f64 = n.parse().unwrap();
                (n * if unit == "MB" {
                    1e6
                } else if unit == "KB" {
                    1e3
                } else {
                    1.0
                }) as usize
            })
            .sum();
        let notes = text.matches("of output skipped").count() * skipped_note(0).len();
        let shown = text.len() - notes;
        assert!(skipped > 0);
        assert!(
            (shown + skipped).abs_diff(total) < total / 50,
            "{shown} shown + {skipped} skipped of {total}"
        );
        // Every batch after a skip starts at a line.
        for part in text.split("panel can show]\x1b[0m\r\n").skip(1) {
            assert!(part.starts_with("line "), "{:?}", &part[..40.min(part.len())]);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_end_of_a_command_comes_after_all_its_output() {
        let (tx, rx) = broadcast::channel(64);
        let mut feed = PanelFeed::new(rx);
        tx.send(output(1, "first\r\n")).unwrap();
        tx.send(output(2, "other\r\n")).unwrap();
        tx.send(output(1, "last\r\n")).unwrap();
        tx.send(finished(1)).unwrap();
        let got = drain(&mut feed, Duration::from_millis(1)).await;
        let kinds: Vec<String> = got
            .iter()
            .map(|(_, u)| match u {
                TerminalUpdate::Output { job, data } => format!("{job}:{}", data.trim()),
                TerminalUpdate::Finished { job, .. } => format!("{job}:end"),
                _ => "other".into(),
            })
            .collect();
        assert_eq!(kinds, ["1:first", "2:other", "1:last", "1:end"]);
        assert!(got.iter().all(|(at, _)| at.is_zero()), "nothing waited for a tick: {got:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn what_is_pending_when_the_terminal_goes_is_still_given() {
        let (tx, rx) = broadcast::channel(64);
        let mut feed = PanelFeed::new(rx);
        tx.send(output(1, "one\r\n")).unwrap();
        tx.send(output(1, "two\r\n")).unwrap();
        drop(tx);
        let mut texts = Vec::new();
        while let Some(update) = feed.next().await {
            if let TerminalUpdate::Output { data, .. } = update {
                texts.push(data);
            }
        }
        assert_eq!(texts, ["one\r\n", "two\r\n"]);
    }

    #[test]
    fn a_cut_never_splits_a_character() {
        let mut pending = Pending::default();
        pending.push(&"é".repeat(MAX_BATCH));
        assert!(pending.text.len() <= MAX_BATCH);
        assert!(pending.text.chars().all(|c| c == 'é'));
        assert_eq!(pending.skipped + pending.text.len(), 2 * MAX_BATCH);
    }
}
