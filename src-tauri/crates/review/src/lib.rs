//! perch-review: reviews pushed from the editor or a coding agent over a local socket (see perch-ipc for the
//! protocol): the server, applying pushes to the current review, checking file references,
//! and opening them in the user's editor.

pub mod document;
pub mod editor;
pub mod references;
pub mod server;
mod service;

use std::path::{Path, PathBuf};

pub use service::{CommitOutcome, ReviewDocument, ReviewError, ReviewService, ReviewVersion, SharedReviews};

/// Where Perch serves reviews: `$XDG_RUNTIME_DIR/perch/review.sock`, else in the data dir
/// (a per-user named pipe on Windows).
pub fn socket_path(data_dir: &Path) -> PathBuf {
    #[cfg(windows)]
    {
        let _ = data_dir;
        PathBuf::from(perch_ipc::default_pipe_name())
    }
    #[cfg(not(windows))]
    {
        perch_ipc::runtime_socket_path().unwrap_or_else(|| data_dir.join(perch_ipc::SOCKET_NAME))
    }
}

/// Records the socket's path in the data dir for clients that cannot see the runtime dir.
pub fn write_discovery_file(data_dir: &Path, socket: &Path) -> std::io::Result<()> {
    let file = data_dir.join(perch_ipc::DISCOVERY_FILE);
    let body = serde_json::json!({ "path": socket, "pid": std::process::id() }).to_string();
    std::fs::write(&file, body)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

/// Removes the discovery file if it still names this process's socket.
pub fn remove_discovery_file(data_dir: &Path) {
    let file = data_dir.join(perch_ipc::DISCOVERY_FILE);
    let ours = std::fs::read_to_string(&file)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v.get("pid").and_then(serde_json::Value::as_u64))
        == Some(u64::from(std::process::id()));
    if ours {
        let _ = std::fs::remove_file(file);
    }
}
