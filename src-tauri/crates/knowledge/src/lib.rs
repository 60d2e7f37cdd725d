//! Knowledge folders: the user's folders (a repository, notes, a docs tree) indexed on this
//! machine and searched with hybrid retrieval, each passage cited as `path:start-end`.
//!
//! - What is indexed: text, Markdown and source code (`chunk`: cut along their structure),
//!   found by the one file walk (`perch-files`: `.gitignore` rules, hidden files and build
//!   folders skipped); never a binary, a file over [`MAX_FILE_BYTES`], a secret by its name or
//!   content, or anything in a credential store (`perch_foundation::secrets`, the terminal's
//!   list).
//! - Where: one SQLite file (`db`), BM25 through FTS5 and 8-bit sentence embeddings
//!   (all-MiniLM-L6-v2 through [`Embed`]); a search ranks both and fuses the two rankings
//!   (reciprocal rank fusion), so a passage that names the words and one that means them both
//!   come up. Without the embedding model it is BM25 alone, and says so.
//! - Kept current (`watch`): a change is seen through inotify and indexed again within
//!   seconds; a scan compares each file's size and time with the index's, so only what changed
//!   is read.
//!
//! Blocking throughout: callers run it on a blocking thread.

mod chunk;
mod db;
mod search;
pub mod tool;
pub mod watch;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

pub use chunk::{Chunk, Kind, chunks, kind_of};
pub use db::Folder;
pub use search::{Passage, Retrieval, Search};

/// Larger files are not indexed (a generated file, a data dump, a minified bundle).
pub const MAX_FILE_BYTES: u64 = 1024 * 1024;
/// A PDF is mostly fonts and pictures around its text: larger ones are read.
pub const MAX_PDF_BYTES: u64 = 32 * 1024 * 1024;
/// The time one PDF may take to read; a larger or stranger one is skipped, and says so.
const PDF_BUDGET: std::time::Duration = std::time::Duration::from_secs(20);
/// Passages embedded at a time (the model batches by length inside).
const EMBED_BATCH: usize = 64;
/// The database's file name in the data folder.
pub const DB_FILE: &str = "knowledge.db";

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KnowledgeError {
    #[error("the knowledge index: {0}")]
    Database(String),
    #[error("{path}: {message}")]
    Folder { path: PathBuf, message: String },
    #[error("the embedding model failed: {0}")]
    Embedding(String),
    #[error("no folder {0} is in the knowledge index")]
    UnknownFolder(PathBuf),
}

/// Turns passages into unit vectors (the model behind the semantic half of a search).
pub trait Embed: Send + Sync {
    /// Names the model: vectors from two models are never compared.
    fn model_id(&self) -> String;
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String>;
}

impl Embed for perch_retrieval::MiniLm {
    fn model_id(&self) -> String {
        Self::MODEL_ID.to_owned()
    }

    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, String> {
        self.embed_blocking(texts).map_err(|e| e.to_string())
    }
}

/// Progress of an index run (files; `folder` is the folder) or of embedding (passages;
/// `folder` is empty), for a progress bar.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Progress {
    pub folder: PathBuf,
    /// Done so far, and in all (files are known once the folder was walked).
    pub done: u64,
    pub total: u64,
}

/// What one index run did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Report {
    /// Files read and indexed (new or changed).
    pub indexed: u64,
    /// Files unchanged since the last run.
    pub unchanged: u64,
    /// Files gone from the folder, forgotten.
    pub removed: u64,
    /// Files not indexed, with why (a secret, too large, not text).
    pub skipped: Vec<(PathBuf, String)>,
    /// Stopped before the end (paused or cancelled); the rest is done next time.
    pub stopped: bool,
    /// The folders the walk entered, for the watcher.
    #[serde(skip)]
    pub dirs: Vec<PathBuf>,
}

pub struct Knowledge {
    db: Mutex<db::Db>,
    embedder: Mutex<Option<Arc<dyn Embed>>>,
    /// Bumped by every change to the passages, so a search knows its vectors are stale.
    generation: AtomicU64,
    vectors: Mutex<search::Vectors>,
    paused: AtomicBool,
    home: PathBuf,
}

impl std::fmt::Debug for Knowledge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Knowledge").finish_non_exhaustive()
    }
}

fn now_secs() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

impl Knowledge {
    /// Opens (or creates) the index at `path`.
    pub fn open(path: &Path) -> Result<Self, KnowledgeError> {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
        Ok(Self {
            db: Mutex::new(db::Db::open(path)?),
            embedder: Mutex::new(None),
            generation: AtomicU64::new(1),
            vectors: Mutex::new(search::Vectors::default()),
            paused: AtomicBool::new(false),
            home,
        })
    }

