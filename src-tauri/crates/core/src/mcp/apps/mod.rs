//! MCP Apps (the `io.modelcontextprotocol/ui` extension, stable spec 2026-01-26): a tool that
//! comes with its own small HTML interface, which Perch shows in the tool's card inside a
//! sandboxed frame. This module is the engine's half and knows nothing of the window:
//! - what a tool declares (`_meta.ui`: the `ui://` resource and who may call it, [`ToolUi`]);
//! - reading and checking the resource ([`resource`]), kept for the next card ([`cache`]), and
//!   the Content Security Policy the frame gets from what the resource declares ([`csp`]);
//! - the open frames ([`sessions`]): each a random token the desktop serves the page under once,
//!   and what an app may ask of its own server (tools whose visibility includes the app, its
//!   resources) with the limits that stop a runaway app.
//!
//! The desktop serves the page and relays the app's requests; the UI's bridge speaks the
//! postMessage protocol. An app's tool call goes through the same approval gate as a model's
//! (`agent::app_calls`).

pub mod cache;
pub mod csp;
pub mod resource;
pub mod sessions;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The extension's identifier, in capabilities.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The only media type an app's page may have.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The longest `ui://` address Perch takes.
const MAX_URI: usize = 2048;

/// What Perch tells a server it supports: pages of the one media type apps use.
pub fn client_extension() -> Value {
    serde_json::json!({ "mimeTypes": [MIME_TYPE] })
}

/// What a tool's `_meta.ui` says (or the older flat `_meta["ui/resourceUri"]`, which hosts must
/// still read): its interface, if it has one, and who may call it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ToolUi {
    /// The `ui://` resource with its page; `None` for a tool with no page of its own (one only
    /// apps call, say).
    pub resource_uri: Option<String>,
    /// The model may call the tool (visibility includes "model"); false for tools only apps
    /// call, which are never offered to a model.
    pub model: bool,
    /// An app of the same server may call it (visibility includes "app").
    pub app: bool,
}

impl ToolUi {
    /// Reads a tool's `_meta`; `None` when it says nothing about apps. A page address Perch
    /// refuses (not `ui://`, too long) is dropped, and the tool has no page.
    pub fn from_meta(meta: Option<&Map<String, Value>>) -> Option<Self> {
        let meta = meta?;
        let ui = meta.get("ui").and_then(Value::as_object);
        let uri = ui
            .and_then(|u| u.get("resourceUri"))
            .or_else(|| meta.get("ui/resourceUri"))
            .and_then(Value::as_str);
        let resource_uri = uri
            .filter(|uri| {
                let ok =
                    uri.starts_with("ui://") && uri.len() <= MAX_URI && !uri.chars().any(char::is_control);
                if !ok {
                    tracing::debug!(uri, "a tool's interface is not a ui:// resource Perch takes");
                }
                ok
            })
            .map(str::to_owned);
        // The default is both; a list that is not a list of strings is read as the default too,
        // except that an empty list (or one with neither word) hides the tool from the model
        // and from apps alike, as written.
        let visibility = ui.and_then(|u| u.get("visibility")).and_then(Value::as_array);
        if resource_uri.is_none() && visibility.is_none() {
            return None;
        }
        let (model, app) = match visibility {
            Some(list) => {
                let has = |word: &str| list.iter().any(|v| v.as_str() == Some(word));
                (has("model"), has("app"))
            }
            None => (true, true),
        };
        Some(Self { resource_uri, model, app })
    }
}

/// Whether the model may be offered a tool (every tool without an interface, and those whose
/// interface's visibility includes the model).
pub fn model_may_call(ui: Option<&ToolUi>) -> bool {
    ui.is_none_or(|u| u.model)
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
    fn a_tool_interface_is_read_from_the_new_key_and_the_legacy_one() {
        let new = meta(json!({ "ui": { "resourceUri": "ui://clock/app.html" } }));
        assert_eq!(
            ToolUi::from_meta(Some(&new)),
            Some(ToolUi { resource_uri: Some("ui://clock/app.html".into()), model: true, app: true })
        );
        let legacy = meta(json!({ "ui/resourceUri": "ui://clock/old.html" }));
        assert_eq!(
            ToolUi::from_meta(Some(&legacy)).unwrap().resource_uri.as_deref(),
            Some("ui://clock/old.html")
        );
        // The new key wins when both are there (the SDK writes both, the same).
        let both = meta(json!({ "ui": { "resourceUri": "ui://a" }, "ui/resourceUri": "ui://b" }));
        assert_eq!(ToolUi::from_meta(Some(&both)).unwrap().resource_uri.as_deref(), Some("ui://a"));
    }

    #[test]
    fn anything_but_a_ui_address_is_an_ordinary_tool() {
        for uri in ["https://evil.example/app.html", "file:///etc/passwd", "UI://x", "ui://a\nb", ""] {
            let m = meta(json!({ "ui": { "resourceUri": uri } }));
            assert_eq!(ToolUi::from_meta(Some(&m)), None, "{uri:?}");
        }
        let long = meta(json!({ "ui": { "resourceUri": format!("ui://{}", "a".repeat(3000)) } }));
        assert_eq!(ToolUi::from_meta(Some(&long)), None);
        assert_eq!(ToolUi::from_meta(Some(&meta(json!({ "ui": { "resourceUri": 5 } })))), None);
        assert_eq!(ToolUi::from_meta(None), None);
        // A refused page with a visibility: the visibility stands, without a page.
        let m = meta(json!({ "ui": { "resourceUri": "https://x", "visibility": ["app"] } }));
        assert_eq!(ToolUi::from_meta(Some(&m)), Some(ToolUi { resource_uri: None, model: false, app: true }));
    }

    #[test]
    fn visibility_decides_who_may_call() {
        let with = |v: Value| {
            ToolUi::from_meta(Some(&meta(json!({ "ui": { "resourceUri": "ui://x", "visibility": v } }))))
                .unwrap()
        };
        // No page, only who may call it: an app-only helper tool.
        let helper = ToolUi::from_meta(Some(&meta(json!({ "ui": { "visibility": ["app"] } })))).unwrap();
        assert!(helper.resource_uri.is_none() && !helper.model && helper.app);
        let app_only = with(json!(["app"]));
        assert!(!app_only.model && app_only.app);
        assert!(!model_may_call(Some(&app_only)), "an app-only tool is never offered to the model");
        let model_only = with(json!(["model"]));
        assert!(model_only.model && !model_only.app);
        let neither = with(json!([]));
        assert!(!neither.model && !neither.app);
        // Not a list: the default.
        assert!(with(json!("app")).model);
        assert!(model_may_call(None));
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
