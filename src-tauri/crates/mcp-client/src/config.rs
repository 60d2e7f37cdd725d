//! Which MCP servers Perch knows: the bundled defaults (`mcp_servers/config/servers.json`,
//! compiled in) merged with the user's `mcp_servers.json` in the data dir. Both use the
//! `mcpServers` shape of Claude Desktop and other clients, so a user can paste theirs.
//!
//! Loading is per entry: a broken entry is reported with its file and line and the others
//! still load. A user entry overrides the bundled one of the same name field by field, so
//! `{"demo": {"enabled": false}}` turns the bundled demo off without repeating its command.
//! (Over 500 lines with its tests: one file format read, merged and checked entry by entry.)

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use perch_foundation::keys::Secret;

pub const BUNDLED: &str = include_str!("../../../../mcp_servers/config/servers.json");
pub const USER_FILE: &str = "mcp_servers.json";
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<String>,
    },
    Http {
        url: String,
        headers: BTreeMap<String, String>,
        /// How to sign in, when the server's authorization server wants a client of its own.
        oauth: Option<OAuthClient>,
    },
}

/// A client registered with a server's authorization server beforehand (`"oauth": {...}` in
/// the entry): used instead of a client ID metadata document or dynamic registration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "camelCase")]
pub struct OAuthClient {
    pub client_id: Option<String>,
    /// Never sent to the UI or written back by Perch: it stays where the user put it.
    #[serde(skip)]
    #[specta(skip)]
    pub client_secret: Option<Secret>,
    /// Scopes to ask for instead of those the server advertises.
    pub scopes: Option<Vec<String>>,
    /// The loopback port the registration's redirect URI names (otherwise a random one).
    pub redirect_port: Option<u16>,
}

/// One server, ready to start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct ServerConfig {
    pub name: String,
    pub transport: Transport,
    pub enabled: bool,
    /// Start with the app (otherwise from the dashboard, or on first use by the CLI).
    pub auto_start: bool,
    /// Seconds a tool call may take.
    pub timeout_secs: u32,
    /// Tools always offered to the model, whatever the top-K retrieval picks.
    pub always_on: Vec<String>,
    /// Shipped with Perch (removing it only turns it off).
    pub bundled: bool,
    /// Seconds without a call after which the server is stopped to free what it holds; its
    /// tools are still offered, from the lists it gave, and the next call starts it again. At
    /// launch such a server whose lists are saved from an earlier run waits for that call.
    /// 0: it runs as long as Perch does.
    pub stop_when_idle_secs: u32,
}

/// An entry or a file that could not be read, said so a person can fix it.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct ConfigProblem {
    pub file: String,
    pub line: u32,
    pub server: Option<String>,
    pub message: String,
}

/// Why an edit of the user's servers file (import, remove, turn on or off) was refused; nothing
/// is written when it fails.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The pasted text is not a JSON object of servers.
    #[error("{0}")]
    Paste(String),
    /// One server's entry cannot be used.
    #[error("server {server:?}: {reason}")]
    Entry { server: String, reason: String },
    /// The user's file exists but is not one Perch can edit without losing something.
    #[error("{path}: {reason}; fix or remove it before changing servers here")]
    UserFile { path: PathBuf, reason: String },
    #[error("there is no server named {0:?} in your servers file")]
    NotInUserFile(String),
    /// An add-server link names a server that exists: it may not replace it.
    #[error(
        "you already have a server named {existing:?}, and a link cannot replace a server (the rules and permissions you gave {existing:?} would apply to the link's program): remove {existing:?} in Settings -> MCP first if you mean to replace it, then open the link again"
    )]
    NameTaken { existing: String },
    #[error("could not {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl std::fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.server {
            Some(s) => write!(f, "{}, line {}: server {s:?}: {}", self.file, self.line, self.message),
            None => write!(f, "{}, line {}: {}", self.file, self.line, self.message),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, specta::Type)]
