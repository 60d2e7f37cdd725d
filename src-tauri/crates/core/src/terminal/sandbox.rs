//! Layer 5 from the engine's side: where the launcher is, what it can enforce here (asked
//! once with `perch-sandbox --probe`), and the policy and launcher command for one command.

use std::path::{Path, PathBuf};

use perch_sandbox::{Enforcement, Policy};
use serde::Serialize;

/// The sandbox a command runs in, as the approval card, Settings and `perch doctor` say it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct SandboxView {
    /// Writes outside the allowed folders are refused by the kernel.
    pub enforced: bool,
    pub network_blocked: bool,
    pub writable: Vec<String>,
    /// One sentence for the card.
    pub summary: String,
}

/// The launcher: `PERCH_SANDBOX_BIN`, else beside the running executable or one folder up
/// (test binaries run from `target/debug/deps`).
pub fn launcher() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PERCH_SANDBOX_BIN") {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let file = format!("perch-sandbox{}", std::env::consts::EXE_SUFFIX);
    [dir.to_path_buf(), dir.parent()?.to_path_buf()].into_iter().map(|d| d.join(&file)).find(|p| p.is_file())
}

/// What the launcher can enforce on this machine (it restricts a throwaway copy of itself).
pub async fn probe(launcher: &Path) -> Result<Enforcement, String> {
    let out = tokio::process::Command::new(launcher)
        .args(["--no-network", "--probe"])
        .output()
        .await
        .map_err(|e| format!("could not start {}: {e}", launcher.display()))?;
    let line = String::from_utf8_lossy(&out.stdout);
    Enforcement::from_line(line.trim())
        .ok_or_else(|| format!("the sandbox probe failed: {}", String::from_utf8_lossy(&out.stderr).trim()))
}

/// The policy for a command in `cwd`: writable there, in the temp folder and in `extra`, with
/// `cwd/.git` read-only, and the network as the setting says.
pub fn policy(cwd: &Path, extra: &[String], network: bool) -> Policy {
    let mut writable = vec![cwd.to_path_buf(), std::env::temp_dir()];
    writable.extend(extra.iter().filter(|f| !f.trim().is_empty()).map(PathBuf::from));
    writable.dedup();
    let git = cwd.join(".git");
    Policy { read_only: if git.is_dir() { vec![git] } else { Vec::new() }, writable, network }
}

/// Why there is no sandbox here, when there is none.
pub fn missing_reason(
    launcher: Option<&Path>,
    found: Option<&Result<Enforcement, String>>,
) -> Option<String> {
    if !cfg!(target_os = "linux") {
        return Some("commands are not sandboxed on this operating system yet".into());
    }
    match (launcher, found) {
        (None, _) => Some("the sandbox launcher (perch-sandbox) is missing beside Perch".into()),
        (_, Some(Err(e))) => Some(e.clone()),
        (_, Some(Ok(e))) if e.landlock_abi == 0 => Some("this kernel has no Landlock".into()),
        _ => None,
    }
}

pub fn view(policy: &Policy, enforcement: Option<&Enforcement>, missing: Option<&str>) -> SandboxView {
    let writable: Vec<String> = policy.writable.iter().map(|p| p.display().to_string()).collect();
    let Some(e) = enforcement.filter(|_| missing.is_none()) else {
        return SandboxView {
            enforced: false,
            network_blocked: false,
            writable,
            summary: format!(
                "No sandbox: {}. The command can change any file you can.",
                missing.unwrap_or("it is not available")
            ),
        };
    };
    let network_blocked = !policy.network && e.network_blocked;
    let git = if policy.read_only.is_empty() {
        String::new()
    } else if e.namespaces {
        "; .git read-only".into()
    } else {
        "; .git writable (no user namespaces)".into()
    };
    SandboxView {
        enforced: true,
        network_blocked,
        summary: format!(
            "Landlock (ABI {}): writable only in {}{git}; network {}",
            e.landlock_abi,
            writable.join(", "),
            if network_blocked { "off" } else { "on" }
        ),
        writable,
    }
}
