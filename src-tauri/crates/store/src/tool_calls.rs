//! Tool calls, saved as they happen so a reopened conversation shows every card, and the
//! per-conversation grants ("allow for this conversation").

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Store, StoreError, now_ms};
use perch_tools::ToolOutput;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    /// Waiting for the user's approval.
    Pending,
    Running,
    Done,
    /// Ran and failed, or could not run (bad arguments, unknown tool, server down).
    Error,
    /// The user said no (or a rule did).
    Denied,
    /// Stopped before it finished.
    Cancelled,
    /// Could not run: its server wants the user to sign in first (the card offers Sign in).
    NeedsSignIn,
}

impl ToolCallStatus {
    fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Done => "done",
            Self::Error => "error",
            Self::Denied => "denied",
            Self::Cancelled => "cancelled",
            Self::NeedsSignIn => "needs_sign_in",
        }
    }
    fn parse(s: &str) -> Self {
        match s {
            "pending" => Self::Pending,
            "running" => Self::Running,
            "done" => Self::Done,
            "denied" => Self::Denied,
            "cancelled" => Self::Cancelled,
            "needs_sign_in" => Self::NeedsSignIn,
            _ => Self::Error,
        }
    }
}

/// A tool granted for one conversation ("for this conversation" on its card).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct ToolGrant {
    pub conversation_id: String,
    pub conversation_title: String,
    pub server: String,
    pub tool: String,
    pub created_at: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ToolCallRecord {
    /// Perch's id for the call (unique).
    pub id: String,
    /// The provider's id for it, which the tool result refers to.
    pub call_id: String,
    pub message_id: i64,
    /// The agent-loop round it belongs to (0-based).
    pub round: u32,
    /// Characters of the answer's text before it.
    pub text_offset: u32,
    pub server: String,
    pub tool: String,
    pub arguments: Value,
    pub status: ToolCallStatus,
    pub output: Option<ToolOutput>,
    pub duration_ms: Option<i64>,
    pub created_at: i64,
    /// Made by the app (MCP Apps) shown in this card's call, not by the model: the card's id.
    #[serde(default)]
    pub app_of: Option<String>,
    /// What this call's app asked to have the model told (its last `ui/update-model-context`).
    #[serde(default)]
    pub app_context: Option<String>,
}

/// The largest whole result kept for a tool's app, serialised.
pub const MAX_APP_RESULT_BYTES: usize = 8 * 1024 * 1024;

const COLUMNS: &str = "id, call_id, message_id, round, text_offset, server, tool, arguments, status, result, duration_ms, created_at, app_of, app_context";

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ToolCallRecord> {
    let arguments: String = r.get(7)?;
    let result: Option<String> = r.get(9)?;
    let status: String = r.get(8)?;
    Ok(ToolCallRecord {
        id: r.get(0)?,
        call_id: r.get(1)?,
        message_id: r.get(2)?,
        round: r.get(3)?,
        text_offset: r.get(4)?,
        server: r.get(5)?,
        tool: r.get(6)?,
        arguments: serde_json::from_str(&arguments).unwrap_or(Value::Null),
        status: ToolCallStatus::parse(&status),
        output: result.and_then(|t| serde_json::from_str(&t).ok()),
        duration_ms: r.get(10)?,
        created_at: r.get(11)?,
        app_of: r.get(12)?,
        app_context: r.get(13)?,
    })
}

pub(crate) fn of_conversation(
    conn: &Connection,
    conversation_id: &str,
) -> Result<Vec<ToolCallRecord>, StoreError> {
    let mut stmt = conn.prepare(&format!(
        "SELECT {COLUMNS} FROM tool_calls WHERE message_id IN
           (SELECT id FROM messages WHERE conversation_id = ?1)
         ORDER BY message_id, round, created_at, rowid"
    ))?;
    let rows = stmt.query_map([conversation_id], from_row)?.collect::<Result<_, _>>()?;
    Ok(rows)
}

