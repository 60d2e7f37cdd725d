//! Finding programs such as `npx` and `uvx` the way the user's shell would.
//!
//! Apps started from a desktop menu inherit a minimal PATH, without the folders that version
//! managers (nvm, pyenv, uv) add in shell profiles. We ask a login shell once for its PATH and
//! search that first, then the process's own.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::OnceCell;

const MARK_START: &str = "__PERCH_PATH_START__";
const MARK_END: &str = "__PERCH_PATH_END__";

static LOGIN_PATH: OnceCell<OsString> = OnceCell::const_new();

/// The login shell's PATH followed by the process PATH (computed once per process).
pub async fn login_path() -> &'static OsString {
    LOGIN_PATH.get_or_init(|| async { merge_paths(shell_path().await, std::env::var_os("PATH")) }).await
}

/// Resolves `program` on the login PATH.
pub async fn find(program: &str) -> Option<PathBuf> {
    let path = login_path().await.clone();
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    which::which_in(program, Some(path), cwd).ok()
}

#[cfg(unix)]
async fn shell_path() -> Option<OsString> {
    let shell = std::env::var_os("SHELL").filter(|s| !s.is_empty()).unwrap_or_else(|| "/bin/sh".into());
    let script = format!("printf '%s%s%s' '{MARK_START}' \"$PATH\" '{MARK_END}'");
    let child = tokio::process::Command::new(&shell)
        .args(["-l", "-c", &script])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    // Profiles can be slow or even wait for input; never let that hold us up.
    let output = tokio::time::timeout(Duration::from_secs(3), child).await.ok()?.ok()?;
    extract_marked(&String::from_utf8_lossy(&output.stdout)).map(OsString::from)
}

#[cfg(not(unix))]
async fn shell_path() -> Option<OsString> {
    None
}

/// Profiles may print banners; the PATH is what sits between our markers.
fn extract_marked(stdout: &str) -> Option<&str> {
    let start = stdout.find(MARK_START)? + MARK_START.len();
    let end = start + stdout[start..].find(MARK_END)?;
    Some(&stdout[start..end]).filter(|p| !p.is_empty())
}

fn merge_paths(first: Option<OsString>, second: Option<OsString>) -> OsString {
    let mut seen = Vec::new();
    for list in [first, second].into_iter().flatten() {
        for dir in std::env::split_paths(&list) {
            if !seen.contains(&dir) {
                seen.push(dir);
            }
        }
    }
    std::env::join_paths(seen).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marked_path_survives_noisy_profiles() {
        let out = format!("Welcome!\n{MARK_START}/a:/b{MARK_END}");
        assert_eq!(extract_marked(&out), Some("/a:/b"));
        assert_eq!(extract_marked("no markers"), None);
        assert_eq!(extract_marked(&format!("{MARK_START}{MARK_END}")), None);
    }

    #[test]
    fn merged_paths_keep_order_and_drop_duplicates() {
        let merged = merge_paths(Some("/login:/usr/bin".into()), Some("/usr/bin:/proc".into()));
        assert_eq!(merged, OsString::from("/login:/usr/bin:/proc"));
    }

    #[tokio::test]
    async fn finds_a_program_that_exists_and_not_one_that_does_not() {
        assert!(find("sh").await.is_some());
        assert!(find("perch-no-such-program-xyz").await.is_none());
    }
}
