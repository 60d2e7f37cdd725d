// The app's command names, read from the `collect_commands![...]` list in `bindings.rs`, the
// one place they are written. `build.rs` includes this file to make each command a permission
// (`allow-<name>`); a test in `bindings.rs` checks the parse and the capabilities against it.
// (Plain comments: the file is also `include!`d, where inner doc comments are not allowed.)

/// The last path segment of each entry in the first `collect_commands![...]` of `source`.
pub fn commands_in(source: &str) -> Vec<&str> {
    const OPEN: &str = "collect_commands![";
    let Some(start) = source.find(OPEN).map(|i| i + OPEN.len()) else { return Vec::new() };
    let end = source[start..].find(']').map_or(source.len(), |e| start + e);
    source[start..end]
        .split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(|path| path.rsplit("::").next().unwrap_or(path))
        .collect()
}
