// Over 500 lines: about half is tests, one for each kind of link refused.
//! "Add server" links, as Claude Desktop and LM Studio offer them: a web page or a README links to
//! `perch://mcp/add?...`, the desktop hands the link to Perch, and Perch shows exactly what would
//! be saved and asks. This module only reads a link: a pure function from its text to the entry
//! it proposes (in the `mcpServers` shape `mcp_import` takes) or the reason it is refused.
//! Nothing here saves or starts anything.
//!
//! The format (values percent-encoded, as `encodeURIComponent` does):
//! - `perch://mcp/add?name=NAME&url=URL`: a Streamable HTTP server (http or https).
//! - `perch://mcp/add?name=NAME&command=CMD&arg=A&arg=B&env=KEY=VALUE`: a stdio server; the
//!   arguments may instead be one `args` holding a JSON array of strings, and the environment
//!   one `env` holding a JSON object.
//! - `perch://mcp/add?name=NAME&config=BASE64`: the entry as a base64 JSON object (`url` or
//!   `command`, with `args`, `env`, `headers`, `type`), the form Cursor's and LM Studio's links
//!   carry, so their links work with only the prefix changed.
//!
//! A link is refused rather than trimmed: anything Perch would not show or not save (an unknown
//! parameter, a repeated one, a fragment) is an error. Values may hold no control or invisible
//! characters (which could hide part of a command), no `${...}` (the servers file expands those
//! from Perch's own environment when the server starts, which would send Perch's variables to
//! whoever wrote the link), and a link may not set environment variables that change which
//! programs or libraries run (`LD_PRELOAD`, `PATH`, `NODE_OPTIONS`, a package registry...),
//! since the confirmation shows their values masked (`perch_foundation::run_env`, the list the
//! terminal's guard refuses too).

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use serde::Serialize;
use serde_json::{Map, Value, json};

/// The scheme Perch registers with the desktop.
pub const SCHEME: &str = "perch";
/// The longest link read; longer ones are refused unread.
pub const MAX_LINK_BYTES: usize = 8 * 1024;
const MAX_ARGS: usize = 64;
const MAX_ENV: usize = 32;
const MAX_HEADERS: usize = 16;
const MAX_KEY_CHARS: usize = 128;

/// A server a link proposes to add, shown to the user before anything is saved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct ProposedServer {
    pub name: String,
    pub transport: ProposedTransport,
    /// What Add saves through `mcp_import`: `{"mcpServers": {NAME: entry}}`.
    pub json: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ProposedTransport {
    /// A program Perch would run on this computer.
    Stdio { command: String, args: Vec<String>, env: BTreeMap<String, String> },
    /// A Streamable HTTP server at an address.
    Http { url: String, headers: BTreeMap<String, String> },
}

/// Why a link was not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LinkError {
    #[error("the link is {len} bytes long; Perch reads links of at most {max} bytes")]
    TooLong { len: usize, max: usize },
    #[error("the link could not be read: {0}")]
    Malformed(String),
    #[error("Perch opens only perch://mcp/add links, to add a server (this one is {0})")]
    NotAddServer(String),
    #[error("the link gives no {0}")]
    Missing(&'static str),
    #[error("the link has a part Perch does not know: {0:?}")]
    Unknown(String),
    #[error("the link gives {0} more than once")]
    Repeated(String),
    #[error("the link's {part} cannot be used: {reason}")]
    Refused { part: String, reason: String },
}

fn refused(part: impl Into<String>, reason: impl Into<String>) -> LinkError {
    LinkError::Refused { part: part.into(), reason: reason.into() }
}

