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

fn print_human(r: &DoctorReport) {
    println!("Perch {}", r.version);
    println!();
    match (&r.data_dir.path, &r.data_dir.source, &r.data_dir.error) {
        (Some(path), Some(source), None) => {
            println!("ok data folder   {} ({})", path.display(), source.describe())
        }
        (_, _, error) => println!("!! data folder   {}", error.as_deref().unwrap_or("unknown problem")),
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
    println!("{line}");
    if !db.detail.is_empty() {
        println!("                {}", db.detail);
    }
    println!();
    println!("Optional parts:");
    for c in &r.components {
        println!("{}{:<13} {}", if c.available { "ok " } else { "-- " }, c.name, c.detail);
    }
    if !r.sign_ins.is_empty() {
        println!();
        println!("MCP sign-ins:");
        for s in &r.sign_ins {
            println!("{}", crate::sign_in::line(&s.server, s.sign_in.as_ref()));
        }
    }
    if let Some(google) = &r.google {
        println!();
        println!("Connections:");
        println!("{}", crate::google::line(google));
    }
}
