//! `perch knowledge`: the folders Perch searches for answers (indexed on this machine): add,
//! list, remove, reindex, search.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::Subcommand;
use perch_core::Engine;

use crate::output::print_json;

#[derive(Subcommand)]
pub enum KnowledgeCommand {
    /// Add a folder and index it (text, Markdown, source code; .gitignore, hidden files and
    /// secrets left out).
    Add { folder: PathBuf },
    /// The folders, with their files and passages.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Remove a folder and what was indexed from it (the last one removes the index).
    Remove { folder: PathBuf },
    /// Index again what changed, in one folder or all.
    Reindex { folder: Option<PathBuf> },
    /// The passages that answer a question best, with their places (path:start-end).
    Search {
        query: String,
        /// How many passages.
        #[arg(long, short = 'k', default_value_t = 5)]
        limit: usize,
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(engine: Engine, command: KnowledgeCommand) -> anyhow::Result<()> {
    let knowledge = engine.knowledge();
    match command {
        KnowledgeCommand::Add { folder } => {
            let added = knowledge.add_folder(&folder).await?;
            outln!("Added {}; indexing it.", added.path);
            reindex(&engine, Some(PathBuf::from(added.path))).await
        }
        KnowledgeCommand::List { json } => {
            let status = knowledge.status().await;
            if json {
                return print_json(&status);
            }
            if status.folders.is_empty() {
                outln!("No folders. Add one with: perch knowledge add FOLDER");
            }
            for f in &status.folders {
                outln!("{}  ({} files, {} passages)", f.path, f.files, f.passages);
            }
            if status.words_only {
                outln!(
                    "Note: the embedding model is not downloaded (Settings -> Tools), so searches match words only."
                );
            }
            Ok(())
        }
        KnowledgeCommand::Remove { folder } => {
            knowledge.remove_folder(&folder).await?;
            outln!("Removed {} and what was indexed from it.", folder.display());
            Ok(())
        }
        KnowledgeCommand::Reindex { folder } => reindex(&engine, folder).await,
        KnowledgeCommand::Search { query, limit, json } => {
            let found = knowledge.search(&query, limit).await?;
            if json {
                return print_json(&found);
            }
            if let perch_core::knowledge::Retrieval::Lexical(why) = &found.retrieval {
                eprintln!("(matching words only: {why})");
            }
            if found.passages.is_empty() {
                outln!("Nothing found.");
            }
            for p in &found.passages {
                let about = if p.heading.is_empty() { String::new() } else { format!("  ({})", p.heading) };
                outln!("{}{about}", p.citation());
                for line in p.text.lines().take(6) {
                    outln!("    {line}");
                }
                outln!();
            }
            Ok(())
        }
    }
}

/// Indexes with a progress line on stderr, then says what was done.
async fn reindex(engine: &Engine, folder: Option<PathBuf>) -> anyhow::Result<()> {
    let knowledge = engine.knowledge().clone();
    let mut status = knowledge.subscribe();
    let terminal = std::io::stderr().is_terminal();
    let printer = tokio::spawn(async move {
        while status.changed().await.is_ok() {
            let progress = status.borrow().indexing.clone();
            if let (Some(p), true) = (progress, terminal) {
                eprint!("\r{}: {} of {} files   ", p.folder, p.done, p.total);
                let _ = std::io::stderr().flush();
            }
        }
    });
    let reports = knowledge.reindex(folder.as_deref()).await;
    printer.abort();
    if terminal {
        eprintln!();
    }
    for report in reports? {
        outln!(
            "Files indexed: {} (unchanged: {}, removed: {}, skipped: {}).",
            report.indexed,
            report.unchanged,
            report.removed,
            report.skipped.len()
        );
        for (path, why) in report.skipped.iter().take(20) {
            outln!("  skipped {}: {why}", path.display());
        }
        if report.skipped.len() > 20 {
            outln!("  ... and {} more skipped", report.skipped.len() - 20);
        }
    }
    Ok(())
}
