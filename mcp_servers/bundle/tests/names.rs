//! One binary, five servers: each link name starts its own server (seen in its `--help`, which
//! each server's argument parser writes), and any other name is refused with the list.
#![allow(clippy::unwrap_used)]

use std::process::Command;

fn run_as(name: &str, arg: &str) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join(name);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_perch-mcp"), &link).unwrap();
    Command::new(&link).arg(arg).output().unwrap()
}

#[test]
fn each_name_runs_its_own_server() {
    for (name, about) in [
        ("perch-mcp-demo", "Arithmetic demo tools"),
        ("perch-mcp-filesystem", "Usage: perch-mcp-filesystem"),
        ("perch-mcp-review", "Usage: perch-mcp-review"),
        ("perch-mcp-web", "Usage: perch-mcp-web"),
        ("perch-mcp-google", "Usage: perch-mcp-google"),
    ] {
        let out = run_as(name, "--help");
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{name}: {out:?}");
        assert!(help.contains(about) && help.contains(&format!("Usage: {name}")), "{name}: {help}");
    }
}

#[test]
fn another_name_is_refused_with_the_list() {
    let out = run_as("perch-mcp", "--help");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "perch-mcp-demo, perch-mcp-filesystem, perch-mcp-review, perch-mcp-web or perch-mcp-google"
        ),
        "{err}"
    );
}
