//! Layer 5 from the engine's side: where the launcher is, what it can enforce here (asked
//! once with `perch-sandbox --probe`), and the policy and launcher command for one command.

use std::path::{Path, PathBuf};

use perch_sandbox::{Enforcement, Policy};

pub use perch_tools::questions::SandboxView;

/// Why commands cannot run in the full sandbox here: each case says what is wrong, and the UI
/// and `perch doctor` can tell a missing launcher from a kernel that lacks a feature.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxUnavailable {
    #[error("commands are not sandboxed on this operating system yet")]
    UnsupportedSystem,
    #[error("the sandbox launcher (perch-sandbox) is missing beside Perch")]
    LauncherMissing,
    #[error("could not start {}: {message}", .launcher.display())]
    LauncherFailed { launcher: PathBuf, message: String },
    #[error("the sandbox probe failed: {0}")]
    ProbeFailed(String),
    #[error("this system lacks {}", .0.join(", "))]
    KernelLacks(Vec<String>),
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
pub async fn probe(launcher: &Path) -> Result<Enforcement, SandboxUnavailable> {
    let out = tokio::process::Command::new(launcher)
        .args(["--private-tmp", "--no-network", "--probe"])
        .output()
        .await
        .map_err(|e| SandboxUnavailable::LauncherFailed {
            launcher: launcher.to_owned(),
            message: e.to_string(),
        })?;
    let line = String::from_utf8_lossy(&out.stdout);
    Enforcement::from_line(line.trim()).ok_or_else(|| {
        SandboxUnavailable::ProbeFailed(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    })
}

/// Where a command may write: the working folder and the writable folders from Settings,
/// each with `~` expanded. Folders that do not exist are returned apart, to be reported.
pub fn writable_folders(working: &Path, extra: &[String], home: &Path) -> (Vec<PathBuf>, Vec<String>) {
    let mut found = vec![working.to_path_buf()];
    let mut missing = Vec::new();
    for folder in extra.iter().map(|f| f.trim()).filter(|f| !f.is_empty()) {
        match super::paths::resolve(folder, Some(home), home).filter(|p| p.is_dir()) {
            Some(p) if !found.contains(&p) => found.push(p),
            Some(_) => {}
            None => missing.push(format!("{folder} does not exist")),
        }
    }
    (found, missing)
}

/// What a command must not see, masked in its mount namespace: the session's runtime folder
/// (the session bus, systemd, ssh and gpg agents, PipeWire, Wayland, Perch's own sockets),
/// Perch's data (its database, logs and key file), and the credential stores in the home
/// folder. `/tmp` (X11's and tmux's sockets) is the command's own anyway.
pub fn hidden_paths(home: &Path, data_dir: &Path) -> Vec<PathBuf> {
    let mut hidden: Vec<PathBuf> = Vec::new();
    hidden.extend(std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from));
    #[cfg(unix)]
    hidden.push(PathBuf::from(format!("/run/user/{}", nix::unistd::getuid())));
    hidden.push(data_dir.to_path_buf());
    hidden.extend(
        perch_foundation::secrets::CREDENTIAL_STORES
            .iter()
            .filter_map(|c| c.strip_prefix("~/"))
            .map(|c| home.join(c)),
    );
    hidden.extend(BROWSER_PROFILES.iter().map(|c| home.join(c)));
    hidden.retain(|p| p.exists());
    hidden.dedup();
    hidden
}

/// Browsers keep signed-in sessions and saved passwords in their profiles.
const BROWSER_PROFILES: &[&str] = &[
    ".mozilla",
    ".thunderbird",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    ".config/vivaldi",
    ".config/opera",
    "snap/firefox",
    "snap/chromium",
    ".var/app/org.mozilla.firefox",
    ".var/app/com.google.Chrome",
];

