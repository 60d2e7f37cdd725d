//! Reading the logs back for the Logs page: Perch's own files (see [`crate::logging`]) and the
//! MCP servers' stderr (`logs/mcp/<server>.log`, see [`crate::mcp::logs`]), as entries with a
//! level and a component, merged by time, secrets removed.
//!
//! [`read`] is a tail: the last entries at first, then, given the [`Cursor`] it returned, what
//! was written since, across new days' files, new parts and a server log that started over.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::LazyLock;

use chrono::{DateTime, Local, NaiveDateTime, TimeZone};
use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::diagnostics::Redactor;
use crate::keys::Keys;
use crate::logging::{LogFileName, log_files};
use crate::settings::Settings;

/// What the first read looks at, per file, for the last entries.
const TAIL_BYTES: u64 = 256 << 10;
/// What one read takes at most, newest first: a flood between two reads is skipped, not shown
/// late.
const READ_BUDGET: u64 = 1 << 20;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

/// Which part of Perch an entry is about, for the page's filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Component {
    Engine,
    Mcp,
    Terminal,
    /// The local model runtime (`perch-llm`).
    Local,
    Voice,
    Capture,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct LogEntry {
    /// Local time, RFC 3339 with milliseconds.
    pub at: String,
    pub level: Level,
    pub component: Component,
    /// The module that logged it (`perch_core::mcp::manager`); `stderr` for a server's own line.
    pub target: String,
    /// The MCP server whose stderr log it came from.
    pub server: Option<String>,
    pub text: String,
}

/// Where a tail got to. Opaque to the UI, which hands it back.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Cursor {
    /// Perch's file read last (its name), and the offset after its last whole line.
    pub file: Option<String>,
    pub offset: u64,
    /// Each server log's place, by server.
    pub servers: BTreeMap<String, ServerCursor>,
}

/// A server log starts over under the same name when it grows too big (see
/// [`crate::mcp::logs`]), so its offset goes with a fingerprint of its first line.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ServerCursor {
    pub offset: u64,
    /// A hash of the file's first whole line; empty until it has one.
    pub head: String,
}

#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct Tail {
    /// Oldest first.
    pub entries: Vec<LogEntry>,
    pub cursor: Cursor,
}

/// The component a target belongs to: the module path's crate and first modules.
pub fn component_of(target: &str) -> Component {
    let under = |prefixes: &[&str]| {
        prefixes
            .iter()
            .any(|p| target.strip_prefix(p).is_some_and(|rest| rest.is_empty() || rest.starts_with("::")))
    };
    if under(&["perch_core::mcp", "rmcp", "perch_desktop_lib::tools", "perch_desktop_lib::commands::tools"])
        || target.starts_with("perch_mcp")
    {
        Component::Mcp
    } else if under(&["perch_core::terminal", "perch_sandbox", "perch_desktop_lib::commands::terminal"]) {
        Component::Terminal
    } else if under(&[
        "perch_core::local",
        "perch_core::providers::local",
        "perch_llm",
        "perch_desktop_lib::commands::local",
    ]) {
        Component::Local
    } else if under(&[
        "perch_core::voice",
        "whisper_rs",
        "perch_desktop_lib::dictation",
        "perch_desktop_lib::commands::voice",
    ]) {
        Component::Voice
    } else if under(&[
        "perch_core::capture",
        "xcap",
        "perch_desktop_lib::capture",
        "perch_desktop_lib::commands::capture",
    ]) {
        Component::Capture
    } else {
        Component::Engine
    }
}

/// The redactor every line passes through before it is shown: a diagnostics bundle's
/// ([`crate::diagnostics::redactor`]), over this process's environment. Blocking: the keyring
/// may answer over D-Bus.
pub fn redactor(data_dir: &Path, keys: &Keys, settings: &Settings) -> Redactor {
    let environment = std::env::vars_os()
        .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()));
    crate::diagnostics::redactor(Some(data_dir), settings, keys, environment, None).0
}

/// Where "Copy diagnostics" puts a bundle made now: `perch-diagnostics-YYYYMMDD-HHMMSS.zip` in
/// `folder`, with `-2`, `-3`... when that name is taken.
pub fn diagnostics_file(folder: &Path) -> std::path::PathBuf {
    diagnostics_file_at(folder, Local::now())
}

fn diagnostics_file_at(folder: &Path, now: DateTime<Local>) -> std::path::PathBuf {
    let stem = format!("perch-diagnostics-{}", now.format("%Y%m%d-%H%M%S"));
    (1..)
        .map(|n| folder.join(if n == 1 { format!("{stem}.zip") } else { format!("{stem}-{n}.zip") }))
        .find(|path| !path.exists())
        .unwrap_or_else(|| folder.join(format!("{stem}.zip")))
}

