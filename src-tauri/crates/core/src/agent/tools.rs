//! The tool side of the agent loop: which tools a turn offers, the checks every call passes
//! (a known tool, arguments that fit its schema, the approval gate) and running one round's
//! calls concurrently, each saved and reported as it goes.

use std::collections::HashSet;
use std::time::Instant;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::Agent;
use super::{TurnEvent, TurnSink};
use crate::mcp::{CallError, CallOrigin, ToolOutput, ToolView, Vetting};
use crate::providers::{ToolCall, ToolSpec};
use crate::questions::{Answer, ApprovalChoice, ApprovalQuestion, Question};
use crate::settings::{RuleDecision, ToolRule, ToolSettings};
use crate::store::tool_calls::{ToolCallRecord, ToolCallStatus};

/// A tool offered to the model under a name providers accept (`server__tool`).
#[derive(Debug, Clone)]
pub struct OfferedTool {
    pub name: String,
    pub server: String,
    pub tool: ToolView,
}

/// `server__tool`, with anything providers reject replaced, at most 64 characters.
pub fn model_name(server: &str, tool: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
    };
    let mut name = format!("{}__{}", clean(server), clean(tool));
    name.truncate(64);
    name
}

pub fn specs(tools: &[OfferedTool]) -> Vec<ToolSpec> {
    tools
        .iter()
        .map(|t| ToolSpec {
            name: t.name.clone(),
            description: t.tool.description.clone(),
            input_schema: t.tool.input_schema.clone(),
        })
        .collect()
}

/// Does `pattern` (`server:tool`, either part `*`) match?
pub fn rule_matches(pattern: &str, server: &str, tool: &str) -> bool {
    let (ps, pt) = pattern.split_once(':').unwrap_or((pattern, "*"));
    let part = |p: &str, v: &str| p == "*" || p.eq_ignore_ascii_case(v);
    part(ps.trim(), server) && part(pt.trim(), tool)
}

/// The rules' verdict: deny wins over ask, ask over allow; `None` when no rule matches.
pub fn rules_decide(rules: &[ToolRule], server: &str, tool: &str) -> Option<RuleDecision> {
    [RuleDecision::Deny, RuleDecision::Ask, RuleDecision::Allow]
        .into_iter()
        .find(|d| rules.iter().any(|r| r.decision == *d && rule_matches(&r.pattern, server, tool)))
}

/// Why a call's arguments do not fit its tool, said for the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadArguments {
    #[error("the arguments must be a JSON object, not {0}")]
    NotAnObject(Value),
    /// The schema's complaints, each with where it applies (at most five).
    #[error("{}", .0.join("; "))]
    Schema(Vec<String>),
}

/// Checks arguments against the tool's input schema.
pub fn check_arguments(schema: &Value, arguments: &Value) -> Result<(), BadArguments> {
    if !arguments.is_object() {
        return Err(BadArguments::NotAnObject(arguments.clone()));
    }
    let Ok(validator) = jsonschema::validator_for(schema) else {
        // A schema we cannot compile is the server's problem; let the server judge.
        return Ok(());
    };
    let errors: Vec<String> = validator
        .iter_errors(arguments)
        .take(5)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() { e.to_string() } else { format!("{at}: {e}") }
        })
        .collect();
    if errors.is_empty() { Ok(()) } else { Err(BadArguments::Schema(errors)) }
}

/// What one turn's tool calls share.
pub struct CallContext<'a> {
    pub agent: &'a Agent,
    pub settings: &'a ToolSettings,
    pub conversation_id: &'a str,
    pub message_id: i64,
    pub run_id: &'a str,
    pub cancel: &'a CancellationToken,
    pub sink: &'a dyn TurnSink,
    /// Rules given for this turn only (`perch ask --approve demo:*`).
    pub extra_rules: &'a [ToolRule],
    /// The app (MCP Apps) making these calls, named in the question; `None` for the model.
    pub app: Option<&'a str>,
    /// Why this turn offers no tools, when it offers none.
    pub tools_off: Option<ToolsOff>,
}

/// Why a turn offers the model no tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolsOff {
    /// Settings -> Tools -> "Offer MCP tools to models" is off.
    Disabled,
    /// The question asked for none (`perch ask --no-tools`).
    ForThisQuestion,
    /// The model's listing says it cannot call tools.
    ModelCannot,
    /// The question has an image, and Settings -> Tools skips tools then.
    ImageAttached,
}

