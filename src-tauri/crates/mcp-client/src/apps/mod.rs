//! MCP Apps (the `io.modelcontextprotocol/ui` extension, stable spec 2026-01-26): a tool that
//! comes with its own small HTML interface, which Perch shows in the tool's card inside a
//! sandboxed frame. This module is the engine's half and knows nothing of the window:
//! - what a tool declares (`_meta.ui`: the `ui://` resource and who may call it, [`ToolUi`]);
//! - reading and checking the resource ([`resource`]), kept for the next card ([`cache`]), and
//!   the Content Security Policy the frame gets from what the resource declares ([`csp`]);
//! - the open frames ([`sessions`]): each a random token the desktop serves the page under once,
//!   and what an app may ask of its own server (tools whose visibility includes the app, its
//!   resources) with the limits that stop a runaway app;
//! - when Perch stops the open apps on its own: the page grew past its budget, or hung
//!   ([`watch`]).
//!
//! The desktop serves the page and relays the app's requests; the UI's bridge speaks the
//! postMessage protocol. An app's tool call goes through the same approval gate as a model's
//! (`perch_core::engine::app_calls`).

pub mod cache;
pub mod csp;
pub mod resource;
pub mod sessions;
pub mod watch;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The extension's identifier, in capabilities.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The only media type an app's page may have.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The longest `ui://` address Perch takes.
pub use perch_tools::view::{ToolUi, model_may_call};

/// What Perch tells a server it supports: pages of the one media type apps use.
pub fn client_extension() -> Value {
    serde_json::json!({ "mimeTypes": [MIME_TYPE] })
}

/// What a resource's `_meta.ui` declares: the network origins its page needs, and whether it
/// wants a border.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ResourceUi {
    /// `connect-src`: what its scripts may fetch.
    pub connect_domains: Vec<String>,
    /// Scripts, styles, images, fonts and media from these origins.
    pub resource_domains: Vec<String>,
    /// Nested frames it asked for (never granted; kept to say so).
    pub frame_domains: Vec<String>,
    pub prefers_border: Option<bool>,
}

impl ResourceUi {
    /// Reads `_meta.ui` of a listing entry or of a read's content item; `None` when absent.
    pub fn from_meta(meta: Option<&Map<String, Value>>) -> Option<Self> {
        let ui = meta?.get("ui")?.as_object()?;
        let csp = ui.get("csp").and_then(Value::as_object);
        let list = |key: &str| -> Vec<String> {
            csp.and_then(|c| c.get(key))
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).map(str::to_owned).take(64).collect())
                .unwrap_or_default()
        };
        Some(Self {
            connect_domains: list("connectDomains"),
            resource_domains: list("resourceDomains"),
            frame_domains: list("frameDomains"),
            prefers_border: ui.get("prefersBorder").and_then(Value::as_bool),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn meta(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn resource_metadata_keeps_domains_and_the_border_wish() {
        let m = meta(json!({ "ui": {
            "csp": { "connectDomains": ["https://api.example.com", 7], "resourceDomains": ["https://cdn.example.com"] },
            "prefersBorder": false
        } }));
        let ui = ResourceUi::from_meta(Some(&m)).unwrap();
        assert_eq!(ui.connect_domains, vec!["https://api.example.com"]);
        assert_eq!(ui.resource_domains, vec!["https://cdn.example.com"]);
        assert_eq!(ui.prefers_border, Some(false));
        assert_eq!(ResourceUi::from_meta(Some(&meta(json!({ "other": 1 })))), None);
    }
}
