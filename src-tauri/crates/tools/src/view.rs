//! What a tool is, as every source of tools describes it to Perch: its name, schema and hints
//! ([`ToolView`]), and its own interface when it has one (MCP Apps, [`ToolUi`]).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The longest `ui://` address a tool may name for its page.
const MAX_URI: usize = 2048;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ToolView {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub input_schema: Value,
    /// The server says the tool changes nothing.
    pub read_only: bool,
    /// The server says a call may destroy or send something (delete, send mail): it is asked
    /// about at every call, unless its arguments match `harmless_when`.
    pub destructive: bool,
    /// Arguments (a JSON Schema, the tool's `_meta` `app.perch/harmlessWhen`) with which a call
    /// of this destructive tool changes only the user's own things: an event with no guest to
    /// email (the bundled Google server's). It can only make a call that is asked about at
    /// every call an ordinary one, which the server could have said of the tool as a whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harmless_when: Option<Value>,
    /// Its own interface (MCP Apps), and whether the model and its app may call it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ui: Option<ToolUi>,
}

/// The tool `_meta` key that holds [`ToolView::harmless_when`].
pub const HARMLESS_WHEN_META: &str = "app.perch/harmlessWhen";

impl ToolView {
    /// Whether a call with `arguments` may destroy or send something: the tool says so, and the
    /// arguments are not among those it names harmless. A schema that does not compile names
    /// none.
    pub fn destructive_for(&self, arguments: &Value) -> bool {
        let harmless = self
            .harmless_when
            .as_ref()
            .and_then(|schema| jsonschema::validator_for(schema).ok())
            .is_some_and(|schema| schema.is_valid(arguments));
        self.destructive && !harmless
    }
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
}