/// Reads an add-server link. The entry returned is what the confirmation shows and what Add
/// saves; nothing is saved or started here.
pub fn parse(link: &str) -> Result<ProposedServer, LinkError> {
    if link.len() > MAX_LINK_BYTES {
        return Err(LinkError::TooLong { len: link.len(), max: MAX_LINK_BYTES });
    }
    // The URL parser drops tabs and newlines silently; a link arrives percent-encoded.
    if link.chars().any(|c| c.is_whitespace() || hidden(c)) {
        return Err(LinkError::Malformed("it contains spaces or invisible characters".into()));
    }
    let url = reqwest::Url::parse(link).map_err(|e| LinkError::Malformed(e.to_string()))?;
    if url.scheme() != SCHEME {
        return Err(LinkError::NotAddServer(format!("a {}: link", url.scheme())));
    }
    let host_ok = url.host_str().is_some_and(|h| h.eq_ignore_ascii_case("mcp"));
    let path_ok = matches!(url.path(), "/add" | "/add/");
    if !host_ok || !path_ok || url.port().is_some() || !url.username().is_empty() || url.password().is_some()
    {
        let mut shown = url.clone();
        shown.set_query(None);
        return Err(LinkError::NotAddServer(shown.to_string()));
    }
    if let Some(fragment) = url.fragment() {
        return Err(LinkError::Unknown(format!("#{fragment}")));
    }
    let mut params = Params(url.query_pairs().map(|(k, v)| (k.into_owned(), v.into_owned())).collect());

    let name = params.one("name")?.ok_or(LinkError::Missing("name"))?;
    check_name(&name)?;
    let transport = match (params.one("config")?, params.one("url")?, params.one("command")?) {
        (Some(config), None, None) => {
            params.none_of(&["arg", "args", "env"], "config")?;
            from_config(&config)?
        }
        (None, Some(url), None) => {
            params.none_of(&["arg", "args", "env"], "url")?;
            ProposedTransport::Http { url, headers: BTreeMap::new() }
        }
        (None, None, Some(command)) => {
            let args = match (params.one("args")?, params.all("arg")) {
                (Some(_), more) if !more.is_empty() => {
                    return Err(refused("args", "give args (a JSON array) or arg (repeated), not both"));
                }
                (Some(json), _) => serde_json::from_str::<Vec<String>>(&json)
                    .map_err(|_| refused("args", "args is a JSON array of strings"))?,
                (None, args) => args,
            };
            let env = env_from_params(params.all("env"))?;
            ProposedTransport::Stdio { command, args, env }
        }
        (None, None, None) => return Err(LinkError::Missing("url or command")),
        _ => return Err(refused("server", "give one of url, command or config")),
    };
    if let Some((key, _)) = params.0.first() {
        return Err(LinkError::Unknown(key.clone()));
    }
    check_transport(&transport)?;
    let json = to_json(&name, &transport);
    // What `mcp_import` will check, checked now, so Add cannot fail on the entry itself.
    let loaded = super::config::load_texts("", Some(&json), std::path::Path::new("the link"));
    if let Some(problem) = loaded.problems.first() {
        return Err(refused("server", problem.message.clone()));
    }
    Ok(ProposedServer { name, transport, json })
}

/// The query's pairs not taken yet.
struct Params(Vec<(String, String)>);

impl Params {
    /// The one value of `key`, taken out.
    fn one(&mut self, key: &str) -> Result<Option<String>, LinkError> {
        let mut values = self.all(key);
        match values.len() {
            0 => Ok(None),
            1 => Ok(values.pop()),
            _ => Err(LinkError::Repeated(key.to_owned())),
        }
    }

    /// Every value of `key`, in order, taken out.
    fn all(&mut self, key: &str) -> Vec<String> {
        let (taken, kept) = std::mem::take(&mut self.0).into_iter().partition(|(k, _)| k == key);
        self.0 = kept;
        taken.into_iter().map(|(_, v)| v).collect::<Vec<_>>()
    }

    fn none_of(&self, keys: &[&str], with: &str) -> Result<(), LinkError> {
        match self.0.iter().find(|(k, _)| keys.contains(&k.as_str())) {
            Some((k, _)) => Err(refused(k.clone(), format!("{k} goes with a command, not with {with}"))),
            None => Ok(()),
        }
    }
}

