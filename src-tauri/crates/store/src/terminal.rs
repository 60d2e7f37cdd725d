//! The terminal's records: each command's event (output head, exit code, duration, flags),
//! saved as it ends so a reopened conversation shows its terminal again, and the remembered
//! approvals ("always allow this command"), kept by hash.
//!
//! An approval's hash is the SHA-256 of the terminal's `Assessment::key`: the whole
//! normalised line and its folder. Rows saved when the key was each program with its first
//! two arguments keep their old hash, which no line produces any more: they match nothing,
//! and their commands are asked about again (Settings still lists them until revoked).

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use super::{Store, StoreError, now_ms};

/// One command as the panel and the history show it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct TerminalEvent {
    pub id: i64,
    pub conversation_id: Option<String>,
    pub message_id: Option<i64>,
    /// The tool call it belongs to.
    pub call_id: Option<String>,
    pub command: String,
    pub cwd: String,
    /// `None` while it runs, or when it never ran (denied, blocked) or was killed.
    pub exit_code: Option<i32>,
    /// The first 50 KB of the output, with terminal escapes.
    pub output: String,
    /// All the bytes it printed.
    pub output_bytes: i64,
    pub duration_ms: i64,
    pub timed_out: bool,
    pub denied: bool,
    /// Killed by Stop, kill_process or the panel.
    pub killed: bool,
    /// The blocklist's reason, when it refused the command.
    pub blocked: Option<String>,
    /// The sandbox it ran in, as the card showed it.
    pub sandbox: String,
    pub created_at: i64,
}

/// A remembered approval: its hash and what it covers, for Settings -> Terminal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct RememberedApproval {
    pub hash: String,
    pub label: String,
    pub created_at: i64,
}

const COLUMNS: &str = "id, conversation_id, message_id, call_id, command, COALESCE(cwd, ''), exit_code, COALESCE(output, ''), output_bytes, \
    duration_ms, timed_out, denied, killed, blocked, sandbox, created_at";

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<TerminalEvent> {
    Ok(TerminalEvent {
        id: r.get(0)?,
        conversation_id: r.get(1)?,
        message_id: r.get(2)?,
        call_id: r.get(3)?,
        command: r.get(4)?,
        cwd: r.get(5)?,
        exit_code: r.get(6)?,
        output: r.get(7)?,
        output_bytes: r.get(8)?,
        duration_ms: r.get(9)?,
        timed_out: r.get(10)?,
        denied: r.get(11)?,
        killed: r.get(12)?,
        blocked: r.get(13)?,
        sandbox: r.get(14)?,
        created_at: r.get(15)?,
    })
}

impl Store {
    /// Saves a command's event; returns its id.
    pub async fn add_terminal_event(&self, e: TerminalEvent) -> Result<i64, StoreError> {
        self.call(move |c| {
            c.execute(
                "INSERT INTO terminal_events (conversation_id, message_id, call_id, command, cwd, exit_code, output,
                    output_bytes, duration_ms, timed_out, denied, killed, blocked, sandbox, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
                params![
                    e.conversation_id,
                    e.message_id,
                    e.call_id,
                    e.command,
                    e.cwd,
                    e.exit_code,
                    e.output,
                    e.output_bytes,
                    e.duration_ms,
                    e.timed_out,
                    e.denied,
                    e.killed,
                    e.blocked,
                    e.sandbox,
                    if e.created_at == 0 { now_ms() } else { e.created_at },
                ],
            )?;
            Ok(c.last_insert_rowid())
        })
        .await
    }

    /// Every command of a conversation, oldest first.
    pub async fn terminal_events(&self, conversation_id: &str) -> Result<Vec<TerminalEvent>, StoreError> {
        let id = conversation_id.to_owned();
        self.call(move |c| {
            let mut stmt = c.prepare(&format!(
                "SELECT {COLUMNS} FROM terminal_events WHERE conversation_id = ?1 ORDER BY id"
            ))?;
            let rows = stmt.query_map([id], from_row)?.collect::<Result<_, _>>()?;
            Ok(rows)
        })
        .await
    }

    /// Remembers "always allow" for the line whose key hashes to `hash`; `label` is what
    /// Settings shows (`git diff --stat, in ~/src/app`).
    pub async fn remember_approval(&self, hash: &str, label: &str) -> Result<(), StoreError> {
        let (hash, label) = (hash.to_owned(), label.to_owned());
        self.call(move |c| {
            c.execute(
                "INSERT OR REPLACE INTO terminal_approvals (hash, label, created_at) VALUES (?1, ?2, ?3)",
                params![hash, label, now_ms()],
            )?;
            Ok(())
        })
        .await
    }

    pub async fn is_approval_remembered(&self, hash: &str) -> Result<bool, StoreError> {
        let hash = hash.to_owned();
        self.call(move |c| {
            Ok(c.query_row("SELECT 1 FROM terminal_approvals WHERE hash = ?1", [hash], |_| Ok(()))
                .optional()?
                .is_some())
        })
        .await
    }

    pub async fn remembered_approvals(&self) -> Result<Vec<RememberedApproval>, StoreError> {
        self.call(|c| {
            let mut stmt =
                c.prepare("SELECT hash, label, created_at FROM terminal_approvals ORDER BY created_at DESC")?;
            let rows = stmt
                .query_map([], |r| {
                    Ok(RememberedApproval { hash: r.get(0)?, label: r.get(1)?, created_at: r.get(2)? })
                })?
                .collect::<Result<_, _>>()?;
            Ok(rows)
        })
        .await
    }

    /// The working folder given to one conversation (`None`: the one from Settings holds).
    pub async fn conversation_folder(&self, conversation_id: &str) -> Result<Option<String>, StoreError> {
        let id = conversation_id.to_owned();
        self.call(move |c| {
            Ok(c.query_row("SELECT working_folder FROM conversations WHERE id = ?1", [id], |r| r.get(0))
                .optional()?
                .flatten())
        })
        .await
    }

    /// The conversations given their own working folder: (id, title, folder), most recently
    /// active first.
    pub async fn conversation_folders(&self) -> Result<Vec<(String, String, String)>, StoreError> {
        self.call(|c| {
            let mut stmt = c.prepare(
                "SELECT id, title, working_folder FROM conversations WHERE working_folder IS NOT NULL \
                 ORDER BY updated_at DESC",
            )?;
            let rows =
                stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?.collect::<Result<_, _>>()?;
            Ok(rows)
        })
        .await
    }

    /// Gives one conversation its own working folder, or (with `None`) hands it back to the one
    /// from Settings.
    pub async fn set_conversation_folder(
        &self,
        conversation_id: &str,
        folder: Option<&str>,
    ) -> Result<(), StoreError> {
        let (id, folder) = (conversation_id.to_owned(), folder.map(str::to_owned));
        self.call(move |c| {
            match c
                .execute("UPDATE conversations SET working_folder = ?2 WHERE id = ?1", params![id, folder])?
            {
                0 => Err(StoreError::NotFound(format!("conversation {id}"))),
                _ => Ok(()),
            }
        })
        .await
    }

    /// Forgets one remembered approval (or all, with `None`); returns how many were removed.
    pub async fn revoke_approval(&self, hash: Option<&str>) -> Result<usize, StoreError> {
        let hash = hash.map(str::to_owned);
        self.call(move |c| {
            Ok(match hash {
                Some(h) => c.execute("DELETE FROM terminal_approvals WHERE hash = ?1", [h])?,
                None => c.execute("DELETE FROM terminal_approvals", [])?,
            })
        })
        .await
    }
}
