//! Each server's stderr: the last lines in memory for the dashboard, everything in a file
//! (`logs/mcp/<server>.log`, cut back when it grows past a bound).

use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};

const KEEP_LINES: usize = 500;
const MAX_LINE_CHARS: usize = 2_000;
const MAX_FILE_BYTES: u64 = 2 << 20;

#[derive(Debug)]
pub struct ServerLog {
    lines: VecDeque<String>,
    file: Option<LogFile>,
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
        Self { lines: VecDeque::new(), file }
    }

    pub fn push(&mut self, line: &str) -> String {
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

    /// The last few lines, to explain a failure.
    pub fn tail(&self, n: usize) -> Vec<String> {
        let skip = self.lines.len().saturating_sub(n);
        self.lines.iter().skip(skip).cloned().collect()
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
        assert_eq!(log.tail(2), ["line 503", "line 504"]);
        let text = std::fs::read_to_string(dir.path().join("s.log")).unwrap();
        assert_eq!(text.lines().count(), KEEP_LINES + 5);
        assert!(text.lines().next().unwrap().ends_with(" line 0"));
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