pub struct LoadedConfig {
    pub servers: Vec<ServerConfig>,
    pub problems: Vec<ConfigProblem>,
}

/// An entry as written, before merging: every field optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Entry {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    args: Option<Vec<String>>,
    env: Option<BTreeMap<String, String>>,
    cwd: Option<String>,
    url: Option<String>,
    headers: Option<BTreeMap<String, String>>,
    oauth: Option<OAuthEntry>,
    enabled: Option<bool>,
    /// Claude Desktop and others write this instead of `enabled`.
    disabled: Option<bool>,
    auto_start: Option<bool>,
    timeout: Option<f64>,
    always_on: Option<Vec<String>>,
    stop_when_idle: Option<f64>,
}

/// `"oauth"` as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct OAuthEntry {
    client_id: Option<String>,
    client_secret: Option<String>,
    scopes: Option<Vec<String>>,
    redirect_port: Option<u16>,
}

/// The raw entries of one file, each with the line it starts on.
struct Parsed {
    entries: Vec<(String, u32, Map<String, Value>)>,
    problems: Vec<ConfigProblem>,
}

fn parse_file(file: &str, text: &str) -> Parsed {
    #[derive(Deserialize)]
    struct Top<'a> {
        #[serde(rename = "mcpServers", alias = "servers", borrow)]
        servers: Option<BTreeMap<String, &'a RawValue>>,
    }
    let mut out = Parsed { entries: Vec::new(), problems: Vec::new() };
    if text.trim().is_empty() {
        return out;
    }
    let problem = |line: usize, server: Option<&str>, message: String| ConfigProblem {
        file: file.to_owned(),
        line: u32::try_from(line).unwrap_or(u32::MAX),
        server: server.map(str::to_owned),
        message,
    };
    let top: Top = match serde_json::from_str(text) {
        Ok(t) => t,
        Err(e) => {
            out.problems.push(problem(e.line(), None, format!("not valid JSON: {e}")));
            return out;
        }
    };
    let Some(servers) = top.servers else {
        out.problems.push(problem(1, None, "no \"mcpServers\" object".into()));
        return out;
    };
    for (name, raw) in servers {
        let line = line_of(text, raw.get());
        match serde_json::from_str::<Map<String, Value>>(raw.get()) {
            Ok(map) if valid_name(&name) => out.entries.push((name, line, map)),
            Ok(_) => out.problems.push(problem(
                line as usize,
                Some(&name),
                "names may use letters, digits, - and _ only".into(),
            )),
            Err(e) => out.problems.push(problem(line as usize, Some(&name), format!("not an object: {e}"))),
        }
    }
    out
}

/// Server names become part of tool names (`server__tool`), which providers restrict.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 40
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !name.contains("__")
}

/// The line on which `part` (a slice of `text`) starts.
fn line_of(text: &str, part: &str) -> u32 {
    let offset = (part.as_ptr() as usize).saturating_sub(text.as_ptr() as usize).min(text.len());
    u32::try_from(text[..offset].matches('\n').count() + 1).unwrap_or(u32::MAX)
}

/// Loads the bundled servers and the user's file (which may be absent).
pub fn load(data_dir: &Path) -> LoadedConfig {
    let user_path = data_dir.join(USER_FILE);
    let user_text = match std::fs::read_to_string(&user_path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            let mut loaded = load_texts(BUNDLED, None, &user_path);
            loaded.problems.push(ConfigProblem {
                file: user_path.display().to_string(),
                line: 0,
                server: None,
                message: format!("could not read it: {e}"),
            });
            return loaded;
        }
    };
    load_texts(BUNDLED, user_text.as_deref(), &user_path)
}

