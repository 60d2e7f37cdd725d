//! The two read-only helpers: `get_environment` and `find_files`.

use std::path::{Path, PathBuf};

use super::sandbox::SandboxView;
use crate::mcp::ToolOutput;

/// At most this many files are listed.
const MAX_FOUND: usize = 200;
const MAX_DEPTH: usize = 12;
const SKIPPED: &[&str] = &[".git", "node_modules", "target", ".venv", "__pycache__", ".cache"];

/// What the model should know about this terminal.
pub async fn environment(cwd: &Path, sandbox: &SandboxView) -> String {
    let tools =
        ["git", "python3", "node", "npm", "cargo", "rustc", "go", "java", "make", "docker", "rg", "curl"];
    let path = super::guard::startup_path().to_owned();
    let found: Vec<&str> =
        tools.iter().copied().filter(|t| which::which_in(t, Some(&path), "/").is_ok()).collect();
    format!(
        "Operating system: {} ({})\nShell: bash, in a terminal (PTY)\nWorking folder: {}\nHome folder: {}\n\
         Installed tools: {}\nSandbox: {}",
        std::env::consts::OS,
        std::env::consts::ARCH,
        cwd.display(),
        super::home().display(),
        if found.is_empty() { "none of the usual ones".into() } else { found.join(", ") },
        sandbox.summary
    )
}

/// `*` and `?` within one name; `**` across folders when the pattern has a `/`.
fn matches(pattern: &[u8], text: &[u8]) -> bool {
    match (pattern.first(), text.first()) {
        (None, None) => true,
        (Some(b'*'), _) if pattern.get(1) == Some(&b'*') => {
            let rest = pattern[2..].strip_prefix(b"/").unwrap_or(&pattern[2..]);
            (0..=text.len()).any(|i| (i == 0 || text[i - 1] == b'/') && matches(rest, &text[i..]))
        }
        (Some(b'*'), _) => (0..=text.len())
            .take_while(|i| *i == 0 || text[i - 1] != b'/')
            .any(|i| matches(&pattern[1..], &text[i..])),
        (Some(b'?'), Some(c)) if *c != b'/' => matches(&pattern[1..], &text[1..]),
        (Some(p), Some(c)) if p == c => matches(&pattern[1..], &text[1..]),
        _ => false,
    }
}

fn walk(root: &Path, dir: &Path, pattern: &str, depth: usize, out: &mut Vec<PathBuf>) {
    if depth > MAX_DEPTH || out.len() >= MAX_FOUND || super::tools::is_credential_path(dir) {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let relative = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().into_owned();
        let subject = if pattern.contains('/') { relative } else { name.clone() };
        if matches(pattern.as_bytes(), subject.as_bytes()) {
            out.push(path.clone());
            if out.len() >= MAX_FOUND {
                return;
            }
        }
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && !SKIPPED.contains(&name.as_str()) {
            walk(root, &path, pattern, depth + 1, out);
        }
    }
}

pub async fn find_files(dir: PathBuf, pattern: String) -> ToolOutput {
    if !dir.is_dir() {
        return ToolOutput::error(format!("The folder {} does not exist.", dir.display()));
    }
    let found = tokio::task::spawn_blocking(move || {
        let mut out = Vec::new();
        walk(&dir, &dir, pattern.trim(), 0, &mut out);
        (dir, out)
    })
    .await;
    let Ok((dir, found)) = found else { return ToolOutput::error("The search failed.") };
    let mut text: Vec<String> = found.iter().map(|p| p.display().to_string()).collect();
    if text.is_empty() {
        return ToolOutput {
            text: format!("No files match under {}.", dir.display()),
            ..ToolOutput::default()
        };
    }
    if found.len() >= MAX_FOUND {
        text.push(format!("[the first {MAX_FOUND} matches; narrow the pattern for more]"));
    }
    ToolOutput { text: text.join("\n"), ..ToolOutput::default() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_names_and_paths() {
        assert!(matches(b"*.rs", b"main.rs"));
        assert!(!matches(b"*.rs", b"main.rsx"));
        assert!(matches(b"src/**/*.toml", b"src/a/b/Cargo.toml"));
        assert!(matches(b"src/**/*.toml", b"src/Cargo.toml"));
        assert!(!matches(b"*.toml", b"a/b.toml"));
        assert!(matches(b"?ain.rs", b"main.rs"));
    }
}
