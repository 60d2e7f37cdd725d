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
    perch_mcp_stdio::serve(Demo::new()).await
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