pub fn load_texts(bundled: &str, user: Option<&str>, user_path: &Path) -> LoadedConfig {
    let bundled = parse_file("bundled servers.json", bundled);
    let user_file = user_path.display().to_string();
    let user =
        user.map(|t| parse_file(&user_file, t)).unwrap_or(Parsed { entries: vec![], problems: vec![] });
    let mut loaded = LoadedConfig::default();
    loaded.problems.extend(bundled.problems);
    loaded.problems.extend(user.problems);

    let mut merged: BTreeMap<String, (String, u32, Map<String, Value>, bool)> = BTreeMap::new();
    for (name, line, map) in bundled.entries {
        merged.insert(name, ("bundled servers.json".into(), line, map, true));
    }
    for (name, line, map) in user.entries {
        match merged.get_mut(&name) {
            Some((file, at, base, _)) => {
                // The user's fields win; a new command or url replaces the whole transport.
                if map.contains_key("command") || map.contains_key("url") {
                    for key in ["command", "args", "env", "cwd", "url", "headers", "oauth", "type"] {
                        base.remove(key);
                    }
                }
                base.extend(map);
                (*file, *at) = (user_file.clone(), line);
            }
            None => {
                merged.insert(name, (user_file.clone(), line, map, false));
            }
        }
    }
    for (name, (file, line, map, bundled)) in merged {
        match to_server(&name, map, bundled) {
            Ok(server) => loaded.servers.push(server),
            Err(e) => {
                loaded.problems.push(ConfigProblem {
                    file,
                    line,
                    server: Some(name),
                    message: e.to_string(),
                });
            }
        }
    }
    loaded
}

/// What is wrong with one server's entry.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
enum EntryError {
    /// A field of the wrong type, or an unknown one (serde's message).
    #[error("{0}")]
    Shape(String),
    #[error(
        "the old SSE transport is not supported; use the server's Streamable HTTP endpoint (\"type\": \"http\")"
    )]
    Sse,
    #[error("\"command\" is empty")]
    EmptyCommand,
    #[error("\"url\" must start with http:// or https:// (it is {0:?})")]
    NotHttp(String),
    #[error("\"oauth\" has a \"clientSecret\" without its \"clientId\"")]
    SecretWithoutId,
    #[error("give either \"command\" or \"url\", not both")]
    Both,
    #[error("needs a \"command\" (stdio) or a \"url\" (Streamable HTTP)")]
    Neither,
    #[error("unknown \"type\" {0:?}; use \"stdio\" or \"http\"")]
    UnknownType(String),
    #[error("\"timeout\" is in seconds and at least 1 (it is {0})")]
    Timeout(f64),
    #[error("\"stopWhenIdle\" is in seconds, 0 to keep the server running (it is {0})")]
    StopWhenIdle(f64),
}

