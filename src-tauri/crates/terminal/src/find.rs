//! The two read-only helpers: `get_environment` and `find_files`.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use globset::{GlobBuilder, GlobMatcher};
use tokio_util::sync::CancellationToken;

use super::sandbox::SandboxView;
use perch_files::walk::{self, WalkOptions};
use perch_tools::ToolOutput;

/// At most this many files are listed.
const MAX_FOUND: usize = 200;
/// Folders deeper than this below the one searched are not entered.
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

/// A glob: `*` and `?` within one name, `**` across folders (as a whole path part), `[ab]`
/// and `{a,b}`. The `globset` crate compiles it to a regular expression, so matching takes time
/// linear in the name whatever the pattern (a backtracking matcher is exponential on
/// `**/**/**/*a*a*a*b`).
fn glob(pattern: &str) -> Result<GlobMatcher, globset::Error> {
    GlobBuilder::new(pattern).literal_separator(true).build().map(|g| g.compile_matcher())
}

/// How much one search may look at: a search of `/` or of a huge tree ends with what it found
/// so far, and says so.
#[derive(Debug, Clone, Copy)]
struct Bounds {
    entries: usize,
    time: Duration,
}

const BOUNDS: Bounds = Bounds { entries: 50_000, time: Duration::from_secs(10) };

/// Why a search ended before its walk did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cut {
    /// [`MAX_FOUND`] matches.
    Found,
    /// It looked at [`Bounds::entries`] files and folders.
    Entries,
    /// It ran for [`Bounds::time`].
    Time,
    /// The user stopped the answer.
    Stopped,
}

#[derive(Debug)]
struct Search {
    found: Vec<PathBuf>,
    cut: Option<Cut>,
}

/// Up to [`MAX_FOUND`] paths under `root` whose name (or, for a pattern with a `/`, whose path
/// below `root`) matches `pattern`, in name order: the one walk (`files::walk`), dotfiles
/// included, credential stores never entered. It checks `bounds` and `cancel` at every entry.
fn find(
    root: &Path,
    pattern: &str,
    bounds: Bounds,
    cancel: &CancellationToken,
) -> Result<Search, globset::Error> {
    let matcher = glob(pattern)?;
    let mut search = Search { found: Vec::new(), cut: None };
    let options = WalkOptions { hidden: true, max_depth: Some(MAX_DEPTH), sorted: true };
    let Some(walker) = walk::walk(&[root], options, super::tools::is_credential_path) else {
        return Ok(search);
    };
    let by_path = pattern.contains('/');
    let deadline = Instant::now() + bounds.time;
    // The root itself is the walk's first entry; it is where the search happens, not a match.
    for (visited, entry) in walker.flatten().filter(|e| e.depth() > 0).enumerate() {
        search.cut = if cancel.is_cancelled() {
            Some(Cut::Stopped)
        } else if visited >= bounds.entries {
            Some(Cut::Entries)
        } else if Instant::now() >= deadline {
            Some(Cut::Time)
        } else {
            None
        };
        if search.cut.is_some() {
            break;
        }
        let path = entry.path();
        let subject =
            if by_path { path.strip_prefix(root).unwrap_or(path) } else { Path::new(entry.file_name()) };
        if matcher.is_match(subject) {
            search.found.push(path.to_path_buf());
            if search.found.len() >= MAX_FOUND {
                search.cut = Some(Cut::Found);
                break;
            }
        }
    }
    Ok(search)
}

