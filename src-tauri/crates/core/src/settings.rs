//! Typed settings over the `settings` table.
//!
//! Each top-level field is one row (key = field name, value = JSON). Loading is forgiving:
//! unknown keys are ignored and a value that does not fit its field falls back to the
//! default with a warning, so a hand-edited or older database never stops the app.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio::sync::RwLock;

pub use crate::providers::settings::{
    BaseUrl, CompatibleServer, DEFAULT_OLLAMA_URL, NotAnHttpUrl, ProviderSettings, ollama_host_to_url,
};
use crate::store::{Store, StoreError};
use crate::window_state::{HiddenSettings, WindowPlacement};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ThemePreference {
    /// Follow the operating system's light or dark setting.
    #[default]
    System,
    Light,
    Dark,
}

/// Which models appear in the model selector, and the one new chats start with.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct ModelSettings {
    /// `provider:model` ids; empty means every model that is available.
    pub enabled: Vec<String>,
    pub default_model: Option<String>,
    /// Show the model's reasoning where it can (thinking models).
    pub thinking: bool,
    /// The user's corrections to the shipped price table (USD per million tokens).
    pub prices: Vec<crate::prices::Price>,
}

/// Settings -> Reviews.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct ReviewSettings {
    /// Serve the review socket at all.
    pub socket_enabled: bool,
    /// Show the window (leaving mini mode) when a review arrives.
    pub auto_show: bool,
    /// How to open `{file}` at `{line}`; empty means the detected default.
    pub editor_command: String,
    pub max_content_chars: u32,
    pub max_line_bytes: u32,
    /// Seconds a client may take to send a complete request.
    pub idle_timeout_secs: u32,
}

impl Default for ReviewSettings {
    fn default() -> Self {
        Self {
            socket_enabled: true,
            auto_show: true,
            editor_command: String::new(),
            max_content_chars: 100_000,
            max_line_bytes: 1 << 20,
            idle_timeout_secs: 30,
        }
    }
}

/// What a rule decides for the tools it matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum RuleDecision {
    Allow,
    Ask,
    Deny,
}

/// `server:tool`, where either part may be `*` (`demo:*`, `*:read_file`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
pub struct ToolRule {
    pub pattern: String,
    pub decision: RuleDecision,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum RetrieverChoice {
    /// The best available: the embedded model when downloaded, else Ollama's embeddings, else BM25.
    #[default]
    Auto,
    MiniLm,
    Ollama,
    Bm25,
}

/// Settings -> Tools.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct ToolSettings {
    /// Offer MCP tools to models at all.
    pub enabled: bool,
    /// Tool rounds in one answer before Perch stops the model.
    pub max_rounds: u32,
    /// A tool result longer than this is cut, with a note to the model.
    pub max_result_chars: u32,
    /// Skip tools when images are attached (small vision models confuse the two).
    pub skip_with_images: bool,
    /// Run tools their server marks read-only without asking.
    pub allow_read_only: bool,
    /// Checked deny, then ask, then allow.
    pub rules: Vec<ToolRule>,
    /// How many tools the model sees when more are enabled.
    pub top_k: u32,
    /// `server:tool` names always offered.
    pub always_on: Vec<String>,
    pub retriever: RetrieverChoice,
    /// Ollama's embedding model, for the Ollama retriever.
    pub ollama_embedding_model: String,
    /// Folders servers may work in (MCP roots).
    pub roots: Vec<String>,
    /// Perch's client ID metadata document, the client ID it signs in to MCP servers with where
    /// their authorization server takes one (else it registers). A fork hosts its own.
    pub client_metadata_url: String,
    /// Show tools' own interfaces (MCP Apps) in their cards; off, every result is text.
    pub apps: bool,
    /// Servers whose apps are not shown (their results are text, and they are told Perch has
    /// no apps, so they may offer text-only tools instead).
    pub apps_off: Vec<String>,
}

impl ToolSettings {
    /// Whether a server's apps are shown.
    pub fn apps_for(&self, server: &str) -> bool {
        self.apps && !self.apps_off.iter().any(|s| s == server)
    }
}

/// Where the project serves `docs/oauth/client-metadata.json` (GitHub Pages of the repository).
pub const CLIENT_METADATA_URL: &str = "https://perch-app.github.io/perch/oauth/client-metadata.json";