/// `env=NAME=VALUE`, repeated, or one `env` holding a JSON object.
fn env_from_params(values: Vec<String>) -> Result<BTreeMap<String, String>, LinkError> {
    if let [one] = values.as_slice()
        && one.starts_with('{')
    {
        return serde_json::from_str(one)
            .map_err(|_| refused("env", "env is NAME=VALUE or a JSON object of strings"));
    }
    let mut env = BTreeMap::new();
    for pair in values {
        let Some((key, value)) = pair.split_once('=') else {
            return Err(refused("env", format!("{pair:?} is not NAME=VALUE")));
        };
        if env.insert(key.to_owned(), value.to_owned()).is_some() {
            return Err(LinkError::Repeated(format!("env {key}")));
        }
    }
    Ok(env)
}

/// `config=BASE64`: one entry as a JSON object, as Cursor's and LM Studio's links carry it.
fn from_config(encoded: &str) -> Result<ProposedTransport, LinkError> {
    let bytes = [STANDARD, URL_SAFE, STANDARD_NO_PAD, URL_SAFE_NO_PAD]
        .iter()
        .find_map(|engine| engine.decode(encoded).ok())
        .ok_or_else(|| refused("config", "config is not base64"))?;
    let Ok(Value::Object(mut entry)) = serde_json::from_slice::<Value>(&bytes) else {
        return Err(refused("config", "config is not a JSON object"));
    };
    let mut take = |key: &str| entry.remove(key);
    let kind = take("type");
    let url = take("url");
    let command = take("command");
    let args = take("args");
    let env = take("env");
    let headers = take("headers");
    if let Some(key) = entry.keys().next() {
        return Err(refused("config", format!("unknown field {key:?}")));
    }
    let text = |v: Value, what: &str| match v {
        Value::String(s) => Ok(s),
        _ => Err(refused("config", format!("{what} is not a string"))),
    };
    let strings = |v: Option<Value>, what: &str| -> Result<BTreeMap<String, String>, LinkError> {
        match v {
            None => Ok(BTreeMap::new()),
            Some(v) => serde_json::from_value(v)
                .map_err(|_| refused("config", format!("{what} is not an object of strings"))),
        }
    };
    let kind = kind.map(|k| text(k, "type")).transpose()?.map(|k| k.to_ascii_lowercase());
    match (kind.as_deref(), url, command) {
        (None | Some("http" | "streamable-http" | "streamablehttp"), Some(url), None) => {
            if args.is_some() || env.is_some() {
                return Err(refused("config", "args and env go with a command, not with a url"));
            }
            Ok(ProposedTransport::Http { url: text(url, "url")?, headers: strings(headers, "headers")? })
        }
        (None | Some("stdio"), None, Some(command)) => {
            if headers.is_some() {
                return Err(refused("config", "headers go with a url, not with a command"));
            }
            let args = match args {
                None => Vec::new(),
                Some(v) => serde_json::from_value(v)
                    .map_err(|_| refused("config", "args is not an array of strings"))?,
            };
            Ok(ProposedTransport::Stdio {
                command: text(command, "command")?,
                args,
                env: strings(env, "env")?,
            })
        }
        (Some("sse"), _, _) => Err(refused("config", "the old SSE transport is not supported")),
        (_, Some(_), Some(_)) => Err(refused("config", "give either command or url, not both")),
        (_, None, None) => Err(refused("config", "needs a url or a command")),
        (Some(other), _, _) => Err(refused("config", format!("unknown type {other:?}"))),
    }
}

/// The rule of the servers file: names become part of tool names (`server__tool`).
fn check_name(name: &str) -> Result<(), LinkError> {
    let ok = !name.is_empty()
        && name.len() <= 40
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !name.contains("__");
    if ok { Ok(()) } else { Err(refused("name", "names use letters, digits, - and _ (at most 40, no __)")) }
}

