//! What stays read-only inside the folders a command may change: every repository's metadata
//! (a `.git` folder, a `.git` file and the folders it names, the hooks folder and the files
//! its configuration includes) and what runs code when the user next opens a folder (direnv's
//! `.envrc`, VS Code's `.vscode`, JetBrains' `.idea`). A command that could change them would
//! have its code run outside the sandbox, at the user's next `git commit`, `cd` or opening of
//! the project. They are found by the launcher itself at every start, so no list kept by Perch
//! can fall behind the folder: at and above each writable folder, and in every folder beneath
//! it except the trees of downloaded or built files named in [`NOT_WALKED`]. Bare repositories
//! (`HEAD`, `objects` and `refs` in one folder: a local remote runs its hooks on a push) are
//! kept whole. Where that cannot be made sure of (a guarded name that is a link the command
//! could replace, a folder that cannot be read, too many folders) the command does not start.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Names that run code, or are a repository, wherever they appear.
const GUARDED: &[&str] = &[".git", ".envrc", ".vscode", ".idea"];

/// Trees of downloaded or built files, not walked (tens of thousands of folders in a large
/// project): nobody runs git or opens an editor inside them. A repository planted there is
/// not protected; ARCHITECTURE says so.
const NOT_WALKED: &[&str] = &["node_modules", "target", ".venv", "venv", "__pycache__", ".tox", ".gradle"];

/// More folders than this beneath one writable folder and the walk stops, failing the start:
/// a command is never run with repositories left unprotected.
pub const MAX_FOLDERS: usize = 100_000;

/// Why the protected paths could not all be found.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Unprotectable {
    #[error("{} holds more than {MAX_FOLDERS} folders, too many to check for repositories; choose a smaller folder", .0.display())]
    TooManyFolders(PathBuf),
    #[error("{} is a link, which a command could replace; make it a folder or file, or choose another folder", .0.display())]
    Link(PathBuf),
    #[error("{} cannot be read, so Perch cannot check it for repositories: {}", .0.display(), .1)]
    Unreadable(PathBuf, std::io::Error),
}

/// The paths inside `writable` that must stay read-only, each existing and canonical.
pub fn protected(writable: &[PathBuf]) -> Result<Vec<PathBuf>, Unprotectable> {
    let roots: Vec<PathBuf> = writable.iter().filter_map(|w| std::fs::canonicalize(w).ok()).collect();
    let mut found = BTreeSet::new();
    for root in &roots {
        // A `.git` above the folder: a repository whose working tree holds it.
        for dir in root.ancestors().skip(1) {
            guard(&dir.join(".git"), &mut found);
        }
        walk(root, &mut found, MAX_FOLDERS)?;
    }
    Ok(found.into_iter().filter(|p| roots.iter().any(|r| p.starts_with(r))).collect())
}

/// Every folder beneath `root` (itself included), recording what it guards; at most `max`.
fn walk(root: &Path, found: &mut BTreeSet<PathBuf>, max: usize) -> Result<(), Unprotectable> {
    let mut stack = vec![root.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = stack.pop() {
        seen += 1;
        if seen > max {
            return Err(Unprotectable::TooManyFolders(root.to_path_buf()));
        }
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            // Gone since it was listed.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Unprotectable::Unreadable(dir, e)),
        };
        let mut subfolders = Vec::new();
        let mut names = BTreeSet::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let kind = entry.file_type().ok();
            if GUARDED.contains(&name.as_str()) {
                if kind.is_some_and(|k| k.is_symlink()) {
                    return Err(Unprotectable::Link(entry.path()));
                }
                guard(&entry.path(), found);
            } else if !NOT_WALKED.contains(&name.as_str()) && kind.is_some_and(|k| k.is_dir()) {
                subfolders.push(entry.path());
            }
            names.insert(name);
        }
        if ["HEAD", "objects", "refs"].iter().all(|n| names.contains(*n)) {
            // A bare repository: all of it, and nothing in it walked.
            found.insert(dir);
            continue;
        }
        stack.extend(subfolders);
    }
    Ok(())
}

/// Records `path` (if it exists) and, for a repository, what its metadata points at.
fn guard(path: &Path, found: &mut BTreeSet<PathBuf>) {
    let Ok(real) = std::fs::canonicalize(path) else { return };
    if !found.insert(real.clone()) || path.file_name().is_none_or(|n| n != ".git") {
        return;
    }
    let worktree = path.parent().unwrap_or(Path::new("/"));
    let git_dir = if real.is_file() {
        // A worktree's or a submodule's `.git` file: `gitdir: <path>`; a worktree's folder
        // names the main repository's in `commondir`.
        let Some(dir) = read_pointer(&real, "gitdir:", worktree) else { return };
        let Ok(dir) = std::fs::canonicalize(dir) else { return };
        found.insert(dir.clone());
        if let Some(common) = read_pointer(&dir.join("commondir"), "", &dir)
            && let Ok(common) = std::fs::canonicalize(common)
        {
            found.insert(common.clone());
            config_paths(&common, worktree, found);
        }
        dir
    } else {
        real
    };
    config_paths(&git_dir, worktree, found);
}

