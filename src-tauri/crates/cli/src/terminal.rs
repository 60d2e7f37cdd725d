//! `perch terminal`: test a command against the layers, and manage remembered approvals.

use std::path::PathBuf;

use anyhow::bail;
use clap::Subcommand;
use perch_core::Engine;
use perch_core::terminal::policy::{Context, assess, decide};
use perch_core::terminal::tools::working_folder;
use perch_core::terminal::{AskLevel, home};

use crate::output::print_json;

#[derive(Subcommand)]
pub enum TerminalCommand {
    /// Print what Perch would do with a command: `blocked`, `ask` or `allowed`, then why.
    Check {
        command: String,
        /// always, on-miss or off (default: the setting). `off` shows what the blocklist, the
        /// PATH guard and the sandbox alone would do.
        #[arg(long)]
        ask_level: Option<String>,
        /// The folder it would run in (default: the working folder from the settings).
        #[arg(long)]
        cwd: Option<PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Print the working folder, or choose it: where commands run and the one folder (with the
    /// writable folders from Settings) they may change. No command runs until one is chosen.
    Folder {
        /// The folder to choose (it must exist).
        dir: Option<PathBuf>,
    },
    /// The commands you always allow (kept as hashes of the normalised command).
    Approvals {
        /// Forget one, by its hash (or a unique prefix).
        #[arg(long)]
        revoke: Option<String>,
        /// Forget them all.
        #[arg(long)]
        revoke_all: bool,
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(engine: Engine, command: TerminalCommand) -> anyhow::Result<()> {
    match command {
        TerminalCommand::Check { command, ask_level, cwd, json } => {
            let settings = engine.settings().get().await.terminal;
            let ask_level = match ask_level {
                Some(level) => level.parse::<AskLevel>().map_err(anyhow::Error::msg)?,
                None => settings.ask_level,
            };
            let cwd = match cwd {
                Some(dir) => std::path::absolute(dir)?,
                None => working_folder(None, &settings),
            };
            let assessment = assess(&command, &cwd, &home());
            let remembered = engine.store().is_approval_remembered(&assessment.hash()).await?;
            let sandboxed = engine.terminal().enforcement().await.is_ok();
            let decision = decide(&assessment, Context { ask_level, remembered, session: false, sandboxed });
            if json {
                return print_json(&decision);
            }
            outln!("{} because {}", decision.word(), decision.reason());
            Ok(())
        }
        TerminalCommand::Folder { dir: None } => {
            match perch_core::terminal::tools::chosen_folder(&engine.settings().get().await.terminal) {
                Some(dir) => outln!("{}", dir.display()),
                None => {
                    outln!("no working folder is chosen yet; choose one with: perch terminal folder DIR")
                }
            }
            Ok(())
        }
        TerminalCommand::Folder { dir: Some(dir) } => {
            let dir = engine.choose_working_folder(&std::path::absolute(dir)?, None).await?;
            outln!("commands now run in {} and may change files only there", dir.display());
            Ok(())
        }
        TerminalCommand::Approvals { revoke, revoke_all, json } => {
            let store = engine.store();
            if revoke_all {
                outln!("forgot {} remembered approvals", store.revoke_approval(None).await?);
                return Ok(());
            }
            let all = store.remembered_approvals().await?;
            if let Some(prefix) = revoke {
                let matching: Vec<_> = all.iter().filter(|a| a.hash.starts_with(&prefix)).collect();
                let [one] = matching.as_slice() else {
                    bail!("{} remembered approvals match {prefix:?}; give a longer prefix", matching.len())
                };
                store.revoke_approval(Some(&one.hash)).await?;
                outln!("forgot: {}", one.label);
                return Ok(());
            }
            if json {
                return print_json(&all);
            }
            if all.is_empty() {
                outln!("no remembered approvals");
            }
            for a in all {
                outln!("{}  {}", &a.hash[..12], a.label);
            }
            Ok(())
        }
    }
}