pub async fn find_files(dir: PathBuf, pattern: String, cancel: &CancellationToken) -> ToolOutput {
    // The walk never enters a credential store; nor does it start in one (or at a link to one).
    let real = std::fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone());
    if super::tools::is_credential_path(&dir) || super::tools::is_credential_path(&real) {
        return ToolOutput::error(format!("{} holds credentials; Perch does not search it.", dir.display()));
    }
    if !dir.is_dir() {
        return ToolOutput::error(format!("The folder {} does not exist.", dir.display()));
    }
    let token = cancel.clone();
    let searched = tokio::task::spawn_blocking(move || {
        let search = find(&dir, pattern.trim(), BOUNDS, &token);
        (dir, pattern, search)
    })
    .await;
    let (dir, search) = match searched {
        Ok((dir, _, Ok(search))) => (dir, search),
        Ok((_, pattern, Err(e))) => {
            return ToolOutput::error(format!("{pattern:?} is not a pattern Perch can search with: {e}."));
        }
        Err(_) => return ToolOutput::error("The search failed."),
    };
    if search.cut == Some(Cut::Stopped) {
        return ToolOutput::error("The search was stopped.");
    }
    let note = match search.cut {
        Some(Cut::Found) => Some(format!("[the first {MAX_FOUND} matches; narrow the pattern for more]")),
        Some(Cut::Entries) => Some(format!(
            "[the search stopped after looking at {} files and folders; search a smaller folder for more]",
            BOUNDS.entries
        )),
        Some(Cut::Time) => Some(format!(
            "[the search stopped after {} seconds; search a smaller folder for more]",
            BOUNDS.time.as_secs()
        )),
        Some(Cut::Stopped) | None => None,
    };
    if search.found.is_empty() && note.is_none() {
        return ToolOutput {
            text: format!("No files match under {}.", dir.display()),
            ..ToolOutput::default()
        };
    }
    let mut text: Vec<String> = search.found.iter().map(|p| p.display().to_string()).collect();
    text.extend(note);
    ToolOutput { text: text.join("\n"), ..ToolOutput::default() }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNBOUNDED: Bounds = Bounds { entries: usize::MAX, time: Duration::from_secs(86_400) };

    /// The paths found under `root` for `pattern`, relative to it.
    fn found(root: &Path, pattern: &str) -> Vec<String> {
        let search = find(root, pattern, UNBOUNDED, &CancellationToken::new()).unwrap();
        search.found.iter().map(|p| p.strip_prefix(root).unwrap().display().to_string()).collect()
    }

    fn touch(root: &Path, rel: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"x").unwrap();
    }

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
            touch(root, rel);
        }
        std::fs::write(root.join(".gitignore"), "gen/\n").unwrap();
        // Name order, dotfiles in, .gitignore'd and build folders out, in a folder that is not
        // a git repository.
        assert_eq!(found(root, "*.rs"), [".github/ci.rs", "src/main.rs"]);
        assert_eq!(found(root, "src/**/*.rs"), ["src/main.rs"]);
        assert!(found(root, "*.md").is_empty());
    }

    #[test]
    fn globs_match_names_and_paths() {
        let is = |pattern: &str, text: &str| glob(pattern).unwrap().is_match(text);
        assert!(is("*.rs", "main.rs"));
        assert!(!is("*.rs", "main.rsx"));
        assert!(is("src/**/*.toml", "src/a/b/Cargo.toml"));
        assert!(is("src/**/*.toml", "src/Cargo.toml"));
        assert!(!is("*.toml", "a/b.toml"));
        assert!(is("?ain.rs", "main.rs"));
        assert!(is("{src,tests}/[a-c]*.rs", "tests/build.rs"));
        assert!(glob("src/[a-").is_err());
    }

    /// A tree of 12 x 12 folders of 20 files, every name a run of x's: a backtracking matcher
    /// tries every way to place `*x*x*x*x*x*y` in each name before it fails.
    fn big_tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let xs = "x".repeat(24);
        for a in 0..12 {
            for b in 0..12 {
                let folder = dir.path().join(format!("{xs}{a}/{xs}{b}"));
                std::fs::create_dir_all(&folder).unwrap();
                for c in 0..20 {
                    std::fs::write(folder.join(format!("{xs}{c}")), b"x").unwrap();
                }
            }
        }
        dir
    }

    const PATHOLOGICAL: &str = "**/**/**/**/*x*x*x*x*x*y";

    #[test]
    fn a_pathological_pattern_over_a_big_tree_ends_at_the_entry_bound() {
        let tree = big_tree();
        let bounds = Bounds { entries: 1_000, time: UNBOUNDED.time };
        let search = find(tree.path(), PATHOLOGICAL, bounds, &CancellationToken::new()).unwrap();
        assert_eq!(search.cut, Some(Cut::Entries));
        assert!(search.found.is_empty());
        // Control: the same pattern finds what it matches.
        touch(tree.path(), "deep/er/still/xaxbxcxdxey");
        assert_eq!(found(tree.path(), PATHOLOGICAL), ["deep/er/still/xaxbxcxdxey"]);
    }

    #[tokio::test]
    async fn a_stopped_answer_stops_the_search() {
        let tree = big_tree();
        let stop = CancellationToken::new();
        stop.cancel();
        let search = find(tree.path(), PATHOLOGICAL, UNBOUNDED, &stop).unwrap();
        assert_eq!((search.cut, search.found.len()), (Some(Cut::Stopped), 0));
        let said = find_files(tree.path().to_path_buf(), "*".into(), &stop).await;
        assert!(said.is_error && said.text.contains("stopped"), "{said:?}");
        // Control: the same search, not stopped, lists the files.
        let listed = find_files(tree.path().to_path_buf(), "*".into(), &CancellationToken::new()).await;
        assert!(!listed.is_error && listed.text.contains("matches; narrow the pattern"), "{listed:?}");
    }

    #[tokio::test]
    async fn credential_stores_are_never_searched_whatever_their_names_hold() {
        use super::super::tools::is_credential_path;
        let home = super::super::home();
        // A name with a quote once made the check a different shell line, which was not refused.
        for inside in [home.join(".ssh/it's mine"), PathBuf::from("/etc/sudoers.d/o'brien")] {
            assert!(is_credential_path(&inside), "{}", inside.display());
        }
        assert!(!is_credential_path(&home.join("projects/it's mine")));
        let said = find_files(PathBuf::from("/etc/sudoers.d"), "*".into(), &CancellationToken::new()).await;
        assert!(said.is_error && said.text.contains("holds credentials"), "{said:?}");
    }
}
