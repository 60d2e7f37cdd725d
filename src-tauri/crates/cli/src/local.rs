//! `perch local`: the models Perch runs on this machine: the catalogue, downloads, files added
//! from disk, deletion.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::Subcommand;
use perch_core::Engine;
use perch_core::local::machine::human_size;
use perch_core::local::{CATALOG, Deleted, LocalModel, ModelSource};
use serde::Serialize;

use crate::output::print_json;

#[derive(Subcommand)]
pub enum LocalCommand {
    /// The models on this machine and the catalogue, with sizes, memory and licences.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Download a model from the catalogue (resumes an interrupted download), e.g. qwen3-0.6b.
    Download { id: String },
    /// Register a GGUF file already on disk; it stays where it is.
    Add {
        path: PathBuf,
        /// The name after `local:` (default: from the file name).
        #[arg(long)]
        name: Option<String>,
    },
    /// Delete a downloaded model, or forget an added one (its file is left alone).
    Delete { name: String },
}

pub async fn run(engine: Engine, command: LocalCommand) -> anyhow::Result<()> {
    let local = engine.local();
    match command {
        LocalCommand::List { json } => list(&engine, json).await,
        LocalCommand::Download { id } => {
            let terminal = std::io::stderr().is_terminal();
            let mut shown = 0u64;
            let model = local
                .download(&id, |p| {
                    // A line per 5 % off a terminal; one rewritten line on it.
                    let percent = (p.done * 100).checked_div(p.total).unwrap_or(100);
                    if terminal {
                        eprint!("\r{id}: {} of {} ({percent}%)   ", human_size(p.done), human_size(p.total));
                        let _ = std::io::stderr().flush();
                    } else if percent >= shown + 5 || p.done == p.total {
                        shown = percent;
                        eprintln!("{id}: {percent}%");
                    }
                })
                .await;
            if terminal {
                eprintln!();
            }
            let model = model?;
            outln!("Downloaded {} ({}). Use it as local:{}", model.title, human_size(model.size), model.name);
            Ok(())
        }
        LocalCommand::Add { path, name } => {
            let model = local.add(&path, name.as_deref()).await?;
            outln!("Added {} as local:{} ({})", model.path, model.name, describe(&model));
            Ok(())
        }
        LocalCommand::Delete { name } => {
            match local.delete(&name).await? {
                Deleted::File => outln!("Deleted local:{name} and its file."),
                Deleted::Forgotten => outln!("Forgot local:{name}; its file was left where it is."),
            }
            Ok(())
        }
    }
}

#[derive(Serialize)]
struct Listing {
    installed: Vec<LocalModel>,
    catalog: Vec<perch_core::local::CatalogModel>,
    folder: String,
}

async fn list(engine: &Engine, json: bool) -> anyhow::Result<()> {
    let settings = engine.settings().get().await.local;
    let local = engine.local();
    let listing = Listing {
        installed: local.list().await,
        catalog: local.catalog(&settings).await,
        folder: local.dir().display().to_string(),
    };
    if json {
        return print_json(&listing);
    }
    if listing.installed.is_empty() {
        outln!(
            "No local models yet. Download one (perch local download {}) or add a GGUF file (perch local add PATH).",
            CATALOG[0].id
        );
    }
    for m in &listing.installed {
        outln!("local:{:<24} {}", m.name, describe(m));
        if let Some(problem) = &m.problem {
            outln!("  {problem}");
        }
    }
    outln!("\nCatalogue (perch local download ID):");
    for c in &listing.catalog {
        let state = if c.installed {
            "downloaded"
        } else if c.partial > 0 {
            "partly downloaded"
        } else {
            ""
        };
        outln!(
            "  {:<14} {:<14} {:>8}  needs ~{:<8} {:<28} {state}",
            c.id,
            c.title,
            human_size(c.size),
            human_size(c.memory),
            c.licence
        );
    }
    outln!("\nModels folder: {}", listing.folder);
    Ok(())
}

fn describe(m: &LocalModel) -> String {
    let source = match m.source {
        ModelSource::Downloaded => "downloaded",
        ModelSource::Folder => "in the models folder",
        ModelSource::Added => "added",
    };
    let caps: Vec<&str> = [(m.tools, "tools"), (m.thinking, "thinking")]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
    let caps = if caps.is_empty() { String::new() } else { format!(", {}", caps.join(", ")) };
    format!(
        "{}, {}, {source}{caps}",
        m.architecture.as_deref().unwrap_or("unknown architecture"),
        human_size(m.size)
    )
}
