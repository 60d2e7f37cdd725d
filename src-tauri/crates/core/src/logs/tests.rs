use std::io::Write;
use std::path::Path;

use chrono::NaiveDate;

use super::*;
use crate::logging::{Limits, LogWriter};

/// A line as the fmt layer writes it, at second `s` of a fixed minute.
fn own(s: u32, level: &str, target: &str, text: &str) -> String {
    format!("2026-03-01T10:00:{s:02}.000001Z {level:>5} {target}: {text}\n")
}

fn server_line(s: u32, text: &str) -> String {
    let at =
        Local.from_utc_datetime(&NaiveDate::from_ymd_opt(2026, 3, 1).unwrap().and_hms_opt(10, 0, s).unwrap());
    format!("{} {text}\n", at.format("%Y-%m-%d %H:%M:%S"))
}

fn append(path: &Path, text: &str) {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
}

fn texts(tail: &Tail) -> Vec<&str> {
    tail.entries.iter().map(|e| e.text.as_str()).collect()
}

fn plain() -> Redactor {
    Redactor::new(Vec::new(), None)
}

#[test]
fn a_line_gives_its_time_level_target_and_text() {
    let entries =
        parse_own(&own(7, "WARN", "perch_core::mcp::manager", "server stopped server=\"demo\" code=1"));
    let e = &entries[0];
    assert_eq!(
        (e.level, e.component, e.target.as_str()),
        (Level::Warn, Component::Mcp, "perch_core::mcp::manager")
    );
    assert_eq!(e.text, "server stopped server=\"demo\" code=1");
    let at = DateTime::parse_from_rfc3339(&e.at).unwrap();
    assert_eq!(at.to_utc().to_rfc3339(), "2026-03-01T10:00:07+00:00", "shown in local time, the same moment");

    let scoped =
        "2026-03-01T10:00:07.5Z  INFO turn{id=3 model=\"a: b\"}:tool: perch_core::agent::turn: calling\n";
    assert_eq!(parse_own(scoped)[0].target, "perch_core::agent::turn");
    assert_eq!(parse_own(scoped)[0].text, "calling");
    let bare_span =
        "2026-03-01T10:00:07.5Z  INFO serve_inner: rmcp::service: Service initialized as client\n";
    assert_eq!(parse_own(bare_span)[0].target, "rmcp::service");
    assert_eq!(parse_own(bare_span)[0].component, Component::Mcp);
    let plain = own(1, "INFO", "perch_desktop_lib", "first paint: 510 ms");
    assert_eq!(
        (parse_own(&plain)[0].target.as_str(), parse_own(&plain)[0].text.as_str()),
        ("perch_desktop_lib", "first paint: 510 ms")
    );
}

#[test]
fn a_message_with_line_breaks_stays_one_entry_and_a_cut_start_is_dropped() {
    let text = format!(
        "the end of an earlier message\n{}second line\n{}",
        own(1, "ERROR", "perch_core::engine", "first line"),
        own(2, "INFO", "perch_core::engine", "next")
    );
    let entries = parse_own(&text);
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].text, "first line\nsecond line");
    assert_eq!(entries[0].level, Level::Error);
}

#[test]
fn targets_map_to_components() {
    for (target, component) in [
        ("perch_core::engine", Component::Engine),
        ("perch_core::mcp", Component::Mcp),
        ("perch_core::mcp::manager::signing", Component::Mcp),
        ("rmcp::service", Component::Mcp),
        ("perch_mcp_web", Component::Mcp),
        ("perch_core::terminal::exec", Component::Terminal),
        ("perch_sandbox", Component::Terminal),
        ("perch_core::local::runtime", Component::Local),
        ("perch_core::providers::local", Component::Local),
        ("perch_llm", Component::Local),
        ("perch_core::providers::ollama", Component::Engine),
        ("perch_core::voice::whisper", Component::Voice),
        ("whisper_rs::whisper_ctx", Component::Voice),
        ("perch_desktop_lib::dictation", Component::Voice),
        ("perch_core::capture::screen::x11", Component::Capture),
        ("perch_desktop_lib::capture", Component::Capture),
        ("perch_core::capturex", Component::Engine),
        ("perch_desktop_lib::hidden_page", Component::Engine),
    ] {
        assert_eq!(component_of(target), component, "{target}");
    }
}