fn to_server(name: &str, map: Map<String, Value>, bundled: bool) -> Result<ServerConfig, EntryError> {
    let entry: Entry =
        serde_json::from_value(Value::Object(map)).map_err(|e| EntryError::Shape(e.to_string()))?;
    let kind = entry.kind.as_deref().map(str::to_ascii_lowercase);
    let transport = match (kind.as_deref(), entry.command, entry.url) {
        (Some("sse"), _, _) => {
            return Err(EntryError::Sse);
        }
        (Some("stdio") | None, Some(command), None) => {
            if command.trim().is_empty() {
                return Err(EntryError::EmptyCommand);
            }
            Transport::Stdio {
                command: expand(&command),
                args: entry.args.unwrap_or_default().iter().map(|a| expand(a)).collect(),
                env: entry.env.unwrap_or_default().into_iter().map(|(k, v)| (k, expand(&v))).collect(),
                cwd: entry.cwd.map(|c| expand(&c)),
            }
        }
        (Some("http" | "streamable-http" | "streamablehttp") | None, None, Some(url)) => {
            let url = expand(&url);
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(EntryError::NotHttp(url));
            }
            let oauth = entry.oauth.map(|o| OAuthClient {
                client_id: o.client_id.map(|c| expand(&c)).filter(|c| !c.is_empty()),
                client_secret: o.client_secret.map(|c| expand(&c)).filter(|c| !c.is_empty()).map(Secret::new),
                scopes: o.scopes,
                redirect_port: o.redirect_port,
            });
            if oauth.as_ref().is_some_and(|o| o.client_secret.is_some() && o.client_id.is_none()) {
                return Err(EntryError::SecretWithoutId);
            }
            Transport::Http { url, headers: entry.headers.unwrap_or_default(), oauth }
        }
        (_, Some(_), Some(_)) => return Err(EntryError::Both),
        (_, None, None) => return Err(EntryError::Neither),
        (Some(other), _, _) => return Err(EntryError::UnknownType(other.to_owned())),
    };
    let timeout = entry.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS as f64);
    if !(timeout.is_finite() && timeout >= 1.0) {
        return Err(EntryError::Timeout(timeout));
    }
    let idle = entry.stop_when_idle.unwrap_or(0.0);
    if !(idle.is_finite() && idle >= 0.0) {
        return Err(EntryError::StopWhenIdle(idle));
    }
    Ok(ServerConfig {
        name: name.to_owned(),
        transport,
        enabled: entry.enabled.unwrap_or(!entry.disabled.unwrap_or(false)),
        auto_start: entry.auto_start.unwrap_or(true),
        timeout_secs: timeout.min(86_400.0) as u32,
        always_on: entry.always_on.unwrap_or_default(),
        bundled,
        // At least a second, so a server is not stopped between two calls of one answer.
        stop_when_idle_secs: if idle == 0.0 { 0 } else { idle.clamp(1.0, 86_400.0) as u32 },
    })
}

/// `${HOME}` and other `${VAR}`s, and a leading `~/`, as a shell would expand them.
fn expand(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    if let Some(tail) = rest.strip_prefix("~/")
        && let Some(home) = dirs::home_dir()
    {
        out.push_str(&home.to_string_lossy());
        out.push('/');
        rest = tail;
    }
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start..].find('}') else { break };
        out.push_str(&rest[..start]);
        let var = &rest[start + 2..start + len];
        let value = match var {
            "HOME" => dirs::home_dir().map(|h| h.to_string_lossy().into_owned()),
            _ => std::env::var(var).ok(),
        };
        out.push_str(&value.unwrap_or_default());
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    out
}

/// The user's file as JSON (an empty `mcpServers` when absent), for the dashboard to edit.
fn read_user(data_dir: &Path) -> Result<Map<String, Value>, ConfigError> {
    let path = data_dir.join(USER_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) if !t.trim().is_empty() => t,
        Ok(_) => return Ok(Map::new()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(source) => return Err(ConfigError::Io { action: "read", path, source }),
    };
    let broken = |reason: String| ConfigError::UserFile { path: path.clone(), reason };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(mut top)) => match top.remove("mcpServers").or_else(|| top.remove("servers")) {
            Some(Value::Object(servers)) => Ok(servers),
            None => Ok(Map::new()),
            Some(_) => Err(broken("\"mcpServers\" is not an object".into())),
        },
        Ok(_) => Err(broken("the file is not a JSON object".into())),
        Err(e) => Err(broken(format!("line {}: not valid JSON ({e})", e.line()))),
    }
}

fn write_user(data_dir: &Path, servers: Map<String, Value>) -> Result<PathBuf, ConfigError> {
    let path = data_dir.join(USER_FILE);
    let mut top = Map::new();
    top.insert("mcpServers".into(), Value::Object(servers));
    // A map of JSON values always serialises.
    let text = serde_json::to_string_pretty(&Value::Object(top)).unwrap_or_default();
    let tmp = path.with_extension("json.tmp");
    match std::fs::write(&tmp, text + "\n").and_then(|()| std::fs::rename(&tmp, &path)) {
        Ok(()) => Ok(path),
        Err(source) => Err(ConfigError::Io { action: "write", path, source }),
    }
}

