//! The `@` picker's search: walks the user's folders with the one walk (`super::walk`:
//! `.gitignore` respected, hidden files and build folders skipped), ranks relative paths with nucleo's fuzzy matcher
//! (helix's, tuned for paths) while walking, and reports the best so far early and then
//! periodically, so the first results show before a large tree is walked. The walk stops at a
//! cap on files visited and when a newer query cancels it.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use tokio_util::sync::CancellationToken;

use super::FilesError;
use super::walk::WalkOptions;

#[derive(Debug, Clone)]
pub struct SearchOptions {
    /// The walk stops after this many files (a folder with 500,000 files stays responsive).
    pub max_files: usize,
    /// Results kept.
    pub limit: usize,
    /// The first report comes this soon when anything matched (or when `limit` results did).
    pub first_report: Duration,
    /// Later reports while walking, at most this often.
    pub report_every: Duration,
}

impl Default for SearchOptions {
    fn default() -> Self {
        Self {
            max_files: 300_000,
            limit: 50,
            first_report: Duration::from_millis(30),
            report_every: Duration::from_millis(150),
        }
    }
}

/// A file that matched.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, specta::Type)]
pub struct Hit {
    /// Absolute.
    pub path: String,
    /// Relative to its root, as shown and as matched.
    pub relative: String,
    pub score: u32,
}

/// The best results so far.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, specta::Type)]
pub struct SearchUpdate {
    /// Best first.
    pub hits: Vec<Hit>,
    /// Files looked at so far.
    pub visited: u32,
    /// The walk is over (finished, capped or cancelled).
    pub done: bool,
    /// The walk stopped at the cap: some files were not looked at.
    pub capped: bool,
}

/// Starts and cancels searches: a new query cancels the one before.
#[derive(Debug, Default)]
pub struct Picker {
    current: Mutex<Option<CancellationToken>>,
}

impl Picker {
    /// A token for a new search; the previous search is cancelled.
    pub fn begin(&self) -> CancellationToken {
        let token = CancellationToken::new();
        let mut current = self.current.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(old) = current.replace(token.clone()) {
            old.cancel();
        }
        token
    }

    /// Cancels the running search, if any (the picker closed).
    pub fn cancel(&self) {
        if let Some(old) = self.current.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take() {
            old.cancel();
        }
    }
}

/// Ranked by score, then shorter paths, then name (so equal scores are stable).
type Ranked = (u32, Reverse<usize>, Reverse<String>, String);

struct Best {
    heap: BinaryHeap<Reverse<Ranked>>,
    limit: usize,
}

impl Best {
    fn push(&mut self, score: u32, relative: String, path: String) {
        let item = Reverse((score, Reverse(relative.len()), Reverse(relative), path));
        if self.heap.len() < self.limit {
            self.heap.push(item);
        } else if self.heap.peek().is_some_and(|worst| item < *worst) {
            self.heap.pop();
            self.heap.push(item);
        }
    }

    fn sorted(&self) -> Vec<Hit> {
        let mut all: Vec<&Ranked> = self.heap.iter().map(|Reverse(r)| r).collect();
        all.sort_by(|a, b| b.cmp(a));
        all.into_iter()
            .map(|(score, _, Reverse(relative), path)| Hit {
                path: path.clone(),
                relative: relative.clone(),
                score: *score,
            })
            .collect()
    }
}

/// Searches `roots` for `query` (all files, shortest paths first, when it is empty), calling
/// `report` with the best results so far, and returns the final ones. Blocking: run it on a
/// blocking thread.
pub fn search(
    roots: &[PathBuf],
    query: &str,
    options: &SearchOptions,
    cancel: &CancellationToken,
    mut report: impl FnMut(&SearchUpdate),
) -> Result<SearchUpdate, FilesError> {
    let roots: Vec<&PathBuf> = roots.iter().filter(|r| r.is_dir()).collect();
    let paths: Vec<&Path> = roots.iter().map(|r| r.as_path()).collect();
    let walker = super::walk::walk(&paths, WalkOptions::default(), |_| false).ok_or(FilesError::NoRoots)?;

    let pattern = Pattern::parse(query.trim(), CaseMatching::Smart, Normalization::Smart);
    let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
    let mut buf = Vec::new();
    let mut best = Best { heap: BinaryHeap::new(), limit: options.limit.max(1) };
    let started = Instant::now();
    let (mut visited, mut capped, mut reported_at) = (0usize, false, None::<Instant>);
    let update = |best: &Best, visited: usize, done: bool, capped: bool| SearchUpdate {
        hits: best.sorted(),
        visited: u32::try_from(visited).unwrap_or(u32::MAX),
        done,
        capped,
    };

    for entry in walker {
        if cancel.is_cancelled() {
            break;
        }
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        visited += 1;
        if visited > options.max_files {
            capped = true;
            break;
        }
        let relative = relative_to(&roots, entry.path());
        let score = if query.trim().is_empty() {
            Some(0)
        } else {
            pattern.score(Utf32Str::new(&relative, &mut buf), &mut matcher)
        };
        if let Some(score) = score {
            best.push(score, relative, entry.path().to_string_lossy().into_owned());
        }
        let due = match reported_at {
            None => {
                !best.heap.is_empty()
                    && (best.heap.len() >= best.limit || started.elapsed() >= options.first_report)
            }
            Some(at) => at.elapsed() >= options.report_every,
        };
        if due && !best.heap.is_empty() {
            report(&update(&best, visited, false, false));
            reported_at = Some(Instant::now());
        }
    }
    let last = update(&best, visited.min(options.max_files), true, capped);
    report(&last);
    Ok(last)
}