#[test]
fn the_first_read_gives_the_last_entries_of_perch_and_its_servers_by_time() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path();
    std::fs::create_dir(logs.join("mcp")).unwrap();
    let yesterday = own(0, "INFO", "perch_core::engine", "yesterday").replace("2026-03-01", "2026-02-28");
    append(&logs.join("perch.2026-02-28.log"), &yesterday);
    let today: String =
        (1..=5).map(|s| own(s * 2, "INFO", "perch_core::engine", &format!("own {s}"))).collect();
    append(&logs.join("perch.2026-03-01.log"), &today);
    append(
        &logs.join("mcp/demo.log"),
        &(server_line(5, "listening") + &server_line(9, "[perch] it exited unexpectedly")),
    );
    append(&logs.join("mcp/demo.log.1"), &server_line(1, "an older run"));

    let tail = read(logs, None, 4, &mut plain());
    assert_eq!(texts(&tail), ["own 3", "own 4", "it exited unexpectedly", "own 5"]);
    let note = &tail.entries[2];
    assert_eq!(
        (note.component, note.level, note.server.as_deref()),
        (Component::Mcp, Level::Warn, Some("demo"))
    );

    let all = read(logs, None, 100, &mut plain());
    assert_eq!(
        texts(&all),
        ["yesterday", "own 1", "own 2", "listening", "own 3", "own 4", "it exited unexpectedly", "own 5"]
    );
    assert_eq!(all.cursor.file.as_deref(), Some("perch.2026-03-01.log"));
    assert_eq!(all.cursor.offset, today.len() as u64);
}

#[test]
fn the_cursor_gives_only_what_is_new_and_waits_for_a_whole_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("perch.2026-03-01.log");
    append(&file, &own(1, "INFO", "perch_core::engine", "engine started"));
    let first = read(dir.path(), None, 10, &mut plain());
    assert_eq!(texts(&first), ["engine started"]);

    let nothing = read(dir.path(), Some(&first.cursor), 10, &mut plain());
    assert!(nothing.entries.is_empty());
    assert_eq!(nothing.cursor, first.cursor);

    let half = own(2, "INFO", "perch_core::engine", "written in two goes");
    let (start, rest) = half.split_at(30);
    append(&file, start);
    let partial = read(dir.path(), Some(&first.cursor), 10, &mut plain());
    assert!(partial.entries.is_empty(), "half a line is not an entry yet");
    append(&file, rest);
    let whole = read(dir.path(), Some(&partial.cursor), 10, &mut plain());
    assert_eq!(texts(&whole), ["written in two goes"]);
}

#[test]
fn the_cursor_follows_new_parts_and_new_days() {
    let dir = tempfile::tempdir().unwrap();
    let day = std::sync::Arc::new(std::sync::Mutex::new(NaiveDate::from_ymd_opt(2026, 3, 1).unwrap()));
    let clock = day.clone();
    let limits = Limits { file_bytes: 200, total_bytes: 10_000, days: 14 };
    let mut writer =
        LogWriter::with_clock(dir.path(), limits, Box::new(move || *clock.lock().unwrap())).unwrap();
    let mut write = |s: u32| {
        writer.write_all(own(s, "INFO", "perch_core::engine", &format!("line {s}")).as_bytes()).unwrap()
    };

    write(0);
    let first = read(dir.path(), None, 100, &mut plain());
    for s in 1..=6 {
        write(s);
    }
    *day.lock().unwrap() = NaiveDate::from_ymd_opt(2026, 3, 2).unwrap();
    write(7);
    assert!(log_files(dir.path()).len() >= 3, "{:?}", log_files(dir.path()));

    let next = read(dir.path(), Some(&first.cursor), 100, &mut plain());
    let expected: Vec<String> = (1..=7).map(|s| format!("line {s}")).collect();
    assert_eq!(texts(&next), expected);
    assert_eq!(next.cursor.file.as_deref(), Some("perch.2026-03-02.log"));
}

