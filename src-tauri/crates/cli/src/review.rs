//! `perch review push|selection`: talk to the running app over its review socket.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Subcommand;
use perch_ipc::{Client, Mode};
use serde_json::{Value, json};

const TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Subcommand)]
pub enum ReviewCommand {
    /// Show a markdown file in Perch's review panel.
    Push {
        file: PathBuf,
        /// replace (default), append or update-section.
        #[arg(long, default_value = "replace")]
        mode: String,
        /// The heading to replace, for --mode update-section.
        #[arg(long)]
        section: Option<String>,
        /// The folder file references are relative to (default: the current folder).
        #[arg(long)]
        base: Option<PathBuf>,
    },
    /// Print the text selected in Perch's review or chat view.
    Selection,
}

pub async fn run(command: ReviewCommand) -> anyhow::Result<()> {
    let (mut client, _) = Client::discover(TIMEOUT).await?;
    match command {
        ReviewCommand::Push { file, mode, section, base } => {
            let mode: Mode = mode.parse()?;
            let content =
                std::fs::read_to_string(&file).with_context(|| format!("cannot read {}", file.display()))?;
            let base = match base {
                Some(dir) => dir,
                None => std::env::current_dir()?,
            };
            let base = base
                .canonicalize()
                .with_context(|| format!("the folder {} does not exist", base.display()))?;
            let payload =
                json!({ "content": content, "mode": mode.as_str(), "section": section, "baseUri": base });
            let response = client.request("present_review", payload, TIMEOUT).await?;
            if !response.success {
                bail!("{}", response.error.unwrap_or_else(|| "Perch refused the review".into()));
            }
            let data = response.data.unwrap_or_default();
            outln!("Review version {} shown ({} references).", data["version"], data["references"]);
            for broken in data["broken"].as_array().into_iter().flatten() {
                eprintln!(
                    "perch: broken reference {}: {}",
                    broken["reference"],
                    broken["problem"].as_str().unwrap_or("")
                );
            }
        }
        ReviewCommand::Selection => {
            let response = client.request("get_selection", json!({}), TIMEOUT).await?;
            if !response.success {
                bail!("{}", response.error.unwrap_or_default());
            }
            match response.data.unwrap_or(Value::Null) {
                Value::String(text) => outln!("{text}"),
                _ => eprintln!("perch: nothing is selected"),
            }
        }
    }
    Ok(())
}
