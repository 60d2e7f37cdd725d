//! The review socket's protocol: newline-delimited JSON between Perch (the server) and the
//! programs that push reviews to it (the review MCP bridge, `perch review`, editors).
//!
//! Request: `{"id": ..., "type": "present_review" | "get_selection" | "ping" | "show" | "toggle"
//! | "screenshot" | "update_check" | "update_apply" | "connections_changed", "payload": {...}}`
//! Response: `{"id": ..., "success": bool, "data"?: ..., "error"?: "..."}`
//!
//! Both ends use this crate, so what the server accepts is exactly what clients send.

mod client;
mod discovery;
mod protocol;

pub use client::{Client, ClientError};
#[cfg(windows)]
pub use discovery::default_pipe_name;
pub use discovery::{
    DISCOVERY_FILE, ENV_PATH, SOCKET_NAME, default_data_dir, discovery_candidates, runtime_socket_path,
};
pub use protocol::{
    AppCommand, Command, Limits, Mode, PresentReview, ProtocolError, Request, Response, ScreenshotMode,
    parse_request,
};
