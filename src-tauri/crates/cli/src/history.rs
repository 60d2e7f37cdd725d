//! `perch history list|show|search`.

use clap::Subcommand;
use perch_core::Engine;
use perch_core::store::Role;

use crate::output::{local_time, print_json, render_highlights, short_id};

#[derive(Subcommand)]
pub enum HistoryCommand {
    /// List conversations, most recent first.
    List {
        #[arg(long, default_value_t = 50)]
        limit: u32,
        #[arg(long)]
        json: bool,
    },
    /// Show one conversation; ID may be a unique prefix of at least 4 characters.
    Show {
        id: String,
        #[arg(long)]
        json: bool,
    },
    /// Full-text search over every message.
    Search {
        query: String,
        #[arg(long, default_value_t = 20)]
        limit: u32,
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(engine: Engine, command: HistoryCommand) -> anyhow::Result<()> {
    let store = engine.store();
    match command {
        HistoryCommand::List { limit, json } => {
            let list = store.list_conversations(limit, 0).await?;
            if json {
                return print_json(&list);
            }
            if list.is_empty() {
                outln!("No conversations yet.");
            }
            for c in list {
                let title = if c.title.is_empty() { "(untitled)" } else { &c.title };
                outln!(
                    "{}  {}  {:>4} msgs  {title}",
                    short_id(&c.id),
                    local_time(c.updated_at),
                    c.message_count
                );
            }
        }
        HistoryCommand::Show { id, json } => {
            let detail = store.conversation(&id).await?;
            if json {
                return print_json(&detail);
            }
            let c = &detail.conversation;
            outln!("# {}", if c.title.is_empty() { "(untitled)" } else { &c.title });
            outln!(
                "id {}  ·  created {}  ·  {} in / {} out tokens",
                c.id,
                local_time(c.created_at),
                c.input_tokens,
                c.output_tokens
            );
            for m in &detail.messages {
                let who = match m.role {
                    Role::User => "You".to_owned(),
                    Role::Assistant => m.model.clone().unwrap_or_else(|| "Assistant".into()),
                    Role::System => "System".into(),
                    Role::Tool => "Tool".into(),
                };
                outln!("\n## {who}  ({}, {})", local_time(m.created_at), m.status.as_str());
                outln!("{}", m.content);
            }
        }
        HistoryCommand::Search { query, limit, json } => {
            let hits = store.search(&query, limit).await?;
            if json {
                return print_json(&hits);
            }
            if hits.is_empty() {
                outln!("Nothing matches {query:?}.");
            }
            for h in hits {
                outln!("{}  {}  {}", short_id(&h.conversation_id), local_time(h.created_at), h.title);
                outln!("    {}", render_highlights(&h.snippet));
            }
        }
    }
    Ok(())
}
