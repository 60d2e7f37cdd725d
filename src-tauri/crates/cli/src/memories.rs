//! `perch memories`: what Perch keeps about the user for later answers (the Memories page in
//! the app): list, add, edit, forget.

use clap::Subcommand;
use perch_core::Engine;

use crate::output::print_json;

#[derive(Subcommand)]
pub enum MemoriesCommand {
    /// Every memory, newest first, with its number.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Keep a memory (one short fact: "The user's team deploys on Fridays").
    Add { text: String },
    /// Change what a memory says.
    Edit { id: i64, text: String },
    /// Forget a memory (answers it was given keep what they had).
    Forget { id: i64 },
}

pub async fn run(engine: Engine, command: MemoriesCommand) -> anyhow::Result<()> {
    let memories = engine.memories();
    match command {
        MemoriesCommand::List { json } => {
            let all = memories.list().await?;
            if json {
                return print_json(&all);
            }
            if all.is_empty() {
                outln!("No memories. Add one with: perch memories add TEXT");
            }
            for m in &all {
                outln!("{:>4}  {}", m.id, m.text);
            }
            let settings = engine.settings().get().await.memories;
            if !settings.enabled {
                outln!("Note: memories are off (Settings -> Memories): answers are given none.");
            } else if !settings.cloud {
                outln!("Note: only models on this computer are given memories (Settings -> Memories).");
            }
        }
        MemoriesCommand::Add { text } => {
            let m = memories.add(&text).await?;
            outln!("Kept as memory {}.", m.id);
        }
        MemoriesCommand::Edit { id, text } => {
            memories.edit(id, &text).await?;
            outln!("Memory {id} changed.");
        }
        MemoriesCommand::Forget { id } => {
            memories.forget(id).await?;
            outln!("Memory {id} forgotten.");
        }
    }
    Ok(())
}