impl Default for ToolSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            max_rounds: 30,
            max_result_chars: 20_000,
            skip_with_images: true,
            allow_read_only: false,
            rules: Vec::new(),
            top_k: 8,
            // The terminal's interactive trio is offered with every message (while the
            // terminal is on), so a command the model starts can always be followed up.
            always_on: ["run_command", "read_output", "send_input"]
                .map(|t| format!("{}:{t}", crate::terminal::settings::SERVER))
                .to_vec(),
            retriever: RetrieverChoice::Auto,
            ollama_embedding_model: "all-minilm".into(),
            roots: Vec::new(),
            client_metadata_url: CLIENT_METADATA_URL.into(),
            apps: true,
            apps_off: Vec::new(),
        }
    }
}

/// Settings -> Memories.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct MemorySettings {
    /// The model may propose memories (the `remember` tool) and is given the kept ones that a
    /// question is about. Off, neither: the memories stay on the page until the user forgets them.
    pub enabled: bool,
    /// Models that do not run on this computer (a cloud provider, Ollama elsewhere) are given
    /// memories too. Off by default: memories are personal.
    pub cloud: bool,
}

impl Default for MemorySettings {
    fn default() -> Self {
        Self { enabled: true, cloud: false }
    }
}

// No `#[serde(default)]`: `from_rows` always starts from a complete default object, so
// every field is present when deserializing, and the UI's type has no optional fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Settings {
    pub theme: ThemePreference,
    /// The UI's language (a BCP 47 tag, `zh-CN`), chosen in Settings -> General; `None` follows
    /// the system's locale. The model is told it too.
    pub language: Option<String>,
    /// The UI's text size in percent of the normal size (100 to 200), chosen in Settings ->
    /// General -> Appearance or with Ctrl+= and Ctrl+-.
    pub text_size: u16,
    pub providers: ProviderSettings,
    pub models: ModelSettings,
    /// The window's mode and bounds, restored at start.
    pub window: WindowPlacement,
    /// What Perch gives back while its window is hidden.
    pub hidden: HiddenSettings,
    pub review: ReviewSettings,
    pub tools: ToolSettings,
    pub memories: MemorySettings,
    /// Settings -> Models -> Local.
    pub local: crate::local::LocalSettings,
    /// Screenshots: the mode, the shortcuts, the size for the model.
    pub capture: crate::capture::CaptureSettings,
    pub voice: crate::voice::VoiceSettings,
    /// Settings -> Voice, reading aloud.
    pub speech: crate::speech::SpeechSettings,
    pub terminal: crate::terminal::TerminalSettings,
    /// Settings -> General -> Updates.
    pub updates: UpdateSettings,
    /// Whether "start at login" was offered after a first answer (once, whatever the user
    /// chose; the switch in Settings -> General stays). Whether Perch starts at login is the
    /// autostart entry itself (`autostart`), not a setting.
    pub start_at_login_offered: bool,
}

/// Settings -> General -> Updates. Checking only asks whether there is a newer Perch: nothing
/// is downloaded or installed without the user's yes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct UpdateSettings {
    /// Look for a newer Perch at start (and once a day while it runs), unless the connection
    /// is reported metered.
    pub check_at_start: bool,
}

impl Default for UpdateSettings {
    fn default() -> Self {
        Self { check_at_start: true }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            theme: ThemePreference::default(),
            language: None,
            text_size: 100,
            providers: ProviderSettings::default(),
            models: ModelSettings { thinking: true, ..ModelSettings::default() },
            window: WindowPlacement::default(),
            hidden: HiddenSettings::default(),
            review: ReviewSettings::default(),
            tools: ToolSettings::default(),
            memories: MemorySettings::default(),
            local: crate::local::LocalSettings::default(),
            capture: crate::capture::CaptureSettings::default(),
            voice: crate::voice::VoiceSettings::default(),
            speech: crate::speech::SpeechSettings::default(),
            terminal: crate::terminal::TerminalSettings::default(),
            updates: UpdateSettings::default(),
            start_at_login_offered: false,
        }
    }
}

