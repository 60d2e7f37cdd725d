//! File references in reviews: finding them in markdown and resolving them safely.
//!
//! Three forms are references: rustdoc-style [`src/auth.rs:45`][] and [`src/auth.rs:45-60`][],
//! and links such as [the check](src/auth.rs:45). A reference resolves only to an existing file
//! inside the review's base folder, after following symlinks; anything else is broken and is
//! never opened.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

/// `path:line` or `path:start-end`; the path has no spaces, backticks, brackets or parentheses.
const TARGET: &str = r"([^\s`\[\]()<>]+?):(\d+)(?:-(\d+))?";

static RUSTDOC: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!(r"\[`{TARGET}`\]\[\]")).expect("valid pattern"));
static LINK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!(r"\]\({TARGET}\)")).expect("valid pattern"));

/// A reference as written, and what it resolved to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct FileReference {
    /// Exactly as written, e.g. `src/auth.rs:45-60`; the UI looks references up by it.
    pub target: String,
    pub path: String,
    pub line: u32,
    pub end_line: Option<u32>,
    /// Why it cannot be opened, when it cannot.
    pub problem: Option<String>,
}

impl FileReference {
    pub fn is_ok(&self) -> bool {
        self.problem.is_none()
    }
}

/// Every distinct reference in `markdown`, in order of first appearance, not yet checked.
pub fn extract(markdown: &str) -> Vec<FileReference> {
    // References inside code blocks are code, not links.
    let markdown = super::document::without_fenced_code(markdown);
    let mut found: Vec<(usize, FileReference)> = Vec::new();
    for re in [&*RUSTDOC, &*LINK] {
        for caps in re.captures_iter(&markdown) {
            let (Some(whole), Some(path), Some(line)) = (caps.get(0), caps.get(1), caps.get(2)) else {
                continue;
            };
            // `https://host:8080)` would look like a path with a line; schemes are not files.
            if path.as_str().contains("://") {
                continue;
            }
            let Ok(line) = line.as_str().parse::<u32>() else { continue };
            let end_line = caps.get(3).and_then(|m| m.as_str().parse::<u32>().ok());
            let target = match end_line {
                Some(end) => format!("{}:{line}-{end}", path.as_str()),
                None => format!("{}:{line}", path.as_str()),
            };
            let path = path.as_str().to_owned();
            found.push((whole.start(), FileReference { target, path, line, end_line, problem: None }));
        }
    }
    found.sort_by_key(|(at, _)| *at);
    let mut out: Vec<FileReference> = Vec::new();
    for (_, reference) in found {
        if !out.iter().any(|o| o.target == reference.target) {
            out.push(reference);
        }
    }
    out
}

