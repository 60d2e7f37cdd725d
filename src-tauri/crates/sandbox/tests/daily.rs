#![allow(clippy::unwrap_used)] // test helpers unwrap too
//! What users rely on every day still works in the box (issue 42): git in an existing
//! repository (its `.git` read-only), make, a Python virtual environment, a Rust project built
//! with cargo and an npm script, each run by the real launcher in a working folder as Perch's
//! policy gives it (a private `/tmp`, the network on, the home folder read-only).
#![cfg(target_os = "linux")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use perch_sandbox::{Enforcement, Policy};

const LAUNCHER: &str = env!("CARGO_BIN_EXE_perch-sandbox");

fn policy(work: &Path) -> Policy {
    Policy {
        writable: vec![work.to_path_buf(), PathBuf::from("/tmp")],
        private_tmp: true,
        network: true,
        ..Policy::default()
    }
}

/// Runs `script` as Perch runs a command: under the launcher, in `work`, with an environment
/// of the few variables Perch passes (no `CARGO_*` or other variables of this test's own).
fn run(work: &Path, script: &str) -> Output {
    let mut command = Command::new(LAUNCHER);
    command.args(policy(work).to_args()).args(["--", "bash", "-c", script]).current_dir(work).env_clear();
    for name in ["PATH", "HOME", "USER", "LANG"] {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    command.output().unwrap()
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn sandbox_here() -> bool {
    let out = Command::new(LAUNCHER).args(["--private-tmp", "--probe"]).output().unwrap();
    let found = Enforcement::from_line(String::from_utf8_lossy(&out.stdout).trim()).unwrap_or_default();
    if found.missing().is_empty() {
        return true;
    }
    assert!(
        std::env::var_os("PERCH_ALLOW_NO_SANDBOX").is_some_and(|v| v == "1"),
        "this machine lacks {:?}; set PERCH_ALLOW_NO_SANDBOX=1 to skip (README)",
        found.missing()
    );
    false
}

/// A working folder outside `/tmp` (the command's `/tmp` is its own).
fn work() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

#[test]
fn git_reads_and_diffs_an_existing_repository() {
    if !sandbox_here() {
        return;
    }
    let dir = work();
    let w = dir.path();
    let setup = "git init -q && git config user.email t@example.org && git config user.name T && \
                 echo one > a.txt && git add a.txt && git commit -qm first";
    assert!(Command::new("bash").args(["-c", setup]).current_dir(w).status().unwrap().success());
    let out =
        run(w, "echo two >> a.txt && git status --short && git diff --stat && git log --oneline | wc -l");
    let shown = text(&out);
    assert!(out.status.success(), "{shown}");
    assert!(shown.contains(" M a.txt") && shown.contains("1 file changed"), "{shown}");
    // Its metadata is read-only: a commit is refused, and says why.
    let out = run(w, "git commit -qam second");
    assert!(!out.status.success() && text(&out).contains("Read-only file system"), "{}", text(&out));
}

#[test]
fn make_runs_a_makefile() {
    if !sandbox_here() {
        return;
    }
    let dir = work();
    std::fs::write(dir.path().join("Makefile"), "out.txt:\n\techo built > $@\n").unwrap();
    let out = run(dir.path(), "make && cat out.txt");
    assert!(text(&out).contains("built"), "{}", text(&out));
}

#[test]
fn python_makes_and_uses_a_virtual_environment() {
    if !sandbox_here() {
        return;
    }
    let dir = work();
    let out = run(dir.path(), "python3 -m venv .venv && .venv/bin/python -c 'import sys; print(sys.prefix)'");
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains(".venv"), "{}", text(&out));
}

#[test]
fn cargo_builds_and_runs_a_project() {
    if !sandbox_here() {
        return;
    }
    let dir = work();
    // The machine's own toolchain, as a user's shell finds it; the project's build goes to
    // its own folder.
    let out = run(dir.path(), "cargo new --vcs none -q hello && cd hello && cargo run -q --offline");
    assert!(text(&out).contains("Hello, world!"), "{}", text(&out));
}

#[test]
fn npm_runs_a_package_script() {
    if !sandbox_here() {
        return;
    }
    let dir = work();
    // npm names the package after its folder, which must be a valid package name.
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let out = run(
        &project,
        "npm init -y >/dev/null && npm pkg set scripts.hello='echo npm-ran' && npm run -s hello",
    );
    assert!(text(&out).contains("npm-ran"), "{}", text(&out));
}
