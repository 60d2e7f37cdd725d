//! Edits of the user's `mcp_servers.json` made outside Perch (in an editor) take effect while
//! Perch runs: a broken file fixed and saved is read again within seconds, with no restart.
//!
//! The file is looked at every two seconds (its modification time and length): one `stat` of
//! one small file costs nothing next to an inotify watcher and its thread, and catches an editor
//! that replaces the file as well as one that writes it in place. Perch's own edits (Settings ->
//! MCP, add-server links) reload at once and record what they wrote, so they are not read twice.

use std::path::Path;
use std::sync::Weak;
use std::time::{Duration, SystemTime};

use super::McpManager;

const LOOKED_AT_EVERY: Duration = Duration::from_secs(2);

/// What tells one version of the file from another; `None` when there is no file.
pub(super) type Seen = Option<(SystemTime, u64)>;

pub(super) fn seen(path: &Path) -> Seen {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// Reloads the configuration whenever the file changes, until the manager closes or is dropped.
pub(super) fn watch(manager: Weak<McpManager>, path: std::path::PathBuf) {
    let Ok(rt) = tokio::runtime::Handle::try_current() else { return };
    let Some(closing) = manager.upgrade().map(|m| m.shared.closing.clone()) else { return };
    rt.spawn(async move {
        loop {
            tokio::select! {
                () = closing.cancelled() => break,
                () = tokio::time::sleep(LOOKED_AT_EVERY) => {}
            }
            let Some(manager) = manager.upgrade() else { break };
            if seen(&path) != *manager.seen_file() {
                tracing::info!(file = %path.display(), "the MCP servers file changed; reading it again");
                manager.reload().await;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewrite_of_the_same_length_is_a_new_version_and_no_file_is_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp_servers.json");
        assert_eq!(seen(&path), None);
        std::fs::write(&path, "{\"mcpServers\": {}}").unwrap();
        let first = seen(&path);
        assert!(first.is_some());
        // An editor saving a one-character fix: same length, later time.
        let earlier = SystemTime::now() - Duration::from_secs(10);
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(earlier).unwrap();
        let backdated = seen(&path);
        std::fs::write(&path, "{\"mcpServers\": []}").unwrap();
        assert_ne!(seen(&path), backdated);
        assert_eq!(seen(&path).map(|(_, len)| len), first.map(|(_, len)| len));
    }
}
