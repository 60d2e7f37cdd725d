//! Conversations and messages: the rows behind Chat and History.
//! (Over 500 lines: the queries of two tables that always go together, each one short.)

use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};
use serde::{Deserialize, Serialize};

use super::{Store, StoreError, now_ms};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum MessageStatus {
    Complete,
    Streaming,
    Stopped,
    Error,
}

macro_rules! text_enum {
    ($ty:ty { $($variant:ident => $text:literal),* $(,)? }) => {
        impl $ty {
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $text),* }
            }
            fn parse(text: &str) -> rusqlite::Result<Self> {
                match text {
                    $($text => Ok(Self::$variant),)*
                    other => Err(rusqlite::Error::InvalidColumnType(0, other.to_string(), rusqlite::types::Type::Text)),
                }
            }
        }
    };
}
text_enum!(Role { System => "system", User => "user", Assistant => "assistant", Tool => "tool" });
text_enum!(MessageStatus { Complete => "complete", Streaming => "streaming", Stopped => "stopped", Error => "error" });

/// A conversation as History lists it.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct Conversation {
    pub id: String,
    pub title: String,
    pub model: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    pub input_tokens: i64,
    pub output_tokens: i64,
    pub message_count: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct Message {
    pub id: i64,
    pub conversation_id: String,
    pub role: Role,
    pub content: String,
    pub thinking: Option<String>,
    pub model: Option<String>,
    pub status: MessageStatus,
    pub error: Option<String>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub created_at: i64,
    /// The first message of the group this one is an alternative to (a regenerated answer, an
    /// edited question).
    pub alternative_of: Option<i64>,
}

impl Message {
    /// A complete message not (yet) in the store: id 0, no conversation, no time.
    pub fn unsaved(role: Role, content: impl Into<String>) -> Self {
        Self {
            id: 0,
            conversation_id: String::new(),
            role,
            content: content.into(),
            thinking: None,
            model: None,
            status: MessageStatus::Complete,
            error: None,
            input_tokens: None,
            output_tokens: None,
            created_at: 0,
            alternative_of: None,
        }
    }
}

/// A new message to append; the store fills in id and time.
#[derive(Debug, Clone)]
pub struct NewMessage {
    pub role: Role,
    pub content: String,
    pub thinking: Option<String>,
    pub model: Option<String>,
    pub status: MessageStatus,
    pub error: Option<String>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub alternative_of: Option<i64>,
    /// The process streaming this answer (see `perch_foundation::owner`); none for finished messages.
    pub owner: Option<String>,
}

/// How a streamed answer ends up: what arrived, and how it ended.
#[derive(Debug, Clone, Default)]
pub struct MessageUpdate {
    pub content: String,
    pub thinking: Option<String>,
    pub status: Option<MessageStatus>,
    pub error: Option<String>,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
}