/// The entries written since `since` (the last `limit` when there is no cursor), at most
/// `limit`, oldest first, redacted. Blocking (file reads).
pub fn read(logs_dir: &Path, since: Option<&Cursor>, limit: usize, redactor: &mut Redactor) -> Tail {
    let mut cursor = Cursor::default();
    let mut entries = Vec::new();
    for text in read_own(logs_dir, since, limit, &mut cursor).into_iter().rev() {
        entries.extend(parse_own(&text));
    }
    for (server, text) in read_servers(&logs_dir.join("mcp"), since, limit, &mut cursor) {
        entries.extend(text.lines().filter_map(|line| parse_server_line(&server, line)));
    }
    entries.sort_by(|a, b| a.at.cmp(&b.at));
    let entries = entries.split_off(entries.len().saturating_sub(limit));
    let entries = entries.into_iter().map(|e| LogEntry { text: redactor.text(&e.text), ..e }).collect();
    Tail { entries, cursor }
}

/// The whole lines of Perch's files, newest file first; sets the cursor to the newest.
fn read_own(dir: &Path, since: Option<&Cursor>, limit: usize, cursor: &mut Cursor) -> Vec<String> {
    let files = log_files(dir);
    let from = since.and_then(|c| Some((LogFileName::parse(c.file.as_deref()?)?, c.offset)));
    let mut budget = if from.is_some() { READ_BUDGET } else { TAIL_BYTES };
    let mut lines = 0;
    let mut out = Vec::new();
    for (name, len) in files.into_iter().rev() {
        let start = match from {
            Some((last, _)) if name < last => break,
            // A file shorter than where the reader was has been replaced: read it anew.
            Some((last, offset)) if name == last && offset <= len => offset,
            _ => 0,
        };
        let Some((text, end)) = read_lines(&dir.join(name.file_name()), start, budget) else { continue };
        if cursor.file.is_none() {
            cursor.file = Some(name.file_name());
            cursor.offset = end;
        }
        budget = budget.saturating_sub(text.len() as u64);
        lines += text.matches('\n').count();
        out.push(text);
        if budget == 0 || (from.is_none() && lines >= limit) {
            break;
        }
    }
    if cursor.file.is_none()
        && let Some(c) = since
    {
        cursor.file.clone_from(&c.file);
        cursor.offset = c.offset;
    }
    out
}

/// Each server's new lines, as (server, whole lines); sets the cursor's offsets.
fn read_servers(
    dir: &Path,
    since: Option<&Cursor>,
    limit: usize,
    cursor: &mut Cursor,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().filter_map(Result::ok) {
        let path = entry.path();
        let Some(server) = entry.file_name().to_str().and_then(|n| n.strip_suffix(".log")).map(str::to_owned)
        else {
            continue;
        };
        let head = head_of(&path);
        let mut text = String::new();
        let offset = match since.map(|c| c.servers.get(&server)) {
            // First look: the last lines only.
            None => tail_lines(&path, limit).map_or(0, |(t, end)| {
                text = t;
                end
            }),
            Some(seen) => {
                let seen = seen.cloned().unwrap_or_default();
                let mut start = seen.offset;
                if !seen.head.is_empty() && seen.head != head {
                    // It started over: the rest of what was being read is in `<server>.log.1`.
                    let old = path.with_extension("log.1");
                    if head_of(&old) == seen.head
                        && let Some((t, _)) = read_lines(&old, seen.offset, READ_BUDGET)
                    {
                        text = t;
                    }
                    start = 0;
                }
                let budget = READ_BUDGET.saturating_sub(text.len() as u64);
                read_lines(&path, start, budget).map_or(start, |(t, end)| {
                    text.push_str(&t);
                    end
                })
            }
        };
        cursor.servers.insert(server.clone(), ServerCursor { offset, head });
        if !text.is_empty() {
            out.push((server, text));
        }
    }
    out
}