/// The path below the root that holds it (roots may nest: the deepest wins).
fn relative_to(roots: &[&PathBuf], path: &Path) -> String {
    let rel = roots
        .iter()
        .filter_map(|r| path.strip_prefix(r).ok())
        .min_by_key(|p| p.components().count())
        .unwrap_or(path);
    rel.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(root: &Path, rel: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, rel).unwrap();
    }

    fn names(update: &SearchUpdate) -> Vec<&str> {
        update.hits.iter().map(|h| h.relative.as_str()).collect()
    }

    fn run(roots: &[PathBuf], query: &str, options: &SearchOptions) -> SearchUpdate {
        search(roots, query, options, &CancellationToken::new(), |_| {}).unwrap()
    }

    #[test]
    fn fuzzy_ranking_prefers_tight_matches_in_names() {
        let dir = tempfile::tempdir().unwrap();
        for rel in ["src/agent/turn.rs", "src/agent/rounds.rs", "docs/tutorial_notes.md", "src/main.rs"] {
            touch(dir.path(), rel);
        }
        let roots = [dir.path().to_path_buf()];
        let found = run(&roots, "turn", &SearchOptions::default());
        assert_eq!(names(&found)[0], "src/agent/turn.rs");
        assert!(!names(&found).contains(&"src/main.rs"));
        // Letters in order across folders match too ("sa/rou" -> src/agent/rounds.rs).
        assert_eq!(names(&run(&roots, "sagrou", &SearchOptions::default())), ["src/agent/rounds.rs"]);
        assert!(found.done && !found.capped);
        assert_eq!(found.visited, 4);
        // No query: every file, shortest paths first.
        assert_eq!(names(&run(&roots, "", &SearchOptions::default()))[0], "src/main.rs");
    }

    #[test]
    fn ignore_rules_and_build_folders_are_respected() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".gitignore"), "*.secret\ngenerated/\n").unwrap();
        for rel in [
            "keep.rs",
            "key.secret",
            "generated/out.rs",
            "node_modules/pkg/index.js",
            "target/debug/build.rs",
            ".hidden/config.rs",
            "app/sub/.gitignore",
        ] {
            touch(dir.path(), rel);
        }
        std::fs::write(dir.path().join("app/sub/.gitignore"), "local.rs\n").unwrap();
        touch(dir.path(), "app/sub/local.rs");
        touch(dir.path(), "app/sub/shared.rs");
        let found = run(&[dir.path().to_path_buf()], "", &SearchOptions::default());
        let mut got = names(&found);
        got.sort();
        assert_eq!(got, ["app/sub/shared.rs", "keep.rs"]);
    }

    #[test]
    fn a_large_tree_reports_early_stops_at_the_cap_and_can_be_cancelled() {
        let dir = tempfile::tempdir().unwrap();
        // 20,000 files in 200 folders, one of them the file looked for.
        for d in 0..200 {
            let folder = dir.path().join(format!("pkg{d:03}/src"));
            std::fs::create_dir_all(&folder).unwrap();
            for f in 0..100 {
                std::fs::write(folder.join(format!("module_{f:03}.txt")), b"x").unwrap();
            }
        }
        std::fs::write(dir.path().join("pkg123/src/module_042.txt"), b"the one").unwrap();
        let roots = [dir.path().to_path_buf()];
        let options = SearchOptions { first_report: Duration::ZERO, ..SearchOptions::default() };
        let mut reports = Vec::new();
        let last =
            search(&roots, "pkg123 mod042", &options, &CancellationToken::new(), |u| reports.push(u.clone()))
                .unwrap();
        assert_eq!(last.visited, 20_000);
        assert_eq!(last.hits[0].relative, "pkg123/src/module_042.txt");
        assert!(last.hits.len() <= options.limit);
        // Results came before the walk ended, and the last report is the final one.
        assert!(reports.len() >= 2 && !reports[0].done && reports[0].visited < 20_000, "{}", reports.len());
        assert_eq!(reports.last(), Some(&last));

        let capped = run(&roots, "module", &SearchOptions { max_files: 5_000, ..options.clone() });
        assert!(capped.capped && capped.done);
        assert_eq!(capped.visited, 5_000);

        // A newer search cancels the older one: the older stops early.
        let picker = Picker::default();
        let old = picker.begin();
        let mut seen = 0;
        let cancelled = search(&roots, "module", &options, &old, |u| {
            seen += 1;
            if seen == 1 {
                let _newer = picker.begin();
            }
            assert!(u.visited < 20_000);
        })
        .unwrap();
        assert!(old.is_cancelled() && cancelled.done && cancelled.visited < 20_000);
    }

    #[test]
    fn no_usable_folder_is_a_clear_error() {
        let err = search(
            &[PathBuf::from("/nonexistent/perch")],
            "x",
            &SearchOptions::default(),
            &CancellationToken::new(),
            |_| {},
        )
        .unwrap_err();
        assert!(matches!(err, FilesError::NoRoots));
    }
}
