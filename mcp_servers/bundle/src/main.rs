//! `perch-mcp`: the bundled MCP servers in one binary. The package installs `perch-mcp-demo`,
//! `perch-mcp-filesystem`, `perch-mcp-review`, `perch-mcp-web` and `perch-mcp-google` as links to
//! it, and it runs the server its name says, with that server's arguments. Separate binaries
//! carried a copy each of the runtime, the MCP SDK and the JSON code (about 7 MB of the package
//! before xz for four).

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let arg0 = std::env::args_os().next().unwrap_or_default();
    let name = Path::new(&arg0).file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_owned();
    // The engine says where crash reports go (PERCH_CRASH_DIR); started by hand, a panic only prints.
    perch_crash::install_from_env(&name, env!("CARGO_PKG_VERSION"));
    match name.as_str() {
        "perch-mcp-demo" => perch_mcp_demo::main(),
        "perch-mcp-filesystem" => perch_mcp_filesystem::main(),
        "perch-mcp-review" => perch_mcp_review::main(),
        "perch-mcp-web" => perch_mcp_web::server::main(),
        "perch-mcp-google" => perch_mcp_google::server::main(),
        _ => {
            eprintln!(
                "perch-mcp runs Perch's bundled MCP servers by the name it is started under: \
                 perch-mcp-demo, perch-mcp-filesystem, perch-mcp-review, perch-mcp-web or perch-mcp-google \
                 (links to it)"
            );
            ExitCode::from(2)
        }
    }
}