impl ToolsOff {
    /// Said to the model and shown on the call's card when a model calls a tool anyway (it saw
    /// tools earlier in the conversation): the user learns why the tool did not run and what to
    /// change, where "There is no tool named ..." would leave them guessing.
    fn explain(self, name: &str) -> String {
        let why = match self {
            Self::Disabled => "tools are turned off in Settings -> Tools",
            Self::ForThisQuestion => "this question was asked without tools",
            Self::ModelCannot => "this model is listed as one that cannot use tools",
            Self::ImageAttached => {
                "an image is attached to the question, and Settings -> Tools -> \"Offer no tools \
                 when an image is attached\" is on (turn it off, or ask without the image)"
            }
        };
        format!(
            "{name} was not run: no tools are offered for this answer because {why}. Answer without tools."
        )
    }
}

/// One call's result, for the model.
pub struct CallResult {
    pub call: ToolCall,
    pub output: ToolOutput,
    pub denied: bool,
}

pub(crate) enum Gate {
    Run,
    Refuse(String),
    /// The user was asked, and answered: run (no refusal), or the refusal the model reads.
    Answered {
        refusal: Option<String>,
    },
}

impl Gate {
    /// Why the call may not run, if it may not.
    pub(crate) fn refusal(self) -> Option<String> {
        match self {
            Self::Run | Self::Answered { refusal: None } => None,
            Self::Refuse(reason) | Self::Answered { refusal: Some(reason) } => Some(reason),
        }
    }
}

