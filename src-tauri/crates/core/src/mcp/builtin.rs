//! Tool servers built into Perch (the terminal): no child process, the same catalog. Their
//! tools are listed with the MCP servers' and called through the manager, so retrieval,
//! always-on tools, rules and cards treat them alike; the approval gate asks each one to
//! [`BuiltinServer::vet`] a call first, which is how a server decides what to ask about.

use futures::future::BoxFuture;
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{CallError, Progress, ToolOutput, ToolView};
use crate::questions::{ApprovalChoice, ApprovalDetail};

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
    /// The user answered a question about a call (to remember it, or record a refusal).
    fn answered<'a>(
        &'a self,
        origin: &'a CallOrigin,
        tool: &'a str,
        arguments: &'a Value,
        choice: ApprovalChoice,
    ) -> BoxFuture<'a, ()>;
    fn call<'a>(
        &'a self,
        origin: &'a CallOrigin,
        tool: &'a str,
        arguments: &'a Value,
        cancel: &'a CancellationToken,
        progress: Option<mpsc::UnboundedSender<Progress>>,
    ) -> BoxFuture<'a, Result<ToolOutput, CallError>>;
}