/// Whether an import may replace a server that exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Pasted JSON and the Add form: the user's own entry wins, as it would in their file.
    Replace,
    /// An add-server link: never a name in use, whose rules and grants would apply to it.
    Refuse,
}

/// The server, bundled or in the user's file (turned off or broken too), that `name` names
/// in any case, if any.
pub fn taken_name(data_dir: &Path, name: &str) -> Result<Option<String>, ConfigError> {
    let user = read_user(data_dir)?;
    let bundled = parse_file("bundled servers.json", BUNDLED).entries.into_iter().map(|(n, _, _)| n);
    Ok(user.keys().cloned().chain(bundled).find(|n| n.eq_ignore_ascii_case(name)))
}

/// Adds servers from pasted JSON (a whole `{"mcpServers": {...}}` file, or a bare
/// `{"name": {...}}` map), replacing ones with the same names only where `existing` allows.
/// Returns the names added. Nothing is written when any entry is bad or refused.
pub fn import(data_dir: &Path, pasted: &str, existing: Existing) -> Result<Vec<String>, ConfigError> {
    let value: Value = serde_json::from_str(pasted).map_err(|e| {
        ConfigError::Paste(format!("the pasted text is not valid JSON (line {}): {e}", e.line()))
    })?;
    let Value::Object(mut top) = value else { return Err(ConfigError::Paste("paste a JSON object".into())) };
    let servers = match top.remove("mcpServers").or_else(|| top.remove("servers")) {
        Some(Value::Object(s)) => s,
        Some(_) => return Err(ConfigError::Paste("\"mcpServers\" is not an object".into())),
        None => top,
    };
    if servers.is_empty() {
        return Err(ConfigError::Paste("the pasted JSON names no servers".into()));
    }
    for (name, entry) in &servers {
        let bad = |reason: &str| ConfigError::Entry { server: name.clone(), reason: reason.into() };
        if !valid_name(name) {
            return Err(bad("names may use letters, digits, - and _ only"));
        }
        let Value::Object(map) = entry else { return Err(bad("is not an object")) };
        to_server(name, map.clone(), false).map_err(|e| bad(&e.to_string()))?;
    }
    if existing == Existing::Refuse {
        for name in servers.keys() {
            if let Some(existing) = taken_name(data_dir, name)? {
                return Err(ConfigError::NameTaken { existing });
            }
        }
    }
    let mut user = read_user(data_dir)?;
    let names: Vec<String> = servers.keys().cloned().collect();
    user.extend(servers);
    write_user(data_dir, user)?;
    Ok(names)
}

/// Removes a server the user added; a bundled one is turned off instead.
pub fn remove(data_dir: &Path, name: &str, bundled: bool) -> Result<(), ConfigError> {
    let mut user = read_user(data_dir)?;
    if bundled {
        user.insert(name.to_owned(), serde_json::json!({ "enabled": false }));
    } else if user.remove(name).is_none() {
        return Err(ConfigError::NotInUserFile(name.to_owned()));
    }
    write_user(data_dir, user).map(|_| ())
}

