//! `perch doctor`.

use std::process::ExitCode;

use perch_core::doctor::{self, DbStatus, DoctorReport};

pub async fn run(json: bool) -> ExitCode {
    let report = doctor::run().await;
    if json {
        match serde_json::to_string_pretty(&report) {
            Ok(text) => println!("{text}"),
            Err(e) => return crate::output::fail(&e.to_string()),
        }
    } else {
        print_human(&report);
    }
    if report.healthy() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

fn mark(ok: bool) -> &'static str {
    if ok { "ok " } else { "-- " }
}

fn print_human(r: &DoctorReport) {
    println!("Perch {}", r.version);
    println!();
    match (&r.data_dir.path, &r.data_dir.error) {
        (Some(path), None) => {
            let source = r
                .data_dir
                .source
                .map(|s| format!(" ({})", serde_json::to_value(s).unwrap_or_default().as_str().unwrap_or("")))
                .unwrap_or_default();
            println!("{}data folder   {}{source}", mark(true), path.display());
        }
        (_, error) => println!("!! data folder   {}", error.as_deref().unwrap_or("unknown problem")),
    }
    let db = &r.database;
    let ok = matches!(db.status, DbStatus::Ok);
    let flag = match db.status {
        DbStatus::Ok => "ok ",
        DbStatus::Recovered => "!! ",
        _ => "!! ",
    };
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
    println!("{line}");
    if !ok || !db.detail.is_empty() {
        println!("                {}", db.detail);
    }
    println!();
    println!("Optional parts:");
    for c in &r.components {
        println!("{}{:<13} {}", mark(c.available), c.name, c.detail);
    }
}