fn check_transport(transport: &ProposedTransport) -> Result<(), LinkError> {
    match transport {
        ProposedTransport::Http { url, headers } => {
            check_text("url", url)?;
            let parsed = reqwest::Url::parse(url).map_err(|e| refused("url", e.to_string()))?;
            if !matches!(parsed.scheme(), "http" | "https") {
                return Err(refused(
                    "url",
                    format!("only http:// and https:// servers (this is {}:)", parsed.scheme()),
                ));
            }
            if parsed.host_str().is_none_or(str::is_empty) {
                return Err(refused("url", "it names no host"));
            }
            if !parsed.username().is_empty() || parsed.password().is_some() {
                return Err(refused("url", "it carries a user name or password"));
            }
            if headers.len() > MAX_HEADERS {
                return Err(refused("headers", format!("at most {MAX_HEADERS}")));
            }
            for (name, value) in headers {
                let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
                if name.is_empty() || name.len() > MAX_KEY_CHARS || !name.chars().all(token) {
                    return Err(refused("headers", format!("{name:?} is not a header name")));
                }
                check_text(&format!("header {name}"), value)?;
            }
        }
        ProposedTransport::Stdio { command, args, env } => {
            check_text("command", command)?;
            if command.trim().is_empty() || command.trim() != command {
                return Err(refused("command", "it is empty or starts or ends with a space"));
            }
            if args.len() > MAX_ARGS {
                return Err(refused("args", format!("at most {MAX_ARGS} arguments")));
            }
            for arg in args {
                check_text("args", arg)?;
            }
            if env.len() > MAX_ENV {
                return Err(refused("env", format!("at most {MAX_ENV} variables")));
            }
            for (name, value) in env {
                check_env_name(name)?;
                check_text(&format!("env {name}"), value)?;
            }
        }
    }
    Ok(())
}

/// Characters that do not show, or change how the text around them shows.
fn hidden(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}')
}

fn check_text(part: &str, value: &str) -> Result<(), LinkError> {
    if value.chars().any(hidden) {
        return Err(refused(part, "it contains control or invisible characters"));
    }
    if value.contains("${") {
        return Err(refused(part, "${...} would be filled in from Perch's own environment"));
    }
    Ok(())
}

fn check_env_name(name: &str) -> Result<(), LinkError> {
    let mut chars = name.chars();
    let well_formed = name.len() <= MAX_KEY_CHARS
        && chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !well_formed {
        return Err(refused("env", format!("{name:?} is not a variable name")));
    }
    if perch_foundation::run_env::link_refuses(name) {
        return Err(refused(
            "env",
            format!(
                "a link may not set {name}, which changes what runs; add the server by hand if you trust it"
            ),
        ));
    }
    Ok(())
}