/// The first line of `file` after `prefix`, as a path relative to `base`.
fn read_pointer(file: &Path, prefix: &str, base: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(file).ok()?;
    let value = text.lines().next()?.strip_prefix(prefix)?.trim();
    (!value.is_empty()).then(|| base.join(value))
}

/// From a repository's `config`: the hooks folder (`core.hooksPath`, relative to the working
/// tree) and the files it includes (`include.path`, `includeIf.*.path`, relative to the
/// repository's folder), where they exist.
fn config_paths(git_dir: &Path, worktree: &Path, found: &mut BTreeSet<PathBuf>) {
    let Ok(config) = std::fs::read_to_string(git_dir.join("config")) else { return };
    let mut section = String::new();
    for line in config.lines().map(str::trim) {
        if let Some(header) = line.strip_prefix('[') {
            section = header.split([']', ' ', '"']).next().unwrap_or("").to_ascii_lowercase();
            continue;
        }
        let Some((key, value)) = line.split_once('=') else { continue };
        let (key, value) = (key.trim().to_ascii_lowercase(), value.trim().trim_matches('"'));
        let base = match (section.as_str(), key.as_str()) {
            ("core", "hookspath") => worktree,
            ("include" | "includeif", "path") => git_dir,
            _ => continue,
        };
        // `~/...` lies outside the writable folders (the home folder is never one).
        if value.starts_with('~') {
            continue;
        }
        if let Ok(real) = std::fs::canonicalize(base.join(value)) {
            found.insert(real);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }

    #[test]
    fn repositories_and_start_up_files_are_found_at_above_and_beneath_a_writable_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let repo = root.join("repo");
        std::fs::create_dir_all(repo.join(".git/hooks")).unwrap();
        std::fs::write(
            repo.join(".git/config"),
            "[core]\n\thooksPath = tools/hooks\n[include]\n\tpath = ../local.gitconfig\n",
        )
        .unwrap();
        std::fs::create_dir_all(repo.join("tools/hooks")).unwrap();
        touch(&repo.join("local.gitconfig"));
        touch(&repo.join("src/.envrc"));
        std::fs::create_dir_all(repo.join("src/.vscode")).unwrap();
        // A submodule's `.git` file and the folder it names.
        std::fs::create_dir_all(repo.join(".git/modules/lib")).unwrap();
        touch(&repo.join("lib/.git"));
        std::fs::write(repo.join("lib/.git"), "gitdir: ../.git/modules/lib\n").unwrap();
        // Not walked: a dependency tree.
        std::fs::create_dir_all(repo.join("node_modules/dep/.git")).unwrap();

        // The working folder is a subfolder of the repository: its `.git` is above it, and
        // outside what may be written.
        let sub = protected(&[repo.join("src")]).unwrap();
        assert_eq!(sub, [repo.join("src/.envrc"), repo.join("src/.vscode")]);
        // The repository's root (or a folder above it) is writable: all of it is protected.
        let all = protected(std::slice::from_ref(&repo)).unwrap();
        for p in [
            ".git",
            "tools/hooks",
            "local.gitconfig",
            "src/.envrc",
            "src/.vscode",
            "lib/.git",
            ".git/modules/lib",
        ] {
            assert!(all.contains(&repo.join(p)), "{p} in {all:?}");
        }
        assert!(!all.iter().any(|p| p.starts_with(repo.join("node_modules"))), "{all:?}");
        // A bare repository beside it (a local remote) is kept whole.
        for dir in ["remote.git/objects", "remote.git/refs"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        touch(&root.join("remote.git/HEAD"));
        let above = protected(std::slice::from_ref(&root)).unwrap();
        assert_eq!(above.iter().filter(|p| !all.contains(p)).collect::<Vec<_>>(), [&root.join("remote.git")]);
    }

    #[test]
    fn a_linked_git_folder_fails_rather_than_leaving_the_link_open() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("elsewhere/.git")).unwrap();
        std::fs::create_dir_all(tmp.path().join("repo")).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("elsewhere/.git"), tmp.path().join("repo/.git")).unwrap();
        assert!(matches!(protected(&[tmp.path().join("repo")]), Err(Unprotectable::Link(_))));
    }

    #[test]
    fn a_folder_too_large_to_walk_fails_rather_than_leaving_repositories_open() {
        let tmp = tempfile::tempdir().unwrap();
        for i in 0..5 {
            std::fs::create_dir_all(tmp.path().join(format!("d{i}"))).unwrap();
        }
        assert!(walk(tmp.path(), &mut BTreeSet::new(), 3).is_err());
        assert!(walk(tmp.path(), &mut BTreeSet::new(), 6).is_ok());
    }
}