impl NewMessage {
    pub fn text(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            thinking: None,
            model: None,
            status: MessageStatus::Complete,
            error: None,
            input_tokens: None,
            output_tokens: None,
            alternative_of: None,
            owner: None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ConversationDetail {
    pub conversation: Conversation,
    pub messages: Vec<Message>,
    /// The tool calls of its answers, in order.
    pub tool_calls: Vec<super::tool_calls::ToolCallRecord>,
    /// The memories its answers were given, in order.
    pub memories_used: Vec<super::memories::MemoryUse>,
}

/// One search match. `snippet` marks matched words with U+0002 before and U+0003 after,
/// characters that never occur in text, so the UI can highlight without parsing HTML.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct SearchHit {
    pub conversation_id: String,
    pub title: String,
    pub message_id: i64,
    pub role: Role,
    pub snippet: String,
    pub created_at: i64,
}

pub const HIGHLIGHT_START: char = '\u{2}';
pub const HIGHLIGHT_END: char = '\u{3}';

const CONVERSATION_COLUMNS: &str =
    "c.id, c.title, c.model, c.created_at, c.updated_at, c.input_tokens, c.output_tokens,
     (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id)";

fn conversation_from_row(row: &Row<'_>) -> rusqlite::Result<Conversation> {
    Ok(Conversation {
        id: row.get(0)?,
        title: row.get(1)?,
        model: row.get(2)?,
        created_at: row.get(3)?,
        updated_at: row.get(4)?,
        input_tokens: row.get(5)?,
        output_tokens: row.get(6)?,
        message_count: row.get(7)?,
    })
}

fn message_from_row(row: &Row<'_>) -> rusqlite::Result<Message> {
    Ok(Message {
        id: row.get(0)?,
        conversation_id: row.get(1)?,
        role: Role::parse(&row.get::<_, String>(2)?)?,
        content: row.get(3)?,
        thinking: row.get(4)?,
        model: row.get(5)?,
        status: MessageStatus::parse(&row.get::<_, String>(6)?)?,
        error: row.get(7)?,
        input_tokens: row.get(8)?,
        output_tokens: row.get(9)?,
        created_at: row.get(10)?,
        alternative_of: row.get(11)?,
    })
}

const MESSAGE_COLUMNS: &str = "id, conversation_id, role, content, thinking, model, status, error, input_tokens, \
     output_tokens, created_at, alternative_of";

impl Store {
    pub async fn create_conversation(
        &self,
        title: &str,
        model: Option<&str>,
    ) -> Result<Conversation, StoreError> {
        let (title, model) = (title.to_owned(), model.map(str::to_owned));
        self.call(move |c| create_conversation(c, &title, model.as_deref())).await
    }
    pub async fn add_message(
        &self,
        conversation_id: &str,
        message: NewMessage,
    ) -> Result<Message, StoreError> {
        let id = conversation_id.to_owned();
        self.call(move |c| add_message(c, &id, &message)).await
    }
    /// Resolves a full id or a unique prefix to the conversation's full id.
    pub async fn resolve_conversation_id(&self, id_or_prefix: &str) -> Result<String, StoreError> {
        let id = id_or_prefix.to_owned();
        self.call(move |c| resolve_id(c, &id)).await
    }
    pub async fn conversation(&self, id_or_prefix: &str) -> Result<ConversationDetail, StoreError> {
        let id = id_or_prefix.to_owned();
        self.call(move |c| conversation_detail(c, &id)).await
    }
    /// A conversation's header (title, model, totals, message count), without its messages.
    pub async fn conversation_header(&self, id: &str) -> Result<Conversation, StoreError> {
        let id = id.to_owned();
        self.call(move |c| get_conversation(c, &id)).await
    }
    /// One message, by id.
    pub async fn message(&self, id: i64) -> Result<Message, StoreError> {
        self.call(move |c| {
            c.query_row(
                &format!("SELECT {MESSAGE_COLUMNS} FROM messages WHERE id = ?1"),
                [id],
                message_from_row,
            )
            .optional()?
            .ok_or_else(|| StoreError::NotFound(format!("message {id}")))
        })
        .await
    }

    pub async fn list_conversations(&self, limit: u32, offset: u32) -> Result<Vec<Conversation>, StoreError> {
        self.call(move |c| list_conversations(c, limit, offset)).await
    }
    pub async fn rename_conversation(&self, id: &str, title: &str) -> Result<(), StoreError> {
        let (id, title) = (id.to_owned(), title.to_owned());
        self.call(move |c| rename_conversation(c, &id, &title)).await
    }
    pub async fn delete_conversation(&self, id: &str) -> Result<(), StoreError> {
        let id = id.to_owned();
        self.call(move |c| delete_conversation(c, &id)).await
    }
    /// Saves what a streaming answer has so far (called every second or so while it streams).
    pub async fn save_progress(
        &self,
        id: i64,
        content: &str,
        thinking: Option<&str>,
    ) -> Result<(), StoreError> {
        let (content, thinking) = (content.to_owned(), thinking.map(str::to_owned));
        self.call(move |c| {
            c.execute(
                "UPDATE messages SET content = ?2, thinking = ?3 WHERE id = ?1",
                params![id, content, thinking],
            )?;
            Ok(())
        })
        .await
    }

    /// Writes a message's final state and adds its tokens to the conversation's totals.
    pub async fn finish_message(&self, id: i64, update: MessageUpdate) -> Result<Message, StoreError> {
        self.call(move |c| finish_message(c, id, &update)).await
    }

    pub async fn set_conversation_model(&self, id: &str, model: &str) -> Result<(), StoreError> {
        let (id, model) = (id.to_owned(), model.to_owned());
        self.call(move |c| {
            c.execute("UPDATE conversations SET model = ?2 WHERE id = ?1", params![id, model])?;
            Ok(())
        })
        .await
    }

