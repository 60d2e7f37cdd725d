//! What Perch's bundled MCP servers share. On stdio, stdout carries the protocol, so logs go
//! to stderr only; a server serves one session and exits when its client closes stdin.

use std::process::ExitCode;

use rmcp::{ServerHandler, ServiceExt};

/// Logs at `level` for the given tracing targets (the server's crate, and any it relies on),
/// warnings only for rmcp, to stderr without colours.
pub fn init_logging(targets: &[&str], level: &str) {
    let mut directives: Vec<String> = targets.iter().map(|t| format!("{t}={level}")).collect();
    directives.push("rmcp=warn".into());
    let filter = tracing_subscriber::EnvFilter::try_new(directives.join(","))
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(false).init();
}

/// Serves `server` on stdin/stdout until the client goes away.
pub async fn serve<S: ServerHandler>(server: S) -> ExitCode {
    let served = match server.serve(rmcp::transport::stdio()).await {
        Ok(running) => running.waiting().await.map(|_| ()).map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "the MCP session ended with an error");
            ExitCode::FAILURE
        }
    }
}
