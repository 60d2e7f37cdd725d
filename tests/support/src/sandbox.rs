//! The sandbox launcher for tests that run commands under it: built beside the test binaries
//! when it is not there yet, and asked whether this machine can enforce the full sandbox.

use std::path::{Path, PathBuf};

/// Builds `perch-sandbox` once when it is not beside the test binaries yet, so commands in
/// these tests run under the real sandbox.
pub fn ensure_launcher() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let debug = exe.parent().and_then(Path::parent).expect("the test binary lies in target/<profile>/deps");
    let launcher = debug.join("perch-sandbox");
    if !launcher.is_file() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = std::process::Command::new(cargo)
            .args(["build", "-p", "perch-sandbox", "--bin", "perch-sandbox"])
            .status()
            .expect("cargo runs");
        assert!(status.success(), "perch-sandbox did not build");
    }
    launcher
}

/// Whether the full sandbox is here, for a test that `needs` it. Where it is not (no user
/// namespaces, no Landlock), the test fails: a sandbox test that passes without a sandbox
/// proves nothing. `PERCH_ALLOW_NO_SANDBOX=1` says the machine cannot have one; the test is
/// then skipped, loudly.
pub fn sandbox_required(needs: &str) -> bool {
    let launcher = ensure_launcher();
    let out = std::process::Command::new(&launcher)
        .args(["--private-tmp", "--no-network", "--probe"])
        .output()
        .expect("the sandbox launcher runs");
    let line = String::from_utf8_lossy(&out.stdout);
    let missing = perch_sandbox::Enforcement::from_line(line.trim()).map_or_else(
        || vec![format!("a probe line ({})", String::from_utf8_lossy(&out.stderr))],
        |e| e.missing(),
    );
    if missing.is_empty() {
        return true;
    }
    assert!(
        std::env::var_os("PERCH_ALLOW_NO_SANDBOX").is_some_and(|v| v == "1"),
        "{needs}, and this machine lacks {missing:?}; set PERCH_ALLOW_NO_SANDBOX=1 to skip it (README: what that costs)"
    );
    eprintln!("SKIPPED ({needs}): this machine lacks {missing:?} and PERCH_ALLOW_NO_SANDBOX=1 is set");
    false
}
