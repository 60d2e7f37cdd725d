//! Logs go to stderr and to a file in the data dir's `logs/` folder: one file a day
//! (`perch.YYYY-MM-DD.log`), continued in numbered parts (`perch.YYYY-MM-DD.1.log`, ...) when a
//! file reaches [`LIMITS`]' size, the oldest removed beyond a number of days or a folder total.
//! `PERCH_LOG` (tracing's filter syntax, e.g. `perch_core=debug`) overrides both levels.
//!
//! Our own writer because tracing-appender (0.2.5) rotates by time only: a debug session or a
//! chatty server could otherwise fill a day's file without bound.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use chrono::NaiveDate;
use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer, fmt};

pub const LOG_ENV: &str = "PERCH_LOG";
const PREFIX: &str = "perch.";
const SUFFIX: &str = ".log";

/// How much of Perch's own log is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A file that would grow past this continues in the next numbered part.
    pub file_bytes: u64,
    /// The folder's files together stay under this (the file being written included).
    pub total_bytes: u64,
    /// Files of older days are removed.
    pub days: usize,
}

pub const LIMITS: Limits = Limits { file_bytes: 10 << 20, total_bytes: 50 << 20, days: 14 };

/// Keeps the file writer flushing; drop it last, at exit.
#[must_use = "logs stop reaching the file when the guard drops"]
pub struct LogGuard {
    _file: Option<WorkerGuard>,
}

/// Installs the global subscriber. `stderr_level` is the default for the terminal (the CLI
/// keeps it quiet); the file always gets `info` unless `PERCH_LOG` says otherwise.
pub fn init(logs_dir: Option<&Path>, stderr_level: &str) -> LogGuard {
    let filter = |default: &str| EnvFilter::try_from_env(LOG_ENV).unwrap_or_else(|_| EnvFilter::new(default));
    let stderr = fmt::layer().with_writer(io::stderr).with_target(false).with_filter(filter(stderr_level));

    let (file_layer, guard) = match logs_dir.map(|dir| LogWriter::open(dir, LIMITS)) {
        Some(Ok(writer)) => {
            let (writer, guard) = tracing_appender::non_blocking(writer);
            let layer = fmt::layer().with_writer(writer).with_ansi(false).with_filter(filter("info"));
            (Some(layer), Some(guard))
        }
        Some(Err(e)) => {
            eprintln!("perch: logging to the terminal only; the log file could not be opened: {e}");
            (None, None)
        }
        None => (None, None),
    };
    let _ = tracing_subscriber::registry().with(stderr).with(file_layer).try_init();
    LogGuard { _file: guard }
}

/// A log file's place among the others: its day, then its part (0 for `perch.DAY.log`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct LogFileName {
    pub day: NaiveDate,
    pub part: u32,
}

impl LogFileName {
    pub fn parse(name: &str) -> Option<Self> {
        let stem = name.strip_prefix(PREFIX)?.strip_suffix(SUFFIX)?;
        let (day, part) = match stem.split_once('.') {
            Some((day, part)) => (day, part.parse().ok().filter(|p| *p > 0)?),
            None => (stem, 0),
        };
        Some(Self { day: NaiveDate::parse_from_str(day, "%Y-%m-%d").ok()?, part })
    }

    pub fn file_name(&self) -> String {
        match self.part {
            0 => format!("{PREFIX}{}{SUFFIX}", self.day.format("%Y-%m-%d")),
            n => format!("{PREFIX}{}.{n}{SUFFIX}", self.day.format("%Y-%m-%d")),
        }
    }
}

/// Perch's log files in `dir` with their sizes, oldest first (other files are not ours).
pub fn log_files(dir: &Path) -> Vec<(LogFileName, u64)> {
    let mut files: Vec<(LogFileName, u64)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = LogFileName::parse(e.file_name().to_str()?)?;
            let meta = e.metadata().ok().filter(std::fs::Metadata::is_file)?;
            Some((name, meta.len()))
        })
        .collect();
    files.sort();
    files
}

/// Writes the log into the day's file and its parts within [`Limits`]. Every `write` is one
/// formatted event (the non-blocking worker hands them over whole), so a part never starts
/// mid-line.
pub struct LogWriter {
    dir: PathBuf,
    limits: Limits,
    today: Box<dyn Fn() -> NaiveDate + Send>,
    current: Option<Current>,
}