    fn db(&self) -> MutexGuard<'_, db::Db> {
        self.db.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn changed(&self) {
        self.generation.fetch_add(1, Ordering::Relaxed);
    }

    /// Sets the embedding model. Passages embedded by another model lose their vectors;
    /// [`Knowledge::embed_pending`] gives them new ones.
    pub fn set_embedder(&self, embedder: Option<Arc<dyn Embed>>) -> Result<(), KnowledgeError> {
        if let Some(model) = embedder.as_ref().map(|e| e.model_id()) {
            let db = self.db();
            if db.meta("model")?.as_deref() != Some(model.as_str()) {
                db.clear_vectors()?;
                db.set_meta("model", &model)?;
                drop(db);
                self.changed();
            }
        }
        *self.embedder.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = embedder;
        Ok(())
    }

    /// Embeds the passages that have no vector yet (new ones, or all after the model changed),
    /// a batch at a time, until none is left or `stop`. Index runs store passages by their words
    /// alone, so a folder is searchable as soon as it is read and meaning follows, at the
    /// embedding model's pace (a few passages a second on two cores). Returns how many it
    /// embedded; nothing without a model.
    pub fn embed_pending(
        &self,
        stop: &AtomicBool,
        progress: &dyn Fn(Progress),
    ) -> Result<u64, KnowledgeError> {
        let Some(embedder) = self.embedder() else { return Ok(0) };
        let total = self.db().pending()?;
        let mut done = 0;
        while !stop.load(Ordering::Relaxed) && !self.paused() {
            let batch = self.db().pending_batch(EMBED_BATCH)?;
            if batch.is_empty() {
                break;
            }
            let texts: Vec<String> =
                batch.iter().map(|p| embedding_text(&p.relative, &p.heading, &p.text)).collect();
            let vectors = embedder.embed(&texts).map_err(KnowledgeError::Embedding)?;
            let ids: Vec<i64> = batch.iter().map(|p| p.id).collect();
            self.db().set_vectors(&ids, &vectors)?;
            self.changed();
            done += ids.len() as u64;
            progress(Progress { folder: PathBuf::new(), done: done.min(total), total });
        }
        Ok(done)
    }

