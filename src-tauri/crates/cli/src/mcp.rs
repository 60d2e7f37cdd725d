//! `perch mcp`: the MCP servers Perch knows, their tools, and calling one by hand, with the
//! questions a call raises (a server's form, during the call or as an `input_required` result)
//! answered from `--answers` or on the terminal.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use anyhow::bail;
use clap::Subcommand;
use perch_core::Engine;
use perch_core::mcp::{CallError, ServerStatus, ServerView};
use perch_core::questions::{
    Answer, ApprovalChoice, ElicitationAction, ElicitationQuestion, Question, QuestionChange, Questions,
};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::output::print_json;

/// How long to wait for servers to start (npx may download a package first).
const START_WAIT: Duration = Duration::from_secs(60);
/// Sign-ins one `call --sign-in` may start (the first, then step-ups), as the MCP
/// specification's scope challenge handling bounds them.
const MAX_SIGN_INS: u32 = 3;

#[derive(Subcommand)]
pub enum McpCommand {
    /// Every configured server: status, PID, tool count, and problems in the config files.
    List {
        #[arg(long)]
        json: bool,
    },
    /// The tools of one server, or of every enabled one.
    Tools {
        server: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Call a tool: perch mcp call demo add '{"a":2,"b":3}'
    ///
    /// When the server asks for input during the call (a form), it is answered from --answers,
    /// else on the terminal; without either, the server is told the user did not answer.
    Call {
        server: String,
        tool: String,
        /// The arguments as a JSON object.
        #[arg(default_value = "{}")]
        arguments: String,
        /// Answers to the server's forms, as a JSON object of field values: each form is
        /// accepted with the fields it asks for, its defaults filling the rest ('{}': the
        /// defaults only).
        #[arg(long, value_name = "JSON")]
        answers: Option<String>,
        /// Sign in when the server asks for it (or for more: a step-up), then call again.
        #[arg(long)]
        sign_in: bool,
        #[arg(long)]
        json: bool,
    },
    /// Sign in to a server that asks for it (OAuth): the page opens in your browser ($BROWSER
    /// first); its address is printed when none can be opened.
    Login {
        server: String,
        /// Print the address instead of opening a browser.
        #[arg(long)]
        no_browser: bool,
        /// Ask for these scopes (space-separated) instead of what the server names.
        #[arg(long)]
        scope: Option<String>,
    },
    /// Sign out of a server: revoked there where it can be, forgotten here.
    Logout { server: String },
    /// Read a resource: perch mcp read docs 'file:///README.md'
    Read { server: String, uri: String },
    /// Fill in a prompt: perch mcp prompt git commit_message '{"changes":"..."}'
    Prompt {
        server: String,
        name: String,
        /// The arguments as a JSON object of strings.
        #[arg(default_value = "{}")]
        arguments: String,
    },
}

pub async fn run(engine: Engine, command: McpCommand) -> anyhow::Result<()> {
    engine.mcp().set_env(engine.child_env());
    let result = dispatch(&engine, command).await;
    engine.stop_mcp_servers().await;
    result
}

/// Starts `only` (which must exist), or every enabled server, and waits for each to connect
/// or fail.
async fn start_enabled(engine: &Engine, only: Option<&str>) -> anyhow::Result<()> {
    let manager = engine.mcp();
    let names: Vec<String> = match only {
        Some(name) => vec![manager.server(name)?.config.name],
        None => manager.list().into_iter().filter(|s| s.config.enabled).map(|s| s.config.name).collect(),
    };
    futures::future::join_all(names.iter().map(|n| manager.ensure_connected(n, START_WAIT))).await;
    Ok(())
}

async fn dispatch(engine: &Engine, command: McpCommand) -> anyhow::Result<()> {
    let manager = engine.mcp();
    match command {
        McpCommand::List { json } => {
            start_enabled(engine, None).await?;
            let servers = manager.list();
            if json {
                return print_json(
                    &serde_json::json!({ "servers": servers, "problems": manager.problems() }),
                );
            }
            for s in &servers {
                print_server(s);
            }
            for p in manager.problems() {
                eprintln!("perch: config problem: {p}");
            }
        }
        McpCommand::Tools { server, json } => {
            start_enabled(engine, server.as_deref()).await?;
            let servers: Vec<ServerView> = manager
                .list()
                .into_iter()
                .filter(|s| server.as_ref().is_none_or(|n| *n == s.config.name))
                .filter(|s| server.is_some() || s.config.enabled)
                .collect();
            let failed: Vec<&ServerView> =
                servers.iter().filter(|s| s.status != ServerStatus::Connected).collect();
            if let (Some(name), Some(s)) = (&server, failed.first()) {
                bail!("{name} is not connected: {}", s.last_error.as_deref().unwrap_or("it did not start"));
            }
            for s in &failed {
                eprintln!(
                    "perch: {} is not connected: {}",
                    s.config.name,
                    s.last_error.as_deref().unwrap_or("it did not start")
                );
            }
            if json {
                let tools: Vec<Value> = servers
                    .iter()
                    .flat_map(|s| {
                        s.tools.iter().map(|t| serde_json::json!({ "server": s.config.name, "tool": t }))
                    })
                    .collect();
                print_json(&tools)?;
            } else {
                for s in &servers {
                    for t in &s.tools {
                        let first = t.description.lines().next().unwrap_or_default();
                        outln!("{}:{}  {first}", s.config.name, t.name);
                    }
                }
            }
            if !failed.is_empty() {
                bail!("{} of {} servers are not connected", failed.len(), servers.len());
            }
        }
        McpCommand::Call { server, tool, arguments, answers, sign_in, json } => {
            let arguments = json_object(&arguments, "arguments")?;
            let answers = answers.map(|a| json_object(&a, "answers")).transpose()?;
            let answering = answer_questions(engine.questions(), answers);
            let mut sign_ins = 0;
            let called = loop {
                let called = match manager.ensure_connected(&server, START_WAIT).await {
                    Ok(()) => {
                        let arguments = Some(arguments.clone());
                        manager.call_tool(&server, &tool, arguments, &CancellationToken::new(), None).await
                    }
                    Err(e) => Err(e),
                };
                match called {
                    // A server that keeps asking for more is not signed in to forever.
                    Err(CallError::NeedsSignIn { .. }) if sign_in && sign_ins < MAX_SIGN_INS => {
                        sign_ins += 1;
                        crate::sign_in::login(engine, &server, false, None).await?;
                    }
                    other => break other,
                }
            };
            if let Some(answering) = answering {
                answering.abort();
            }
            let output = called?;
            if json {
                print_json(&output)?;
            } else {
                outln!("{}", output.text);
                if !output.images.is_empty() {
                    eprintln!("({} image(s) not shown; use --json)", output.images.len());
                }
            }
            if output.is_error {
                bail!("{server}:{tool} reported an error");
            }
        }
        McpCommand::Login { server, no_browser, scope } => {
            // Meet the server first: its 401 says where its metadata is and which scope it
            // wants (WWW-Authenticate), and the sign-in starts from that.
            let _ = manager.ensure_connected(&server, START_WAIT).await;
            crate::sign_in::login(engine, &server, no_browser, scope).await?;
        }
        McpCommand::Logout { server } => crate::sign_in::logout(engine, &server).await?,
        McpCommand::Read { server, uri } => {
            manager.ensure_connected(&server, START_WAIT).await?;
            outln!("{}", manager.read_resource(&server, &uri).await?);
        }
        McpCommand::Prompt { server, name, arguments } => {
            let arguments = json_object(&arguments, "arguments")?;
            manager.ensure_connected(&server, START_WAIT).await?;
            outln!("{}", manager.get_prompt(&server, &name, arguments).await?);
        }
    }
    Ok(())
}

fn print_server(s: &ServerView) {
    let status = match s.status {
        ServerStatus::Connected => "connected",
        ServerStatus::Starting => "starting",
        ServerStatus::Disconnected => "disconnected",
        ServerStatus::Error => "error",
        ServerStatus::Stopped if !s.config.enabled => "off",
        ServerStatus::Stopped => "stopped",
        ServerStatus::Idle => "idle",
        ServerStatus::NeedsSignIn => "needs sign-in",
    };
    let pid = s.pid.map(|p| format!(" pid {p}")).unwrap_or_default();
    let tools = if matches!(s.status, ServerStatus::Connected | ServerStatus::Idle) {
        format!(", {} tools", s.tools.len())
    } else {
        String::new()
    };
    outln!("{}  {status}{pid}{tools}", s.config.name);
    if let Some(e) = &s.last_error {
        outln!("  {e}");
    }
    if s.sign_in.is_some() || s.status == ServerStatus::NeedsSignIn {
        outln!("  {}", crate::sign_in::line(&s.config.name, s.sign_in.as_ref()));
    }
}

/// `text` as a JSON object, or why not (`what` names the argument).
fn json_object(text: &str, what: &str) -> anyhow::Result<Map<String, Value>> {
    match serde_json::from_str(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => bail!("the {what} must be a JSON object"),
        Err(e) => bail!("the {what} are not valid JSON: {e}"),
    }
}

/// Answers the questions raised while a call runs: a server's form from `answers`, else on
/// the terminal; a server's wish to use the model only on the terminal. With neither (a script
/// without --answers), nobody listens, and servers hear that the user did not answer.
fn answer_questions(
    questions: &std::sync::Arc<Questions>,
    answers: Option<Map<String, Value>>,
) -> Option<tokio::task::JoinHandle<()>> {
    let terminal = std::io::stdin().is_terminal();
    if answers.is_none() && !terminal {
        return None;
    }
    let mut changes = questions.subscribe();
    let questions = questions.clone();
    Some(tokio::spawn(async move {
        while let Ok(change) = changes.recv().await {
            let QuestionChange::Asked(ask) = change else { continue };
            let answer = match ask.question {
                Question::Elicitation(q) => match &answers {
                    Some(given) => Answer::Elicitation {
                        action: ElicitationAction::Accept,
                        content: Some(form_content(&q.schema, given)),
                    },
                    None => ask_form(&q).await,
                },
                Question::Sampling(q) => {
                    let approve = terminal
                        && confirm(&format!(
                            "perch: {} asks to use the model ({}) with:\n{}\nAllow? [y/N] ",
                            q.server,
                            q.model,
                            q.messages.join("\n")
                        ))
                        .await;
                    Answer::Sampling { approve }
                }
                // A call by hand is approved by running it; nothing else asks here.
                Question::ToolApproval(_) => Answer::Approval { choice: ApprovalChoice::Deny },
                // `perch mcp call memory remember` keeps nothing: `perch memories add` does.
                Question::Memory(_) => Answer::Memory { keep: None },
            };
            let _ = questions.answer(ask.id, answer);
        }
    }))
}

/// The fields of `given` that the form asks for (a form without properties gets them all).
fn form_content(schema: &Value, given: &Map<String, Value>) -> Value {
    let Some(properties) = schema.get("properties").and_then(Value::as_object).filter(|p| !p.is_empty())
    else {
        return Value::Object(given.clone());
    };
    Value::Object(
        given
            .iter()
            .filter(|(k, _)| properties.contains_key(*k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    )
}

/// Puts a server's form to the user, field by field; Enter leaves a field out (its default
/// applies), end of input cancels.
async fn ask_form(q: &ElicitationQuestion) -> Answer {
    let cancel = Answer::Elicitation { action: ElicitationAction::Cancel, content: None };
    eprintln!("perch: {} asks: {}", q.server, q.message);
    let properties = q.schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    let required: Vec<&str> = q
        .schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    eprint!("Answer? [Y/n] (n declines) ");
    match read_line().await.as_deref().map(str::trim) {
        None => return cancel,
        Some("n" | "N" | "no") => {
            return Answer::Elicitation { action: ElicitationAction::Decline, content: None };
        }
        Some(_) => {}
    }
    let mut content = Map::new();
    for (name, property) in &properties {
        let needed = required.contains(&name.as_str()) && property.get("default").is_none();
        loop {
            eprint!("  {}: ", field_label(name, property, needed));
            let Some(line) = read_line().await else { return cancel };
            let text = line.trim_end_matches(['\n', '\r']);
            if text.is_empty() && !needed {
                break;
            }
            match parse_field(property, text) {
                Ok(value) => {
                    content.insert(name.clone(), value);
                    break;
                }
                Err(e) => eprintln!("  {e}"),
            }
        }
    }
    Answer::Elicitation { action: ElicitationAction::Accept, content: Some(Value::Object(content)) }
}

/// A field as the terminal shows it: name, what it is, its choices and default.
fn field_label(name: &str, property: &Value, needed: bool) -> String {
    let mut parts = vec![kind_of(property).to_owned()];
    if let Some(d) = property.get("description").and_then(Value::as_str) {
        parts.push(d.to_owned());
    }
    if let Some(choices) = choices(property) {
        parts.push(format!("one of {}", choices.join(", ")));
    }
    if let Some(d) = property.get("default") {
        parts.push(format!("default {d}"));
    } else if !needed {
        parts.push("optional".into());
    }
    format!("{name} ({})", parts.join("; "))
}

fn kind_of(property: &Value) -> &str {
    property.get("type").and_then(Value::as_str).unwrap_or("string")
}

/// The allowed values of an enum field (`enum`, or `oneOf` with `const`s).
fn choices(property: &Value) -> Option<Vec<String>> {
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        return Some(
            values.iter().map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned)).collect(),
        );
    }
    let one_of = property.get("oneOf").or_else(|| property.get("anyOf"))?.as_array()?;
    Some(one_of.iter().filter_map(|o| o.get("const")?.as_str().map(str::to_owned)).collect())
}

