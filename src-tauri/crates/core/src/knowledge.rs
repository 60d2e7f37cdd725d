//! The engine's side of the knowledge folders (`perch-knowledge`): the index in the data
//! folder, opened when there is one and made when the first folder is added; index runs in the
//! background, one at a time, with their progress; the watcher while the app runs; the
//! embedding model shared with the tool picker. Removing the last folder deletes the index, so
//! a user who tried the feature and turned away leaves nothing behind.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use futures::FutureExt;
use futures::future::BoxFuture;
use perch_knowledge::tool::KnowledgeSource;
use perch_knowledge::watch::Watcher;
use perch_knowledge::{DB_FILE, Embed, Knowledge};
pub use perch_knowledge::{KnowledgeError, Passage, Report, Retrieval, Search};
use serde::Serialize;
use tokio::sync::watch;

use perch_retrieval::MiniLmSlot;

/// Where things stand, for Settings and `perch knowledge list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, specta::Type)]
pub struct KnowledgeStatus {
    pub folders: Vec<KnowledgeFolder>,
    /// The index run under way: the folder, files done and in all.
    pub indexing: Option<IndexingProgress>,
    pub paused: bool,
    /// Searches match words only: the embedding model is not downloaded (Settings -> Tools).
    pub words_only: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct KnowledgeFolder {
    pub path: String,
    pub files: u32,
    pub passages: u32,
}

/// Reading a folder's files (`folder`, files), or embedding the passages read (`passages`;
/// the folder is empty): words first, so a folder is searchable once read, and meaning after.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct IndexingProgress {
    pub folder: String,
    pub done: u32,
    pub total: u32,
    pub passages: bool,
}

/// A passage offered by the composer's `#` picker.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct FoundPassage {
    pub path: String,
    pub start: u32,
    pub end: u32,
    /// `path:start-end`, or `path, page N` for a PDF.
    pub place: String,
    pub heading: String,
    pub text: String,
}

impl From<&Passage> for FoundPassage {
    fn from(p: &Passage) -> Self {
        Self {
            path: p.path.to_string_lossy().into_owned(),
            start: p.start as u32,
            end: p.end as u32,
            place: p.place(),
            heading: p.heading.clone(),
            text: p.text.clone(),
        }
    }
}

pub struct KnowledgeService {
    db_path: PathBuf,
    minilm: MiniLmSlot,
    open: Mutex<Option<Arc<Knowledge>>>,
    watcher: Mutex<Option<Watcher>>,
    /// One index run at a time.
    running: tokio::sync::Mutex<()>,
    /// One status read at a time, so a later one never sends older counts.
    publishing: tokio::sync::Mutex<()>,
    stop: Arc<AtomicBool>,
    status: watch::Sender<KnowledgeStatus>,
}

impl std::fmt::Debug for KnowledgeService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnowledgeService").field("db_path", &self.db_path).finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, KnowledgeError> + Send + 'static,
) -> Result<T, KnowledgeError> {
    tokio::task::spawn_blocking(f).await.map_err(|e| KnowledgeError::Database(e.to_string()))?
}

impl KnowledgeService {
    pub fn new(data_dir: &Path, minilm: MiniLmSlot) -> Arc<Self> {
        let (status, _) = watch::channel(KnowledgeStatus::default());
        Arc::new(Self {
            db_path: data_dir.join(DB_FILE),
            minilm,
            open: Mutex::default(),
            watcher: Mutex::default(),
            running: tokio::sync::Mutex::new(()),
            publishing: tokio::sync::Mutex::new(()),
            stop: Arc::default(),
            status,
        })
    }

    /// Changes to [`KnowledgeStatus`], for the window.
    pub fn subscribe(&self) -> watch::Receiver<KnowledgeStatus> {
        self.status.subscribe()
    }

    /// The index if there is one (opened on first use), without making one.
    pub fn index(&self) -> Option<Arc<Knowledge>> {
        let mut open = lock(&self.open);
        if open.is_none() && self.db_path.is_file() {
            match Knowledge::open(&self.db_path) {
                Ok(k) => *open = Some(Arc::new(k)),
                Err(e) => tracing::warn!(error = %e, "the knowledge index could not be opened"),
            }
        }
        open.clone()
    }

    fn index_or_create(&self) -> Result<Arc<Knowledge>, KnowledgeError> {
        let mut open = lock(&self.open);
        if let Some(k) = open.as_ref() {
            return Ok(k.clone());
        }
        let k = Arc::new(Knowledge::open(&self.db_path)?);
        *open = Some(k.clone());
        Ok(k)
    }

    /// Loads the embedding model into the index, when it is downloaded.
    async fn ready(&self) {
        let Some(index) = self.index() else { return };
        if let Some(model) = self.minilm.get().await {
            let embed: Arc<dyn Embed> = model;
            if let Err(e) = blocking(move || index.set_embedder(Some(embed))).await {
                tracing::warn!(error = %e, "the embedding model could not be given to the knowledge index");
            }
        }
    }

