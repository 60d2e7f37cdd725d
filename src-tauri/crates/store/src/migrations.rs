//! Versioned schema migrations, tracked in SQLite's `user_version`.
//!
//! Each migration runs in its own transaction together with the version bump, so a crash
//! mid-upgrade leaves the previous version intact. A database newer than this build is
//! refused by the caller before anything here runs.

use rusqlite::Connection;

use super::StoreError;

/// The migrations in order; migration `i` takes the schema from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/001_history.sql"),
    include_str!("migrations/002_search.sql"),
    include_str!("migrations/003_alternatives.sql"),
    include_str!("migrations/004_search_prefixes.sql"),
    include_str!("migrations/005_tool_calls.sql"),
    include_str!("migrations/006_answer_owner.sql"),
    include_str!("migrations/007_terminal.sql"),
    include_str!("migrations/008_attachment_names.sql"),
    include_str!("migrations/009_conversation_folder.sql"),
    include_str!("migrations/010_app_calls.sql"),
    include_str!("migrations/011_app_results.sql"),
    include_str!("migrations/012_app_context.sql"),
    include_str!("migrations/013_memories.sql"),
];

/// The schema version this build writes.
pub const LATEST_VERSION: i64 = MIGRATIONS.len() as i64;

pub fn current_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.pragma_query_value(None, "user_version", |row| row.get(0))
}

/// Applies every migration above the current version. Returns the version it started from.
pub fn migrate(conn: &mut Connection) -> Result<i64, StoreError> {
    migrate_to(conn, LATEST_VERSION)
}

/// Migrates up to `target` (tests use this to build a database at an older version).
pub fn migrate_to(conn: &mut Connection, target: i64) -> Result<i64, StoreError> {
    let from = current_version(conn)?;
    for version in from..target.min(LATEST_VERSION) {
        // Immediate: the write lock is taken before the version is read again, so two processes
        // opening a new or older database at once (the app and `perch`) apply each step once.
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        if current_version(&tx)? > version {
            continue;
        }
        tx.execute_batch(MIGRATIONS[version as usize])?;
        tx.pragma_update(None, "user_version", version + 1)?;
        tx.commit()?;
        tracing::info!(version = version + 1, "database schema migrated");
    }
    Ok(from)
}
