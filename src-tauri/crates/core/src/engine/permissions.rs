//! Every permission the user has given, in one list with one way to revoke it: tool rules
//! from Settings (`server:tool` patterns: allow, ask or deny), tools granted for one
//! conversation, terminal commands always allowed (the whole command in its folder), the
//! folders given to single conversations, and the terminal sessions in force. Each kind stays
//! where the check that reads it looks (settings, `tool_grants`, `terminal_approvals`, the
//! conversation's row, the terminal's live sessions); this module
//! is the one view of them and the one way to add or revoke, for Settings and
//! `perch permissions`.

use std::path::Path;

use serde::Serialize;

use super::Engine;
use crate::settings::{RuleDecision, ToolRule};
use crate::terminal::policy::{self, Check};

/// What a permission is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum PermissionKind {
    /// A rule from Settings -> Tools: every conversation.
    ToolRule,
    /// "For this conversation" on a tool's card.
    ConversationGrant,
    /// "Always allow this command" on a terminal card.
    TerminalCommand,
    /// A conversation's own working folder, where its commands may change files.
    ConversationFolder,
    /// Session mode, until its answer ends.
    TerminalSession,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct Permission {
    /// What `revoke` takes: `rule:DECISION:PATTERN`, `grant:CONVERSATION:SERVER:TOOL`,
    /// `command:HASH`, `folder:CONVERSATION` or `session:RUN`.
    pub id: String,
    pub kind: PermissionKind,
    /// What it allows, in words: `allow filesystem:read_file`, `git diff --stat, in ~/src/app`.
    pub label: String,
    /// Where it holds: every conversation, one conversation's title, a folder.
    pub scope: String,
    /// Milliseconds since the epoch, where known.
    pub created_at: Option<i64>,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PermissionError {
    #[error("there is no permission {0:?} (list them with `perch permissions list`)")]
    NotFound(String),
    #[error("{0}")]
    Refused(String),
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

fn decision_word(d: RuleDecision) -> &'static str {
    match d {
        RuleDecision::Allow => "allow",
        RuleDecision::Ask => "ask",
        RuleDecision::Deny => "deny",
    }
}

/// Every permission: rules first, then grants, commands, folders and sessions, newest first
/// within each.
pub async fn list(engine: &Engine) -> Result<Vec<Permission>, PermissionError> {
    let mut all = Vec::new();
    for rule in &engine.settings().get().await.tools.rules {
        let word = decision_word(rule.decision);
        all.push(Permission {
            id: format!("rule:{word}:{}", rule.pattern),
            kind: PermissionKind::ToolRule,
            label: format!("{word} {}", rule.pattern),
            scope: "every conversation".into(),
            created_at: None,
        });
    }
    for g in engine.store().tool_grants().await? {
        all.push(Permission {
            id: format!("grant:{}:{}:{}", g.conversation_id, g.server, g.tool),
            kind: PermissionKind::ConversationGrant,
            label: format!("allow {}:{}", g.server, g.tool),
            scope: format!("the conversation {:?}", g.conversation_title),
            created_at: Some(g.created_at),
        });
    }
    for a in engine.store().remembered_approvals().await? {
        let (command, folder) = a.label.rsplit_once(", in ").unwrap_or((a.label.as_str(), ""));
        all.push(Permission {
            id: format!("command:{}", a.hash),
            kind: PermissionKind::TerminalCommand,
            label: command.to_owned(),
            scope: if folder.is_empty() { "any folder".into() } else { format!("in {folder}") },
            created_at: Some(a.created_at),
        });
    }
    for (cid, title, folder) in engine.store().conversation_folders().await? {
        all.push(Permission {
            id: format!("folder:{cid}"),
            kind: PermissionKind::ConversationFolder,
            label: format!("commands may change files in {folder}"),
            scope: format!("the conversation {title:?}"),
            created_at: None,
        });
    }
    for (run, session) in engine.terminal().sessions() {
        all.push(Permission {
            id: format!("session:{run}"),
            kind: PermissionKind::TerminalSession,
            label: format!("commands without asking: {}", session.reason),
            scope: format!("in {}, until the answer ends", session.folder.display()),
            created_at: None,
        });
    }
    Ok(all)
}

/// The permissions that name the MCP server `name` (in any case), in words: rules whose
/// server part is `name` (a `*` rule names no server in particular) and conversations' grants
/// for its tools. A server added under that name would get them.
pub async fn naming_server(engine: &Engine, name: &str) -> Result<Vec<String>, PermissionError> {
    let mut named = Vec::new();
    for rule in &engine.settings().get().await.tools.rules {
        let server = rule.pattern.split_once(':').map_or(rule.pattern.as_str(), |(s, _)| s);
        if server.trim().eq_ignore_ascii_case(name) {
            named.push(format!("{} {}", decision_word(rule.decision), rule.pattern));
        }
    }
    for g in engine.store().tool_grants().await? {
        if g.server.eq_ignore_ascii_case(name) {
            named.push(format!(
                "allow {}:{} in the conversation {:?}",
                g.server, g.tool, g.conversation_title
            ));
        }
    }
    Ok(named)
}

/// Revokes one permission by id (or an unambiguous prefix of a command's hash); returns it.
pub async fn revoke(engine: &Engine, id: &str) -> Result<Permission, PermissionError> {
    let all = list(engine).await?;
    let found = all.iter().find(|p| p.id == id).or_else(|| {
        let mut by_prefix =
            all.iter().filter(|p| id.len() >= 4 && p.id.starts_with(&format!("command:{id}")));
        match (by_prefix.next(), by_prefix.next()) {
            (Some(one), None) => Some(one),
            _ => None,
        }
    });
    let found = found.cloned().ok_or_else(|| PermissionError::NotFound(id.to_owned()))?;
    let (kind, rest) = found.id.split_once(':').unwrap_or_default();
    match kind {
        "rule" => {
            let (word, pattern) = rest.split_once(':').unwrap_or_default();
            let (word, pattern) = (word.to_owned(), pattern.to_owned());
            engine
                .settings()
                .update(|s| {
                    s.tools.rules.retain(|r| !(r.pattern == pattern && decision_word(r.decision) == word))
                })
                .await?;
        }
        "grant" => {
            let mut parts = rest.splitn(3, ':');
            let (cid, server, tool) =
                (parts.next().unwrap_or(""), parts.next().unwrap_or(""), parts.next().unwrap_or(""));
            engine.store().revoke_grant(cid, server, tool).await?;
        }
        "command" => {
            engine.store().revoke_approval(Some(rest)).await?;
        }
        "folder" => {
            engine.store().set_conversation_folder(rest, None).await?;
        }
        "session" => {
            engine.terminal().end_session(rest);
        }
        _ => return Err(PermissionError::NotFound(id.to_owned())),
    }
    Ok(found)
}

/// Adds a tool rule (`server:tool`, `server:*` or `*`), replacing any rule with the same pattern.
pub async fn add_rule(
    engine: &Engine,
    pattern: &str,
    decision: RuleDecision,
) -> Result<Permission, PermissionError> {
    let pattern = pattern.trim().to_owned();
    if pattern.is_empty() || pattern.contains(char::is_whitespace) {
        return Err(PermissionError::Refused(format!(
            "{pattern:?} is not a tool pattern: write SERVER:TOOL, SERVER:* or *"
        )));
    }
    let rule = ToolRule { pattern: pattern.clone(), decision };
    engine
        .settings()
        .update(|s| {
            s.tools.rules.retain(|r| r.pattern != rule.pattern);
            s.tools.rules.push(rule);
        })
        .await?;
    let word = decision_word(decision);
    Ok(Permission {
        id: format!("rule:{word}:{pattern}"),
        kind: PermissionKind::ToolRule,
        label: format!("{word} {pattern}"),
        scope: "every conversation".into(),
        created_at: None,
    })
}

/// Always allows `command` in `cwd`, as "Always allow this command" on its card would; a line
/// Perch blocks or cannot check is refused, with why.
pub async fn allow_command(
    engine: &Engine,
    command: &str,
    cwd: &Path,
) -> Result<Permission, PermissionError> {
    let assessment = policy::assess(command, cwd, &crate::terminal::home());
    match &assessment.check {
        Check::Blocked(why) => {
            return Err(PermissionError::Refused(format!("Perch never runs this command: {why}")));
        }
        Check::Unclear(why) => {
            return Err(PermissionError::Refused(format!(
                "Perch cannot check this command ({why}), so it is asked about every time"
            )));
        }
        Check::Clear => {}
    }
    let hash = assessment.hash();
    engine.store().remember_approval(&hash, &assessment.label).await?;
    let (label, folder) = assessment.label.rsplit_once(", in ").unwrap_or((assessment.label.as_str(), ""));
    Ok(Permission {
        id: format!("command:{hash}"),
        kind: PermissionKind::TerminalCommand,
        label: label.to_owned(),
        scope: format!("in {folder}"),
        created_at: None,
    })
}
