//! Reading back what the hook wrote: the reports in a folder, newest first, and whether each
//! has been shown (a shown report is renamed `NAME.seen.txt`).

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

const SEEN_SUFFIX: &str = ".seen.txt";
/// More than any report the hook writes; a bigger file is not read whole.
const READ_LIMIT: u64 = 1 << 20;

/// A crash report in the folder, from its first lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CrashReport {
    pub file: PathBuf,
    /// What crashed: `app`, `cli`, `perch-llm`, `perch-mcp-web`...
    pub component: String,
    pub at: DateTime<Utc>,
    /// The panic's message, as redacted by the hook.
    pub summary: String,
    /// Already shown to the user (see [`mark_seen`]).
    pub seen: bool,
}

/// The reports in `dir`, newest first. A missing folder has none; files that are not reports
/// are skipped.
pub fn list(dir: &Path) -> Vec<CrashReport> {
    let mut names = report_names(dir);
    names.sort_unstable_by(|a, b| b.cmp(a));
    names.into_iter().filter_map(|name| parse(dir.join(&name), name.ends_with(SEEN_SUFFIX))).collect()
}

/// The whole text of a report (up to a megabyte: the hook writes far less).
pub fn read(file: &Path) -> io::Result<String> {
    let mut text = String::new();
    fs::File::open(file)?.take(READ_LIMIT).read_to_string(&mut text)?;
    Ok(text)
}

/// Records that the report was shown, so it is announced once; returns where it now is.
pub fn mark_seen(report: &CrashReport) -> io::Result<PathBuf> {
    if report.seen {
        return Ok(report.file.clone());
    }
    let name = report.file.file_name().and_then(|n| n.to_str()).unwrap_or_default();
    let stem = name.strip_suffix(".txt").unwrap_or(name);
    let seen = report.file.with_file_name(format!("{stem}{SEEN_SUFFIX}"));
    fs::rename(&report.file, &seen)?;
    Ok(seen)
}

/// The names of the reports in `dir` (not the hook's temporary files), in no order.
pub(crate) fn report_names(dir: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(dir) else { return Vec::new() };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| name.ends_with(".txt") && !name.starts_with('.'))
        .collect()
}

fn parse(file: PathBuf, seen: bool) -> Option<CrashReport> {
    let text = read(&file).ok()?;
    let mut lines = text.lines();
    if lines.next()? != "Perch crash report" {
        return None;
    }
    let (mut component, mut at, mut summary) = (None, None, String::new());
    for line in lines.take_while(|l| !l.is_empty()) {
        let Some((key, value)) = line.split_once(": ") else { continue };
        match key {
            "Component" => component = Some(value.to_owned()),
            "Time" => at = DateTime::parse_from_rfc3339(value).ok().map(|t| t.with_timezone(&Utc)),
            "Message" => summary = value.to_owned(),
            _ => {}
        }
    }
    Some(CrashReport { file, component: component?, at: at?, summary, seen })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn report(dir: &Path, name: &str, component: &str, time: &str) {
        let text = format!(
            "Perch crash report\nComponent: {component}\nVersion: 1.0.0\nTime: {time}\nMessage: it broke\n\nBacktrace:\n   0: main\n"
        );
        fs::write(dir.join(name), text).unwrap();
    }

    #[test]
    fn reports_are_listed_newest_first_and_seen_once_marked() {
        let dir = tempfile::tempdir().unwrap();
        report(dir.path(), "20260101T100000.000Z-app-1.txt", "app", "2026-01-01T10:00:00.000Z");
        report(dir.path(), "20260102T100000.000Z-perch-llm-2.txt", "perch-llm", "2026-01-02T10:00:00.000Z");
        fs::write(dir.path().join("20260103T100000.000Z-x-3.txt"), "not a report").unwrap();
        fs::write(dir.path().join(".20260104T100000.000Z-app-4.txt.tmp"), "half").unwrap();

        let found = list(dir.path());
        let components: Vec<&str> = found.iter().map(|r| r.component.as_str()).collect();
        assert_eq!(components, ["perch-llm", "app"]);
        assert_eq!(found[0].summary, "it broke");
        assert_eq!(found[0].at.to_rfc3339(), "2026-01-02T10:00:00+00:00");
        assert!(found.iter().all(|r| !r.seen));

        let moved = mark_seen(&found[0]).unwrap();
        assert!(moved.ends_with("20260102T100000.000Z-perch-llm-2.seen.txt"));
        let again = list(dir.path());
        assert_eq!(again.len(), 2);
        assert!(again[0].seen && !again[1].seen, "still listed, in the same order");
        assert!(read(&again[0].file).unwrap().contains("Backtrace:"));
        assert!(list(&dir.path().join("missing")).is_empty());
    }
}
