//! Which Perch process is streaming an answer, and whether it still runs.
//!
//! Several processes share one data folder (the app, `perch ask`, `perch history`). Each engine
//! takes an exclusive lock on its own file in `live/` and holds it while the process lives; the
//! operating system drops the lock when the process ends, however it ends (kill -9 included).
//! An answer records its owner's id, so a starting engine can tell an answer cut off by a dead
//! process (its owner's file can be locked, or is gone) from one another process is still
//! streaming (the lock is held), which it must leave alone. Locks, unlike a recorded PID, cannot
//! be fooled by a PID the system gave to a new process.

use std::fs::{File, OpenOptions, TryLockError};
use std::io;
use std::path::{Path, PathBuf};

const DIR: &str = "live";

/// This process's claim: the lock is held until the value is dropped.
#[derive(Debug)]
pub struct ProcessOwner {
    id: String,
    path: PathBuf,
    _lock: File,
}

impl ProcessOwner {
    /// Creates and locks a new owner file in `data_dir/live/`.
    pub fn claim(data_dir: &Path) -> io::Result<Self> {
        let dir = data_dir.join(DIR);
        std::fs::create_dir_all(&dir)?;
        let id = uuid::Uuid::new_v4().simple().to_string();
        // Locked before it gets its name, so no other process ever sees it unlocked.
        let claiming = dir.join(format!("{id}.claiming"));
        let file = OpenOptions::new().write(true).create_new(true).open(&claiming)?;
        file.try_lock().map_err(io::Error::from)?;
        let path = dir.join(format!("{id}.lock"));
        std::fs::rename(&claiming, &path)?;
        Ok(Self { id, path, _lock: file })
    }

    /// The id answers record as their owner.
    pub fn id(&self) -> &str {
        &self.id
    }
}

impl Drop for ProcessOwner {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Whether the process that recorded `id` still runs (holds its lock).
pub fn is_running(data_dir: &Path, id: &str) -> bool {
    // Ids are ours (hex); anything else in the database names no file of ours.
    if id.is_empty() || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return false;
    }
    let Ok(file) = File::open(data_dir.join(DIR).join(format!("{id}.lock"))) else { return false };
    match file.try_lock() {
        Err(TryLockError::WouldBlock) => true,
        // Locked by us just now (so nobody held it), or the lock cannot be taken at all.
        Ok(()) | Err(TryLockError::Error(_)) => false,
    }
}

/// Removes the files of processes that have ended (left behind by a kill or a crash).
pub fn sweep(data_dir: &Path) {
    let Ok(entries) = std::fs::read_dir(data_dir.join(DIR)) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(id) = name.to_str().and_then(|n| n.strip_suffix(".lock")) else { continue };
        if !is_running(data_dir, id) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_owner_runs_until_its_claim_is_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let first = ProcessOwner::claim(tmp.path()).unwrap();
        let second = ProcessOwner::claim(tmp.path()).unwrap();
        assert_ne!(first.id(), second.id());
        assert!(is_running(tmp.path(), first.id()), "a lock held through another handle counts");
        let id = first.id().to_owned();
        drop(first);
        assert!(!is_running(tmp.path(), &id));
        assert!(is_running(tmp.path(), second.id()));
        assert!(!is_running(tmp.path(), "../../etc/passwd"));
        assert!(!is_running(tmp.path(), ""));
    }

    #[test]
    fn sweeping_removes_only_the_files_of_ended_processes() {
        let tmp = tempfile::tempdir().unwrap();
        let live = ProcessOwner::claim(tmp.path()).unwrap();
        // What a killed process leaves: its file, with no lock on it.
        let dead = tmp.path().join(DIR).join("0123abcd.lock");
        std::fs::write(&dead, "").unwrap();
        sweep(tmp.path());
        assert!(!dead.exists());
        assert!(tmp.path().join(DIR).join(format!("{}.lock", live.id())).exists());
    }
}