/// A fingerprint of the file's first whole line (empty when it has none yet).
fn head_of(path: &Path) -> String {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut first = Vec::new();
    let _ = std::fs::File::open(path).and_then(|f| f.take(512).read_to_end(&mut first));
    let Some(end) = first.iter().position(|b| *b == b'\n') else { return String::new() };
    let mut hasher = DefaultHasher::new();
    first[..end].hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

/// The last `limit` lines (within [`TAIL_BYTES`]) and the offset after them.
fn tail_lines(path: &Path, limit: usize) -> Option<(String, u64)> {
    let (text, end) = read_lines(path, 0, TAIL_BYTES)?;
    let skip = text.lines().count().saturating_sub(limit);
    let start = text.split_inclusive('\n').take(skip).map(str::len).sum::<usize>();
    Some((text[start..].to_owned(), end))
}

/// The whole lines of `path` from `start`, at most `budget` bytes of them (the newest, from a
/// line's start), and the offset after the last one. A line still being written is left for
/// the next read.
fn read_lines(path: &Path, start: u64, budget: u64) -> Option<(String, u64)> {
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    if start >= len {
        return Some((String::new(), start.min(len)));
    }
    let from = start.max(len.saturating_sub(budget));
    file.seek(SeekFrom::Start(from)).ok()?;
    let mut bytes = Vec::new();
    file.take(len - from).read_to_end(&mut bytes).ok()?;
    // Started mid-line (the budget cut in): the partial first line goes.
    let first =
        if from > start { bytes.iter().position(|b| *b == b'\n').map_or(bytes.len(), |i| i + 1) } else { 0 };
    let Some(last) = bytes.iter().rposition(|b| *b == b'\n') else { return Some((String::new(), from)) };
    let text = String::from_utf8_lossy(bytes.get(first..=last).unwrap_or_default()).into_owned();
    Some((text, from + last as u64 + 1))
}

/// One line of Perch's file as the fmt layer writes it:
/// `2026-03-01T10:11:12.123456Z  INFO perch_core::engine: engine started schema=7`.
struct Line<'a> {
    at: DateTime<Local>,
    level: Level,
    target: &'a str,
    text: &'a str,
}

static TARGET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z0-9_]+)*): ").expect("a valid pattern")
});
/// With spans: `turn{id=3}:tool: perch_core::agent: ...`.
static SCOPED_TARGET: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\S.*?: ([A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z0-9_]+)*): ").expect("a valid pattern")
});
static ANSI: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\x1b\[[0-9;]*m").expect("a valid pattern"));

fn parse_line(line: &str) -> Option<Line<'_>> {
    let (stamp, rest) = line.split_once(' ')?;
    let at = DateTime::parse_from_rfc3339(stamp).ok()?.with_timezone(&Local);
    let rest = rest.trim_start();
    let (level, rest) = rest.split_once(' ')?;
    let level = match level {
        "ERROR" => Level::Error,
        "WARN" => Level::Warn,
        "INFO" => Level::Info,
        "DEBUG" => Level::Debug,
        "TRACE" => Level::Trace,
        _ => return None,
    };
    let found = TARGET.captures(rest).or_else(|| SCOPED_TARGET.captures(rest))?;
    let (whole, target) = (found.get(0)?, found.get(1)?);
    let (mut target, mut text) = (target.as_str(), &rest[whole.end()..]);
    // A span without fields (`serve_inner: rmcp::service: ...`) reads like a target; module
    // paths have `::`, span names do not.
    while !target.contains("::")
        && let Some(next) = TARGET.captures(text).and_then(|c| Some((c.get(0)?, c.get(1)?)))
        && next.1.as_str().contains("::")
    {
        (target, text) = (next.1.as_str(), &text[next.0.end()..]);
    }
    Some(Line { at, level, target, text })
}

fn stamp(at: DateTime<Local>) -> String {
    at.format("%Y-%m-%dT%H:%M:%S%.3f%:z").to_string()
}

/// Perch's lines; a line that does not start an entry (a message with line breaks) continues
/// the one before it, or is dropped when the read began with it.
fn parse_own(text: &str) -> Vec<LogEntry> {
    let mut entries: Vec<LogEntry> = Vec::new();
    for line in text.lines() {
        match parse_line(line) {
            Some(l) => entries.push(LogEntry {
                at: stamp(l.at),
                level: l.level,
                component: component_of(l.target),
                target: l.target.to_owned(),
                server: None,
                text: l.text.to_owned(),
            }),
            None => {
                if let Some(last) = entries.last_mut() {
                    last.text.push('\n');
                    last.text.push_str(line);
                }
            }
        }
    }
    entries
}

/// A server's stderr line, `2026-03-01 10:11:12 what it said`. A bundled server's own tracing
/// line gives its level and target; Perch's notes about the server (`[perch] ...`) say why it
/// failed.
fn parse_server_line(server: &str, line: &str) -> Option<LogEntry> {
    let (stamp_text, said) = (line.get(..19)?, line.get(20..).unwrap_or_default());
    let naive = NaiveDateTime::parse_from_str(stamp_text, "%Y-%m-%d %H:%M:%S").ok()?;
    let at = Local.from_local_datetime(&naive).earliest()?;
    let said = ANSI.replace_all(said, "");
    let (level, target, text) = match parse_line(&said) {
        Some(l) => (l.level, l.target.to_owned(), l.text.to_owned()),
        None => match said.strip_prefix("[perch] ") {
            Some(note) => (Level::Warn, "perch".to_owned(), note.to_owned()),
            None => (Level::Info, "stderr".to_owned(), said.into_owned()),
        },
    };
    Some(LogEntry {
        at: stamp(at),
        level,
        component: Component::Mcp,
        target,
        server: Some(server.to_owned()),
        text,
    })
}

#[cfg(test)]
mod tests;
