//! The desktop binary is also the `perch` command line when started under that name, which is
//! how the package installs it (a link, so the command line adds no second copy of the engine).
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;

fn linked_as(dir: &Path, name: &str) -> std::path::PathBuf {
    let link = dir.join(name);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_perch-desktop"), &link).unwrap();
    link
}

#[test]
fn started_as_perch_it_is_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let perch = linked_as(dir.path(), "perch");
    let version = Command::new(&perch).arg("--version").output().unwrap();
    assert!(version.status.success(), "{version:?}");
    assert_eq!(String::from_utf8_lossy(&version.stdout).trim(), format!("perch {}", perch_core::VERSION));

    // A real command on a fresh data folder, with no display: it answers and opens no window.
    let data = dir.path().join("data");
    let doctor = Command::new(&perch)
        .args(["doctor", "--json"])
        .env("PERCH_DATA_DIR", &data)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&doctor.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&doctor.stdout)));
    assert_eq!(report["data_dir"]["path"].as_str().map(Path::new), Some(data.as_path()), "{report}");

    // A mistake gets the command line's usage message, not the app.
    let wrong = Command::new(&perch).arg("no-such-command").output().unwrap();
    assert_eq!(wrong.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&wrong.stderr).contains("Usage: perch"), "{wrong:?}");
}
