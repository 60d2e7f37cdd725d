//! A real process panics with the hook installed: this test binary starts itself again as the
//! child (`CHILD_ENV` set), which installs the hook from `PERCH_CRASH_DIR` as the sidecars do
//! and panics on its main thread by slicing a user's text inside a character.
//!
//! Its own `main` (no test harness), so the child's panic is an ordinary one: the process ends
//! as any panicking Rust program does, not as a failed test.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Output};

const CHILD_ENV: &str = "PERCH_CRASH_TEST_CHILD";
/// Looks like what a person types into a chat, with a secret in it.
const USER_TEXT: &str = "my api key is sk-canary-4f2a9 and café";
/// The exit status of a process whose main thread panicked.
const PANIC_EXIT: i32 = 101;

fn main() {
    match std::env::var(CHILD_ENV).as_deref() {
        Ok("caught") => caught_child(),
        Ok(_) => child(),
        Err(_) => {}
    }
    let tests: [(&str, fn()); 3] = [
        ("a_panic_writes_a_private_report_without_the_users_text", writes_a_report),
        ("an_unwritable_folder_leaves_the_usual_message", unwritable_folder),
        ("a_panic_expected_and_caught_is_no_crash", caught_is_no_crash),
    ];
    for (name, test) in tests {
        test();
        println!("test {name} ... ok");
    }
}

fn child() -> ! {
    perch_crash::install_from_env("perch-test", "9.8.7");
    let end = USER_TEXT.find('é').unwrap() + 1;
    let cut = &USER_TEXT[..end];
    unreachable!("slicing inside a character panics, yet it gave {cut}");
}

/// A parser fed hostile input panics inside `expected`, its caller catches it and goes on.
fn caught_child() -> ! {
    perch_crash::install_from_env("perch-test", "9.8.7");
    let parsed =
        std::panic::catch_unwind(|| perch_crash::expected(|| USER_TEXT[..USER_TEXT.len() + 1].len()));
    assert!(parsed.is_err());
    std::process::exit(0);
}

fn run_child(crash_dir: &Path) -> Output {
    run_child_as("1", crash_dir)
}

fn run_child_as(kind: &str, crash_dir: &Path) -> Output {
    Command::new(std::env::current_exe().unwrap())
        .env(CHILD_ENV, kind)
        .env(perch_crash::DIR_ENV, crash_dir)
        .env("RUST_BACKTRACE", "0")
        .output()
        .unwrap()
}

fn writes_a_report() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data/crashes");
    let out = run_child(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(PANIC_EXIT), "{stderr}");
    assert!(stderr.contains("is not a char boundary"), "the usual message still goes to stderr: {stderr}");
    assert!(stderr.contains("a crash report was written to"), "{stderr}");

    let reports = perch_crash::list(&dir);
    assert_eq!(reports.len(), 1, "{reports:?}");
    let report = &reports[0];
    assert_eq!(report.component, "perch-test");
    assert!(!report.seen);
    let name = report.file.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.ends_with(&format!("-perch-test-{}.txt", out_pid(&report.file))), "{name}");
    let text = perch_crash::read(&report.file).unwrap();
    assert!(text.contains("Component: perch-test\nVersion: 9.8.7\n"), "{text}");
    assert!(text.contains(&format!("OS: {} {}", std::env::consts::OS, std::env::consts::ARCH)), "{text}");
    assert!(text.contains("Thread: main\n"), "{text}");
    assert!(text.contains("Location: src-tauri/crates/crash/tests/panicking_process.rs:"), "{text}");
    assert!(report.summary.contains("is not a char boundary") && report.summary.contains("`…`"), "{text}");
    let backtrace = text.split_once("\nBacktrace:\n").map(|(_, b)| b).unwrap_or_default();
    assert!(
        backtrace.contains("panicking_process::main") && backtrace.contains("tests/panicking_process.rs:"),
        "a backtrace, through this test's frames: {text}"
    );
    for secret in ["sk-canary-4f2a9", "my api key", "café"] {
        assert!(!text.contains(secret), "the user's text reached the report");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&report.file), 0o600, "a report is its owner's only");
        assert_eq!(mode(&dir), 0o700);
    }
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 1, "no temporary file is left: {left:?}");
}

/// The pid in the report's `Process:` line.
fn out_pid(file: &Path) -> String {
    let text = perch_crash::read(file).unwrap();
    text.lines().find_map(|l| l.strip_prefix("Process: ")).unwrap().to_owned()
}

fn unwritable_folder() {
    let tmp = tempfile::tempdir().unwrap();
    // A folder cannot be made below a regular file, whoever runs the test (root included).
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let out = run_child(&file.join("crashes"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(PANIC_EXIT), "{stderr}");
    assert!(stderr.contains("is not a char boundary"), "{stderr}");
    assert!(stderr.contains("no crash report could be written in"), "{stderr}");
}

fn caught_is_no_crash() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("crashes");
    let out = run_child_as("caught", &dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "the child went on after the caught panic: {stderr}");
    assert!(stderr.contains("is out of bounds of"), "the panic happened: {stderr}");
    assert!(perch_crash::list(&dir).is_empty(), "a caught, expected panic leaves no report");
    // Control: the same child without `expected` writes one (writes_a_report).
}
