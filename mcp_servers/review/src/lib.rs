//! perch-mcp-review: an MCP server on stdio that lets a coding agent present a code review in
//! Perch's review panel and read what the user selected there. It forwards each call to
//! Perch's review socket (found through PERCH_IPC_PATH, the runtime dir, or the data dir).

use std::time::Duration;

use clap::Parser;
use perch_ipc::{Client, ClientError};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::Mutex;

#[derive(Parser)]
#[command(
    name = "perch-mcp-review",
    version,
    about = "Present code reviews in Perch (an MCP server on stdio)"
)]
struct Args {
    /// Log level for stderr: error, warn, info, debug or trace.
    #[arg(long, default_value = "warn")]
    log_level: String,
    /// Seconds to wait for Perch to answer.
    #[arg(long, default_value_t = 5.0)]
    timeout: f64,
}

#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
enum Mode {
    /// Replace the whole review (the usual choice).
    Replace,
    /// Add to the end of the current review.
    Append,
    /// Replace one section, named by `section`.
    UpdateSection,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct PresentReviewArgs {
    /// The review as markdown. Start with a short summary fit for a commit message, then
    /// sections (## headings) with findings and suggestions. Refer to code rustdoc-style:
    /// [`src/auth.rs:45`][] or [`src/auth.rs:45-60`][] for a range, or [text](src/auth.rs:45).
    /// Paths are relative to baseUri.
    content: String,
    /// The project folder (absolute path) that file references are relative to.
    #[serde(rename = "baseUri")]
    #[schemars(rename = "baseUri")]
    base_uri: String,
    /// replace (default), append, or update-section.
    mode: Option<Mode>,
    /// For update-section: the heading of the section to replace, e.g. "Security".
    section: Option<String>,
}

#[derive(Clone)]
struct ReviewBridge {
    tool_router: ToolRouter<Self>,
    timeout: Duration,
    /// One connection, reused across calls and reopened when Perch restarts.
    client: std::sync::Arc<Mutex<Option<Client>>>,
}

#[tool_router]
impl ReviewBridge {
    fn new(timeout: Duration) -> Self {
        Self { tool_router: Self::tool_router(), timeout, client: Default::default() }
    }

    #[tool(description = "Show a code review in Perch's review panel, beside the user's editor. \
        Write markdown: first a brief summary suitable for a commit message, then sections with \
        findings and concrete suggestions. Reference code rustdoc-style, like [`src/auth.rs:45`][] \
        or [`src/auth.rs:45-60`][], with paths relative to baseUri; the user clicks them to open the \
        file at that line. Use mode replace for a new review, append to add to it, and \
        update-section with section to rewrite one part. The answer lists references that do not \
        resolve to a file, so you can fix them.")]
    async fn present_review(
        &self,
        Parameters(args): Parameters<PresentReviewArgs>,
    ) -> Result<String, String> {
        let mode = match args.mode.unwrap_or(Mode::Replace) {
            Mode::Replace => "replace",
            Mode::Append => "append",
            Mode::UpdateSection => "update-section",
        };
        let payload = json!({ "content": args.content, "mode": mode, "section": args.section, "baseUri": args.base_uri });
        let data = self.forward("present_review", payload).await?;
        let mut text = format!(
            "The review is shown in Perch (version {}, {} file references).",
            data["version"], data["references"]
        );
        let broken = data["broken"].as_array().cloned().unwrap_or_default();
        if !broken.is_empty() {
            text.push_str("\nThese references do not open a file:");
            for b in broken {
                text.push_str(&format!(
                    "\n- {}: {}",
                    b["reference"].as_str().unwrap_or("?"),
                    b["problem"].as_str().unwrap_or("")
                ));
            }
        }
        Ok(text)
    }

    #[tool(
        description = "Get the text the user has selected in Perch's review or chat view, for \
        example a passage of the review they want to discuss. Returns a note when nothing is selected.",
        annotations(read_only_hint = true)
    )]
    async fn get_selection(&self) -> Result<String, String> {
        Ok(match self.forward("get_selection", json!({})).await? {
            Value::String(text) => text,
            _ => "Nothing is selected in Perch.".into(),
        })
    }
}

impl ReviewBridge {
    /// Sends one request to Perch, reconnecting once if the kept connection has gone stale.
    async fn forward(&self, kind: &str, payload: Value) -> Result<Value, String> {
        let mut slot = self.client.lock().await;
        for attempt in 0..2 {
            if slot.is_none() {
                let (client, path) = Client::discover(self.timeout).await.map_err(|e| e.to_string())?;
                tracing::debug!(path = %path.display(), "connected to Perch");
                *slot = Some(client);
            }
            let Some(client) = slot.as_mut() else { continue };
            match client.request(kind, payload.clone(), self.timeout).await {
                Ok(response) if response.success => return Ok(response.data.unwrap_or(Value::Null)),
                Ok(response) => {
                    return Err(response.error.unwrap_or_else(|| "Perch refused the request".into()));
                }
                Err(e @ ClientError::Timeout(_)) => {
                    *slot = None;
                    return Err(e.to_string());
                }
                Err(e) => {
                    tracing::debug!(error = %e, attempt, "connection to Perch lost");
                    *slot = None;
                }
            }
        }
        Err(ClientError::NotRunning { tried: Vec::new() }.to_string())
    }
}

#[tool_handler(
    router = self.tool_router,
    name = "perch-review",
    instructions = "Present code reviews in Perch with present_review; read the user's selection with get_selection."
)]
impl ServerHandler for ReviewBridge {}

/// Serves MCP on stdin/stdout until the client goes (this crate's binary, or `perch-mcp` started
/// under this server's name).
#[tokio::main(flavor = "current_thread")]
pub async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    perch_mcp_stdio::init_logging(&["perch_mcp_review", "perch_ipc"], &args.log_level);
    let timeout = Duration::from_secs_f64(args.timeout.clamp(0.1, 600.0));
    perch_mcp_stdio::serve(ReviewBridge::new(timeout)).await
}
