//! `perch mcp`: the MCP servers Perch knows, their tools, and calling one by hand.

use std::time::Duration;

use anyhow::bail;
use clap::Subcommand;
use perch_core::Engine;
use perch_core::mcp::{ServerStatus, ServerView};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::output::print_json;

/// How long to wait for servers to start (npx may download a package first).
const START_WAIT: Duration = Duration::from_secs(60);

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
    Call {
        server: String,
        tool: String,
        /// The arguments as a JSON object.
        #[arg(default_value = "{}")]
        arguments: String,
        #[arg(long)]
        json: bool,
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
                        println!("{}:{}  {first}", s.config.name, t.name);
                    }
                }
            }
            if !failed.is_empty() {
                bail!("{} of {} servers are not connected", failed.len(), servers.len());
            }
        }
        McpCommand::Call { server, tool, arguments, json } => {
            let arguments: Value = serde_json::from_str(&arguments)
                .map_err(|e| anyhow::anyhow!("the arguments are not valid JSON: {e}"))?;
            let Value::Object(arguments) = arguments else { bail!("the arguments must be a JSON object") };
            manager.ensure_connected(&server, START_WAIT).await?;
            let output =
                manager.call_tool(&server, &tool, Some(arguments), &CancellationToken::new(), None).await?;
            if json {
                print_json(&output)?;
            } else {
                println!("{}", output.text);
                if !output.images.is_empty() {
                    eprintln!("({} image(s) not shown; use --json)", output.images.len());
                }
            }
            if output.is_error {
                bail!("{server}:{tool} reported an error");
            }
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
    println!("{}  {status}{pid}{tools}", s.config.name);
    if let Some(e) = &s.last_error {
        println!("  {e}");
    }
}
