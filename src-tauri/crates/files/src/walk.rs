//! The one walk over the user's folders, for the `@` picker's search and the terminal's
//! `find_files`: the `ignore` crate (ripgrep's walker), so `.gitignore` and `.ignore` rules hold
//! in every folder, git repository or not, and one list of folders that are never entered.

use std::path::Path;

/// Folders that hold version control data, build output or installed dependencies: never
/// entered, even without a `.gitignore` saying so.
pub const SKIPPED_FOLDERS: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    "build",
    "dist",
    "__pycache__",
    ".venv",
    "venv",
    ".tox",
    ".gradle",
    ".next",
    ".cache",
];

/// How a walk differs by use.
#[derive(Debug, Clone, Copy, Default)]
pub struct WalkOptions {
    /// Hidden files and folders (dotfiles) are visited too.
    pub hidden: bool,
    /// Folders deeper than this below a root are not entered.
    pub max_depth: Option<usize>,
    /// Each folder's entries in name order (a stable answer; costs a sort per folder).
    pub sorted: bool,
}

/// A walk of `roots` (at least one) that also never enters a folder `refused` names.
pub fn walk(
    roots: &[&Path],
    options: WalkOptions,
    refused: impl Fn(&Path) -> bool + Send + Sync + 'static,
) -> Option<ignore::Walk> {
    let (first, rest) = roots.split_first()?;
    let mut builder = ignore::WalkBuilder::new(first);
    for root in rest {
        builder.add(root);
    }
    builder.hidden(!options.hidden).max_depth(options.max_depth).require_git(false);
    if options.sorted {
        builder.sort_by_file_name(|a, b| a.cmp(b));
    }
    builder.filter_entry(move |entry| {
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        !(is_dir && (SKIPPED_FOLDERS.iter().any(|s| entry.file_name() == *s) || refused(entry.path())))
    });
    Some(builder.build())
}