impl CallContext<'_> {
    pub(crate) fn origin(&self, record: &ToolCallRecord) -> CallOrigin {
        CallOrigin {
            conversation_id: Some(self.conversation_id.to_owned()),
            message_id: Some(self.message_id),
            run_id: Some(self.run_id.to_owned()),
            call_id: Some(record.id.clone()),
            result_chars: Some(self.result_chars()),
        }
    }

    /// The most of a result the model reads; the rest is cut (`ToolOutput::truncate`).
    pub(crate) fn result_chars(&self) -> u32 {
        self.settings.max_result_chars.max(500)
    }

    /// Rules, grants, then the user: whether the call may run. The question is put on the card
    /// of `record.id`.
    pub(crate) async fn gate(&self, record: &ToolCallRecord, tool: &OfferedTool) -> Gate {
        let (server, name) = (record.server.as_str(), record.tool.as_str());
        let rules: Vec<ToolRule> = self.extra_rules.iter().chain(&self.settings.rules).cloned().collect();
        let rule = rules_decide(&rules, server, name);
        let denied_by_rule = || Gate::Refuse(format!("The user does not allow the tool {name} of {server}."));
        let origin = self.origin(record);
        // Asked about at every call, with no grant for the chat offered or kept.
        let destructive = tool.tool.destructive_for(&record.arguments);
        // Built-in servers vet their calls first (the terminal's blocklist, sessions, memory).
        let detail = match self.agent.mcp().vet(&origin, server, name, &record.arguments).await {
            Vetting::Refuse(reason) => return Gate::Refuse(reason),
            Vetting::NoQuestion if rule == Some(RuleDecision::Deny) => return denied_by_rule(),
            Vetting::NoQuestion => return Gate::Run,
            Vetting::Ask { detail, approved, rules_may_allow } => {
                match rule {
                    Some(RuleDecision::Deny) => return denied_by_rule(),
                    Some(RuleDecision::Allow) if rules_may_allow => return Gate::Run,
                    None if approved => return Gate::Run,
                    _ => {}
                }
                Some(Box::new(detail))
            }
            Vetting::Default => {
                match rule {
                    Some(RuleDecision::Deny) => return denied_by_rule(),
                    Some(RuleDecision::Allow) => return Gate::Run,
                    Some(RuleDecision::Ask) => {}
                    None => {
                        if self.settings.allow_read_only && tool.tool.read_only {
                            return Gate::Run;
                        }
                        if !destructive
                            && self
                                .agent
                                .store()
                                .is_granted(self.conversation_id, server, name)
                                .await
                                .unwrap_or(false)
                        {
                            return Gate::Run;
                        }
                    }
                }
                None
            }
        };
        let builtin = detail.is_some();
        let question = Question::ToolApproval(ApprovalQuestion {
            run_id: self.run_id.to_owned(),
            conversation_id: self.conversation_id.to_owned(),
            call_id: record.id.clone(),
            server: server.to_owned(),
            tool: name.to_owned(),
            arguments: record.arguments.clone(),
            read_only: tool.tool.read_only,
            destructive,
            detail,
            app: self.app.map(str::to_owned),
        });
        let choice = match self.agent.questions().ask(question, self.cancel).await {
            Some(Answer::Approval { choice }) => choice,
            _ if self.cancel.is_cancelled() => return Gate::Refuse("Stopped by the user.".into()),
            _ => {
                return Gate::Refuse(
                    "Nobody could be asked to approve this tool call, so it did not run.".into(),
                );
            }
        };
        let pattern = format!("{server}:{name}");
        // A built-in server remembers (or records) the answer its own way.
        let handled =
            builtin && self.agent.mcp().answered(&origin, server, name, &record.arguments, choice).await;
        let remembered = match choice {
            _ if handled => Ok(()),
            // A destructive tool is asked about at every call: no grant for the chat is kept.
            ApprovalChoice::Conversation if destructive => Ok(()),
            ApprovalChoice::Conversation => self
                .agent
                .store()
                .grant_tool(self.conversation_id, server, name)
                .await
                .map_err(|e| e.to_string()),
            ApprovalChoice::Always | ApprovalChoice::Never => {
                let decision =
                    if choice == ApprovalChoice::Always { RuleDecision::Allow } else { RuleDecision::Deny };
                self.agent
                    .settings()
                    .update(|s| {
                        s.tools.rules.retain(|r| r.pattern != pattern);
                        s.tools.rules.push(ToolRule { pattern: pattern.clone(), decision });
                    })
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }
            _ => Ok(()),
        };
        if let Err(e) = remembered {
            tracing::warn!(error = %e, "could not remember the approval");
        }
        let refusal = (!choice.allows()).then(|| {
            format!(
                "The user declined to run {name} with these arguments. Do not call it again the same \
                 way; ask the user what they would like to change."
            )
        });
        Gate::Answered { refusal }
    }

    async fn save(&self, record: &ToolCallRecord) {
        if let Err(e) = self
            .agent
            .store()
            .update_tool_call(&record.id, record.status, record.output.as_ref(), record.duration_ms)
            .await
        {
            tracing::warn!(error = %e, "could not save a tool call");
        }
        self.sink.send(TurnEvent::ToolCall(Box::new(record.clone())));
    }

    /// Checks, asks about and runs one call, saving each step.
    async fn run_one(
        &self,
        call: ToolCall,
        tool: Option<&OfferedTool>,
        mut record: ToolCallRecord,
    ) -> CallResult {
        let finish = |record: &mut ToolCallRecord, status, output: ToolOutput| {
            record.status = status;
            record.output = Some(output);
        };
        let Some(tool) = tool else {
            let output = ToolOutput::error(match self.tools_off {
                Some(off) => off.explain(&call.name),
                None => {
                    format!("There is no tool named {:?}. Use one of the tools you were given.", call.name)
                }
            });
            finish(&mut record, ToolCallStatus::Error, output.clone());
            self.save(&record).await;
            return CallResult { call, output, denied: false };
        };
        if let Err(problem) = check_arguments(&tool.tool.input_schema, &call.arguments) {
            let output = ToolOutput::error(format!(
                "The arguments do not match the input schema of {}: {problem}. Call it again with \
                 corrected arguments.",
                call.name
            ));
            finish(&mut record, ToolCallStatus::Error, output.clone());
            self.save(&record).await;
            return CallResult { call, output, denied: false };
        }
        if let Some(reason) = self.gate(&record, tool).await.refusal() {
            let status =
                if self.cancel.is_cancelled() { ToolCallStatus::Cancelled } else { ToolCallStatus::Denied };
            let output = ToolOutput::error(reason);
            finish(&mut record, status, output.clone());
            self.save(&record).await;
            return CallResult { call, output, denied: status == ToolCallStatus::Denied };
        }
        record.status = ToolCallStatus::Running;
        self.save(&record).await;
        let started = Instant::now();
        let (progress_tx, mut progress_rx) = tokio::sync::mpsc::unbounded_channel();
        let arguments = call.arguments.as_object().cloned();
        let origin = self.origin(&record);
        let calling = self.agent.mcp().call_tool_from(
            &origin,
            &tool.server,
            &tool.tool.name,
            arguments,
            self.cancel,
            Some(progress_tx),
        );
        tokio::pin!(calling);
        let result = loop {
            tokio::select! {
                r = &mut calling => break r,
                Some(p) = progress_rx.recv() => {
                    self.sink.send(TurnEvent::ToolProgress { id: record.id.clone(), progress: p });
                }
            }
        };
        record.duration_ms = Some(i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX));
        let (status, mut output) = match result {
            Ok(output) if output.is_error => (ToolCallStatus::Error, output),
            Ok(output) => (ToolCallStatus::Done, output),
            Err(CallError::Cancelled) => {
                (ToolCallStatus::Cancelled, ToolOutput::error("Stopped by the user."))
            }
            // The card offers Sign in; the model is told why, so it can say so instead of retrying.
            Err(e @ CallError::NeedsSignIn { .. }) => (
                ToolCallStatus::NeedsSignIn,
                ToolOutput::error(format!(
                    "The tool could not run: {e}. The user has been shown a Sign in button; ask them to \
                     sign in and then ask again."
                )),
            ),
            Err(e) => (ToolCallStatus::Error, ToolOutput::error(format!("The tool could not run: {e}."))),
        };
        // A tool with an app: the app is given the whole result, which the card does not keep.
        if status == ToolCallStatus::Done && tool.tool.ui.as_ref().is_some_and(|u| u.resource_uri.is_some()) {
            let whole = crate::mcp::output::to_result_json(&output);
            if let Err(e) = self.agent.store().set_app_result(&record.id, &whole).await {
                tracing::warn!(error = %e, "could not save a result for its app");
            }
        }
        output.keep(self.result_chars() as usize);
        finish(&mut record, status, output.clone());
        self.save(&record).await;
        CallResult { call, output, denied: false }
    }

    /// Runs one round's calls concurrently; results come back in the calls' order.
    pub async fn run_round(
        &self,
        round: u32,
        text_offset: u32,
        calls: Vec<ToolCall>,
        offered: &[OfferedTool],
    ) -> Vec<CallResult> {
        let mut prepared = Vec::new();
        for call in calls {
            let tool = offered.iter().find(|t| t.name == call.name);
            let record = ToolCallRecord {
                id: uuid::Uuid::new_v4().to_string(),
                call_id: call.id.clone(),
                message_id: self.message_id,
                round,
                text_offset,
                server: tool.map_or_else(String::new, |t| t.server.clone()),
                tool: tool.map_or_else(|| call.name.clone(), |t| t.tool.name.clone()),
                arguments: call.arguments.clone(),
                status: ToolCallStatus::Pending,
                output: None,
                duration_ms: None,
                created_at: crate::store::now_ms(),
                app_of: None,
                app_context: None,
            };
            if let Err(e) = self.agent.store().add_tool_call(record.clone()).await {
                tracing::warn!(error = %e, "could not save a tool call");
            }
            self.sink.send(TurnEvent::ToolCall(Box::new(record.clone())));
            prepared.push((call, tool, record));
        }
        futures::future::join_all(
            prepared.into_iter().map(|(call, tool, record)| self.run_one(call, tool, record)),
        )
        .await
    }
}