#[test]
fn a_file_that_was_replaced_is_read_anew() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("perch.2026-03-01.log");
    append(&file, &own(1, "INFO", "perch_core::engine", "a long first line of the old file"));
    let first = read(dir.path(), None, 10, &mut plain());
    std::fs::write(&file, own(2, "INFO", "perch_core::engine", "new")).unwrap();
    assert_eq!(texts(&read(dir.path(), Some(&first.cursor), 10, &mut plain())), ["new"]);
}

#[test]
fn a_server_log_that_started_over_gives_the_rest_of_the_old_one_first() {
    let dir = tempfile::tempdir().unwrap();
    let mcp = dir.path().join("mcp");
    std::fs::create_dir(&mcp).unwrap();
    append(&mcp.join("web.log"), &server_line(1, "one"));
    let first = read(dir.path(), None, 10, &mut plain());
    assert_eq!(texts(&first), ["one"]);

    append(&mcp.join("web.log"), &server_line(2, "two: the last line before the cut"));
    std::fs::rename(mcp.join("web.log"), mcp.join("web.log.1")).unwrap();
    append(&mcp.join("web.log"), &server_line(3, "three"));
    append(&mcp.join("github.log"), &server_line(4, "a server seen for the first time"));
    let next = read(dir.path(), Some(&first.cursor), 10, &mut plain());
    assert_eq!(
        texts(&next),
        ["two: the last line before the cut", "three", "a server seen for the first time"]
    );
}

#[test]
fn a_bundled_servers_own_line_gives_its_level_and_target() {
    let line = server_line(
        1,
        "\u{1b}[2m2026-03-01T10:00:01.000Z\u{1b}[0m \u{1b}[31mERROR\u{1b}[0m perch_mcp_web::fetch: refused",
    );
    let e = parse_server_line("web", line.trim_end()).unwrap();
    assert_eq!(
        (e.level, e.target.as_str(), e.text.as_str()),
        (Level::Error, "perch_mcp_web::fetch", "refused")
    );
    assert_eq!(parse_server_line("web", "not a stamped line"), None);
}

#[test]
fn secrets_are_removed_before_a_line_reaches_the_tail() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path();
    let logs = data.join("logs");
    std::fs::create_dir_all(logs.join("mcp")).unwrap();
    let keys = Keys::in_file(data);
    let canary = "perch-canary-tail-key-5e1d77";
    keys.set("openai", &crate::keys::Secret::new(canary)).unwrap();
    append(
        &logs.join("perch.2026-03-01.log"),
        &own(1, "WARN", "perch_core::providers::openai", &format!("refused key {canary}")),
    );
    append(&logs.join("mcp/demo.log"), &server_line(2, "Authorization: Bearer abcdefghijklmnopqrstuvwxyz"));

    let mut redactor = redactor(data, &keys, &Settings::default());
    let tail = read(&logs, None, 10, &mut redactor);
    let all: String = texts(&tail).join("\n");
    assert!(!all.contains(canary), "the stored key reached the tail");
    assert!(!all.contains("abcdefghijklmnopqrstuvwxyz"), "a bearer token reached the tail");
    assert_eq!(texts(&tail), ["refused key [removed]", "Authorization: Bearer [removed]"]);
}

#[test]
fn a_diagnostics_file_is_named_by_its_time_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let now = Local.with_ymd_and_hms(2026, 3, 1, 9, 5, 7).unwrap();
    let first = diagnostics_file_at(dir.path(), now);
    assert_eq!(first, dir.path().join("perch-diagnostics-20260301-090507.zip"));
    std::fs::write(&first, "taken").unwrap();
    assert_eq!(
        diagnostics_file_at(dir.path(), now),
        dir.path().join("perch-diagnostics-20260301-090507-2.zip")
    );
}
