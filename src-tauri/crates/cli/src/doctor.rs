//! `perch doctor`.

use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use perch_core::diagnostics::{self, BundleOptions, BundleSources};
use perch_core::doctor::{self, DbStatus, DoctorReport};
use perch_core::keys::Keys;

pub async fn run(json: bool) -> ExitCode {
    let report = doctor::run().await;
    if json {
        match serde_json::to_string_pretty(&report) {
            Ok(text) => outln!("{text}"),
            Err(e) => return crate::output::fail(&e.to_string()),
        }
    } else {
        print_human(&report);
    }
    if report.healthy() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

/// `perch doctor --bundle FILE`: the report, versions, settings, MCP config and recent logs in
/// one zip for a bug report, with secrets removed. Says where it went and what was removed
/// (counts only: the values must not reach the terminal either).
pub async fn bundle(file: &Path, redact_home: bool) -> ExitCode {
    let report = doctor::run().await;
    let data_dir = report.data_dir.path.clone();
    // The keyring holds keys wherever the data folder is; with no usable folder there is no
    // file store to read, and an empty path finds none.
    let keys = Arc::new(Keys::new(data_dir.as_deref().unwrap_or(Path::new(""))));
    let sources = BundleSources::new(data_dir.as_deref(), keys, &report);
    let summary = match diagnostics::write_bundle(sources, file, BundleOptions { redact_home }).await {
        Ok(summary) => summary,
        Err(e) => return crate::output::fail(&e.to_string()),
    };
    outln!(
        "Wrote the diagnostics bundle to {} ({}, {} files).",
        summary.path.display(),
        size(summary.size_bytes),
        summary.files.len()
    );
    outln!("Removed: {}.", summary.removed.describe());
    if summary.logs_cut {
        outln!("Only the newest logs are in it, to keep it small.");
    }
    if summary.unreadable_keys > 0 {
        outln!(
            "{} key store entries could not be read, so their values were looked for by shape only.",
            summary.unreadable_keys
        );
    }
    outln!("Look it over before attaching it to a bug report: it holds your settings and recent logs.");
    ExitCode::SUCCESS
}

fn size(bytes: u64) -> String {
    match bytes {
        0..1_000 => format!("{bytes} bytes"),
        1_000..1_000_000 => format!("{:.1} KB", bytes as f64 / 1e3),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}

fn print_human(r: &DoctorReport) {
    outln!("Perch {}", r.version);
    outln!();
    match (&r.data_dir.path, &r.data_dir.source, &r.data_dir.error) {
        (Some(path), Some(source), None) => {
            outln!("ok data folder   {} ({})", path.display(), source.describe())
        }
        (_, _, error) => outln!("!! data folder   {}", error.as_deref().unwrap_or("unknown problem")),
    }
    let db = &r.database;
    let flag = if db.status == DbStatus::Ok { "ok " } else { "!! " };
    let mut line = format!("{flag}database      ");
    if let Some(path) = &db.path {
        line.push_str(&path.display().to_string());
    }
    if let Some(v) = db.schema_version {
        line.push_str(&format!("  schema {v}/{}", db.latest_schema));
    }
    if let (Some(c), Some(m)) = (db.conversations, db.messages) {
        line.push_str(&format!("  {c} conversations, {m} messages"));
    }
    outln!("{line}");
    if !db.detail.is_empty() {
        outln!("                {}", db.detail);
    }
    outln!();
    outln!("Optional parts:");
    for c in &r.components {
        outln!("{}{:<13} {}", if c.available { "ok " } else { "-- " }, c.name, c.detail);
    }
    if !r.sign_ins.is_empty() {
        outln!();
        outln!("MCP sign-ins:");
        for s in &r.sign_ins {
            outln!("{}", crate::sign_in::line(&s.server, s.sign_in.as_ref()));
        }
    }
    if let Some(google) = &r.google {
        outln!();
        outln!("Connections:");
        outln!("{}", crate::google::line(google));
    }
}
