//! The exact secret values Perch holds or hands on, so a bundle can be searched for them
//! wherever they turned up (a server that echoed its token or its configuration to stderr, a
//! URL in a log line).
//!
//! The key store cannot be listed (the OS keyring has no "list my entries"), so the names are
//! the ones Perch itself stores under: each provider that takes a key, the web search
//! services, the Google connection and every configured MCP server's sign-in.

use serde_json::Value;

use super::redact::{MIN_KNOWN_LEN, is_secret_name};
use crate::keys::{Keys, WEB_SEARCH_KEYS};
use crate::mcp::config::{ServerConfig, Transport};
use crate::providers::builtin_endpoints;
use crate::settings::Settings;

/// Every name Perch may have stored a secret under, for these settings and servers.
pub fn stored_names(settings: &Settings, servers: &[ServerConfig]) -> Vec<String> {
    let providers =
        builtin_endpoints(&settings.providers).into_iter().filter(|e| e.takes_key()).map(|e| e.name);
    let search = WEB_SEARCH_KEYS.iter().map(|(name, _)| (*name).to_owned());
    let sign_ins = servers.iter().map(|s| crate::mcp::sign_in::record_name(&s.name));
    let mut names: Vec<String> =
        providers.chain(search).chain([crate::google::RECORD_NAME.to_owned()]).chain(sign_ins).collect();
    names.sort();
    names.dedup();
    names
}

/// What the key store holds under `names`, as the values to redact, and how many entries could
/// not be read (their values are then looked for by shape only). Blocking: the keyring may
/// answer over D-Bus.
pub fn stored_values(keys: &Keys, names: &[String]) -> (Vec<String>, usize) {
    let mut values = Vec::new();
    let mut unreadable = 0;
    for name in names {
        match keys.get(name, None) {
            Ok(Some((secret, _))) => values.extend(values_in_entry(secret.expose())),
            Ok(None) => {}
            Err(e) => {
                unreadable += 1;
                tracing::warn!(key = %name, error = %e, "diagnostics: a stored entry could not be read");
            }
        }
    }
    (values, unreadable)
}

/// The secrets in one stored entry: a plain key is one; a sign-in record (JSON) holds tokens,
/// a client secret and much that is not secret (URLs, scopes), so only its secret-named fields
/// count.
pub fn values_in_entry(stored: &str) -> Vec<String> {
    let mut found = Vec::new();
    match serde_json::from_str::<Value>(stored) {
        Ok(doc @ Value::Object(_)) => collect_secret_fields(&doc, &mut found),
        _ => found.push(stored.trim().to_owned()),
    }
    found.retain(|v| v.len() >= MIN_KNOWN_LEN);
    found
}