/// The policy for a command: writable in `writable` (the working folder and the writable
/// folders, see [`writable_folders`]) and in its own temp folder, `hidden` masked, and the
/// network as the setting says. The launcher itself keeps every repository's `.git` and the
/// files that run code on opening a folder read-only ([`perch_sandbox::protect`]).
pub fn policy(writable: &[PathBuf], hidden: &[PathBuf], network: bool) -> Policy {
    let mut all = writable.to_vec();
    all.push(PathBuf::from("/tmp"));
    all.dedup();
    Policy {
        read_only: Vec::new(),
        writable: all,
        hidden: hidden.to_vec(),
        private_tmp: true,
        network,
        max_abi: None,
    }
}

/// True when `cwd` is beneath one of the writable folders.
pub fn is_writable(cwd: &Path, writable: &[PathBuf]) -> bool {
    writable.iter().any(|w| cwd.starts_with(w))
}

/// Why there is no sandbox here, or what of it is missing (every command is then asked about).
pub fn missing_reason(
    launcher: Option<&Path>,
    found: Option<&Result<Enforcement, SandboxUnavailable>>,
) -> Option<SandboxUnavailable> {
    if !cfg!(target_os = "linux") {
        return Some(SandboxUnavailable::UnsupportedSystem);
    }
    match (launcher, found) {
        (None, _) => Some(SandboxUnavailable::LauncherMissing),
        (_, Some(Err(e))) => Some(e.clone()),
        (_, Some(Ok(e))) if !e.missing().is_empty() => {
            Some(SandboxUnavailable::KernelLacks(e.missing().iter().map(|m| (*m).to_owned()).collect()))
        }
        _ => None,
    }
}

pub fn view(
    policy: &Policy,
    cwd: &Path,
    enforcement: Option<&Enforcement>,
    missing: Option<&SandboxUnavailable>,
) -> SandboxView {
    // The temp folder is the command's own and empty: not worth naming on the card.
    let writable: Vec<String> = policy
        .writable
        .iter()
        .filter(|p| p.as_path() != Path::new("/tmp"))
        .map(|p| p.display().to_string())
        .collect();
    let Some(e) = enforcement.filter(|_| missing.is_none()) else {
        return SandboxView {
            enforced: false,
            network_blocked: false,
            writable,
            summary: format!(
                "Not sandboxed: {}. The command can change any file you can, reach your session and \
                 keep running after it ends.",
                missing.map_or_else(|| "it is not available".to_owned(), ToString::to_string)
            ),
        };
    };
    let network_blocked = !policy.network && e.network_blocked;
    let here = if is_writable(cwd, &policy.writable) {
        String::new()
    } else {
        format!("; {} itself is read-only (outside the writable folders)", cwd.display())
    };
    SandboxView {
        enforced: true,
        network_blocked,
        summary: format!(
            "Sandboxed: writable only in {} (each repository's .git and the files that run code when a \
             folder is opened read-only){here}; your sessions, keys, the system's sockets and Perch's data \
             hidden; {}; ends with its command; network {}",
            if writable.is_empty() { "its own temp folder".to_owned() } else { writable.join(", ") },
            e.unix_sockets(),
            if network_blocked { "off" } else { "on" }
        ),
        writable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each way the sandbox can be missing is its own case, from real attempts.
    #[tokio::test]
    async fn a_missing_launcher_a_broken_one_and_a_failing_probe_are_told_apart() {
        let missing = Path::new("/nonexistent/perch-sandbox");
        assert!(matches!(probe(missing).await, Err(SandboxUnavailable::LauncherFailed { .. })));
        // A program that runs but prints no probe line.
        assert!(matches!(probe(Path::new("/bin/false")).await, Err(SandboxUnavailable::ProbeFailed(_))));
        if cfg!(target_os = "linux") {
            assert_eq!(missing_reason(None, None), Some(SandboxUnavailable::LauncherMissing));
            let failed = Err(SandboxUnavailable::ProbeFailed("x".into()));
            assert_eq!(missing_reason(Some(missing), Some(&failed)), failed.err());
        }
    }
}