    /// Starts what runs while the app does: an index run over every folder (only what changed
    /// since the last is read), then the watcher.
    pub fn start(self: &Arc<Self>) {
        if self.index().is_some() {
            self.index_in_background(None);
        }
    }

    /// Indexes one folder, or all, on a task of its own.
    pub fn index_in_background(self: &Arc<Self>, folder: Option<PathBuf>) {
        let this = self.clone();
        tokio::spawn(async move {
            if let Err(e) = this.reindex(folder.as_deref()).await {
                tracing::warn!(error = %e, "the knowledge folders could not be indexed");
            }
        });
    }

    /// Adds a folder (the index made with the first); [`KnowledgeService::reindex`] or
    /// [`KnowledgeService::index_in_background`] reads it.
    pub async fn add_folder(&self, path: &Path) -> Result<KnowledgeFolder, KnowledgeError> {
        let index = self.index_or_create()?;
        // `~/notes` as typed in Settings (the shell expands it for the command line).
        let path = match (path.strip_prefix("~"), std::env::var_os("HOME")) {
            (Ok(rest), Some(home)) => PathBuf::from(home).join(rest),
            _ => path.to_path_buf(),
        };
        let adding = index.clone();
        let folder = match blocking(move || adding.add_folder(&path)).await {
            Ok(folder) => folder,
            Err(refused) => {
                // A first folder refused leaves no index behind.
                if blocking(move || index.folder_paths()).await.is_ok_and(|f| f.is_empty()) {
                    self.delete_index().await;
                }
                return Err(refused);
            }
        };
        self.publish().await;
        Ok(view(&folder))
    }

    /// Closes the index and deletes its files (no folder is left).
    async fn delete_index(&self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let _running = self.running.lock().await;
        self.stop.store(false, std::sync::atomic::Ordering::Relaxed);
        drop(lock(&self.watcher).take());
        drop(lock(&self.open).take());
        for suffix in ["", "-wal", "-shm"] {
            let file = PathBuf::from(format!("{}{suffix}", self.db_path.display()));
            if let Err(e) = std::fs::remove_file(&file)
                && e.kind() != std::io::ErrorKind::NotFound
            {
                tracing::warn!(file = %file.display(), error = %e, "could not delete the knowledge index");
            }
        }
    }

    /// Removes a folder and what was indexed from it; with the last one, the index itself.
    pub async fn remove_folder(&self, path: &Path) -> Result<(), KnowledgeError> {
        let Some(index) = self.index() else {
            return Err(KnowledgeError::UnknownFolder(path.to_path_buf()));
        };
        let path = path.to_path_buf();
        let left = blocking(move || {
            index.remove_folder(&path)?;
            index.folder_paths()
        })
        .await?;
        if left.is_empty() {
            self.delete_index().await;
        }
        self.publish().await;
        Ok(())
    }

    /// Indexes one folder, or all, now (what changed since the last run), and watches them.
    pub async fn reindex(self: &Arc<Self>, folder: Option<&Path>) -> Result<Vec<Report>, KnowledgeError> {
        let _running = self.running.lock().await;
        let Some(index) = self.index() else { return Ok(Vec::new()) };
        self.ready().await;
        let folders: Vec<PathBuf> = match folder {
            Some(f) => vec![f.canonicalize().unwrap_or_else(|_| f.to_path_buf())],
            None => {
                let index = index.clone();
                blocking(move || index.folder_paths()).await?
            }
        };
        let mut reports = Vec::new();
        for folder in folders {
            let (run, stop, status) = (index.clone(), self.stop.clone(), self.status.clone());
            let report = blocking(move || {
                run.index(&folder, &stop, &|p| {
                    status.send_modify(|s| {
                        s.indexing = Some(IndexingProgress {
                            folder: p.folder.display().to_string(),
                            done: p.done as u32,
                            total: p.total as u32,
                            passages: false,
                        });
                    });
                })
            })
            .await?;
            self.watch(&index, report.dirs.clone());
            reports.push(report);
            // The folder is searchable by its words now; the counts show it.
            self.publish().await;
        }
        let embedded = self.embed(&index).await;
        self.status.send_modify(|s| s.indexing = None);
        self.publish().await;
        embedded?;
        Ok(reports)
    }

    /// Gives the passages read since the last time their vectors, with progress.
    async fn embed(&self, index: &Arc<Knowledge>) -> Result<(), KnowledgeError> {
        let (run, stop, status) = (index.clone(), self.stop.clone(), self.status.clone());
        let embedded = blocking(move || {
            run.embed_pending(&stop, &|p| {
                status.send_modify(|s| {
                    s.indexing = Some(IndexingProgress {
                        folder: String::new(),
                        done: p.done as u32,
                        total: p.total as u32,
                        passages: true,
                    });
                });
            })
        })
        .await?;
        if embedded > 0 {
            tracing::info!(embedded, "knowledge passages embedded");
        }
        Ok(())
    }

