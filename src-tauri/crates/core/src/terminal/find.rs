//! The two read-only helpers: `get_environment` and `find_files`.

use std::path::{Path, PathBuf};

use super::sandbox::SandboxView;
use crate::files::walk::{self, WalkOptions};
use crate::mcp::ToolOutput;

/// At most this many files are listed.
const MAX_FOUND: usize = 200;
const MAX_DEPTH: usize = 12;

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

/// Up to [`MAX_FOUND`] paths under `root` whose name (or, for a pattern with a `/`, whose path
/// below `root`) matches `pattern`, in name order: the one walk (`files::walk`), dotfiles
/// included, credential stores never entered.
fn find(root: &Path, pattern: &str) -> Vec<PathBuf> {
    let options = WalkOptions { hidden: true, max_depth: Some(MAX_DEPTH), sorted: true };
    let Some(walker) = walk::walk(&[root], options, super::tools::is_credential_path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    // The root itself is the walk's first entry; it is where the search happens, not a match.
    for entry in walker.flatten().filter(|e| e.depth() > 0) {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy();
        let relative = path.strip_prefix(root).unwrap_or(path).to_string_lossy();
        let subject = if pattern.contains('/') { relative } else { name };
        if matches(pattern.as_bytes(), subject.as_bytes()) {
            out.push(path.to_path_buf());
            if out.len() >= MAX_FOUND {
                break;
            }
        }
    }
    out
}

pub async fn find_files(dir: PathBuf, pattern: String) -> ToolOutput {
    if !dir.is_dir() {
        return ToolOutput::error(format!("The folder {} does not exist.", dir.display()));
    }
    let found = tokio::task::spawn_blocking(move || {
        let out = find(&dir, pattern.trim());
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
    fn find_walks_with_the_one_walk_ignore_rules_dotfiles_and_skipped_folders() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for rel in [
            "src/main.rs",
            "src/gen/out.rs",
            ".github/ci.rs",
            "node_modules/pkg/index.rs",
            "target/debug/build.rs",
            ".git/hooks/hook.rs",
            "notes.txt",
        ] {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, b"x").unwrap();
        }
        std::fs::write(root.join(".gitignore"), "gen/\n").unwrap();
        let found: Vec<String> =
            find(root, "*.rs").iter().map(|p| p.strip_prefix(root).unwrap().display().to_string()).collect();
        // Name order, dotfiles in, .gitignore'd and build folders out, in a folder that is not
        // a git repository.
        assert_eq!(found, [".github/ci.rs", "src/main.rs"]);
        assert_eq!(find(root, "src/**/*.rs").len(), 1);
        assert!(find(root, "*.md").is_empty());
    }

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