impl Store {
    pub async fn add_tool_call(&self, call: ToolCallRecord) -> Result<(), StoreError> {
        self.call(move |c| {
            c.execute(
                &format!("INSERT INTO tool_calls ({COLUMNS}, is_error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)"),
                params![
                    call.id,
                    call.call_id,
                    call.message_id,
                    call.round,
                    call.text_offset,
                    call.server,
                    call.tool,
                    call.arguments.to_string(),
                    call.status.as_str(),
                    call.output.as_ref().map(|o| serde_json::to_string(o).unwrap_or_default()),
                    call.duration_ms,
                    if call.created_at == 0 { now_ms() } else { call.created_at },
                    call.app_of,
                    call.app_context,
                    call.output.as_ref().is_some_and(|o| o.is_error),
                ],
            )?;
            Ok(())
        })
        .await
    }

    /// Records a call's new status, and its output once it has one.
    pub async fn update_tool_call(
        &self,
        id: &str,
        status: ToolCallStatus,
        output: Option<&ToolOutput>,
        duration_ms: Option<i64>,
    ) -> Result<(), StoreError> {
        let id = id.to_owned();
        let output = output.map(|o| (serde_json::to_string(o).unwrap_or_default(), o.is_error));
        self.call(move |c| {
            c.execute(
                "UPDATE tool_calls SET status = ?2,
                    result = COALESCE(?3, result), is_error = COALESCE(?4, is_error),
                    duration_ms = COALESCE(?5, duration_ms) WHERE id = ?1",
                params![
                    id,
                    status.as_str(),
                    output.as_ref().map(|o| &o.0),
                    output.as_ref().map(|o| o.1),
                    duration_ms
                ],
            )?;
            Ok(())
        })
        .await
    }

    /// One call with the conversation it belongs to, if it exists.
    pub async fn tool_call(&self, id: &str) -> Result<Option<(ToolCallRecord, String)>, StoreError> {
        let id = id.to_owned();
        self.call(move |c| {
            let mut stmt = c.prepare(&format!(
                "SELECT {COLUMNS}, (SELECT conversation_id FROM messages WHERE messages.id = message_id)
                 FROM tool_calls WHERE id = ?1"
            ))?;
            let mut rows = stmt.query_map([id], |r| Ok((from_row(r)?, r.get::<_, Option<String>>(14)?)))?;
            Ok(rows.next().transpose()?.and_then(|(call, conversation)| Some((call, conversation?))))
        })
        .await
    }

    pub async fn tool_calls_of_message(&self, message_id: i64) -> Result<Vec<ToolCallRecord>, StoreError> {
        self.call(move |c| {
            let mut stmt = c.prepare(&format!(
                "SELECT {COLUMNS} FROM tool_calls WHERE message_id = ?1 ORDER BY round, created_at, rowid"
            ))?;
            let rows = stmt.query_map([message_id], from_row)?.collect::<Result<_, _>>()?;
            Ok(rows)
        })
        .await
    }

    /// Keeps a call's whole result for its app (up to [`MAX_APP_RESULT_BYTES`]; a larger one is
    /// not kept, and the app is given what the card kept).
    pub async fn set_app_result(&self, id: &str, result: &Value) -> Result<(), StoreError> {
        let text = result.to_string();
        if text.len() > MAX_APP_RESULT_BYTES {
            tracing::info!(bytes = text.len(), "a result too large to keep for its app");
            return Ok(());
        }
        let id = id.to_owned();
        self.call(move |c| {
            c.execute("UPDATE tool_calls SET app_result = ?2 WHERE id = ?1", params![id, text])?;
            Ok(())
        })
        .await
    }