fn collect_secret_fields(value: &Value, found: &mut Vec<String>) {
    match value {
        Value::Object(fields) => {
            for (name, v) in fields {
                match v {
                    Value::String(s) if is_secret_name(name) => found.push(s.clone()),
                    other => collect_secret_fields(other, found),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_secret_fields(v, found)),
        _ => {}
    }
}

/// What `servers`' entries hand their programs or send their hosts, which a server may print in
/// its log: every `env` and `headers` value (and a header's credential without its scheme),
/// the password and query values of every URL among them, secret arguments (`--api-key X`,
/// `--token=X`) and the OAuth client secret.
pub fn config_values(servers: &[ServerConfig]) -> Vec<String> {
    let mut found = Vec::new();
    for server in servers {
        match &server.transport {
            Transport::Stdio { args, env, .. } => {
                let mut follows_secret_flag = false;
                for arg in args {
                    let (secret, flag) = super::bundle::argument_secret(arg, follows_secret_flag);
                    follows_secret_flag = flag;
                    found.extend(secret.map(|at| arg[at..].to_owned()));
                    found.extend(url_values(arg));
                }
                for value in env.values() {
                    found.push(value.clone());
                    found.extend(url_values(value));
                }
            }
            Transport::Http { url, headers, oauth } => {
                found.extend(url_values(url));
                for value in headers.values() {
                    found.push(value.clone());
                    // `Bearer X`, `Token X`: X printed alone.
                    found.extend(value.split_whitespace().skip(1).map(str::to_owned));
                }
                found.extend(
                    oauth.iter().filter_map(|o| o.client_secret.as_ref()).map(|s| s.expose().to_owned()),
                );
            }
        }
    }
    found.retain(|v| v.trim().len() >= MIN_KNOWN_LEN);
    found
}

/// The password (or a lone user name: `https://TOKEN@host`) and the query and fragment values
/// of `text` when it is a URL, as written and as decoded.
fn url_values(text: &str) -> Vec<String> {
    let Ok(url) = url::Url::parse(text.trim()) else { return Vec::new() };
    let user = Some(url.username()).filter(|u| !u.is_empty() && url.password().is_none());
    let mut values: Vec<String> = url.password().or(user).map(str::to_owned).into_iter().collect();
    values.extend(url.query_pairs().map(|(_, v)| v.into_owned()));
    for part in [url.query(), url.fragment()].into_iter().flatten() {
        values.extend(part.split('&').filter_map(|pair| pair.split_once('=')).map(|(_, v)| v.to_owned()));
    }
    values
}

/// The values of environment variables whose names say they are secrets (`*_KEY`, `*_TOKEN`,
/// `*_SECRET`, `*PASSWORD*`): Perch's own keys, and whatever the shell handed it.
pub fn environment_values(vars: impl IntoIterator<Item = (String, String)>) -> Vec<String> {
    vars.into_iter()
        .filter(|(name, value)| is_secret_env_name(name) && value.trim().len() >= MIN_KNOWN_LEN)
        .map(|(_, value)| value.trim().to_owned())
        .collect()
}

fn is_secret_env_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["_KEY", "_TOKEN", "_SECRET", "_PAT"].iter().any(|end| upper.ends_with(end))
        || ["PASSWORD", "SECRET", "TOKEN", "CREDENTIAL", "API_KEY"].iter().any(|word| upper.contains(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sign_in_record_gives_its_tokens_and_secret_but_not_its_urls() {
        let record = r#"{
            "resource": "https://mcp.example/mcp",
            "credentials": {"client_id": "perch-client", "token_response": {
                "access_token": "at-1234567890", "refresh_token": "rt-1234567890",
                "token_type": "Bearer", "expires_in": 3600}},
            "client_secret": "cs-1234567890",
            "metadata": {"token_endpoint": "https://as.example/token"}
        }"#;
        let mut found = values_in_entry(record);
        found.sort();
        assert_eq!(found, ["at-1234567890", "cs-1234567890", "rt-1234567890"]);
    }

    #[test]
    fn a_plain_key_is_itself_and_short_values_are_not_hunted() {
        assert_eq!(values_in_entry(" sk-plain-stored-key \n"), ["sk-plain-stored-key"]);
        assert!(values_in_entry("short").is_empty());
    }

    #[test]
    fn only_secret_looking_variables_count() {
        let vars = [
            ("MY_SERVICE_TOKEN", "env-token-value-1"),
            ("OPENAI_API_KEY", "env-key-value-22"),
            ("DB_PASSWORD_FILE", "env-password-333"),
            ("HOME", "/home/someone-long"),
            ("PATH", "/usr/bin:/bin:/usr/local/bin"),
            ("SHORT_KEY", "x"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()));
        assert_eq!(environment_values(vars), ["env-token-value-1", "env-key-value-22", "env-password-333"]);
    }

    #[test]
    fn what_the_config_hands_each_server_is_known_and_its_names_are_not() {
        let servers: Vec<ServerConfig> = crate::mcp::config::load_texts(
            r#"{"mcpServers": {
                "a": {"url": "https://tok-lone-user-123@mcp.example/mcp?team=team-value-4567",
                      "headers": {"Authorization": "Bearer hdr-token-89ab"}},
                "b": {"command": "srv", "args": ["--root", "/srv/shared-data", "--token=arg-token-cdef"],
                      "env": {"DB": "postgres://u:db-password-0123@h/d"}}
            }}"#,
            None,
            std::path::Path::new("x"),
        )
        .servers;
        let found = config_values(&servers);
        for secret in [
            "tok-lone-user-123",
            "team-value-4567",
            "Bearer hdr-token-89ab",
            "hdr-token-89ab",
            "arg-token-cdef",
            "postgres://u:db-password-0123@h/d",
            "db-password-0123",
        ] {
            assert!(found.iter().any(|v| v == secret), "missing {secret}");
        }
        // An ordinary argument is no secret; nor is a URL's host.
        assert!(!found.iter().any(|v| v == "/srv/shared-data" || v.contains("mcp.example/")), "{found:?}");
    }

    #[test]
    fn names_cover_providers_search_google_and_each_server() {
        let servers: Vec<ServerConfig> = crate::mcp::config::load_texts(
            r#"{"mcpServers": {"linear": {"url": "https://mcp.linear.app/mcp"}}}"#,
            None,
            std::path::Path::new("x"),
        )
        .servers;
        let names = stored_names(&Settings::default(), &servers);
        for expected in
            ["openai", "anthropic", "gemini", "brave", "tavily", "oauth/google", "oauth/mcp/linear"]
        {
            assert!(names.iter().any(|n| n == expected), "missing {expected}");
        }
        assert!(!names.iter().any(|n| n == "ollama"), "Ollama takes no key");
    }
}