    /// After the watcher indexed changes: their passages' vectors, one run at a time.
    async fn embed_changes(&self) {
        let _running = self.running.lock().await;
        if let Some(index) = self.index() {
            self.ready().await;
            if let Err(e) = self.embed(&index).await {
                tracing::warn!(error = %e, "changed knowledge passages could not be embedded");
            }
        }
        self.status.send_modify(|s| s.indexing = None);
        self.publish().await;
    }

    fn watch(self: &Arc<Self>, index: &Arc<Knowledge>, dirs: Vec<PathBuf>) {
        let mut watcher = lock(&self.watcher);
        if watcher.is_none() {
            let this = Arc::downgrade(self);
            let runtime = tokio::runtime::Handle::current();
            match Watcher::start(index.clone(), move |paths| {
                tracing::debug!(changed = paths.len(), "knowledge folders changed");
                if let Some(this) = this.upgrade() {
                    runtime.spawn(async move { this.embed_changes().await });
                }
            }) {
                Ok(w) => *watcher = Some(w),
                Err(e) => {
                    tracing::warn!(error = %e, "the knowledge folders are not watched; reindex them by hand");
                    return;
                }
            }
        }
        if let Some(w) = watcher.as_ref() {
            w.watch(dirs);
        }
    }

    /// The passages that answer `query` best.
    pub async fn search(&self, query: &str, k: usize) -> Result<Search, KnowledgeError> {
        self.ready().await;
        let Some(index) = self.index() else {
            return Err(KnowledgeError::Database("no folder has been added".into()));
        };
        let query = query.to_owned();
        blocking(move || index.search(&query, k)).await
    }

    /// The passages for the composer's `#` picker: `None` when no folder has been added (the
    /// picker stays closed, so a `#` typed for another reason opens nothing).
    pub async fn pick(&self, query: &str, k: usize) -> Result<Option<Vec<FoundPassage>>, KnowledgeError> {
        if self.index().is_none() {
            return Ok(None);
        }
        let found = self.search(query, k).await?;
        Ok(Some(found.passages.iter().map(FoundPassage::from).collect()))
    }

    /// The passage at exactly these lines of `path`, as indexed now (`None`: it is gone).
    pub async fn passage(
        &self,
        path: &Path,
        start: usize,
        end: usize,
    ) -> Result<Option<Passage>, KnowledgeError> {
        let Some(index) = self.index() else { return Ok(None) };
        let path = path.to_owned();
        blocking(move || index.passage(&path, start, end)).await
    }

    /// Pauses index runs (what is indexed stays searchable), or resumes them: what changed in
    /// the meantime is indexed then.
    pub fn set_paused(self: &Arc<Self>, paused: bool) {
        if let Some(index) = self.index() {
            index.set_paused(paused);
            if !paused {
                self.start();
            }
        }
        self.status.send_modify(|s| s.paused = paused);
    }

    /// The folders' paths (an answer's references are checked against them).
    pub async fn folders(&self) -> Vec<PathBuf> {
        match self.index() {
            Some(index) => blocking(move || index.folder_paths()).await.unwrap_or_default(),
            None => Vec::new(),
        }
    }

    pub async fn status(&self) -> KnowledgeStatus {
        self.publish().await;
        self.status.borrow().clone()
    }

    /// Reads the folders into the status (runs set and clear `indexing` as they go).
    async fn publish(&self) {
        let _one = self.publishing.lock().await;
        let folders = match self.index() {
            Some(index) => blocking(move || index.folders()).await.unwrap_or_default(),
            None => Vec::new(),
        };
        let words_only = !folders.is_empty() && !self.minilm.present();
        let paused = self.index().is_some_and(|i| i.paused());
        self.status.send_modify(|s| {
            s.folders = folders.iter().map(view).collect();
            s.paused = paused;
            s.words_only = words_only;
        });
    }

    /// Stops the watcher and any index run (at exit).
    pub fn shutdown(&self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        drop(lock(&self.watcher).take());
    }
}

fn view(folder: &perch_knowledge::Folder) -> KnowledgeFolder {
    KnowledgeFolder {
        path: folder.path.display().to_string(),
        files: folder.files as u32,
        passages: folder.chunks as u32,
    }
}

impl KnowledgeSource for KnowledgeService {
    fn index(&self) -> Option<Arc<Knowledge>> {
        KnowledgeService::index(self)
    }

    fn ready(&self) -> BoxFuture<'_, ()> {
        KnowledgeService::ready(self).boxed()
    }
}
