//! Small helpers for what the CLI prints.

use std::io::IsTerminal;
use std::process::ExitCode;

use chrono::{Local, TimeZone};
use perch_core::store::{HIGHLIGHT_END, HIGHLIGHT_START};

pub fn fail(message: &str) -> ExitCode {
    eprintln!("perch: error: {message}");
    ExitCode::FAILURE
}

pub fn print_json<T: serde::Serialize>(value: &T) -> anyhow::Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// Local date and time of a Unix-milliseconds timestamp.
pub fn local_time(ms: i64) -> String {
    match Local.timestamp_millis_opt(ms).single() {
        Some(t) => t.format("%Y-%m-%d %H:%M").to_string(),
        None => "-".into(),
    }
}

/// Search snippets mark matches with control characters: bold on a terminal, plain otherwise.
pub fn render_highlights(snippet: &str) -> String {
    let (start, end) = if std::io::stdout().is_terminal() { ("\x1b[1m", "\x1b[0m") } else { ("", "") };
    snippet.replace(HIGHLIGHT_START, start).replace(HIGHLIGHT_END, end).replace('\n', " ")
}

pub fn short_id(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}
