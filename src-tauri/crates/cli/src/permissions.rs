//! `perch permissions`: every permission you have given (tool rules, tools granted for a
//! conversation, commands always allowed, sessions in force), added and revoked in one place.

use std::path::PathBuf;

use clap::{Subcommand, ValueEnum};
use perch_core::Engine;
use perch_core::engine::permissions::{self, Permission};
use perch_core::settings::RuleDecision;

use crate::output::print_json;

#[derive(Subcommand)]
pub enum PermissionsCommand {
    /// List them: id, what it allows, where.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Allow (or ask about, or deny) a tool in every conversation: SERVER:TOOL, SERVER:* or *.
    Tool {
        pattern: String,
        #[arg(long, value_enum, default_value = "allow")]
        decision: Decision,
    },
    /// Always allow a terminal command in a folder, as its card's "Always allow" would.
    Command {
        command: String,
        /// The folder it is allowed in (default: the working folder).
        #[arg(long)]
        cwd: Option<PathBuf>,
    },
    /// Revoke one, by the id `list` prints (a command's hash prefix will do).
    Revoke { id: String },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Decision {
    Allow,
    Ask,
    Deny,
}

fn line(p: &Permission) -> String {
    format!("{}\t{}\t{}", p.id, p.label, p.scope)
}

pub async fn run(engine: Engine, command: PermissionsCommand) -> anyhow::Result<()> {
    match command {
        PermissionsCommand::List { json } => {
            let all = permissions::list(&engine).await?;
            if json {
                return print_json(&all);
            }
            if all.is_empty() {
                outln!("no permissions given");
            }
            for p in &all {
                outln!("{}", line(p));
            }
        }
        PermissionsCommand::Tool { pattern, decision } => {
            let decision = match decision {
                Decision::Allow => RuleDecision::Allow,
                Decision::Ask => RuleDecision::Ask,
                Decision::Deny => RuleDecision::Deny,
            };
            outln!("{}", line(&permissions::add_rule(&engine, &pattern, decision).await?));
        }
        PermissionsCommand::Command { command, cwd } => {
            let cwd = match cwd {
                Some(dir) => std::path::absolute(dir)?,
                None => perch_core::terminal::tools::chosen_folder(&engine.settings().get().await.terminal)
                    .ok_or_else(|| anyhow::anyhow!("no working folder is chosen yet: give --cwd DIR"))?,
            };
            outln!("{}", line(&permissions::allow_command(&engine, &command, &cwd).await?));
        }
        PermissionsCommand::Revoke { id } => {
            let p = permissions::revoke(&engine, &id).await?;
            outln!("revoked: {} ({})", p.label, p.scope);
        }
    }
    Ok(())
}