    fn embedder(&self) -> Option<Arc<dyn Embed>> {
        self.embedder.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Stops index runs between files (what is indexed stays searchable) until resumed.
    pub fn set_paused(&self, paused: bool) {
        self.paused.store(paused, Ordering::Relaxed);
    }

    pub fn paused(&self) -> bool {
        self.paused.load(Ordering::Relaxed)
    }

    /// Adds a folder (not yet indexed: [`Knowledge::index`] does that).
    pub fn add_folder(&self, path: &Path) -> Result<Folder, KnowledgeError> {
        let folder_error = |message: String| KnowledgeError::Folder { path: path.to_path_buf(), message };
        let path = path.canonicalize().map_err(|e| folder_error(format!("cannot be opened: {e}")))?;
        if !path.is_dir() {
            return Err(folder_error("is not a folder".into()));
        }
        if let Some(store) = perch_foundation::secrets::credential_store(&path, &self.home) {
            return Err(folder_error(format!("is a credential store ({store}), which is never indexed")));
        }
        let db = self.db();
        let id = db.add_folder(&path, now_secs())?;
        let folder = db.folders()?.into_iter().find(|f| f.id == id);
        folder.ok_or(KnowledgeError::UnknownFolder(path))
    }

    /// Removes a folder and everything indexed from it.
    pub fn remove_folder(&self, path: &Path) -> Result<(), KnowledgeError> {
        let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        if !self.db().remove_folder(&path)? {
            return Err(KnowledgeError::UnknownFolder(path));
        }
        self.changed();
        Ok(())
    }

    /// The folders with their files and passages counted (Settings, `perch knowledge list`).
    pub fn folders(&self) -> Result<Vec<Folder>, KnowledgeError> {
        self.db().folders()
    }

    /// The folders' paths, without the counts.
    pub fn folder_paths(&self) -> Result<Vec<PathBuf>, KnowledgeError> {
        Ok(self.db().folder_paths()?.into_iter().map(|(_, path)| path).collect())
    }

    /// The folder `path` belongs to: its id and path (the watcher asks for every changed path,
    /// so without counting passages).
    fn folder_of(&self, path: &Path) -> Result<Option<(i64, PathBuf)>, KnowledgeError> {
        let folders = self.db().folder_paths()?;
        Ok(folders.into_iter().filter(|(_, f)| path.starts_with(f)).max_by_key(|(_, f)| f.as_os_str().len()))
    }

    /// Indexes what changed in a folder since the last run: new and changed files read,
    /// removed ones forgotten. `stop` ends it between files, as pausing does.
    pub fn index(
        &self,
        folder: &Path,
        stop: &AtomicBool,
        progress: &dyn Fn(Progress),
    ) -> Result<Report, KnowledgeError> {
        let folder = folder.canonicalize().unwrap_or_else(|_| folder.to_path_buf());
        let Some(entry) = self.folders()?.into_iter().find(|f| f.path == folder) else {
            return Err(KnowledgeError::UnknownFolder(folder));
        };
        let mut report = Report::default();
        let mut files = Vec::new();
        let walk = perch_files::walk::walk(&[&folder], perch_files::walk::WalkOptions::default(), |_| false);
        for found in walk.into_iter().flatten().flatten() {
            match found.file_type() {
                Some(t) if t.is_dir() => report.dirs.push(found.into_path()),
                Some(t) if t.is_file() => files.push(found.into_path()),
                _ => {}
            }
        }
        let mut seen = self.db().seen(entry.id)?;
        let total = files.len() as u64;
        progress(Progress { folder: folder.clone(), done: 0, total });
        for (i, file) in files.iter().enumerate() {
            if stop.load(Ordering::Relaxed) || self.paused() {
                report.stopped = true;
                break;
            }
            let before = seen.remove(file);
            match self.index_file(entry.id, &folder, file, before)? {
                Outcome::Indexed => report.indexed += 1,
                Outcome::Unchanged => report.unchanged += 1,
                Outcome::Skipped(why) => report.skipped.push((file.clone(), why)),
            }
            if i % 16 == 15 || i + 1 == files.len() {
                progress(Progress { folder: folder.clone(), done: i as u64 + 1, total });
            }
        }
        if !report.stopped {
            // Whatever the walk did not find again is gone (deleted, renamed, now ignored).
            let db = self.db();
            for gone in seen.values() {
                db.forget_id(gone.id)?;
                report.removed += 1;
            }
            drop(db);
            if report.removed > 0 {
                self.changed();
            }
        }
        tracing::info!(folder = %folder.display(), indexed = report.indexed, unchanged = report.unchanged,
            removed = report.removed, skipped = report.skipped.len(), stopped = report.stopped, "knowledge folder indexed");
        Ok(report)
    }

    /// Brings the index up to date for paths that changed (from the watcher): each file read
    /// again or forgotten, each new folder walked. A new folder and those inside it are handed
    /// to `watch` before their files are read, so a file written meanwhile is seen by the read
    /// or by the watch.
    pub fn update(&self, paths: &[PathBuf], watch: &dyn Fn(Vec<PathBuf>)) -> Result<(), KnowledgeError> {
        let walk = |dir: &Path| {
            perch_files::walk::walk(&[dir], perch_files::walk::WalkOptions::default(), |_| false)
                .into_iter()
                .flatten()
                .flatten()
        };
        for path in paths {
            let Some((folder_id, root)) = self.folder_of(path)? else { continue };
            if path.is_dir() {
                if admitted_by_walk(&root, path) {
                    watch(
                        walk(path)
                            .filter(|e| e.file_type().is_some_and(|t| t.is_dir()))
                            .map(|e| e.into_path())
                            .collect(),
                    );
                    for found in walk(path).filter(|e| e.file_type().is_some_and(|t| t.is_file())) {
                        let seen = self.db().seen_one(found.path())?;
                        self.index_file(folder_id, &root, found.path(), seen)?;
                    }
                }
            } else if path.is_file() && admitted_by_walk(&root, path) {
                let seen = self.db().seen_one(path)?;
                self.index_file(folder_id, &root, path, seen)?;
            } else if self.db().forget(path)? > 0 {
                // Deleted, renamed away, or now ignored.
                self.changed();
            }
        }
        Ok(())
    }

    fn index_file(
        &self,
        folder_id: i64,
        root: &Path,
        path: &Path,
        before: Option<db::Seen>,
    ) -> Result<Outcome, KnowledgeError> {
        let meta = match std::fs::metadata(path) {
            Ok(meta) => meta,
            Err(e) => return Ok(Outcome::Skipped(format!("cannot be read: {e}"))),
        };
        let modified_ns = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i64);
        if before.is_some_and(|b| b.size == meta.len() && b.modified_ns == modified_ns) {
            return Ok(Outcome::Unchanged);
        }
        let skip = |why: String| {
            // A file that was indexed and now is not (it became a secret, grew too large) goes.
            if let Some(b) = before {
                self.db().forget_id(b.id)?;
                self.changed();
            }
            Ok(Outcome::Skipped(why))
        };
        if perch_foundation::secrets::secret_name(path) {
            return skip("its name says it holds a secret".into());
        }
        if let Some(store) = perch_foundation::secrets::credential_store(path, &self.home) {
            return skip(format!("it is in a credential store ({store})"));
        }
        let Some(kind) = kind_of(path) else { return skip("not a kind of file that is indexed".into()) };
        let pieces = if kind == Kind::Pdf {
            if meta.len() > MAX_PDF_BYTES {
                return skip(format!("a PDF larger than {} MiB", MAX_PDF_BYTES / (1024 * 1024)));
            }
            let bytes = match std::fs::read(path) {
                Ok(bytes) => bytes,
                Err(e) => return skip(format!("cannot be read: {e}")),
            };
            let pages = match perch_files::pdf::read(&bytes, 1, usize::MAX, PDF_BUDGET) {
                Ok(doc) => doc.pages,
                Err(e) => return skip(e.to_string()),
            };
            if pages.iter().any(|p| perch_foundation::secrets::secret_content(p)) {
                return skip("it holds a private key or a credential".into());
            }
            chunk::pdf_chunks(&pages)
        } else {
            if meta.len() > MAX_FILE_BYTES {
                return skip(format!("larger than {} KiB", MAX_FILE_BYTES / 1024));
            }
            let limits = perch_files::Limits { file_bytes: MAX_FILE_BYTES, message_bytes: MAX_FILE_BYTES };
            let text = match perch_files::read_text(path, &limits, None, &Default::default()) {
                Ok(file) => file.text,
                Err(perch_files::FilesError::Binary { .. }) => return skip("a binary file".into()),
                Err(e) => return skip(e.to_string()),
            };
            if perch_foundation::secrets::secret_content(&text) {
                return skip("it holds a private key or a credential".into());
            }
            chunks(&text, kind)
        };
        let relative = path.strip_prefix(root).unwrap_or(path).to_string_lossy().into_owned();
        let rows: Vec<db::NewChunk<'_>> = pieces
            .iter()
            .map(|c| db::NewChunk {
                start: c.start,
                end: c.end,
                heading: &c.heading,
                text: &c.text,
                words: search::words(&format!("{relative}\n{}\n{}", c.heading, c.text)),
            })
            .collect();
        self.db().put_file(folder_id, path, meta.len(), modified_ns, &rows)?;
        self.changed();
        Ok(Outcome::Indexed)
    }

