//! One call of a tool: where it comes from ([`CallOrigin`]), the progress it reports, why it
//! did not produce a result ([`CallError`]), and the tool servers built into Perch
//! ([`BuiltinServer`], the terminal): no child process, the same catalog. Their tools are
//! listed with the MCP servers' and called through the MCP manager, so retrieval, always-on
//! tools, rules and cards treat them alike; the approval gate asks each one to
//! [`BuiltinServer::vet`] a call first, which is how a server decides what to ask about.

use futures::future::BoxFuture;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::output::ToolOutput;
use crate::questions::{ApprovalChoice, ApprovalDetail};
use crate::view::ToolView;

/// Where a call comes from: the answer and the tool call it belongs to (empty for calls
/// made directly, such as `perch mcp call`).
#[derive(Debug, Clone, Default)]
pub struct CallOrigin {
    pub conversation_id: Option<String>,
    pub message_id: Option<i64>,
    pub run_id: Option<String>,
    /// Perch's id of the tool call (the card's).
    pub call_id: Option<String>,
    /// How many characters of the result the model reads (the agent cuts the rest). Sent to the
    /// server with the call (`_meta`), so one that returns parts (the bundled web server's
    /// `read_page`) returns a part that fits, ending with where to continue.
    pub result_chars: Option<u32>,
}

/// A built-in server's verdict on a call, before the approval gate's rules.
#[derive(Debug, Clone, PartialEq)]
pub enum Vetting {
    /// Like any MCP tool: rules, grants, then the question.
    Default,
    /// Nothing to approve (it acts only on what was approved already); deny rules still apply.
    NoQuestion,
    /// Refused before any rule or question; this is what the model reads.
    Refuse(String),
    /// Ask about it with this detail, unless `approved` already (remembered, session) or a
    /// rule allows it; `rules_may_allow` is false for calls nothing may approve but the user.
    Ask { detail: ApprovalDetail, approved: bool, rules_may_allow: bool },
}

pub trait BuiltinServer: Send + Sync {
    fn name(&self) -> &'static str;
    /// Its tools now (none while it is turned off).
    fn tools(&self) -> Vec<ToolView>;
    fn vet<'a>(
        &'a self,
        origin: &'a CallOrigin,
        tool: &'a str,
        arguments: &'a Value,
    ) -> BoxFuture<'a, Vetting>;
    /// The user answered a question about a call (to remember it, or record a refusal). A
    /// server that never asks through the gate has nothing to record.
    fn answered<'a>(
        &'a self,
        _origin: &'a CallOrigin,
        _tool: &'a str,
        _arguments: &'a Value,
        _choice: ApprovalChoice,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
    fn call<'a>(
        &'a self,
        origin: &'a CallOrigin,
        tool: &'a str,
        arguments: &'a Value,
        cancel: &'a CancellationToken,
        progress: Option<mpsc::UnboundedSender<Progress>>,
    ) -> BoxFuture<'a, Result<ToolOutput, CallError>>;
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
