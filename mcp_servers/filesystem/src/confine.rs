//! Keeps every path the model names inside one folder (the root).
//!
//! A path is first normalized lexically (so `sub/../../x` cannot sneak past as text), then
//! the part of it that exists is canonicalized, which resolves symbolic links, and must still
//! lie under the canonical root. The part that does not exist yet cannot be a link, so it is
//! appended as plain names. Callers then act on the resolved path, never on the text they
//! were given, so the OS never re-interprets a `..` after a link.
//!
//! This does not guard against races: a link swapped in between the check and the operation
//! is not caught. The server runs for one user on their own machine, so that is acceptable.

use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

/// The folder the server is confined to, canonical.
#[derive(Debug, Clone)]
pub struct Root {
    path: PathBuf,
}

impl Root {
    /// Opens `dir` as the root; it must be an existing folder.
    pub fn new(dir: &Path) -> Result<Self, String> {
        let path = std::fs::canonicalize(dir)
            .map_err(|e| format!("cannot use {} as the root folder: {e}", dir.display()))?;
        if !path.is_dir() {
            return Err(format!("cannot use {} as the root folder: it is not a folder", dir.display()));
        }
        Ok(Self { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Resolves `requested` (relative to the root, or absolute inside it) to a real path inside
    /// the root, following symbolic links. An empty path means the root itself.
    pub fn resolve(&self, requested: &str) -> Result<PathBuf, String> {
        self.real(&self.lexical(requested)?, requested)
    }

    /// Resolves the folder holding `requested` but keeps its last name as given, so that the
    /// entry itself (a link, say) is what gets moved or renamed, not what it points to.
    pub fn resolve_entry(&self, requested: &str) -> Result<PathBuf, String> {
        let lexical = self.lexical(requested)?;
        match (lexical.parent(), lexical.file_name()) {
            (Some(parent), Some(name)) if lexical != self.path => {
                Ok(self.real(parent, requested)?.join(name))
            }
            _ => Err(format!("{requested} is the allowed folder itself, which cannot be moved or renamed")),
        }
    }

    /// Canonicalizes the existing part of `lexical` and appends the rest, refusing a result
    /// outside the root. `requested` is what the caller asked for, for messages.
    fn real(&self, lexical: &Path, requested: &str) -> Result<PathBuf, String> {
        let mut existing = lexical;
        let mut missing = Vec::new();
        let anchor = loop {
            match std::fs::canonicalize(existing) {
                Ok(real) => break real,
                // Nothing there: look at the parent, and append this name afterwards.
                Err(_) if std::fs::symlink_metadata(existing).is_err() => {
                    let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
                        return Err(format!("cannot resolve {requested}"));
                    };
                    missing.push(name.to_owned());
                    existing = parent;
                }
                // Something is there but does not resolve: a link to nowhere (writing through
                // it would create its target, wherever that is) or an unreadable folder.
                Err(e) => {
                    let link = std::fs::symlink_metadata(existing).is_ok_and(|m| m.is_symlink());
                    let why = if link && e.kind() == ErrorKind::NotFound {
                        format!("{} is a symbolic link to something that does not exist", existing.display())
                    } else {
                        describe(&e, existing)
                    };
                    return Err(format!("cannot resolve {requested}: {why}"));
                }
            }
        };
        if !anchor.starts_with(&self.path) {
            return Err(format!(
                "{requested} leads outside the allowed folder {} through a symbolic link",
                self.path.display()
            ));
        }
        Ok(missing.into_iter().rev().fold(anchor, |path, name| path.join(name)))
    }

    /// Joins `requested` onto the root and removes `.` and `..` as text, refusing anything that
    /// ends up outside the root.
    fn lexical(&self, requested: &str) -> Result<PathBuf, String> {
        if requested.contains('\0') {
            return Err(format!("{requested:?} is not a valid path"));
        }
        let mut path = PathBuf::new();
        for component in self.path.join(requested).components() {
            match component {
                Component::CurDir => {}
                Component::ParentDir => {
                    path.pop();
                }
                other => path.push(other),
            }
        }
        if !path.starts_with(&self.path) {
            return Err(format!("{requested} is outside the allowed folder {}", self.path.display()));
        }
        Ok(path)
    }
}

/// A short reason for an I/O error on `path`, without the OS error number.
pub fn describe(error: &std::io::Error, path: &Path) -> String {
    match error.kind() {
        ErrorKind::NotFound => format!("{} does not exist", path.display()),
        ErrorKind::PermissionDenied => format!("permission denied for {}", path.display()),
        _ => format!("{}: {error}", path.display()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn setup() -> (tempfile::TempDir, Root) {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("root/sub")).unwrap();
        std::fs::create_dir_all(tmp.path().join("outside")).unwrap();
        std::fs::write(tmp.path().join("root/sub/a.txt"), "a").unwrap();
        let root = Root::new(&tmp.path().join("root")).unwrap();
        (tmp, root)
    }

    #[test]
    fn relative_paths_resolve_inside_the_root() {
        let (_tmp, root) = setup();
        assert_eq!(root.resolve("sub/a.txt").unwrap(), root.path().join("sub/a.txt"));
        assert_eq!(root.resolve("./sub/../sub/a.txt").unwrap(), root.path().join("sub/a.txt"));
        assert_eq!(root.resolve("").unwrap(), root.path());
        assert_eq!(root.resolve(".").unwrap(), root.path());
    }

    #[test]
    fn missing_paths_resolve_through_their_nearest_existing_folder() {
        let (_tmp, root) = setup();
        assert_eq!(root.resolve("sub/new/deeper.txt").unwrap(), root.path().join("sub/new/deeper.txt"));
        assert_eq!(root.resolve("new").unwrap(), root.path().join("new"));
    }

    #[test]
    fn absolute_paths_are_accepted_only_inside_the_root() {
        let (tmp, root) = setup();
        let inside = root.path().join("sub/a.txt");
        assert_eq!(root.resolve(inside.to_str().unwrap()).unwrap(), inside);
        let outside = tmp.path().join("outside");
        let err = root.resolve(outside.to_str().unwrap()).unwrap_err();
        assert!(err.contains("is outside the allowed folder"), "{err}");
        assert!(root.resolve("/etc/passwd").unwrap_err().contains("is outside the allowed folder"));
    }

    #[test]
    fn dot_dot_cannot_climb_out() {
        let (_tmp, root) = setup();
        for path in ["..", "../outside", "sub/../../x", "sub/../../root-sibling/a"] {
            let err = root.resolve(path).unwrap_err();
            assert!(err.starts_with(path) && err.contains("is outside the allowed folder"), "{err}");
        }
        // Climbing out and back in lands inside, which is fine.
        let name = root.path().file_name().unwrap().to_str().unwrap();
        assert_eq!(root.resolve(&format!("../{name}/sub")).unwrap(), root.path().join("sub"));
    }

    #[cfg(unix)]
    #[test]
    fn symbolic_links_out_of_the_root_are_refused() {
        let (tmp, root) = setup();
        std::os::unix::fs::symlink(tmp.path().join("outside"), root.path().join("escape")).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("outside/new.txt"), root.path().join("dangling")).unwrap();
        std::os::unix::fs::symlink(root.path().join("sub"), root.path().join("inner")).unwrap();
        for path in ["escape", "escape/x.txt", "escape/deeper/x.txt"] {
            let err = root.resolve(path).unwrap_err();
            assert!(
                err.contains("leads outside the allowed folder") && err.contains("symbolic link"),
                "{err}"
            );
        }
        assert!(root.resolve("dangling").unwrap_err().contains("cannot resolve dangling"));
        assert_eq!(root.resolve("inner/a.txt").unwrap(), root.path().join("sub/a.txt"));
        // `escape/..` is taken as text, so it means the root, never the outside folder's parent.
        assert_eq!(root.resolve("escape/..").unwrap(), root.path());
        // The entry itself can be named (to move or rename the link), but not gone through.
        assert_eq!(root.resolve_entry("escape").unwrap(), root.path().join("escape"));
        assert!(root.resolve_entry("escape/x.txt").is_err());
    }

    #[test]
    fn the_root_itself_is_not_an_entry() {
        let (_tmp, root) = setup();
        assert!(root.resolve_entry(".").unwrap_err().contains("the allowed folder itself"));
        assert!(root.resolve_entry("sub/..").unwrap_err().contains("the allowed folder itself"));
        assert_eq!(root.resolve_entry("sub/a.txt").unwrap(), root.path().join("sub/a.txt"));
    }
}