impl Settings {
    /// Builds settings from stored rows, keeping defaults for unknown, unreadable or invalid values.
    pub fn from_rows(rows: impl IntoIterator<Item = (String, String)>) -> Self {
        let Value::Object(mut fields) = to_value(&Settings::default()) else {
            unreachable!("Settings serializes to an object")
        };
        for (key, text) in rows {
            if !fields.contains_key(&key) {
                tracing::debug!(%key, "ignoring an unknown setting");
                continue;
            }
            let value = match serde_json::from_str::<Value>(&text) {
                Ok(v) => v,
                Err(e) => {
                    tracing::warn!(%key, error = %e, "setting is not valid JSON; using the default");
                    continue;
                }
            };
            let previous = fields.insert(key.clone(), value);
            if let Err(e) = serde_json::from_value::<Settings>(Value::Object(fields.clone())) {
                tracing::warn!(%key, error = %e, "setting has an invalid value; using the default");
                if let Some(previous) = previous {
                    fields.insert(key, previous);
                }
            }
        }
        serde_json::from_value(Value::Object(fields)).unwrap_or_default()
    }

    /// The rows whose values differ between `self` and `other`, as (key, JSON text).
    fn changed_rows(&self, other: &Settings) -> Vec<(String, String)> {
        let (Value::Object(old), Value::Object(new)) = (to_value(other), to_value(self)) else {
            return Vec::new();
        };
        changed(&old, &new)
    }
}

fn to_value(settings: &Settings) -> Value {
    serde_json::to_value(settings).unwrap_or(Value::Null)
}

fn changed(old: &Map<String, Value>, new: &Map<String, Value>) -> Vec<(String, String)> {
    new.iter().filter(|(k, v)| old.get(*k) != Some(v)).map(|(k, v)| (k.clone(), v.to_string())).collect()
}

/// Applies an edit that a form made to its copy of one section (`base`: what the form
/// loaded; `edited`: what it saves) to the section as it is `now`. What the edit changed
/// wins, field by field (nested objects merged the same way, lists and values whole); every
/// other field keeps `now`'s value, so a change made elsewhere meanwhile (a rule granted on
/// a card, the folder chosen on one, a model picked in the chat) is never saved over.
pub fn merge_edit<T: Serialize + serde::de::DeserializeOwned>(now: &T, base: &T, edited: &T) -> T {
    fn merge(now: &mut Value, base: &Value, edited: &Value) {
        let (Value::Object(now), Value::Object(base), Value::Object(edited)) = (now, base, edited) else {
            return;
        };
        let keys: std::collections::BTreeSet<&String> = base.keys().chain(edited.keys()).collect();
        for key in keys {
            match (base.get(key), edited.get(key)) {
                (b, e) if b == e => {}
                (Some(b @ Value::Object(_)), Some(e @ Value::Object(_)))
                    if now.get(key).is_some_and(Value::is_object) =>
                {
                    if let Some(n) = now.get_mut(key) {
                        merge(n, b, e);
                    }
                }
                (_, Some(e)) => {
                    now.insert(key.clone(), e.clone());
                }
                (_, None) => {
                    now.remove(key);
                }
            }
        }
    }
    let value = |t: &T| serde_json::to_value(t).unwrap_or(Value::Null);
    let mut merged = value(now);
    merge(&mut merged, &value(base), &value(edited));
    // Both sides are the same type, so the merge is one too; were it not, the edit as sent.
    serde_json::from_value(merged)
        .unwrap_or_else(|_| serde_json::from_value(value(edited)).expect("a value read back as its own type"))
}

/// The live settings, shared by the app: reads are cheap, updates write only changed rows.
#[derive(Debug)]
pub struct SettingsHandle {
    store: Store,
    current: RwLock<Settings>,
}

impl SettingsHandle {
    pub async fn load(store: Store) -> Result<Self, StoreError> {
        let current = Settings::from_rows(store.setting_rows().await?);
        Ok(Self { store, current: RwLock::new(current) })
    }

    pub async fn get(&self) -> Settings {
        self.current.read().await.clone()
    }

