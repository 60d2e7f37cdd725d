//! The MCP client side: which servers exist ([`config`]), starting and supervising them
//! ([`manager`]), and what Perch answers when a server asks something ([`handler`]).
//! Built on rmcp, speaking the 2026-07-28 protocol and falling back for older servers.

pub mod add_link;
pub mod add_link_save;
pub mod apps;
pub mod builtin;
pub mod catalog;
pub mod config;
pub mod handler;
mod handshake;
mod launch;
mod logs;
pub mod manager;
pub mod output;
pub mod secrets;
pub mod sign_in;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use builtin::{BuiltinServer, CallOrigin, Vetting};
pub use config::{ConfigError, ConfigProblem, ServerConfig, Transport};
pub use manager::McpManager;
pub use output::ToolOutput;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ServerStatus {
    /// Not running (never started, turned off, or stopped by the user).
    Stopped,
    Starting,
    Connected,
    /// It went away; a restart is scheduled.
    Disconnected,
    /// It failed and will not be restarted until the user asks.
    Error,
    /// Not running to save memory (stopped after a quiet spell, or not started at launch): its
    /// tools are still offered, and the next call starts it.
    Idle,
    /// It wants the user to sign in (OAuth) before it can be used; not retried until they do.
    NeedsSignIn,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ToolView {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub input_schema: Value,
    /// The server says the tool changes nothing.
    pub read_only: bool,
    /// The server says a call may destroy or send something (delete, send mail): it is asked
    /// about at every call, unless its arguments match `harmless_when`.
    pub destructive: bool,
    /// Arguments (a JSON Schema, the tool's `_meta` `app.perch/harmlessWhen`) with which a call
    /// of this destructive tool changes only the user's own things: an event with no guest to
    /// email (the bundled Google server's). It can only make a call that is asked about at
    /// every call an ordinary one, which the server could have said of the tool as a whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harmless_when: Option<Value>,
    /// Its own interface (MCP Apps), and whether the model and its app may call it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui: Option<apps::ToolUi>,
}

/// The tool `_meta` key that holds [`ToolView::harmless_when`].
pub const HARMLESS_WHEN_META: &str = "app.perch/harmlessWhen";

impl ToolView {
    /// Whether a call with `arguments` may destroy or send something: the tool says so, and the
    /// arguments are not among those it names harmless. A schema that does not compile names
    /// none.
    pub fn destructive_for(&self, arguments: &Value) -> bool {
        let harmless = self
            .harmless_when
            .as_ref()
            .and_then(|schema| jsonschema::validator_for(schema).ok())
            .is_some_and(|schema| schema.is_valid(arguments));
        self.destructive && !harmless
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ResourceView {
    pub uri: String,
    pub name: String,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    /// An app page's declarations from the listing (`_meta.ui`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui: Option<apps::ResourceUi>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct PromptArgumentView {
    pub name: String,
    pub description: Option<String>,
    pub required: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct PromptView {
    pub name: String,
    pub description: Option<String>,
    pub arguments: Vec<PromptArgumentView>,
}

/// One server as the dashboard and `perch mcp list` show it.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ServerView {
    pub config: ServerConfig,
    pub status: ServerStatus,
    pub pid: Option<u32>,
    pub last_error: Option<String>,
    /// When it last connected (ms since the epoch).
    pub connected_at: Option<i64>,
    pub restarts: u32,
    pub protocol_version: Option<String>,
    /// The server's own name and version.
    pub server_info: Option<String>,
    /// What the server says about using it (its `instructions`), cut short: the dashboard shows
    /// it for a server that offers nothing (the Google server says how to connect).
    pub instructions: Option<String>,
    pub tools: Vec<ToolView>,
    pub resources: Vec<ResourceView>,
    pub prompts: Vec<PromptView>,
    /// Its sign-in, for a server signed in to (no token: who issued it, scopes, expiry).
    pub sign_in: Option<sign_in::SignInView>,
    /// The page of a sign-in under way, to open again or copy when the browser did not show it.
    pub sign_in_page: Option<String>,
}

/// What changed, for the dashboard and tool cards.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "event", content = "data", rename_all = "snake_case")]
pub enum McpEvent {
    /// A server's status, tools or config changed: fetch the list again.
    Changed { server: String },
    /// A line on a server's stderr.
    Log { server: String, line: String },
}

/// Progress a server reports on a running call.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct Progress {
    pub progress: f64,
    pub total: Option<f64>,
    pub message: Option<String>,
}

/// Why a call did not produce a result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CallError {
    #[error("there is no MCP server named {0:?}")]
    UnknownServer(String),
    /// No such server, and the configuration files have problems that may be why.
    #[error("there is no usable MCP server named {server:?}: {problems}")]
    Misconfigured { server: String, problems: String },
    #[error("{server} is not running ({status})")]
    NotRunning { server: String, status: String },
    #[error("{server} has no tool named {tool:?}")]
    UnknownTool { server: String, tool: String },
    #[error("{server} did not answer within {secs} s, so the call was cancelled")]
    Timeout { server: String, secs: u32 },
    #[error("stopped")]
    Cancelled,
    #[error("{server} stopped while the call ran (it crashed or was closed)")]
    Closed { server: String },
    #[error("{server}: {message}")]
    Protocol { server: String, message: String },
    /// The server wants the user to sign in (or to grant more, `scope`) first.
    #[error("{server} needs you to sign in{}", .scope.as_ref().map(|s| format!(" and allow {s}")).unwrap_or_default())]
    NeedsSignIn { server: String, scope: Option<String> },
}

/// Why a change to the server list (import, remove, turn on or off) was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// The servers file could not be read, written or changed as asked.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The server named does not exist.
    #[error(transparent)]
    Server(#[from] CallError),
}
