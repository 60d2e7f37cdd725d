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
    file: Option<PathBuf>,
}

impl ServerLog {
    pub fn new(dir: Option<&Path>, server: &str) -> Self {
        let file =
            dir.and_then(|d| std::fs::create_dir_all(d).ok().map(|()| d.join(format!("{server}.log"))));
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
        if let Some(path) = &self.file {
            // A log that outgrows its bound starts over; the newest lines matter most.
            if std::fs::metadata(path).is_ok_and(|m| m.len() > MAX_FILE_BYTES) {
                let _ = std::fs::rename(path, path.with_extension("log.1"));
            }
            if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
                let stamp = chrono::Local::now().format("%Y-%m-%d %H:%M:%S");
                let _ = writeln!(f, "{stamp} {line}");
            }
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
}