    /// Applies `change` and persists the fields it changed. Returns the new settings.
    pub async fn update(&self, change: impl FnOnce(&mut Settings)) -> Result<Settings, StoreError> {
        let mut guard = self.current.write().await;
        let mut next = guard.clone();
        change(&mut next);
        for (key, json) in next.changed_rows(&guard) {
            self.store.put_setting(&key, json).await?;
        }
        *guard = next.clone();
        Ok(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The document the project serves must name itself as the client, be the settings'
    /// default, and allow the loopback redirect Perch uses (any port, RFC 8252 section 7.3).
    #[test]
    fn perchs_client_metadata_document_matches_what_perch_sends() {
        let document: Value =
            serde_json::from_str(include_str!("../../../../docs/oauth/client-metadata.json")).unwrap();
        assert_eq!(document["client_id"], CLIENT_METADATA_URL);
        assert_eq!(document["application_type"], "native");
        assert_eq!(document["token_endpoint_auth_method"], "none");
        let redirect = format!("http://127.0.0.1{}", perch_oauth::loopback::CALLBACK_PATH);
        assert_eq!(document["redirect_uris"], serde_json::json!([redirect]));
    }

    fn row(k: &str, v: &str) -> (String, String) {
        (k.to_owned(), v.to_owned())
    }

    #[test]
    fn an_edit_from_a_stale_form_keeps_what_changed_elsewhere() {
        // The form loaded the tools with no rules; meanwhile a card granted one.
        let base = ToolSettings::default();
        let mut now = base.clone();
        now.rules.push(ToolRule { pattern: "web:fetch".into(), decision: RuleDecision::Allow });
        now.top_k = 5;
        // The form then turns one checkbox off, sending its whole stale copy.
        let mut edited = base.clone();
        edited.allow_read_only = true;
        let merged = merge_edit(&now, &base, &edited);
        assert!(merged.allow_read_only, "the edit is saved");
        assert_eq!(merged.rules, now.rules, "the rule granted meanwhile is kept");
        assert_eq!(merged.top_k, 5, "a value changed elsewhere is kept");

        // A field both changed: the edit wins, as the user just made it.
        edited.top_k = 12;
        assert_eq!(merge_edit(&now, &base, &edited).top_k, 12);
        // A list the edit changed is taken whole, even emptied.
        let mut emptied = base.clone();
        emptied.always_on.clear();
        let merged = merge_edit(&now, &base, &emptied);
        assert!(merged.always_on.is_empty());
        assert_eq!(merged.rules, now.rules);
    }

    #[test]
    fn nested_edits_merge_field_by_field() {
        let base = Settings::default();
        let mut now = base.clone();
        now.tools.rules.push(ToolRule { pattern: "*".into(), decision: RuleDecision::Deny });
        let mut edited = base.clone();
        edited.tools.enabled = false;
        edited.theme = ThemePreference::Dark;
        let merged = merge_edit(&now, &base, &edited);
        assert!(!merged.tools.enabled);
        assert_eq!(merged.theme, ThemePreference::Dark);
        assert_eq!(merged.tools.rules.len(), 1, "the nested change made elsewhere is kept");
        // No edit at all: nothing changes.
        assert_eq!(merge_edit(&now, &base, &base), now);
    }

    #[test]
    fn unknown_keys_are_ignored_and_known_ones_read() {
        let s = Settings::from_rows([row("theme", "\"dark\""), row("from_the_future", "42")]);
        assert_eq!(s.theme, ThemePreference::Dark);
        assert_eq!(s.providers.ollama_url.as_str(), DEFAULT_OLLAMA_URL);
    }

    #[test]
    fn invalid_values_fall_back_to_defaults_without_touching_others() {
        let s = Settings::from_rows([
            row("theme", "\"purple\""),
            row("providers", r#"{"ollama_url": "ftp://nope"}"#),
            row("window", "{not json"),
        ]);
        assert_eq!(s, Settings::default());

        let s = Settings::from_rows([row("theme", "\"light\""), row("providers", "17")]);
        assert_eq!(s.theme, ThemePreference::Light);
        assert_eq!(s.providers.ollama_url.as_str(), DEFAULT_OLLAMA_URL);
    }

    #[test]
    fn only_changed_fields_become_rows() {
        let old = Settings::default();
        let mut new = old.clone();
        new.theme = ThemePreference::Dark;
        assert_eq!(new.changed_rows(&old), vec![row("theme", "\"dark\"")]);
    }
}
