#![allow(clippy::unwrap_used)] // test helpers unwrap too
//! The launcher against the real kernel: Landlock refusing writes outside the writable folders,
//! `.git` kept read-only inside one, and the network cut when the policy says so.
#![cfg(target_os = "linux")]

use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output};

use perch_sandbox::{Enforcement, Policy};

fn launch(policy: &Policy, script: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_perch-sandbox"))
        .args(policy.to_args())
        .args(["--", "bash", "-c", script])
        .output()
        .expect("the launcher runs")
}

fn probe(policy: &Policy) -> Enforcement {
    let out = Command::new(env!("CARGO_BIN_EXE_perch-sandbox"))
        .args(policy.to_args())
        .arg("--probe")
        .output()
        .expect("the probe runs");
    Enforcement::from_line(String::from_utf8_lossy(&out.stdout).trim())
        .unwrap_or_else(|| panic!("no probe line: {}", String::from_utf8_lossy(&out.stderr)))
}

fn folders() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let work = root.path().join("work");
    let outside = root.path().join("outside");
    std::fs::create_dir_all(work.join(".git")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    (root, work, outside)
}

fn landlock_here() -> bool {
    let found = probe(&Policy { network: true, ..Policy::default() });
    if found.landlock_abi == 0 {
        eprintln!("skipping: this kernel has no Landlock");
    }
    found.landlock_abi > 0
}

#[test]
fn writes_inside_the_working_folder_succeed_and_outside_fail() {
    if !landlock_here() {
        return;
    }
    let (_root, work, outside) = folders();
    let policy = Policy {
        writable: vec![work.clone()],
        read_only: vec![work.join(".git")],
        network: true,
        ..Policy::default()
    };
    let script = format!(
        "echo inside > {w}/made.txt; echo outside > {o}/escaped.txt; echo git > {w}/.git/config; \
         rm -rf {o}; echo done",
        w = work.display(),
        o = outside.display()
    );
    let out = launch(&policy, &script);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "done", "{stderr}");
    assert_eq!(std::fs::read_to_string(work.join("made.txt")).unwrap(), "inside\n");
    assert!(!outside.join("escaped.txt").exists(), "a write outside got through: {stderr}");
    assert!(outside.is_dir(), "rm -rf outside the working folder deleted it");
    assert!(stderr.contains("Permission denied"), "{stderr}");
    assert!(!work.join(".git/config").exists(), ".git was writable: {stderr}");
    assert!(stderr.contains("Read-only file system"), "{stderr}");
}

#[test]
fn the_network_is_cut_when_the_policy_says_so() {
    if !landlock_here() {
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected || echo refused");
    let tmp = std::env::temp_dir();
    let open = Policy { writable: vec![tmp.clone()], network: true, ..Policy::default() };
    assert_eq!(String::from_utf8_lossy(&launch(&open, &connect).stdout).trim(), "connected");
    let closed = Policy { writable: vec![tmp], network: false, ..Policy::default() };
    assert!(probe(&closed).network_blocked);
    assert_eq!(String::from_utf8_lossy(&launch(&closed, &connect).stdout).trim(), "refused");
}

#[test]
fn a_missing_program_and_bad_arguments_are_reported() {
    let out = Command::new(env!("CARGO_BIN_EXE_perch-sandbox"))
        .args(["--write", "/tmp", "--", "/no/such/program"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(127));
    let out = Command::new(env!("CARGO_BIN_EXE_perch-sandbox")).arg("--bogus").output().unwrap();
    assert_eq!(out.status.code(), Some(126));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage"));
    assert!(Path::new(env!("CARGO_BIN_EXE_perch-sandbox")).is_file());
}
