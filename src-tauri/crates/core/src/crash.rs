//! Crash reports. The panic hook and the report files are `perch-crash`'s, since the sidecars
//! use it without perch-core; here is where the app and the CLI put their reports, and what
//! Perch tells a person about the reports it finds. Nothing is sent anywhere.

use std::path::Path;

use chrono::{DateTime, Local, Utc};

pub use perch_crash::{CrashReport, DIR_ENV, list, mark_seen, read};

use crate::notices::StartupNotice;
use crate::paths::{self, ResolveInputs};
use crate::probes::Probe;

/// Sets the panic hook of the app or the CLI (`component`), with reports in the data dir's
/// `crashes/`. The data dir is resolved as the engine resolves it but not created: the first
/// crash creates the folder. Without a data dir the hook only prints.
pub fn install(component: &str) {
    let dir = paths::resolve(&ResolveInputs::from_env()).ok().map(|r| paths::crashes_dir_in(&r.path));
    perch_crash::install(component, crate::VERSION, dir);
}

/// What crashed, as a person would name it.
fn part(component: &str) -> &str {
    match component {
        "app" => "Perch",
        "cli" => "the perch command",
        "perch-llm" => "the local model runtime",
        "perch-mcp-web" => "the web tools server",
        "perch-mcp-filesystem" => "the files server",
        "perch-mcp-google" => "the Google server",
        "perch-mcp-review" => "the review server",
        "perch-mcp-demo" => "the demo server",
        other => other,
    }
}

/// What crashed, as the subject of a sentence.
fn subject(component: &str) -> String {
    match component {
        "app" => "Perch".into(),
        "cli" => "The perch command".into(),
        other => format!("A part of Perch ({})", part(other)),
    }
}

/// A time of today as `14:02`, of another day as `27 Jul 14:02`, in the user's zone.
fn when(at: DateTime<Utc>) -> String {
    let local = at.with_timezone(&Local);
    if local.date_naive() == Local::now().date_naive() {
        local.format("%H:%M").to_string()
    } else {
        local.format("%-d %b %H:%M").to_string()
    }
}

/// One notice for each part of Perch with reports not yet announced, then marks them announced
/// so each is told once. (Panics in a background task leave the rest running, so the notice
/// says an error was hit rather than that Perch stopped.)
pub fn notices(dir: &Path) -> Vec<StartupNotice> {
    let unseen: Vec<CrashReport> = list(dir).into_iter().filter(|r| !r.seen).collect();
    for report in &unseen {
        if let Err(e) = mark_seen(report) {
            tracing::warn!(file = %report.file.display(), error = %e, "could not mark a crash report as shown");
        }
    }
    // Newest first, so each component's first report is its latest.
    let mut components: Vec<&str> = Vec::new();
    for report in &unseen {
        if !components.contains(&report.component.as_str()) {
            components.push(&report.component);
        }
    }
    components
        .into_iter()
        .map(|component| {
            let mine: Vec<&CrashReport> = unseen.iter().filter(|r| r.component == component).collect();
            let latest = when(mine[0].at);
            let times = match mine.len() {
                1 => format!("at {latest}"),
                n => format!("{n} times, the last at {latest}"),
            };
            StartupNotice {
                title: format!("{} hit an unexpected error", subject(component)),
                detail: format!(
                    "It happened {times}. A crash report was saved on this computer (nothing was sent): \
                     Settings -> Logs has it; Copy diagnostics (or perch doctor --bundle FILE) adds it to a bug report."
                ),
                section: Some("Logs".into()),
            }
        })
        .collect()
}

/// The doctor's line: how many reports are kept and the newest.
pub fn probe(dir: &Path) -> Probe {
    let reports = list(dir);
    let Some(newest) = reports.first() else {
        return Probe { name: "crash reports".into(), available: true, detail: "none".into() };
    };
    Probe {
        name: "crash reports".into(),
        available: false,
        detail: format!(
            "{} in {}; the newest: {}, {} ({}). perch doctor --bundle FILE adds them to a bug report",
            reports.len(),
            dir.display(),
            part(&newest.component),
            newest.at.with_timezone(&Local).format("%Y-%m-%d %H:%M"),
            newest.summary,
        ),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn report(dir: &Path, name: &str, component: &str, at: &str) {
        let text = format!(
            "Perch crash report\nComponent: {component}\nVersion: 1\nTime: {at}\nMessage: boom\n\nBacktrace:\n"
        );
        std::fs::write(dir.join(name), text).unwrap();
    }

    #[test]
    fn unseen_reports_are_announced_once_per_part() {
        let dir = tempfile::tempdir().unwrap();
        report(
            dir.path(),
            "20260101T100000.000Z-perch-mcp-web-1.txt",
            "perch-mcp-web",
            "2026-01-01T10:00:00Z",
        );
        report(
            dir.path(),
            "20260101T110000.000Z-perch-mcp-web-2.txt",
            "perch-mcp-web",
            "2026-01-01T11:00:00Z",
        );
        report(dir.path(), "20260101T120000.000Z-app-3.txt", "app", "2026-01-01T12:00:00Z");

        let first = notices(dir.path());
        let titles: Vec<&str> = first.iter().map(|n| n.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "Perch hit an unexpected error",
                "A part of Perch (the web tools server) hit an unexpected error"
            ]
        );
        assert!(first[1].detail.contains("2 times, the last at "), "{}", first[1].detail);
        assert!(first[0].detail.contains("Copy diagnostics"));
        assert!(notices(dir.path()).is_empty(), "told once");
        assert_eq!(list(dir.path()).len(), 3, "the reports stay");

        let doctor = probe(dir.path());
        assert!(!doctor.available && doctor.detail.starts_with("3 in "), "{}", doctor.detail);
        assert!(probe(&dir.path().join("none")).available);
    }
}