/// Why a reference cannot be opened (its card shows the sentence).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReferenceError {
    #[error("the base folder {0:?} is not an absolute path")]
    BaseNotAbsolute(String),
    #[error("the base folder {} does not exist", .0.display())]
    BaseMissing(PathBuf),
    #[error("the base folder {} is not a folder", .0.display())]
    BaseNotAFolder(PathBuf),
    #[error("{0} does not exist")]
    Missing(String),
    #[error("{path} is outside {bases}")]
    Outside { path: String, bases: String },
    #[error("{0} is not a file")]
    NotAFile(String),
    #[error("line numbers start at 1")]
    LineZero,
    #[error("{target} is not a reference in this {source_name}")]
    Unknown { target: String, source_name: &'static str },
    #[error("files open from {0}, and none is set")]
    NoFolders(&'static str),
    #[error("none of your folders exists (Settings -> Tools -> Folders)")]
    FoldersMissing,
    #[error("the references could not be checked: {0}")]
    Interrupted(String),
}

/// The base folder of a review: a path or a `file://` URI naming an existing folder.
pub fn base_dir(base_uri: &str) -> Result<PathBuf, ReferenceError> {
    let raw = base_uri.trim();
    let path = match raw.strip_prefix("file://") {
        Some(rest) => PathBuf::from(percent_decode(rest)),
        None => PathBuf::from(raw),
    };
    if !path.is_absolute() {
        return Err(ReferenceError::BaseNotAbsolute(raw.to_owned()));
    }
    let canonical = path.canonicalize().map_err(|_| ReferenceError::BaseMissing(path.clone()))?;
    if !canonical.is_dir() {
        return Err(ReferenceError::BaseNotAFolder(path));
    }
    Ok(canonical)
}

/// Resolves `path` against the canonical `base`: the file must exist and lie inside `base`
/// once `..` and symlinks are followed.
pub fn resolve(base: &Path, path: &str) -> Result<PathBuf, ReferenceError> {
    resolve_in(std::slice::from_ref(&base.to_path_buf()), path, "the review's folder")
}

/// Resolves `path` inside one of the canonical `bases` (the first that holds it), with the
/// same checks as [`resolve`]; `bases_name` says what they are when the file is outside all.
pub fn resolve_in(bases: &[PathBuf], path: &str, bases_name: &str) -> Result<PathBuf, ReferenceError> {
    let outside = || ReferenceError::Outside { path: path.to_owned(), bases: bases_name.to_owned() };
    let mut first_problem = None;
    for base in bases {
        let found =
            base.join(path).canonicalize().map_err(|_| ReferenceError::Missing(path.to_owned())).and_then(
                |file| {
                    if !file.starts_with(base) {
                        Err(outside())
                    } else if !file.is_file() {
                        Err(ReferenceError::NotAFile(path.to_owned()))
                    } else {
                        Ok(file)
                    }
                },
            );
        match found {
            Ok(file) => return Ok(file),
            Err(problem) => {
                first_problem.get_or_insert(problem);
            }
        }
    }
    Err(first_problem.unwrap_or_else(outside))
}

/// Extracts and resolves every reference of a review. Blocking (file system).
pub fn check_all(markdown: &str, base_uri: &str) -> Vec<FileReference> {
    let base = base_dir(base_uri);
    extract(markdown)
        .into_iter()
        .map(|mut reference| {
            reference.problem = match &base {
                Err(e) => Some(e.to_string()),
                Ok(_) if reference.line == 0 => Some(ReferenceError::LineZero.to_string()),
                Ok(base) => resolve(base, &reference.path).err().map(|e| e.to_string()),
            };
            reference
        })
        .collect()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(byte) = s.get(i + 1..i + 3).and_then(|hex| u8::from_str_radix(hex, 16).ok())
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_three_forms_are_found_once_each_in_order() {
        let md = "See [`src/auth.rs:45`][] and [`src/auth.rs:45`][] again, the [range](lib/x.ts:10-20), \
                  [`README.md:1-3`][], but not `src/no.rs:9` alone, [web](https://host:8080) or [`a b.rs:1`][].\n\
                  ```\n[`in/code.rs:1`][]\n```\n";
        let targets: Vec<String> = extract(md).into_iter().map(|r| r.target).collect();
        assert_eq!(targets, ["src/auth.rs:45", "lib/x.ts:10-20", "README.md:1-3"]);
        let r = &extract(md)[1];
        assert_eq!((r.path.as_str(), r.line, r.end_line), ("lib/x.ts", 10, Some(20)));
    }

    /// The vectors the UI's renderer is tested against too (`ui/src/lib/fileRefs.test.tsx`).
    #[test]
    fn the_shared_test_vectors_find_the_same_references_as_the_ui() {
        let text = include_str!("../../../../tests/fixtures/file_references.json");
        let fixture: serde_json::Value = serde_json::from_str(text).unwrap();
        for case in fixture["cases"].as_array().unwrap() {
            let markdown = case["markdown"].as_str().unwrap();
            let expected: Vec<&str> =
                case["targets"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
            let found: Vec<String> = extract(markdown).into_iter().map(|r| r.target).collect();
            assert_eq!(found, expected, "{markdown}");
        }
    }

    #[test]
    fn references_resolve_inside_the_base_only() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().join("repo");
        std::fs::create_dir_all(base.join("src")).unwrap();
        std::fs::write(base.join("src/main.rs"), "fn main() {}").unwrap();
        std::fs::write(tmp.path().join("secret.txt"), "no").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(tmp.path().join("secret.txt"), base.join("link.txt")).unwrap();
        let base = base_dir(base.to_str().unwrap()).unwrap();

        assert!(resolve(&base, "src/main.rs").is_ok());
        assert!(resolve(&base, "./src/../src/main.rs").is_ok());
        let outside = |r: Result<PathBuf, ReferenceError>| matches!(r, Err(ReferenceError::Outside { .. }));
        assert!(outside(resolve(&base, "../secret.txt")));
        assert!(outside(resolve(&base, tmp.path().join("secret.txt").to_str().unwrap())));
        #[cfg(unix)]
        assert!(outside(resolve(&base, "link.txt")), "symlinks out are refused");
        assert_eq!(resolve(&base, "src/missing.rs"), Err(ReferenceError::Missing("src/missing.rs".into())));
        assert_eq!(resolve(&base, "src"), Err(ReferenceError::NotAFile("src".into())));
    }

    #[test]
    fn base_uris_may_be_file_urls_but_must_be_absolute_folders() {
        let tmp = tempfile::tempdir().unwrap();
        let spaced = tmp.path().join("my repo");
        std::fs::create_dir(&spaced).unwrap();
        let url = format!("file://{}", spaced.display()).replace(' ', "%20");
        assert_eq!(base_dir(&url).unwrap(), spaced.canonicalize().unwrap());
        assert!(matches!(base_dir("relative/dir"), Err(ReferenceError::BaseNotAbsolute(_))));
        let gone = base_dir("/no/such/folder/anywhere").unwrap_err();
        assert!(
            matches!(gone, ReferenceError::BaseMissing(_)) && gone.to_string().contains("does not exist")
        );
    }

    #[test]
    fn check_all_reports_each_problem() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a.rs"), "").unwrap();
        let refs = check_all("[`a.rs:3`][] [`b.rs:1`][] [`a.rs:0`][]", tmp.path().to_str().unwrap());
        assert!(refs[0].is_ok());
        assert!(refs[1].problem.as_deref().unwrap().contains("does not exist"));
        assert!(refs[2].problem.as_deref().unwrap().contains("start at 1"));
        let refs = check_all("[`a.rs:3`][]", "/definitely/not/here");
        assert!(refs[0].problem.as_deref().unwrap().contains("base folder"));
    }
}
