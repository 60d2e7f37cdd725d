//! SQLite storage: one connection owned by a dedicated thread, reached through async calls.
//!
//! SQLite calls block, so they never run on the async runtime: [`Store::call`] ships a closure
//! to the worker thread and awaits its reply. Opening detects a damaged file (kept as a
//! timestamped backup, replaced by a fresh database) and refuses a newer schema.

mod attachments;
mod history;
mod memories;
pub mod migrations;
mod reviews;
mod settings_rows;
pub mod terminal;
pub mod tool_calls;

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::thread;

use rusqlite::{Connection, ErrorCode, OpenFlags};
use serde::Serialize;
use tokio::sync::oneshot;

pub use attachments::{Attachment, NewAttachment};
pub use history::*;
pub use memories::{MEMORY_MAX_CHARS, Memory, MemoryUse, memory_text};
pub use migrations::LATEST_VERSION;
pub use reviews::ReviewRow;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    #[error(
        "the history database {path} was written by a newer Perch (schema {found}; this build knows up to {supported}). Update Perch, or move the file aside to start a new history"
    )]
    TooNew { path: PathBuf, found: i64, supported: i64 },
    #[error("the history database {path} could not be opened: {reason}")]
    Open { path: PathBuf, reason: String },
    #[error("the damaged database {path} could not be moved aside ({source}); move it yourself and restart")]
    Backup { path: PathBuf, source: std::io::Error },
    #[error("{0} was not found")]
    NotFound(String),
    #[error("{0}")]
    Invalid(String),
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("the database worker has stopped")]
    Closed,
}

/// How thoroughly to look for damage when opening.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Integrity {
    /// Read the header and schema: fast enough for every start.
    Quick,
    /// Also run `PRAGMA quick_check` over every page (for `perch doctor`).
    Full,
}

/// What opening found, for the UI banner and `perch doctor`.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct OpenReport {
    pub path: PathBuf,
    pub schema_version: i64,
    /// The version found on disk before migrations ran (0 for a new file).
    pub upgraded_from: i64,
    /// Set when the file was damaged: why, and where the damaged file was kept.
    pub recovered: Option<Recovery>,
}

#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct Recovery {
    pub reason: String,
    pub backup: PathBuf,
}

type Job = Box<dyn FnOnce(&mut Connection) + Send>;

/// A cheap, cloneable handle to the database worker. The worker ends when the last handle drops.
#[derive(Clone, Debug)]
pub struct Store {
    jobs: mpsc::Sender<Job>,
}

impl Store {
    /// Opens (creating, recovering or migrating as needed) the database at `path`.
    pub async fn open(path: &Path, integrity: Integrity) -> Result<(Store, OpenReport), StoreError> {
        let path = path.to_path_buf();
        let (ready_tx, ready_rx) = oneshot::channel();
        let (jobs, job_rx) = mpsc::channel::<Job>();
        thread::Builder::new()
            .name("perch-sqlite".into())
            .spawn(move || match open_retrying(&path, integrity) {
                Ok((mut conn, report)) => {
                    let _ = ready_tx.send(Ok(report));
                    for job in job_rx {
                        job(&mut conn);
                    }
                }
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                }
            })
            .map_err(|e| StoreError::Open { path: PathBuf::new(), reason: e.to_string() })?;
        let report = ready_rx.await.map_err(|_| StoreError::Closed)??;
        Ok((Store { jobs }, report))
    }

    /// Runs `f` on the worker thread with the connection and returns its result.
    pub async fn call<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        self.jobs
            .send(Box::new(move |conn| {
                let _ = tx.send(f(conn));
            }))
            .map_err(|_| StoreError::Closed)?;
        rx.await.map_err(|_| StoreError::Closed)?
    }
}

/// `open_blocking`, again for up to 5 s while another process holds the database busy beyond
/// what the busy handler waits for: SQLite answers `SQLITE_BUSY` at once, without waiting, when
/// waiting could deadlock (two first opens at the same moment: one turning the file to WAL, the
/// other reading it). Every step is safe to repeat (migrations check the version under their
/// write lock).
fn open_retrying(path: &Path, integrity: Integrity) -> Result<(Connection, OpenReport), StoreError> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match open_blocking(path, integrity) {
            Err(StoreError::Sqlite(e))
                if e.sqlite_error_code() == Some(ErrorCode::DatabaseBusy)
                    && std::time::Instant::now() < deadline =>
            {
                thread::sleep(std::time::Duration::from_millis(20));
            }
            other => return other,
        }
    }
}