    /// Files and passages in the whole index.
    pub fn counts(&self) -> Result<(u64, u64), KnowledgeError> {
        self.db().counts()
    }
}

enum Outcome {
    Indexed,
    Unchanged,
    Skipped(String),
}

/// What the embedding model reads of a passage: where it is, then what it says.
fn embedding_text(relative: &str, heading: &str, text: &str) -> String {
    if heading.is_empty() { format!("{relative}\n{text}") } else { format!("{relative} - {heading}\n{text}") }
}

/// Whether the one file walk would visit `path` inside `root`: no hidden or build folder on
/// the way, and no `.gitignore` rule against it (asked of the walk itself, one level deep).
fn admitted_by_walk(root: &Path, path: &Path) -> bool {
    let Ok(relative) = path.strip_prefix(root) else { return false };
    let hidden_or_skipped = relative.components().any(|c| {
        let name = c.as_os_str().to_string_lossy();
        name.starts_with('.') || perch_files::walk::SKIPPED_FOLDERS.contains(&name.as_ref())
    });
    if hidden_or_skipped {
        return false;
    }
    let Some(parent) = path.parent() else { return false };
    if parent != root && !admitted_by_walk(root, parent) {
        return false;
    }
    let options = perch_files::walk::WalkOptions { max_depth: Some(1), ..Default::default() };
    let walk = perch_files::walk::walk(&[parent], options, |_| false);
    walk.into_iter().flatten().flatten().any(|e| e.path() == path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_walk_decides_what_a_change_may_index() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/gen")).unwrap();
        std::fs::create_dir_all(root.join(".hidden")).unwrap();
        std::fs::create_dir_all(root.join("node_modules/x")).unwrap();
        std::fs::write(root.join(".gitignore"), "gen/\n*.log\n").unwrap();
        for f in ["src/a.rs", "src/gen/b.rs", ".hidden/c.md", "node_modules/x/d.js", "e.log", "f.md"] {
            std::fs::write(root.join(f), "x").unwrap();
        }
        assert!(admitted_by_walk(root, &root.join("src/a.rs")));
        assert!(admitted_by_walk(root, &root.join("f.md")));
        for refused in ["src/gen/b.rs", ".hidden/c.md", "node_modules/x/d.js", "e.log"] {
            assert!(!admitted_by_walk(root, &root.join(refused)), "{refused}");
        }
    }
}