struct Current {
    name: LogFileName,
    file: File,
    len: u64,
}

impl LogWriter {
    pub fn open(dir: &Path, limits: Limits) -> io::Result<Self> {
        Self::with_clock(dir, limits, Box::new(|| chrono::Local::now().date_naive()))
    }

    /// `today` tells the day (tests move it on).
    pub fn with_clock(
        dir: &Path,
        limits: Limits,
        today: Box<dyn Fn() -> NaiveDate + Send>,
    ) -> io::Result<Self> {
        std::fs::create_dir_all(dir)?;
        let mut writer = Self { dir: dir.to_path_buf(), limits, today, current: None };
        // Opened now so a folder that cannot be written is reported at start, not lost later.
        writer.roll(0)?;
        Ok(writer)
    }

    /// Moves to the file the next `incoming` bytes belong in: the day's newest part while
    /// they fit (another Perch process may be writing it too), else a new part.
    fn roll(&mut self, incoming: u64) -> io::Result<()> {
        let day = (self.today)();
        let newest = log_files(&self.dir).into_iter().rfind(|(name, _)| name.day == day);
        let name = match newest {
            Some((name, len)) if len == 0 || len + incoming <= self.limits.file_bytes => name,
            Some((name, _)) => LogFileName { day, part: name.part + 1 },
            None => LogFileName { day, part: 0 },
        };
        let file = File::options().create(true).append(true).open(self.dir.join(name.file_name()))?;
        let len = file.metadata()?.len();
        self.current = Some(Current { name, file, len });
        self.prune(name);
        Ok(())
    }

