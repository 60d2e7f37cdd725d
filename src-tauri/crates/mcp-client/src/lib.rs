//! perch-mcp-client: Perch as an MCP client. Which servers exist ([`config`]), starting and
//! supervising them ([`manager`]), what Perch answers when a server asks something
//! ([`handler`]), signing in to remote servers ([`sign_in`]), their apps ([`apps`]) and the
//! links that add a server ([`add_link`]). Built on rmcp, speaking the 2026-07-28 protocol and
//! falling back for older servers. What a server may be given from the key store comes in
//! through [`manager::SecretEnv`], and a model for sampling through [`handler::Sampler`]; the
//! engine fills both in.

pub mod add_link;
pub mod apps;
pub mod catalog;
pub mod config;
pub mod handler;
mod handshake;
mod launch;
mod logs;
pub mod manager;
pub mod output;
pub mod sign_in;

use serde::{Deserialize, Serialize};

pub use config::{ConfigError, ConfigProblem, ServerConfig, Transport};
pub use manager::McpManager;
pub use output::ToolOutput;
pub use perch_tools::{
    BuiltinServer, CallError, CallOrigin, HARMLESS_WHEN_META, Progress, ToolView, Vetting,
};

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
