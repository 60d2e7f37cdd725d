//! Keeping the index current while Perch runs: inotify (through `notify`) on each folder the
//! walk entered, one watch per folder and not recursive, so ignored trees (`node_modules`,
//! `target`) cost no watches; changes gathered until the folders have been quiet for
//! [`QUIET`], then indexed again. New folders are walked and watched as they appear. While
//! the index is paused, changes wait.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use notify::{EventKind, RecursiveMode, Watcher as _};

use crate::{Knowledge, KnowledgeError};

/// Changes are indexed once nothing has changed for this long (an editor's save is several
/// events; a `git checkout` is thousands).
pub const QUIET: Duration = Duration::from_millis(500);
/// ...or once changes have waited this long, should they never stop (a build writing away).
const MOST_WAIT: Duration = Duration::from_secs(3);

enum Message {
    Changed(Vec<PathBuf>),
    Stop,
}

/// The watcher's thread; dropped, it stops.
pub struct Watcher {
    messages: mpsc::Sender<Message>,
    inotify: Arc<Mutex<notify::RecommendedWatcher>>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher").finish_non_exhaustive()
    }
}

impl Watcher {
    /// Starts watching nothing yet; `updated` is told of each batch of paths indexed again.
    pub fn start(
        knowledge: Arc<Knowledge>,
        updated: impl Fn(&[PathBuf]) + Send + 'static,
    ) -> Result<Self, KnowledgeError> {
        let (messages, inbox) = mpsc::channel();
        let events = messages.clone();
        let inotify = notify::recommended_watcher(move |event: notify::Result<notify::Event>| match event {
            // Reads (opening, closing without writing) change nothing.
            Ok(event) if matches!(event.kind, EventKind::Access(_)) => {}
            Ok(event) => {
                let _ = events.send(Message::Changed(event.paths));
            }
            Err(e) => tracing::warn!(error = %e, "the knowledge folders' watcher reported an error"),
        })
        .map_err(|e| KnowledgeError::Database(format!("cannot watch the folders: {e}")))?;
        let inotify = Arc::new(Mutex::new(inotify));
        let shared = inotify.clone();
        let thread = std::thread::Builder::new()
            .name("perch-knowledge-watch".into())
            .spawn(move || run(&knowledge, &shared, &inbox, &updated))
            .map_err(|e| KnowledgeError::Database(format!("cannot start the watcher: {e}")))?;
        Ok(Self { messages, inotify, thread: Some(thread) })
    }

    /// Watches these folders (each one alone: what is below them comes with [`Report::dirs`]).
    /// Changes made once it returns are seen.
    ///
    /// [`Report::dirs`]: crate::Report::dirs
    pub fn watch(&self, dirs: Vec<PathBuf>) {
        watch(&self.inotify, dirs);
    }
}

fn watch(inotify: &Mutex<notify::RecommendedWatcher>, dirs: Vec<PathBuf>) {
    let mut inotify = inotify.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    for dir in dirs {
        if let Err(e) = inotify.watch(&dir, RecursiveMode::NonRecursive) {
            tracing::debug!(dir = %dir.display(), error = %e, "a knowledge folder could not be watched");
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.messages.send(Message::Stop);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(
    knowledge: &Knowledge,
    inotify: &Mutex<notify::RecommendedWatcher>,
    inbox: &mpsc::Receiver<Message>,
    updated: &dyn Fn(&[PathBuf]),
) {
    let mut pending: BTreeSet<PathBuf> = BTreeSet::new();
    let mut since: Option<Instant> = None;
    loop {
        let quiet = match inbox.recv_timeout(QUIET) {
            Ok(Message::Changed(paths)) => {
                since.get_or_insert_with(Instant::now);
                pending.extend(paths);
                false
            }
            Ok(Message::Stop) | Err(RecvTimeoutError::Disconnected) => return,
            Err(RecvTimeoutError::Timeout) => true,
        };
        let waited = since.is_some_and(|t| t.elapsed() >= MOST_WAIT);
        if pending.is_empty() || knowledge.paused() || !(quiet || waited) {
            continue;
        }
        since = None;
        let paths: Vec<PathBuf> = std::mem::take(&mut pending).into_iter().collect();
        match knowledge.update(&paths, &|dirs| watch(inotify, dirs)) {
            Ok(()) => updated(&paths),
            Err(e) => tracing::warn!(error = %e, "changes in the knowledge folders could not be indexed"),
        }
    }
}
