//! The `memories` table (what the user approved Perch keeps) and `answer_memories` (which of
//! them an answer was given, as their text was then).

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use super::{Store, StoreError, now_ms};

/// The longest memory, in characters: a fact or a preference, not a document.
pub const MEMORY_MAX_CHARS: usize = 500;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct Memory {
    pub id: i64,
    pub text: String,
    pub created_at: i64,
    pub updated_at: i64,
    /// The conversation the model proposed it in; `None` when the user wrote it.
    pub conversation_id: Option<String>,
}

/// A memory an answer was given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct MemoryUse {
    pub message_id: i64,
    /// `None` once the memory was forgotten.
    pub memory_id: Option<i64>,
    /// Its text when the answer was given it.
    pub text: String,
}

/// A memory's text, tidied: one line of at most [`MEMORY_MAX_CHARS`] characters.
pub fn memory_text(text: &str) -> Result<String, StoreError> {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        return Err(StoreError::Invalid("a memory cannot be empty".into()));
    }
    let chars = text.chars().count();
    if chars > MEMORY_MAX_CHARS {
        return Err(StoreError::Invalid(format!(
            "a memory is one fact of at most {MEMORY_MAX_CHARS} characters; this one has {chars}"
        )));
    }
    Ok(text)
}

const COLUMNS: &str = "id, text, created_at, updated_at, conversation_id";

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Memory> {
    Ok(Memory {
        id: r.get(0)?,
        text: r.get(1)?,
        created_at: r.get(2)?,
        updated_at: r.get(3)?,
        conversation_id: r.get(4)?,
    })
}

fn get(c: &Connection, id: i64) -> Result<Memory, StoreError> {
    c.query_row(&format!("SELECT {COLUMNS} FROM memories WHERE id = ?1"), [id], from_row)
        .optional()?
        .ok_or_else(|| StoreError::NotFound(format!("memory {id}")))
}

impl Store {
    /// Every memory, newest first.
    pub async fn memories(&self) -> Result<Vec<Memory>, StoreError> {
        self.call(|c| {
            let mut stmt = c.prepare(&format!("SELECT {COLUMNS} FROM memories ORDER BY id DESC"))?;
            let rows = stmt.query_map([], from_row)?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }

    /// Keeps a memory (`conversation_id`: the conversation it was proposed in). The same text
    /// kept twice is one memory.
    pub async fn add_memory(&self, text: &str, conversation_id: Option<&str>) -> Result<Memory, StoreError> {
        let text = memory_text(text)?;
        let conversation_id = conversation_id.map(str::to_owned);
        self.call(move |c| {
            if let Some(id) = c
                .query_row("SELECT id FROM memories WHERE text = ?1", [&text], |r| r.get::<_, i64>(0))
                .optional()?
            {
                return get(c, id);
            }
            let now = now_ms();
            // A conversation deleted meanwhile leaves the memory without one.
            let conversation_id = match conversation_id {
                Some(id) => c
                    .query_row("SELECT id FROM conversations WHERE id = ?1", [&id], |r| r.get::<_, String>(0))
                    .optional()?,
                None => None,
            };
            c.execute(
                "INSERT INTO memories (text, created_at, updated_at, conversation_id) VALUES (?1, ?2, ?2, ?3)",
                params![text, now, conversation_id],
            )?;
            get(c, c.last_insert_rowid())
        })
        .await
    }

    pub async fn edit_memory(&self, id: i64, text: &str) -> Result<Memory, StoreError> {
        let text = memory_text(text)?;
        self.call(move |c| {
            match c.execute(
                "UPDATE memories SET text = ?2, updated_at = ?3 WHERE id = ?1",
                params![id, text, now_ms()],
            )? {
                0 => Err(StoreError::NotFound(format!("memory {id}"))),
                _ => get(c, id),
            }
        })
        .await
    }

    /// Forgets a memory. The answers it was given keep its text as it was (they are history).
    pub async fn forget_memory(&self, id: i64) -> Result<(), StoreError> {
        self.call(move |c| match c.execute("DELETE FROM memories WHERE id = ?1", [id])? {
            0 => Err(StoreError::NotFound(format!("memory {id}"))),
            _ => Ok(()),
        })
        .await
    }

    /// Records the memories an answer was given.
    pub async fn set_answer_memories(&self, message_id: i64, used: &[Memory]) -> Result<(), StoreError> {
        let used: Vec<(i64, String)> = used.iter().map(|m| (m.id, m.text.clone())).collect();
        self.call(move |c| {
            let tx = c.transaction()?;
            tx.execute("DELETE FROM answer_memories WHERE message_id = ?1", [message_id])?;
            for (position, (id, text)) in used.iter().enumerate() {
                tx.execute(
                    "INSERT INTO answer_memories (message_id, position, memory_id, text)
                     VALUES (?1, ?2, (SELECT id FROM memories WHERE id = ?3), ?4)",
                    params![message_id, position as i64, id, text],
                )?;
            }
            tx.commit()?;
            Ok(())
        })
        .await
    }
}

/// The memories a conversation's answers were given, in order.
pub(crate) fn of_conversation(c: &Connection, conversation_id: &str) -> Result<Vec<MemoryUse>, StoreError> {
    let mut stmt = c.prepare(
        "SELECT a.message_id, a.memory_id, a.text FROM answer_memories a
         JOIN messages m ON m.id = a.message_id
         WHERE m.conversation_id = ?1 ORDER BY a.message_id, a.position",
    )?;
    let rows = stmt.query_map([conversation_id], |r| {
        Ok(MemoryUse { message_id: r.get(0)?, memory_id: r.get(1)?, text: r.get(2)? })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}
