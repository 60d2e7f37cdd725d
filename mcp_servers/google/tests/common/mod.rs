//! Runs the real binary as an MCP child process against the loopback fake Google, with the
//! environment the engine gives it.
#![allow(clippy::unwrap_used, dead_code)]

use std::process::Stdio;

use perch_fake_google::FakeGoogle;
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use tokio::io::AsyncReadExt;
use tokio::process::ChildStderr;

pub type Client = RunningService<RoleClient, ()>;

pub const READ_ONLY: &[&str] =
    &["https://www.googleapis.com/auth/gmail.readonly", "https://www.googleapis.com/auth/calendar.readonly"];
pub const FULL: &[&str] =
    &["https://www.googleapis.com/auth/gmail.modify", "https://www.googleapis.com/auth/calendar"];

pub struct Server {
    pub client: Client,
    stderr: Option<ChildStderr>,
}

impl Server {
    /// Stops the server and returns everything it wrote to stderr.
    pub async fn stop(mut self) -> String {
        self.client.cancel().await.unwrap();
        let mut log = String::new();
        if let Some(mut stderr) = self.stderr.take() {
            stderr.read_to_string(&mut log).await.unwrap();
        }
        log
    }
}

/// The server with `scopes` granted, a token for them from `fake`, in `zone`; `extra` arguments.
pub async fn start(fake: &FakeGoogle, scopes: &[&str], zone: &str, extra: &[&str]) -> (Server, String) {
    let token = fake.mint_access_token(scopes);
    let env = vec![
        ("PERCH_GOOGLE_ACCESS_TOKEN", token.clone()),
        ("PERCH_GOOGLE_SCOPES", scopes.join(" ")),
        ("PERCH_GOOGLE_ACCOUNT", perch_fake_google::USER_EMAIL.to_owned()),
        ("PERCH_GOOGLE_TIME_ZONE", zone.to_owned()),
        ("PERCH_GOOGLE_API_BASE", fake.base_url()),
    ];
    (spawn(&env, extra).await, token)
}

pub async fn spawn(env: &[(&str, String)], extra: &[&str]) -> Server {
    let cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_perch-mcp-google")).configure(|c| {
        for name in [
            "PERCH_GOOGLE_ACCESS_TOKEN",
            "PERCH_GOOGLE_SCOPES",
            "PERCH_GOOGLE_ACCOUNT",
            "PERCH_GOOGLE_TIME_ZONE",
            "PERCH_GOOGLE_API_BASE",
        ] {
            c.env_remove(name);
        }
        c.envs(env.iter().map(|(k, v)| (*k, v.as_str())));
        c.args(["--log-level", "debug", "--timeout", "3"]).args(extra);
    });
    let (transport, stderr) = TokioChildProcess::builder(cmd).stderr(Stdio::piped()).spawn().unwrap();
    let client = ().serve(transport).await.unwrap();
    Server { client, stderr }
}

pub fn text(result: &CallToolResult) -> String {
    result.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

pub async fn call(client: &Client, tool: &str, args: JsonObject) -> CallToolResult {
    client.call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(args)).await.unwrap()
}

pub async fn ok(client: &Client, tool: &str, args: JsonObject) -> String {
    let result = call(client, tool, args).await;
    assert_ne!(result.is_error, Some(true), "{tool}: {}", text(&result));
    assert!(result.structured_content.is_some(), "{tool} gives fields too");
    text(&result)
}

pub async fn refused(client: &Client, tool: &str, args: JsonObject) -> String {
    let result = call(client, tool, args).await;
    assert_eq!(result.is_error, Some(true), "{tool} should have failed: {}", text(&result));
    text(&result)
}

pub async fn tool_names(client: &Client) -> Vec<String> {
    client.list_all_tools().await.unwrap().iter().map(|t| t.name.to_string()).collect()
}
