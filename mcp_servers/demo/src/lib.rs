//! perch-mcp-demo: a tiny MCP server on stdio with two arithmetic tools, bundled so a fresh
//! install has a server to try tool calling with (and so tests have a known, harmless target).

use clap::Parser;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::{ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;

#[derive(Parser)]
#[command(name = "perch-mcp-demo", version, about = "Arithmetic demo tools (an MCP server on stdio)")]
struct Args {
    /// Log level for stderr: error, warn, info, debug or trace.
    #[arg(long, default_value = "warn")]
    log_level: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct AddArgs {
    /// The first number.
    a: f64,
    /// The number to add to it.
    b: f64,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct DivideArgs {
    /// The dividend (the number to divide).
    a: f64,
    /// The divisor (the number to divide by); must not be zero.
    b: f64,
}

#[derive(Clone)]
struct Demo {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Demo {
    fn new() -> Self {
        Self { tool_router: Self::tool_router() }
    }

    #[tool(description = "Add two numbers and return the sum.", annotations(read_only_hint = true))]
    async fn add(&self, Parameters(args): Parameters<AddArgs>) -> Result<String, String> {
        render(args.a + args.b)
    }

    #[tool(
        description = "Divide a by b and return the quotient. b must not be zero.",
        annotations(read_only_hint = true)
    )]
    async fn divide(&self, Parameters(args): Parameters<DivideArgs>) -> Result<String, String> {
        if args.b == 0.0 {
            return Err("cannot divide by zero".into());
        }
        render(args.a / args.b)
    }
}

/// f64's Display already writes whole numbers without ".0" ("5", not "5.0"); JSON has no
/// infinity, so an overflowed result is reported rather than sent as "inf".
fn render(value: f64) -> Result<String, String> {
    if value.is_finite() { Ok(value.to_string()) } else { Err("the result is too large to represent".into()) }
}

#[tool_handler(
    router = self.tool_router,
    name = "perch-demo",
    instructions = "Demo arithmetic: add(a, b) and divide(a, b)."
)]
impl ServerHandler for Demo {}

/// Serves MCP on stdin/stdout until the client goes (this crate's binary, or `perch-mcp` started
/// under this server's name).
#[tokio::main(flavor = "current_thread")]
pub async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    perch_mcp_stdio::init_logging(&["perch_mcp_demo"], &args.log_level);
    match pipes() {
        Some(pipes) => {
            let code = serve_on(Demo::new(), pipes).await;
            blocking_again();
            code
        }
        None => perch_mcp_stdio::serve(Demo::new()).await,
    }
}

/// stdin and stdout as the runtime's own non-blocking pipes, when both are pipes (a client that
/// starts the server gives it pipes). tokio's `stdin()` and `stdout()` run every read and write
/// on a blocking thread and hand the result over: a `demo.add` call cost the server ten thread
/// switches instead of one, and twice the CPU time (`benches/mcp.rs`). `None` for anything else
/// (a terminal, a file, a socket), which keeps tokio's blocking handles.
#[cfg(unix)]
fn pipes() -> Option<(tokio::net::unix::pipe::Receiver, tokio::net::unix::pipe::Sender)> {
    use std::fs::File;
    use std::os::fd::AsFd;
    use std::os::unix::fs::FileTypeExt;
    use tokio::net::unix::pipe;
    // Duplicates: the descriptors 0 and 1 stay open, as the rest of the process expects.
    let input = File::from(std::io::stdin().as_fd().try_clone_to_owned().ok()?);
    let output = File::from(std::io::stdout().as_fd().try_clone_to_owned().ok()?);
    let is_pipe = |f: &File| f.metadata().is_ok_and(|m| m.file_type().is_fifo());
    // Both or neither: one made non-blocking under tokio's blocking handle would fail its reads.
    if !is_pipe(&input) || !is_pipe(&output) {
        return None;
    }
    let input = pipe::Receiver::from_file(input).ok()?;
    match pipe::Sender::from_file(output) {
        Ok(output) => Some((input, output)),
        Err(_) => {
            let _ = input.into_blocking_fd();
            None
        }
    }
}

/// Leaves stdin and stdout blocking again, as they were: a launcher that shares them (a shell
/// script that started the server) finds them as it left them.
#[cfg(unix)]
fn blocking_again() {
    use std::os::fd::AsFd;
    use tokio::net::unix::pipe;
    if let Ok(fd) = std::io::stdin().as_fd().try_clone_to_owned()
        && let Ok(input) = pipe::Receiver::from_owned_fd_unchecked(fd)
    {
        let _ = input.into_blocking_fd();
    }
    if let Ok(fd) = std::io::stdout().as_fd().try_clone_to_owned()
        && let Ok(output) = pipe::Sender::from_owned_fd_unchecked(fd)
    {
        let _ = output.into_blocking_fd();
    }
}

#[cfg(not(unix))]
fn pipes() -> Option<(tokio::io::Stdin, tokio::io::Stdout)> {
    None
}

#[cfg(not(unix))]
fn blocking_again() {}

/// [`perch_mcp_stdio::serve`] on the given reader and writer.
async fn serve_on<R, W>(server: Demo, (input, output): (R, W)) -> std::process::ExitCode
where
    R: tokio::io::AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    use rmcp::ServiceExt;
    let served = match server.serve((input, output)).await {
        Ok(running) => running.waiting().await.map(|_| ()).map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    match served {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "the MCP session ended with an error");
            std::process::ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn whole_numbers_have_no_fraction_and_overflow_is_refused() {
        assert_eq!(render(5.0).as_deref(), Ok("5"));
        assert_eq!(render(-3.0).as_deref(), Ok("-3"));
        assert_eq!(render(3.5).as_deref(), Ok("3.5"));
        assert!(render(f64::MAX * 2.0).is_err());
    }
}