    /// Answers left `streaming` by a crash or a kill become `stopped` (what arrived is kept),
    /// and so do their unfinished tool calls; answers whose owner `still_running` are left to it.
    pub async fn mark_interrupted(
        &self,
        still_running: impl Fn(&str) -> bool + Send + 'static,
    ) -> Result<usize, StoreError> {
        self.call(move |c| {
            // Immediate: this reads, then writes. A deferred transaction fails at once ("database
            // is locked") when another process (a streaming `perch ask`) commits in between.
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let owners: Vec<Option<String>> = tx
                .prepare("SELECT DISTINCT owner FROM messages WHERE status = 'streaming'")?
                .query_map([], |row| row.get(0))?
                .collect::<Result<_, _>>()?;
            let mut stopped = 0;
            for owner in owners.iter().filter(|o| !o.as_deref().is_some_and(&still_running)) {
                stopped += tx.execute(
                    "UPDATE messages SET status = 'stopped', owner = NULL
                     WHERE status = 'streaming' AND owner IS ?1",
                    [owner],
                )?;
            }
            // A call that was pending or running when its answer was cut off will never finish.
            tx.execute(
                "UPDATE tool_calls SET status = 'cancelled' WHERE status IN ('pending', 'running')
                   AND message_id NOT IN (SELECT id FROM messages WHERE status = 'streaming')",
                [],
            )?;
            tx.commit()?;
            Ok(stopped)
        })
        .await
    }

    pub async fn search(&self, query: &str, limit: u32) -> Result<Vec<SearchHit>, StoreError> {
        let query = query.to_owned();
        self.call(move |c| search(c, &query, limit)).await
    }
}

// The queries, plain functions of a connection, run on the store's worker thread.

fn create_conversation(
    conn: &Connection,
    title: &str,
    model: Option<&str>,
) -> Result<Conversation, StoreError> {
    let id = uuid::Uuid::new_v4().to_string();
    let now = now_ms();
    conn.execute(
        "INSERT INTO conversations (id, title, model, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?4)",
        params![id, title, model, now],
    )?;
    get_conversation(conn, &id)
}

fn add_message(conn: &mut Connection, conversation_id: &str, m: &NewMessage) -> Result<Message, StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let now = now_ms();
    let changed = tx.execute(
        "UPDATE conversations SET updated_at = ?2,
             input_tokens = input_tokens + coalesce(?3, 0), output_tokens = output_tokens + coalesce(?4, 0)
         WHERE id = ?1",
        params![conversation_id, now, m.input_tokens, m.output_tokens],
    )?;
    if changed == 0 {
        return Err(StoreError::NotFound(format!("conversation {conversation_id}")));
    }
    tx.execute(
        "INSERT INTO messages (conversation_id, role, content, thinking, model, status, error,
                               input_tokens, output_tokens, created_at, alternative_of, owner)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        params![
            conversation_id,
            m.role.as_str(),
            m.content,
            m.thinking,
            m.model,
            m.status.as_str(),
            m.error,
            m.input_tokens,
            m.output_tokens,
            now,
            m.alternative_of,
            m.owner
        ],
    )?;
    let id = tx.last_insert_rowid();
    let message = tx.query_row(
        &format!("SELECT {MESSAGE_COLUMNS} FROM messages WHERE id = ?1"),
        [id],
        message_from_row,
    )?;
    tx.commit()?;
    Ok(message)
}

fn finish_message(conn: &mut Connection, id: i64, u: &MessageUpdate) -> Result<Message, StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let status = u.status.unwrap_or(MessageStatus::Complete);
    let changed = tx.execute(
        "UPDATE messages SET content = ?2, thinking = ?3, status = ?4, error = ?5,
             input_tokens = ?6, output_tokens = ?7, owner = NULL WHERE id = ?1",
        params![id, u.content, u.thinking, status.as_str(), u.error, u.input_tokens, u.output_tokens],
    )?;
    if changed == 0 {
        return Err(StoreError::NotFound(format!("message {id}")));
    }
    tx.execute(
        "UPDATE conversations SET updated_at = ?2,
             input_tokens = input_tokens + coalesce(?3, 0), output_tokens = output_tokens + coalesce(?4, 0)
         WHERE id = (SELECT conversation_id FROM messages WHERE id = ?1)",
        params![id, now_ms(), u.input_tokens, u.output_tokens],
    )?;
    let message = tx.query_row(
        &format!("SELECT {MESSAGE_COLUMNS} FROM messages WHERE id = ?1"),
        [id],
        message_from_row,
    )?;
    tx.commit()?;
    Ok(message)
}

