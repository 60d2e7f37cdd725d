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
    outln!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

/// Writes to stdout, flushed (answers stream a token at a time). When the reader has gone
/// (`perch voice devices | head`), the command ends as command-line programs do when their
/// pipe closes: quietly, status 141 as a shell reports a `SIGPIPE` death. `println!` panicked
/// there, and the next `perch` run then showed the panic as a crash. Perch ignores `SIGPIPE`
/// (Rust's default) rather than dying of it, because the same process also writes to MCP
/// servers' pipes, where a server that exits must be an error, not Perch's end.
pub fn write_out(text: std::fmt::Arguments) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_fmt(text).and_then(|()| stdout.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(141);
        }
        eprintln!("perch: error: could not write the output: {e}");
        std::process::exit(1);
    }
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
