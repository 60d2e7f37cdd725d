//! Where the review socket is. Perch writes its path in three places a client can look:
//! `PERCH_IPC_PATH` (for processes Perch starts), a fixed name in the user's runtime dir, and
//! a discovery file in the data dir (for systems without a runtime dir).

use std::path::PathBuf;

/// Set in the environment of every process Perch starts.
pub const ENV_PATH: &str = "PERCH_IPC_PATH";
/// The socket's file name inside its folder.
pub const SOCKET_NAME: &str = "review.sock";
/// `{"path": "...", "pid": N}` in the data dir.
pub const DISCOVERY_FILE: &str = "review-socket.json";
const APP_DIR_NAME: &str = "perch";

/// `$XDG_RUNTIME_DIR/perch/review.sock`, when the runtime dir is set.
pub fn runtime_socket_path() -> Option<PathBuf> {
    let runtime = std::env::var_os("XDG_RUNTIME_DIR").filter(|v| !v.is_empty())?;
    Some(PathBuf::from(runtime).join(APP_DIR_NAME).join(SOCKET_NAME))
}

/// The data dir a client can know without Perch's help: `PERCH_DATA_DIR`, else the OS default.
pub fn default_data_dir() -> Option<PathBuf> {
    match std::env::var_os("PERCH_DATA_DIR").filter(|v| !v.is_empty()) {
        Some(dir) => Some(PathBuf::from(dir)),
        None => dirs::data_dir().map(|d| d.join(APP_DIR_NAME)),
    }
}

/// The socket paths to try, best first.
pub fn discovery_candidates() -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(path) = std::env::var_os(ENV_PATH).filter(|v| !v.is_empty()) {
        out.push(PathBuf::from(path));
    }
    if let Some(path) = runtime_socket_path() {
        out.push(path);
    }
    if let Some(from_file) = default_data_dir().and_then(|d| read_discovery_file(&d.join(DISCOVERY_FILE))) {
        out.push(from_file);
    }
    #[cfg(windows)]
    out.push(PathBuf::from(default_pipe_name()));
    out.dedup();
    out
}

fn read_discovery_file(file: &std::path::Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(file).ok()?;
    let value: serde_json::Value = serde_json::from_str(&text).ok()?;
    value.get("path")?.as_str().map(PathBuf::from)
}

/// The pipe Perch serves on Windows, per user.
#[cfg(windows)]
pub fn default_pipe_name() -> String {
    let user = std::env::var("USERNAME").unwrap_or_else(|_| "user".into());
    format!(r"\\.\pipe\perch-review-{user}")
}