/// The entry in the `mcpServers` shape, as `mcp_import` takes it.
fn to_json(name: &str, transport: &ProposedTransport) -> String {
    let mut entry = Map::new();
    match transport {
        ProposedTransport::Stdio { command, args, env } => {
            entry.insert("command".into(), json!(command));
            if !args.is_empty() {
                entry.insert("args".into(), json!(args));
            }
            if !env.is_empty() {
                entry.insert("env".into(), json!(env));
            }
        }
        ProposedTransport::Http { url, headers } => {
            entry.insert("type".into(), json!("http"));
            entry.insert("url".into(), json!(url));
            if !headers.is_empty() {
                entry.insert("headers".into(), json!(headers));
            }
        }
    }
    json!({ "mcpServers": { name: entry } }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(query: &str) -> String {
        format!("perch://mcp/add?{query}")
    }

    fn refused_part(result: Result<ProposedServer, LinkError>) -> String {
        match result {
            Err(LinkError::Refused { part, .. }) => part,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    fn saved(json: &str) -> Value {
        serde_json::from_str(json).expect("the proposal's JSON")
    }

    #[test]
    fn a_url_link_proposes_a_streamable_http_server() {
        let p = parse(&link("name=linear&url=https%3A%2F%2Fmcp.linear.app%2Fmcp")).expect("read");
        assert_eq!(p.name, "linear");
        assert_eq!(
            p.transport,
            ProposedTransport::Http { url: "https://mcp.linear.app/mcp".into(), headers: BTreeMap::new() }
        );
        assert_eq!(
            saved(&p.json),
            json!({"mcpServers": {"linear": {"type": "http", "url": "https://mcp.linear.app/mcp"}}})
        );
    }

    #[test]
    fn a_command_link_keeps_arguments_in_order_and_the_environment() {
        let p = parse(&link(
            "name=time&command=uvx&arg=mcp-server-time&arg=--local-timezone%3DEurope%2FParis&arg=two%20words&env=API_KEY%3Ds3cret&env=MODE=fast",
        ))
        .expect("read");
        let ProposedTransport::Stdio { command, args, env } = &p.transport else { panic!("stdio") };
        assert_eq!(command, "uvx");
        assert_eq!(args, &["mcp-server-time", "--local-timezone=Europe/Paris", "two words"]);
        assert_eq!(env.get("API_KEY").map(String::as_str), Some("s3cret"));
        assert_eq!(env.get("MODE").map(String::as_str), Some("fast"));
        assert_eq!(
            saved(&p.json),
            json!({"mcpServers": {"time": {
                "command": "uvx",
                "args": ["mcp-server-time", "--local-timezone=Europe/Paris", "two words"],
                "env": {"API_KEY": "s3cret", "MODE": "fast"}
            }}})
        );
    }

    #[test]
    fn args_may_be_one_json_array_and_env_one_json_object() {
        let args = urlencode(r#"["-y","@modelcontextprotocol/server-everything"]"#);
        let env = urlencode(r#"{"TOKEN":"abc"}"#);
        let p = parse(&link(&format!("name=everything&command=npx&args={args}&env={env}"))).expect("read");
        let ProposedTransport::Stdio { args, env, .. } = &p.transport else { panic!("stdio") };
        assert_eq!(args, &["-y", "@modelcontextprotocol/server-everything"]);
        assert_eq!(env.len(), 1);
        // Both forms at once are ambiguous.
        let both = parse(&link("name=x&command=npx&args=%5B%22a%22%5D&arg=b"));
        assert_eq!(refused_part(both), "args");
        assert_eq!(refused_part(parse(&link("name=x&command=npx&args=not-json"))), "args");
    }

    #[test]
    fn lm_studio_and_cursor_config_links_read_with_the_prefix_changed() {
        // LM Studio's documented example: the Hugging Face server with a token header.
        let config = "eyJ1cmwiOiJodHRwczovL2h1Z2dpbmdmYWNlLmNvL21jcCIsImhlYWRlcnMiOnsiQXV0aG9yaXphdGlvbiI6IkJlYXJlciA8WU9VUl9IRl9UT0tFTj4ifX0%3D";
        let p = parse(&link(&format!("name=hf-mcp-server&config={config}"))).expect("read");
        let ProposedTransport::Http { url, headers } = &p.transport else { panic!("http") };
        assert_eq!(url, "https://huggingface.co/mcp");
        assert_eq!(headers.get("Authorization").map(String::as_str), Some("Bearer <YOUR_HF_TOKEN>"));
        // A stdio entry, URL-safe base64 without padding.
        let entry = r#"{"command":"npx","args":["-y","pkg"],"env":{"K":"v"}}"#;
        let p = parse(&link(&format!("name=pkg&config={}", URL_SAFE_NO_PAD.encode(entry)))).expect("read");
        assert!(
            matches!(&p.transport, ProposedTransport::Stdio { command, args, .. } if command == "npx" && args.len() == 2)
        );

        let config = |entry: &str| link(&format!("name=x&config={}", URL_SAFE_NO_PAD.encode(entry)));
        assert_eq!(refused_part(parse(&config(r#"{"url":"https://a.example","cwd":"/"}"#))), "config");
        assert_eq!(refused_part(parse(&config(r#"{"url":"https://a.example","command":"x"}"#))), "config");
        assert_eq!(refused_part(parse(&config(r#"{"type":"sse","url":"https://a.example"}"#))), "config");
        assert_eq!(refused_part(parse(&config(r#"["not","an","object"]"#))), "config");
        assert_eq!(refused_part(parse(&link("name=x&config=%%%"))), "config");
        assert_eq!(refused_part(parse(&link("name=x&config=e30&url=https://a.example"))), "server");
    }

    #[test]
    fn other_schemes_hosts_and_paths_are_refused() {
        for other in [
            "https://mcp/add?name=x&url=https://a.example",
            "lmstudio://add_mcp?name=x&config=e30",
            "perch://chat/add?name=x&url=https://a.example",
            "perch://mcp/remove?name=x",
            "perch://mcp/add/more?name=x&url=https://a.example",
            "perch://user:pw@mcp/add?name=x&url=https://a.example",
            "perch://mcp:80/add?name=x&url=https://a.example",
            "perch:mcp/add?name=x&url=https://a.example",
        ] {
            assert!(matches!(parse(other), Err(LinkError::NotAddServer(_))), "{other}: {:?}", parse(other));
        }
        assert!(matches!(parse("not a link"), Err(LinkError::Malformed(_))));
        assert!(matches!(
            parse("perch://mcp/add?name=x&url=https://a.example#more"),
            Err(LinkError::Unknown(_))
        ));
        // The scheme's case does not matter (URLs are case-insensitive there), nor the host's.
        assert!(parse("PERCH://MCP/add?name=x&url=https://a.example").is_ok());
    }

    #[test]
    fn invalid_names_are_refused() {
        for name in ["", "two%20words", "a__b", "caf%C3%A9", "slash%2Fname", &"n".repeat(41)] {
            let result = parse(&link(&format!("name={name}&url=https://a.example")));
            assert_eq!(refused_part(result), "name", "{name:?}");
        }
        assert_eq!(parse(&link("url=https://a.example")), Err(LinkError::Missing("name")));
        assert_eq!(
            parse(&link("name=a&name=b&url=https://a.example")),
            Err(LinkError::Repeated("name".into()))
        );
    }

    #[test]
    fn only_http_and_https_servers_are_taken() {
        for url in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "ftp://a.example/mcp",
            "ws://a.example/mcp",
            "relative/path",
            "https://",
        ] {
            let result = parse(&link(&format!("name=x&url={}", urlencode(url))));
            assert_eq!(refused_part(result), "url", "{url}");
        }
        assert_eq!(refused_part(parse(&link("name=x&url=https%3A%2F%2Fme%3Apw%40a.example%2Fmcp"))), "url");
        assert!(parse(&link("name=x&url=http%3A%2F%2F127.0.0.1%3A8080%2Fmcp")).is_ok());
    }

    #[test]
    fn oversize_links_are_refused_unread() {
        let long = link(&format!("name=x&command=echo&arg={}", "a".repeat(MAX_LINK_BYTES)));
        assert!(matches!(parse(&long), Err(LinkError::TooLong { max: MAX_LINK_BYTES, .. })));
        let many = (0..=MAX_ARGS).map(|i| format!("arg={i}")).collect::<Vec<_>>().join("&");
        assert_eq!(refused_part(parse(&link(&format!("name=x&command=echo&{many}")))), "args");
    }

    #[test]
    fn unknown_repeated_and_mixed_parameters_are_refused() {
        assert_eq!(parse(&link("name=x&url=https://a.example&cwd=/")), Err(LinkError::Unknown("cwd".into())));
        assert_eq!(
            parse(&link("name=x&url=https://a.example&url=https://b.example")),
            Err(LinkError::Repeated("url".into()))
        );
        assert_eq!(refused_part(parse(&link("name=x&url=https://a.example&command=evil"))), "server");
        assert_eq!(refused_part(parse(&link("name=x&url=https://a.example&arg=1"))), "arg");
        assert_eq!(refused_part(parse(&link("name=x&url=https://a.example&env=A=1"))), "env");
        assert_eq!(parse(&link("name=x")), Err(LinkError::Missing("url or command")));
        assert_eq!(
            parse(&link("name=x&command=c&env=A=1&env=A=2")),
            Err(LinkError::Repeated("env A".into()))
        );
        assert_eq!(refused_part(parse(&link("name=x&command=c&env=NOVALUE"))), "env");
    }

    #[test]
    fn hidden_characters_and_variables_of_perch_are_refused() {
        // Raw whitespace and control characters in the link itself.
        assert!(matches!(parse("perch://mcp/add?name=x&command=a b"), Err(LinkError::Malformed(_))));
        assert!(matches!(parse("perch://mcp/add?name=x&command=a\nb"), Err(LinkError::Malformed(_))));
        // The same, percent-encoded, in values.
        assert_eq!(refused_part(parse(&link("name=x&command=echo&arg=ok%0Arm%20-rf"))), "args");
        assert_eq!(refused_part(parse(&link("name=x&command=echo&arg=%E2%80%AEtxt.exe"))), "args");
        assert_eq!(refused_part(parse(&link("name=x&command=echo%00"))), "command");
        assert_eq!(refused_part(parse(&link("name=x&command=%20echo"))), "command");
        // ${VAR} would be expanded from Perch's environment and sent on.
        assert_eq!(
            refused_part(parse(&link("name=x&url=https%3A%2F%2Fa.example%2F%3Fk%3D%24%7BOPENAI_API_KEY%7D"))),
            "url"
        );
        assert_eq!(refused_part(parse(&link("name=x&command=echo&arg=%24%7BHOME%7D"))), "args");
        assert_eq!(refused_part(parse(&link("name=x&command=echo&env=A%3D%24%7BSECRET%7D"))), "env A");
    }

    #[test]
    fn variables_that_change_what_runs_are_refused() {
        for name in [
            "LD_PRELOAD",
            "ld_library_path",
            "DYLD_INSERT_LIBRARIES",
            "PATH",
            "NODE_OPTIONS",
            "PYTHONPATH",
            "NPM_CONFIG_REGISTRY",
            "UV_INDEX_URL",
            "BASH_ENV",
            // Programs other programs start, refused like the terminal's guard refuses them.
            "GIT_SSH_COMMAND",
            "PAGER",
            "EDITOR",
            "GCONV_PATH",
            "RUSTC_WRAPPER",
        ] {
            let result = parse(&link(&format!("name=x&command=npx&env={name}%3D%2Ftmp%2Fx")));
            assert_eq!(refused_part(result), "env", "{name}");
        }
        assert_eq!(refused_part(parse(&link("name=x&command=npx&env=1BAD%3Dv"))), "env");
        assert!(parse(&link("name=x&command=npx&env=GITHUB_PERSONAL_ACCESS_TOKEN%3Dghp")).is_ok());
        assert!(parse(&link("name=x&command=npx&env=NODE_ENV%3Dproduction")).is_ok());
    }

    #[test]
    fn the_json_is_what_the_servers_file_takes() {
        let dir = tempfile::tempdir().expect("temp dir");
        let p = parse(&link("name=time&command=uvx&arg=mcp-server-time")).expect("read");
        let names = super::super::config::import(dir.path(), &p.json, super::super::config::Existing::Refuse)
            .expect("imported");
        assert_eq!(names, ["time"]);
        let loaded = super::super::config::load(dir.path());
        let time = loaded.servers.iter().find(|s| s.name == "time").expect("saved");
        assert!(
            matches!(&time.transport, super::super::Transport::Stdio { command, args, .. } if command == "uvx" && args == &["mcp-server-time"])
        );
    }

    fn urlencode(s: &str) -> String {
        url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
    }
}