    /// Removes files of days past the limit, then the oldest until the folder leaves room
    /// for the file being written to fill up. Never the file being written.
    fn prune(&self, keep: LogFileName) {
        let files = log_files(&self.dir);
        let mut days: Vec<NaiveDate> = files.iter().map(|(n, _)| n.day).collect();
        days.dedup();
        let oldest_kept_day = days.iter().rev().nth(self.limits.days.saturating_sub(1)).copied();
        let budget = self.limits.total_bytes.saturating_sub(self.limits.file_bytes);
        let mut others: u64 = files.iter().filter(|(n, _)| *n != keep).map(|(_, len)| len).sum();
        for (name, len) in files.into_iter().filter(|(n, _)| *n != keep) {
            let too_old = oldest_kept_day.is_some_and(|d| name.day < d);
            if !too_old && others <= budget {
                break;
            }
            match std::fs::remove_file(self.dir.join(name.file_name())) {
                Ok(()) => others -= len,
                Err(e) => eprintln!("perch: could not remove an old log file: {e}"),
            }
        }
    }
}

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let incoming = buf.len() as u64;
        let needs_roll = match &self.current {
            None => true,
            Some(c) => {
                c.name.day != (self.today)() || (c.len > 0 && c.len + incoming > self.limits.file_bytes)
            }
        };
        if needs_roll {
            self.roll(incoming)?;
        }
        let current = self.current.as_mut().ok_or_else(|| io::Error::other("no log file"))?;
        let written = current.file.write(buf)?;
        current.len += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.current.as_mut().map_or(Ok(()), |c| c.file.flush())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    fn day(d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 3, d).unwrap()
    }

    /// A writer whose day the test sets.
    fn writer(dir: &Path, limits: Limits) -> (LogWriter, Arc<Mutex<NaiveDate>>) {
        let today = Arc::new(Mutex::new(day(1)));
        let clock = today.clone();
        let writer = LogWriter::with_clock(dir, limits, Box::new(move || *clock.lock().unwrap())).unwrap();
        (writer, today)
    }

    fn names(dir: &Path) -> Vec<String> {
        log_files(dir).into_iter().map(|(n, _)| n.file_name()).collect()
    }

    const SMALL: Limits = Limits { file_bytes: 100, total_bytes: 1_000, days: 14 };

    #[test]
    fn names_parse_and_order_by_day_then_part() {
        let parse = |s| LogFileName::parse(s);
        assert_eq!(parse("perch.2026-03-01.log"), Some(LogFileName { day: day(1), part: 0 }));
        assert_eq!(parse("perch.2026-03-01.2.log"), Some(LogFileName { day: day(1), part: 2 }));
        for other in
            ["perch.2026-03-01.0.log", "perch.log", "demo.log", "perch.2026-13-01.log", "perch.x.log"]
        {
            assert_eq!(parse(other), None, "{other}");
        }
        assert!(parse("perch.2026-03-01.10.log") > parse("perch.2026-03-01.9.log"));
        assert!(parse("perch.2026-03-02.log") > parse("perch.2026-03-01.9.log"));
        let name = LogFileName { day: day(1), part: 3 };
        assert_eq!(LogFileName::parse(&name.file_name()), Some(name));
    }

    #[test]
    fn a_full_file_continues_in_the_next_part_without_splitting_a_line() {
        let dir = tempfile::tempdir().unwrap();
        let (mut w, _) = writer(dir.path(), SMALL);
        let line = format!("{}\n", "x".repeat(39));
        for _ in 0..5 {
            w.write_all(line.as_bytes()).unwrap();
        }
        assert_eq!(
            names(dir.path()),
            ["perch.2026-03-01.log", "perch.2026-03-01.1.log", "perch.2026-03-01.2.log"]
        );
        for (name, len) in log_files(dir.path()) {
            assert!(len <= SMALL.file_bytes, "{} is {len} bytes", name.file_name());
            assert_eq!(len % 40, 0, "whole lines only");
        }
    }

    #[test]
    fn a_new_day_starts_a_new_file_and_a_restart_appends_to_todays_newest_part() {
        let dir = tempfile::tempdir().unwrap();
        let (mut w, today) = writer(dir.path(), SMALL);
        w.write_all(b"first day\n").unwrap();
        *today.lock().unwrap() = day(2);
        w.write_all(b"second day\n").unwrap();
        drop(w);
        std::fs::write(dir.path().join("perch.2026-03-02.1.log"), "a later part\n").unwrap();

        let (mut again, today) = writer(dir.path(), SMALL);
        *today.lock().unwrap() = day(2);
        again.write_all(b"after a restart\n").unwrap();
        assert_eq!(
            names(dir.path()),
            ["perch.2026-03-01.log", "perch.2026-03-02.log", "perch.2026-03-02.1.log"]
        );
        let newest = std::fs::read_to_string(dir.path().join("perch.2026-03-02.1.log")).unwrap();
        assert_eq!(newest, "a later part\nafter a restart\n");
    }

    #[test]
    fn the_oldest_files_go_when_the_folder_passes_its_total() {
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits { file_bytes: 100, total_bytes: 300, days: 14 };
        std::fs::write(dir.path().join("notes.txt"), "x".repeat(1_000)).unwrap();
        let (mut w, _) = writer(dir.path(), limits);
        let line = format!("{}\n", "y".repeat(49));
        for _ in 0..20 {
            w.write_all(line.as_bytes()).unwrap();
        }
        let kept = log_files(dir.path());
        let total: u64 = kept.iter().map(|(_, len)| len).sum();
        assert!(total <= limits.total_bytes, "{total} bytes kept");
        assert_eq!(kept.last().unwrap().0.part, 9, "the newest part is written");
        assert_eq!(kept.first().unwrap().0.part, 7, "only the newest parts are kept: {kept:?}");
        assert!(dir.path().join("notes.txt").exists(), "files that are not logs are left alone");
    }

    #[test]
    fn files_of_days_past_the_limit_are_removed_at_start() {
        let dir = tempfile::tempdir().unwrap();
        for d in 1..=5 {
            std::fs::write(dir.path().join(format!("perch.2026-02-0{d}.log")), "old\n").unwrap();
        }
        std::fs::write(dir.path().join("perch.2026-02-05.1.log"), "old\n").unwrap();
        let (_w, _) = writer(dir.path(), Limits { days: 3, ..SMALL });
        // Today's file, opened at start, is one of the three days kept.
        let kept = [
            "perch.2026-02-04.log",
            "perch.2026-02-05.log",
            "perch.2026-02-05.1.log",
            "perch.2026-03-01.log",
        ];
        assert_eq!(names(dir.path()), kept);
    }
}