    /// A call's whole result kept for its app, if any.
    pub async fn app_result(&self, id: &str) -> Result<Option<Value>, StoreError> {
        let id = id.to_owned();
        self.call(move |c| {
            let text: Option<String> = c
                .query_row("SELECT app_result FROM tool_calls WHERE id = ?1", [id], |r| r.get(0))
                .optional()?
                .flatten();
            Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
        })
        .await
    }

    /// What a card's app asks to have the model told, replacing what it asked before (None: nothing).
    pub async fn set_app_context(&self, card_id: &str, text: Option<&str>) -> Result<(), StoreError> {
        let (id, text) = (card_id.to_owned(), text.map(str::to_owned));
        self.call(move |c| {
            c.execute("UPDATE tool_calls SET app_context = ?2 WHERE id = ?1", params![id, text])?;
            Ok(())
        })
        .await
    }

    /// The calls the app in one tool card made, oldest first.
    pub async fn app_calls(&self, card_id: &str) -> Result<Vec<ToolCallRecord>, StoreError> {
        let card_id = card_id.to_owned();
        self.call(move |c| {
            let mut stmt = c.prepare(&format!(
                "SELECT {COLUMNS} FROM tool_calls WHERE app_of = ?1 ORDER BY created_at, rowid"
            ))?;
            let rows = stmt.query_map([card_id], from_row)?.collect::<Result<_, _>>()?;
            Ok(rows)
        })
        .await
    }

    pub async fn grant_tool(
        &self,
        conversation_id: &str,
        server: &str,
        tool: &str,
    ) -> Result<(), StoreError> {
        let (cid, server, tool) = (conversation_id.to_owned(), server.to_owned(), tool.to_owned());
        self.call(move |c| {
            c.execute(
                "INSERT OR IGNORE INTO tool_grants (conversation_id, server, tool, created_at) VALUES (?1, ?2, ?3, ?4)",
                params![cid, server, tool, now_ms()],
            )?;
            Ok(())
        })
        .await
    }

    pub async fn is_granted(
        &self,
        conversation_id: &str,
        server: &str,
        tool: &str,
    ) -> Result<bool, StoreError> {
        let (cid, server, tool) = (conversation_id.to_owned(), server.to_owned(), tool.to_owned());
        self.call(move |c| {
            Ok(c.query_row(
                "SELECT 1 FROM tool_grants WHERE conversation_id = ?1 AND server = ?2 AND tool = ?3",
                params![cid, server, tool],
                |_| Ok(()),
            )
            .optional()?
            .is_some())
        })
        .await
    }

    /// Every tool granted for one conversation, newest first, with the conversation's title.
    pub async fn tool_grants(&self) -> Result<Vec<ToolGrant>, StoreError> {
        self.call(|c| {
            let mut stmt = c.prepare(
                "SELECT g.conversation_id, COALESCE(c.title, ''), g.server, g.tool, g.created_at \
                 FROM tool_grants g LEFT JOIN conversations c ON c.id = g.conversation_id \
                 ORDER BY g.created_at DESC",
            )?;
            let rows = stmt
                .query_map([], |r| {
                    Ok(ToolGrant {
                        conversation_id: r.get(0)?,
                        conversation_title: r.get(1)?,
                        server: r.get(2)?,
                        tool: r.get(3)?,
                        created_at: r.get(4)?,
                    })
                })?
                .collect::<Result<_, _>>()?;
            Ok(rows)
        })
        .await
    }

    /// Takes back a tool granted for one conversation; returns whether there was one.
    pub async fn revoke_grant(
        &self,
        conversation_id: &str,
        server: &str,
        tool: &str,
    ) -> Result<bool, StoreError> {
        let (cid, server, tool) = (conversation_id.to_owned(), server.to_owned(), tool.to_owned());
        self.call(move |c| {
            let n = c.execute(
                "DELETE FROM tool_grants WHERE conversation_id = ?1 AND server = ?2 AND tool = ?3",
                params![cid, server, tool],
            )?;
            Ok(n > 0)
        })
        .await
    }
}
