//! Attachment rows. The files themselves live in the data dir's `attachments/` folder, named by
//! their content hash; rows only point at them.

use rusqlite::params;
use serde::Serialize;

use super::{Store, StoreError, now_ms};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct Attachment {
    pub id: i64,
    pub message_id: i64,
    pub kind: String,
    /// Relative to the attachments folder.
    pub path: String,
    pub mime: String,
    pub bytes: i64,
    /// An attached file's path on the user's disk, as picked (absent for images and captures).
    pub name: Option<String>,
}

/// A new attachment row.
pub struct NewAttachment<'a> {
    pub kind: &'a str,
    pub path: &'a str,
    pub mime: &'a str,
    pub bytes: i64,
    pub sha256: &'a str,
    pub name: Option<&'a str>,
}

impl Store {
    pub async fn add_attachment(&self, message_id: i64, new: NewAttachment<'_>) -> Result<i64, StoreError> {
        let (kind, path, mime, sha256, bytes) =
            (new.kind.to_owned(), new.path.to_owned(), new.mime.to_owned(), new.sha256.to_owned(), new.bytes);
        let name = new.name.map(str::to_owned);
        self.call(move |c| {
            c.execute(
                "INSERT INTO attachments (message_id, kind, path, mime, bytes, sha256, created_at, name)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![message_id, kind, path, mime, bytes, sha256, now_ms(), name],
            )?;
            Ok(c.last_insert_rowid())
        })
        .await
    }

    /// Every attachment of a conversation's messages.
    pub async fn attachments(&self, conversation_id: &str) -> Result<Vec<Attachment>, StoreError> {
        let id = conversation_id.to_owned();
        self.call(move |c| {
            let mut stmt = c.prepare(
                "SELECT a.id, a.message_id, a.kind, a.path, a.mime, a.bytes, a.name FROM attachments a
                 JOIN messages m ON m.id = a.message_id WHERE m.conversation_id = ?1 ORDER BY a.id",
            )?;
            let rows = stmt.query_map([id], |r| {
                Ok(Attachment {
                    id: r.get(0)?,
                    message_id: r.get(1)?,
                    kind: r.get(2)?,
                    path: r.get(3)?,
                    mime: r.get(4)?,
                    bytes: r.get(5)?,
                    name: r.get(6)?,
                })
            })?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }
}
