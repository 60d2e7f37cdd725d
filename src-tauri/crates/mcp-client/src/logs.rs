//! Each server's stderr: the last lines in memory for the dashboard, everything in a file
//! (`logs/mcp/<server>.log`, cut back when it grows past a bound).

use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};

const KEEP_LINES: usize = 500;
const MAX_LINE_CHARS: usize = 2_000;
const MAX_FILE_BYTES: u64 = 2 << 20;
/// What a failure quotes of the server's own stderr.
const LAST_WORDS: usize = 3;
const LAST_WORD_CHARS: usize = 200;

#[derive(Debug)]
pub struct ServerLog {
    lines: VecDeque<String>,
    file: Option<LogFile>,
    /// The server's last lines in this run, without Perch's notes about it.
    last_words: VecDeque<String>,
}

/// The log file, opened once; `written` tracks its size so it is not stat'ed per line.
#[derive(Debug)]
struct LogFile {
    path: PathBuf,
    handle: Option<std::fs::File>,
    written: u64,
}

impl LogFile {
    fn open(path: PathBuf) -> Self {
        let handle = std::fs::OpenOptions::new().create(true).append(true).open(&path).ok();
        let written = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        Self { path, handle, written }
    }

    fn write(&mut self, line: &str) {
        // A log that outgrows its bound starts over; the newest lines matter most.
        if self.written > MAX_FILE_BYTES {
            let _ = std::fs::rename(&self.path, self.path.with_extension("log.1"));
            *self = Self::open(self.path.clone());
        }
        let entry = format!("{} {line}\n", chrono::Local::now().format("%Y-%m-%d %H:%M:%S"));
        if let Some(f) = &mut self.handle
            && f.write_all(entry.as_bytes()).is_ok()
        {
            self.written += entry.len() as u64;
        }
    }
}

impl ServerLog {
    pub fn new(dir: Option<&Path>, server: &str) -> Self {
        let file = dir
            .filter(|d| std::fs::create_dir_all(d).is_ok())
            .map(|d| LogFile::open(d.join(format!("{server}.log"))));
        Self { lines: VecDeque::new(), file, last_words: VecDeque::new() }
    }

    /// A line the server wrote on stderr.
    pub fn push(&mut self, line: &str) -> String {
        let line = self.record(line);
        if !line.is_empty() {
            if self.last_words.len() == LAST_WORDS {
                self.last_words.pop_front();
            }
            let mut short: String = line.chars().take(LAST_WORD_CHARS).collect();
            if short.len() < line.len() {
                short.push('…');
            }
            self.last_words.push_back(short);
        }
        line
    }

    /// A line of Perch's own about the server (why it failed), kept apart from what it said.
    pub fn note(&mut self, text: &str) {
        self.record(&format!("[perch] {text}"));
    }

    /// A new start: a failure quotes only what the server says from now on.
    pub fn new_run(&mut self) {
        self.last_words.clear();
    }

    /// The server's last few lines in this run, to explain a failure.
    pub fn last_words(&self) -> Vec<String> {
        self.last_words.iter().cloned().collect()
    }

    fn record(&mut self, line: &str) -> String {
        let whole = line.trim_end();
        let mut line: String = whole.chars().take(MAX_LINE_CHARS).collect();
        if line.len() < whole.len() {
            line.push('…');
        }
        if self.lines.len() == KEEP_LINES {
            self.lines.pop_front();
        }
        self.lines.push_back(line.clone());
        if let Some(file) = &mut self.file {
            file.write(&line);
        }
        line
    }

    pub fn lines(&self) -> Vec<String> {
        self.lines.iter().cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_lines_and_writes_all_to_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = ServerLog::new(Some(dir.path()), "s");
        for i in 0..KEEP_LINES + 5 {
            log.push(&format!("line {i}\n"));
        }
        assert_eq!(log.lines().len(), KEEP_LINES);
        assert_eq!(log.lines()[0], "line 5");
        assert_eq!(log.last_words(), ["line 502", "line 503", "line 504"]);
        let text = std::fs::read_to_string(dir.path().join("s.log")).unwrap();
        assert_eq!(text.lines().count(), KEEP_LINES + 5);
        assert!(text.lines().next().unwrap().ends_with(" line 0"));
    }

    #[test]
    fn last_words_are_the_servers_own_from_this_run() {
        let mut log = ServerLog::new(None, "s");
        log.push("an old run's line");
        log.new_run();
        log.push("Error: missing API key");
        log.note("it exited unexpectedly");
        assert_eq!(log.last_words(), ["Error: missing API key"]);
        log.push(&"x".repeat(500));
        assert_eq!(log.last_words()[1].chars().count(), LAST_WORD_CHARS + 1, "long lines are cut");
        assert_eq!(log.lines().last().unwrap(), &"x".repeat(500), "the log keeps the whole line");
        assert_eq!(log.lines()[2], "[perch] it exited unexpectedly");
    }

    #[test]
    fn a_log_file_past_its_bound_starts_over_keeping_the_old_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = ServerLog::new(Some(dir.path()), "s");
        let line = "x".repeat(MAX_LINE_CHARS);
        let lines = (MAX_FILE_BYTES as usize / MAX_LINE_CHARS) + 2;
        for _ in 0..lines {
            log.push(&line);
        }
        log.push("after the cut");
        let old = std::fs::metadata(dir.path().join("s.log.1")).unwrap().len();
        assert!(old > MAX_FILE_BYTES, "the full file was kept as s.log.1");
        let new = std::fs::read_to_string(dir.path().join("s.log")).unwrap();
        assert!(new.ends_with(" after the cut\n") && new.len() < old as usize, "{} bytes", new.len());
    }
}
