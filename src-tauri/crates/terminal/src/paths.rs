//! Paths as the blocklist compares them: made absolute against the working folder, with `.`,
//! `..` and repeated slashes resolved lexically (the target may not exist yet, and a symlink
//! cannot move a path out of the sandbox's reach, which Landlock enforces on the real file).

use std::path::{Component, Path, PathBuf};

/// `text` resolved against `cwd`; `None` when it is relative and the folder is unknown.
pub fn resolve(text: &str, cwd: Option<&Path>, home: &Path) -> Option<PathBuf> {
    let text = if text == "~" {
        home.display().to_string()
    } else if let Some(rest) = text.strip_prefix("~/") {
        format!("{}/{rest}", home.display())
    } else {
        text.to_owned()
    };
    let path = Path::new(&text);
    let joined = if path.is_absolute() { path.to_path_buf() } else { cwd?.join(path) };
    Some(normalise(&joined))
}

/// Lexical normalisation: `/a//b/./c/../d` -> `/a/b/d`; `..` above the root stays at the root.
pub fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                if !out.pop() || out.as_os_str().is_empty() {
                    out.push("/");
                }
            }
            Component::CurDir => {}
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() { PathBuf::from("/") } else { out }
}

/// One level of brace expansion (`/{bin,etc}` -> `/bin`, `/etc`), at most 64 results.
pub fn expand_braces(text: &str) -> Vec<String> {
    let (Some(open), Some(close)) = (text.find('{'), text.find('}')) else { return vec![text.to_owned()] };
    if close < open || !text[open..close].contains(',') {
        return vec![text.to_owned()];
    }
    let (head, inner, tail) = (&text[..open], &text[open + 1..close], &text[close + 1..]);
    inner
        .split(',')
        .take(64)
        .flat_map(|part| expand_braces(&format!("{head}{part}{tail}")))
        .take(64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_made_absolute_and_tidied() {
        let home = Path::new("/home/u");
        let cwd = Some(Path::new("/work/p"));
        assert_eq!(resolve("~", cwd, home).unwrap(), Path::new("/home/u"));
        assert_eq!(resolve("~/.ssh/../.ssh//id", cwd, home).unwrap(), Path::new("/home/u/.ssh/id"));
        assert_eq!(resolve("../../..", cwd, home).unwrap(), Path::new("/"));
        assert_eq!(resolve("///usr/./bin/", cwd, home).unwrap(), Path::new("/usr/bin"));
        assert_eq!(resolve("x", None, home), None);
        assert_eq!(expand_braces("/{bin,etc}/x"), ["/bin/x", "/etc/x"]);
    }
}