/// Picks the tools for a turn from every connected server's tools.
pub fn offered_tools(all: Vec<(String, ToolView)>) -> Vec<OfferedTool> {
    let mut seen = HashSet::new();
    all.into_iter()
        .map(|(server, tool)| OfferedTool { name: model_name(&server, &tool.name), server, tool })
        .filter(|t| seen.insert(t.name.clone()))
        .collect()
}

/// Shared for tests and the CLI: parse `--approve` values (`demo:*`) into allow rules.
pub fn approve_rules(patterns: &[String]) -> Vec<ToolRule> {
    patterns.iter().map(|p| ToolRule { pattern: p.clone(), decision: RuleDecision::Allow }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_safe_for_every_provider() {
        assert_eq!(model_name("demo", "add"), "demo__add");
        assert_eq!(model_name("my server", "get.time/now"), "my_server__get_time_now");
        assert_eq!(model_name("s", &"x".repeat(100)).len(), 64);
    }

    #[test]
    fn rules_are_checked_deny_then_ask_then_allow() {
        let rule = |p: &str, d| ToolRule { pattern: p.into(), decision: d };
        let rules = vec![
            rule("demo:*", RuleDecision::Allow),
            rule("demo:divide", RuleDecision::Deny),
            rule("*:write_file", RuleDecision::Ask),
            rule("filesystem:*", RuleDecision::Allow),
        ];
        assert_eq!(rules_decide(&rules, "demo", "add"), Some(RuleDecision::Allow));
        assert_eq!(rules_decide(&rules, "demo", "divide"), Some(RuleDecision::Deny));
        assert_eq!(rules_decide(&rules, "filesystem", "write_file"), Some(RuleDecision::Ask));
        assert_eq!(rules_decide(&rules, "filesystem", "read_file"), Some(RuleDecision::Allow));
        assert_eq!(rules_decide(&rules, "time", "now"), None);
        assert!(rule_matches("demo", "demo", "anything"), "a bare server name covers its tools");
    }

    #[test]
    fn arguments_are_checked_against_the_schema_with_a_readable_error() {
        let schema = json!({
            "type": "object",
            "properties": { "a": { "type": "number" }, "b": { "type": "number" } },
            "required": ["a", "b"]
        });
        assert!(check_arguments(&schema, &json!({ "a": 1, "b": 2 })).is_ok());
        let missing = check_arguments(&schema, &json!({ "a": 1 })).unwrap_err().to_string();
        assert!(missing.contains("\"b\" is a required property"), "{missing}");
        let wrong = check_arguments(&schema, &json!({ "a": "one", "b": 2 })).unwrap_err().to_string();
        assert!(wrong.starts_with("/a:"), "{wrong}");
        assert!(check_arguments(&schema, &json!([1, 2])).unwrap_err().to_string().contains("JSON object"));
    }
}