/// Finds a conversation by its full id or a unique prefix of at least 4 characters.
fn resolve_id(conn: &Connection, id_or_prefix: &str) -> Result<String, StoreError> {
    let wanted = id_or_prefix.trim();
    if wanted.len() < 4 {
        return Err(StoreError::Invalid("give at least 4 characters of the conversation id".into()));
    }
    let pattern = format!("{}%", wanted.replace(['%', '_'], ""));
    let mut stmt = conn.prepare("SELECT id FROM conversations WHERE id LIKE ?1 LIMIT 2")?;
    let ids: Vec<String> = stmt.query_map([pattern], |r| r.get(0))?.collect::<Result<_, _>>()?;
    match ids.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(StoreError::NotFound(format!("conversation {wanted}"))),
        _ => Err(StoreError::Invalid(format!(
            "{wanted} matches more than one conversation; give more of the id"
        ))),
    }
}

fn get_conversation(conn: &Connection, id: &str) -> Result<Conversation, StoreError> {
    conn.query_row(
        &format!("SELECT {CONVERSATION_COLUMNS} FROM conversations c WHERE c.id = ?1"),
        [id],
        conversation_from_row,
    )
    .optional()?
    .ok_or_else(|| StoreError::NotFound(format!("conversation {id}")))
}

fn conversation_detail(conn: &Connection, id_or_prefix: &str) -> Result<ConversationDetail, StoreError> {
    let id = resolve_id(conn, id_or_prefix)?;
    let conversation = get_conversation(conn, &id)?;
    let mut stmt = conn
        .prepare(&format!("SELECT {MESSAGE_COLUMNS} FROM messages WHERE conversation_id = ?1 ORDER BY id"))?;
    let messages = stmt.query_map([&id], message_from_row)?.collect::<Result<_, _>>()?;
    let tool_calls = super::tool_calls::of_conversation(conn, &id)?;
    let memories_used = super::memories::of_conversation(conn, &id)?;
    Ok(ConversationDetail { conversation, messages, tool_calls, memories_used })
}

/// Most recently updated first.
fn list_conversations(conn: &Connection, limit: u32, offset: u32) -> Result<Vec<Conversation>, StoreError> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {CONVERSATION_COLUMNS} FROM conversations c ORDER BY c.updated_at DESC, c.id DESC LIMIT ?1 OFFSET ?2"
    ))?;
    let rows = stmt.query_map(params![limit, offset], conversation_from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn rename_conversation(conn: &Connection, id: &str, title: &str) -> Result<(), StoreError> {
    let title = title.trim();
    if title.is_empty() {
        return Err(StoreError::Invalid("a conversation title cannot be empty".into()));
    }
    match conn.execute("UPDATE conversations SET title = ?2 WHERE id = ?1", params![id, title])? {
        0 => Err(StoreError::NotFound(format!("conversation {id}"))),
        _ => Ok(()),
    }
}

fn delete_conversation(conn: &Connection, id: &str) -> Result<(), StoreError> {
    match conn.execute("DELETE FROM conversations WHERE id = ?1", [id])? {
        0 => Err(StoreError::NotFound(format!("conversation {id}"))),
        _ => Ok(()),
    }
}

/// Full-text search over message text, newest matches first. FTS5 walks its index in rowid
/// order and stops at the limit, so even a word in every message answers quickly.
fn search(conn: &Connection, query: &str, limit: u32) -> Result<Vec<SearchHit>, StoreError> {
    let Some(fts) = fts_query(query) else {
        return Ok(Vec::new());
    };
    let mut stmt = conn.prepare(
        "SELECT m.conversation_id, c.title, m.id, m.role, hit.snip, m.created_at
         FROM (SELECT rowid AS id, snippet(messages_fts, 0, char(2), char(3), '…', 12) AS snip
               FROM messages_fts WHERE messages_fts MATCH ?1 ORDER BY rowid DESC LIMIT ?2) hit
         JOIN messages m ON m.id = hit.id
         JOIN conversations c ON c.id = m.conversation_id
         ORDER BY m.id DESC",
    )?;
    let rows = stmt.query_map(params![fts, limit], |row| {
        Ok(SearchHit {
            conversation_id: row.get(0)?,
            title: row.get(1)?,
            message_id: row.get(2)?,
            role: Role::parse(&row.get::<_, String>(3)?)?,
            snippet: row.get(4)?,
            created_at: row.get(5)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Turns what a person types into an FTS5 query: every word must match as the beginning of a
/// word ("conf" finds "configuration"), so results appear while typing. Quotes make FTS5
/// operators plain words.
pub fn fts_query(input: &str) -> Option<String> {
    let words: Vec<String> = input
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .map(|w| format!("\"{w}\"*"))
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}
