//! perch-mcp-filesystem: an MCP server on stdio that lets the model list, read, write, create,
//! move and rename files, confined to one folder (the root) given on the command line.

mod confine;
mod ops;

use std::path::PathBuf;
use std::sync::Arc;

use clap::Parser;
use confine::Root;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::Deserialize;

#[derive(Parser)]
#[command(
    name = "perch-mcp-filesystem",
    version,
    about = "File tools confined to one folder (an MCP server on stdio)"
)]
struct Args {
    /// The folder the tools may use; nothing outside it can be reached. Default: the current folder.
    #[arg(long, value_name = "DIR", conflicts_with = "root_arg")]
    root: Option<PathBuf>,
    /// The same as --root, for configs that pass the folder as a plain argument.
    #[arg(value_name = "ROOT")]
    root_arg: Option<PathBuf>,
    /// Log level for stderr: error, warn, info, debug or trace.
    #[arg(long, default_value = "warn")]
    log_level: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct PathArgs {
    /// A path relative to the allowed folder, such as "notes/todo.md"; "." is the folder itself.
    path: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct WriteArgs {
    /// The file to write, relative to the allowed folder.
    path: String,
    /// The complete new text of the file.
    content: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct MoveArgs {
    /// The file or folder to move, relative to the allowed folder.
    source: String,
    /// Its new path (including its name), relative to the allowed folder; must not exist yet.
    destination: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
struct RenameArgs {
    /// The file or folder to rename, relative to the allowed folder.
    path: String,
    /// The new name alone, such as "final.txt", without any folder.
    new_name: String,
}

#[derive(Clone)]
struct Files {
    tool_router: ToolRouter<Self>,
    root: Arc<Root>,
}

// Move and rename never overwrite, so no data is lost: they are not marked destructive.
#[tool_router]
impl Files {
    fn new(root: Root) -> Self {
        let mut tool_router = Self::tool_router();
        // The root is known only at run time, so it is added to the static descriptions here.
        let note = format!(
            " Paths are relative to the allowed folder {}; absolute paths are accepted only inside it.",
            root.path().display()
        );
        for route in tool_router.map.values_mut() {
            if let Some(description) = route.attr.description.as_mut() {
                *description = format!("{description}{note}").into();
            }
        }
        Self { tool_router, root: Arc::new(root) }
    }

    #[tool(
        description = "List a folder: one entry per line, marked [DIR] or [FILE], sorted by name.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn list_directory(&self, Parameters(args): Parameters<PathArgs>) -> Result<String, String> {
        self.run(move |root| ops::list_directory(root, &args.path)).await
    }

    #[tool(
        description = "Read a UTF-8 text file and return its contents (files up to 5 MiB).",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn read_file(&self, Parameters(args): Parameters<PathArgs>) -> Result<String, String> {
        self.run(move |root| ops::read_file(root, &args.path)).await
    }

    #[tool(
        description = "Write text to a file, creating it or replacing its whole contents. The folder \
        that holds it must already exist (see create_folder).",
        annotations(destructive_hint = true, open_world_hint = false)
    )]
    async fn write_file(&self, Parameters(args): Parameters<WriteArgs>) -> Result<String, String> {
        self.run(move |root| ops::write_file(root, &args.path, &args.content)).await
    }

    #[tool(
        description = "Create a folder, and any missing folders above it. Does nothing if it exists.",
        annotations(destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn create_folder(&self, Parameters(args): Parameters<PathArgs>) -> Result<String, String> {
        self.run(move |root| ops::create_folder(root, &args.path)).await
    }

    #[tool(
        description = "Move a file or folder to a new path (which names it too). Never overwrites: \
        the destination must not exist, and its folder must.",
        annotations(destructive_hint = false, open_world_hint = false)
    )]
    async fn move_file(&self, Parameters(args): Parameters<MoveArgs>) -> Result<String, String> {
        self.run(move |root| ops::move_file(root, &args.source, &args.destination)).await
    }

    #[tool(
        description = "Rename a file or folder where it is. new_name is a bare name without folders; \
        never overwrites an existing entry.",
        annotations(destructive_hint = false, open_world_hint = false)
    )]
    async fn rename_file(&self, Parameters(args): Parameters<RenameArgs>) -> Result<String, String> {
        self.run(move |root| ops::rename_file(root, &args.path, &args.new_name)).await
    }
}

impl Files {
    /// Runs a blocking file operation off the async thread, so a large read does not stall
    /// the protocol loop.
    async fn run<F>(&self, op: F) -> Result<String, String>
    where
        F: FnOnce(&Root) -> Result<String, String> + Send + 'static,
    {
        let root = self.root.clone();
        tokio::task::spawn_blocking(move || op(&root))
            .await
            .unwrap_or_else(|e| Err(format!("the file operation failed unexpectedly: {e}")))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Files {
    // Written out (not generated by tool_handler) so the instructions can name the root.
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("perch-filesystem", env!("CARGO_PKG_VERSION")))
            .with_instructions(format!(
                "Files in {} and below: list_directory, read_file, write_file, create_folder, \
                 move_file and rename_file. Paths are relative to that folder.",
                self.root.path().display()
            ))
    }
}

/// Serves MCP on stdin/stdout until the client goes (this crate's binary, or `perch-mcp` started
/// under this server's name).
#[tokio::main(flavor = "current_thread")]
pub async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    perch_mcp_stdio::init_logging(&["perch_mcp_filesystem"], &args.log_level);
    let dir = args.root.or(args.root_arg).unwrap_or_else(|| PathBuf::from("."));
    let root = match Root::new(&dir) {
        Ok(root) => root,
        Err(e) => {
            tracing::error!("{e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    tracing::info!(root = %root.path().display(), "serving files");
    perch_mcp_stdio::serve(Files::new(root)).await
}