/// What was typed for a field, as the JSON value its type wants.
fn parse_field(property: &Value, text: &str) -> Result<Value, String> {
    let text = text.trim();
    let value = match kind_of(property) {
        "boolean" => match text.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Value::Bool(true),
            "n" | "no" | "false" => Value::Bool(false),
            _ => return Err("answer y or n".into()),
        },
        "integer" => text.parse::<i64>().map(Value::from).map_err(|_| "a whole number, please".to_owned())?,
        "number" => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or("a number, please")?,
        _ => Value::String(text.to_owned()),
    };
    if let (Some(choices), Value::String(s)) = (choices(property), &value)
        && !choices.contains(s)
    {
        return Err(format!("one of {}, please", choices.join(", ")));
    }
    Ok(value)
}

async fn confirm(prompt: &str) -> bool {
    eprint!("{prompt}");
    matches!(read_line().await.as_deref().map(str::trim), Some("y" | "Y" | "yes"))
}

/// A line from stdin; `None` at its end.
async fn read_line() -> Option<String> {
    let _ = std::io::stderr().flush();
    tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        match std::io::stdin().read_line(&mut line) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(line),
        }
    })
    .await
    .ok()
    .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_fill_only_the_fields_a_form_asks_for() {
        let given = json!({ "confirmed": true, "name": "Ada" });
        let Value::Object(given) = given else { unreachable!() };
        let schema = json!({ "type": "object", "properties": { "confirmed": { "type": "boolean" } } });
        assert_eq!(form_content(&schema, &given), json!({ "confirmed": true }));
        assert_eq!(form_content(&json!({ "type": "object" }), &given), Value::Object(given.clone()));
        assert_eq!(form_content(&schema, &Map::new()), json!({}));
    }

    #[test]
    fn typed_fields_are_parsed_to_their_types_and_choices_enforced() {
        assert_eq!(parse_field(&json!({ "type": "boolean" }), "Y"), Ok(json!(true)));
        assert!(parse_field(&json!({ "type": "boolean" }), "maybe").is_err());
        assert_eq!(parse_field(&json!({ "type": "integer" }), " 42 "), Ok(json!(42)));
        assert!(parse_field(&json!({ "type": "integer" }), "4.2").is_err());
        assert_eq!(parse_field(&json!({ "type": "number" }), "95.5"), Ok(json!(95.5)));
        let status = json!({ "type": "string", "enum": ["active", "inactive"] });
        assert_eq!(parse_field(&status, "inactive"), Ok(json!("inactive")));
        assert!(parse_field(&status, "gone").is_err());
        let titled = json!({ "type": "string", "oneOf": [{ "const": "a", "title": "A" }] });
        assert_eq!(choices(&titled), Some(vec!["a".to_owned()]));
        assert_eq!(
            field_label("age", &json!({ "type": "integer", "default": 30 }), false),
            "age (integer; default 30)"
        );
    }
}