fn open_blocking(path: &Path, integrity: Integrity) -> Result<(Connection, OpenReport), StoreError> {
    let mut recovered = None;
    let mut conn = match open_checked(path, integrity) {
        Ok(conn) => conn,
        Err(OpenFailure::Damaged(reason)) => {
            let backup = move_aside(path)?;
            tracing::error!(path = %path.display(), backup = %backup.display(), %reason,
                "the database was damaged; kept a backup and started a new one");
            recovered = Some(Recovery { reason, backup });
            open_checked(path, Integrity::Quick).map_err(|f| f.into_error(path))?
        }
        Err(other) => return Err(other.into_error(path)),
    };
    let found = migrations::current_version(&conn)?;
    if found > LATEST_VERSION {
        return Err(StoreError::TooNew { path: path.to_path_buf(), found, supported: LATEST_VERSION });
    }
    configure(&conn)?;
    if found > 0 && found < LATEST_VERSION {
        backup_before_upgrade(&conn, path, found);
    }
    let upgraded_from = migrations::migrate(&mut conn)?;
    let report = OpenReport {
        path: path.to_path_buf(),
        schema_version: migrations::current_version(&conn)?,
        upgraded_from,
        recovered,
    };
    Ok((conn, report))
}

enum OpenFailure {
    Damaged(String),
    Other(rusqlite::Error),
}

impl OpenFailure {
    fn into_error(self, path: &Path) -> StoreError {
        let reason = match self {
            OpenFailure::Damaged(r) => r,
            OpenFailure::Other(e) => e.to_string(),
        };
        StoreError::Open { path: path.to_path_buf(), reason }
    }
}

impl From<rusqlite::Error> for OpenFailure {
    fn from(e: rusqlite::Error) -> Self {
        match e.sqlite_error_code() {
            Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => OpenFailure::Damaged(e.to_string()),
            _ => OpenFailure::Other(e),
        }
    }
}

fn open_checked(path: &Path, integrity: Integrity) -> Result<Connection, OpenFailure> {
    let flags =
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    // Reading the schema touches the header and the first page: garbage fails here.
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get::<_, i64>(0))?;
    if integrity == Integrity::Full {
        let verdict: String = conn.query_row("PRAGMA quick_check(1)", [], |r| r.get(0))?;
        if verdict != "ok" {
            return Err(OpenFailure::Damaged(format!("integrity check failed: {verdict}")));
        }
    }
    Ok(conn)
}

/// Connection settings, applied only once the file is known to be ours to write.
fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0))?;
    conn.pragma_update(None, "foreign_keys", true)?;
    conn.pragma_update(None, "synchronous", "NORMAL")
}

/// Renames a damaged database (and its WAL and shared-memory files) to `NAME.corrupt-TIMESTAMP`.
fn move_aside(path: &Path) -> Result<PathBuf, StoreError> {
    let stamp = chrono::Local::now().format("%Y%m%d-%H%M%S");
    let backup = sibling(path, &format!(".corrupt-{stamp}"));
    std::fs::rename(path, &backup)
        .map_err(|source| StoreError::Backup { path: path.to_path_buf(), source })?;
    for suffix in ["-wal", "-shm"] {
        let side = sibling(path, suffix);
        if side.exists() {
            let _ = std::fs::rename(&side, sibling(&backup, suffix));
        }
    }
    Ok(backup)
}

/// Keeps a copy of the database as it was before an upgrade, in case the new schema disappoints.
fn backup_before_upgrade(conn: &Connection, path: &Path, version: i64) {
    let backup = sibling(path, &format!(".v{version}.bak"));
    let _ = std::fs::remove_file(&backup);
    match conn.execute("VACUUM INTO ?1", [backup.to_string_lossy()]) {
        Ok(_) => {
            tracing::info!(backup = %backup.display(), "kept a copy of the database before upgrading")
        }
        Err(e) => tracing::warn!(error = %e, "could not copy the database before upgrading"),
    }
}

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// Milliseconds since the Unix epoch, the unit of every time column.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