/// Turns a server on or off (kept in the user's file).
pub fn set_enabled(data_dir: &Path, name: &str, enabled: bool) -> Result<(), ConfigError> {
    let mut user = read_user(data_dir)?;
    let entry = user.entry(name.to_owned()).or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(map) = entry {
        map.remove("disabled");
        map.insert("enabled".into(), Value::Bool(enabled));
    }
    write_user(data_dir, user).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load_user(user: &str) -> LoadedConfig {
        load_texts(BUNDLED, Some(user), Path::new("/data/mcp_servers.json"))
    }

    #[test]
    fn the_bundled_servers_load_and_are_on() {
        let loaded = load_texts(BUNDLED, None, Path::new("/x"));
        assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
        let names: Vec<&str> = loaded.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["demo", "filesystem", "google", "web"]);
        assert!(
            loaded.servers.iter().all(|s| s.enabled && s.auto_start && s.bundled && s.timeout_secs == 60)
        );
        // They hold nothing between calls: stopped when idle, started again on use.
        assert!(loaded.servers.iter().all(|s| s.stop_when_idle_secs == 120));
    }

    #[test]
    fn stop_when_idle_is_seconds_and_zero_keeps_the_server_running() {
        let loaded = load_user(
            r#"{"mcpServers": {"a": {"command": "x", "stopWhenIdle": 0.2}, "b": {"command": "x"},
                "c": {"command": "x", "stopWhenIdle": -5}, "demo": {"stopWhenIdle": 0}}}"#,
        );
        let idle = |name: &str| loaded.servers.iter().find(|s| s.name == name).map(|s| s.stop_when_idle_secs);
        assert_eq!((idle("a"), idle("b"), idle("demo")), (Some(1), Some(0), Some(0)));
        assert_eq!(idle("c"), None);
        assert!(
            loaded.problems.iter().any(|p| p.message.contains("\"stopWhenIdle\" is in seconds")),
            "{:?}",
            loaded.problems
        );
    }

    #[test]
    fn claude_desktop_files_load_with_stdio_and_http_servers() {
        let loaded = load_user(
            r#"{ "mcpServers": {
                "time": { "command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"} },
                "remote": { "type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"} },
                "off": { "command": "npx", "disabled": true, "timeout": 5, "alwaysOn": ["get_time"], "autoStart": false }
            } }"#,
        );
        assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
        let get = |n: &str| loaded.servers.iter().find(|s| s.name == n).unwrap();
        assert!(
            matches!(&get("time").transport, Transport::Stdio { command, env, .. } if command == "uvx" && env["TZ"] == "UTC")
        );
        assert!(
            matches!(&get("remote").transport, Transport::Http { url, .. } if url == "https://example.com/mcp")
        );
        let off = get("off");
        assert!(!off.enabled && !off.auto_start && !off.bundled);
        assert_eq!((off.timeout_secs, off.always_on.as_slice()), (5, ["get_time".to_owned()].as_slice()));
    }

    #[test]
    fn a_broken_entry_is_named_with_its_line_and_the_others_still_load() {
        let text = "{\n  \"mcpServers\": {\n    \"good\": { \"command\": \"x\" },\n    \"bad\": {\n      \"args\": [\"y\"]\n    },\n    \"worse\": 3\n  }\n}";
        let loaded = load_user(text);
        assert!(loaded.servers.iter().any(|s| s.name == "good"));
        assert!(loaded.servers.iter().any(|s| s.name == "demo"), "bundled servers still load");
        let bad = loaded.problems.iter().find(|p| p.server.as_deref() == Some("bad")).unwrap();
        assert_eq!((bad.line, bad.file.as_str()), (4, "/data/mcp_servers.json"));
        assert!(bad.message.contains("needs a \"command\""), "{}", bad.message);
        let worse = loaded.problems.iter().find(|p| p.server.as_deref() == Some("worse")).unwrap();
        assert_eq!(worse.line, 7);
    }

    #[test]
    fn a_file_that_is_not_json_is_named_with_its_line_and_the_bundled_servers_remain() {
        let loaded = load_user("{\n  \"mcpServers\": {\n    \"a\": { \"command\": \"x\", }\n  }\n}");
        assert_eq!(loaded.problems.len(), 1);
        assert_eq!(loaded.problems[0].line, 3);
        assert!(loaded.problems[0].to_string().starts_with("/data/mcp_servers.json, line 3: not valid JSON"));
        assert_eq!(loaded.servers.len(), 4);
    }

    #[test]
    fn user_entries_override_bundled_ones_field_by_field() {
        let loaded =
            load_user(r#"{"mcpServers": {"demo": {"enabled": false}, "filesystem": {"command": "other"}}}"#);
        let demo = loaded.servers.iter().find(|s| s.name == "demo").unwrap();
        assert!(!demo.enabled && demo.bundled);
        assert!(matches!(&demo.transport, Transport::Stdio { command, .. } if command == "perch-mcp-demo"));
        let fs = loaded.servers.iter().find(|s| s.name == "filesystem").unwrap();
        assert!(
            matches!(&fs.transport, Transport::Stdio { command, args, .. } if command == "other" && args.is_empty())
        );
    }

    #[test]
    fn bad_values_are_explained() {
        for (entry, says) in [
            (r#"{"type": "sse", "url": "http://x"}"#, "SSE"),
            (r#"{"url": "ftp://x"}"#, "http://"),
            (r#"{"command": "x", "url": "http://x"}"#, "not both"),
            (r#"{"command": "x", "timeout": 0}"#, "at least 1"),
            (r#"{"command": "x", "args": "notalist"}"#, "invalid type"),
        ] {
            let loaded = load_user(&format!(r#"{{"mcpServers": {{"s": {entry}}}}}"#));
            let p = loaded.problems.iter().find(|p| p.server.as_deref() == Some("s")).unwrap();
            assert!(p.message.contains(says), "{entry}: {}", p.message);
        }
        let loaded = load_user(r#"{"mcpServers": {"a__b": {"command": "x"}}}"#);
        assert!(loaded.problems[0].message.contains("letters, digits"));
    }

    #[test]
    fn home_and_variables_are_expanded() {
        let home = dirs::home_dir().unwrap().to_string_lossy().into_owned();
        assert_eq!(expand("${HOME}/x"), format!("{home}/x"));
        assert_eq!(expand("~/y"), format!("{home}/y"));
        assert_eq!(expand("${PERCH_SURELY_UNSET_VAR}z"), "z");
        assert_eq!(expand("a${b"), "a${b");
    }

    #[test]
    fn import_remove_and_toggle_edit_the_users_file() {
        let dir = tempfile::tempdir().unwrap();
        let time = r#"{"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}}"#;
        let names = import(dir.path(), time, Existing::Replace).unwrap();
        assert_eq!(names, ["time"]);
        import(dir.path(), r#"{"web": {"url": "http://127.0.0.1:1/mcp"}}"#, Existing::Replace).unwrap();
        let broken = import(dir.path(), r#"{"broken": {"args": []}}"#, Existing::Replace).unwrap_err();
        assert!(matches!(&broken, ConfigError::Entry { server, .. } if server == "broken"), "{broken:?}");
        assert!(
            matches!(import(dir.path(), "not json", Existing::Replace), Err(ConfigError::Paste(m)) if m.contains("not valid JSON"))
        );
        assert!(matches!(
            import(dir.path(), r#"{"a b": {"command": "x"}}"#, Existing::Replace),
            Err(ConfigError::Entry { .. })
        ));
        set_enabled(dir.path(), "demo", false).unwrap();
        remove(dir.path(), "time", false).unwrap();
        let loaded = load(dir.path());
        assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
        let names: Vec<&str> = loaded.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["demo", "filesystem", "google", "web"]);
        assert!(!loaded.servers[0].enabled);
        assert!(
            matches!(remove(dir.path(), "time", false), Err(ConfigError::NotInUserFile(n)) if n == "time")
        );
    }

    #[test]
    fn a_broken_users_file_is_never_overwritten_by_an_edit() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(USER_FILE);
        std::fs::write(&file, "{\n  \"mcpServers\": {,\n}").unwrap();
        let err = set_enabled(dir.path(), "demo", false).unwrap_err();
        assert!(matches!(&err, ConfigError::UserFile { path, .. } if path == &file), "{err:?}");
        assert!(err.to_string().contains("line 2") && err.to_string().contains("fix or remove it"), "{err}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "{\n  \"mcpServers\": {,\n}");
    }
}
