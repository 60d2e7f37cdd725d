//! Which secrets a server may see. Stored keys go to Perch's own `web` entry only (for the
//! search services that need one), and a fresh Google access token to Perch's own Google
//! server only, through their environment at start; no other server, bundled or third-party,
//! ever receives them, even one the user (or a link) adds that runs the same program. The web
//! server itself sends a key only to its service's own address (`--endpoint` is refused there).

use std::path::Path;
use std::sync::Arc;

use crate::google;
use crate::keys::Keys;
use perch_mcp_client::config::{ServerConfig, Transport};
use perch_mcp_client::manager::{Freshness, SecretEnv, ServerSecrets};

pub use crate::keys::WEB_SEARCH_KEYS;

const WEB_SERVER: &str = "perch-mcp-web";
/// The bundled entry that runs it (`mcp_servers/config/servers.json`).
const WEB_ENTRY: &str = "web";

/// Whether a stored key of this name belongs to the web server rather than a model provider.
pub fn is_web_search_key(name: &str) -> bool {
    WEB_SEARCH_KEYS.iter().any(|(key, _)| *key == name)
}

/// The environment `config`'s server gets from `lookup` (a key by its stored name): the search
/// keys for Perch's own web entry, nothing for any other.
pub fn for_server(config: &ServerConfig, lookup: impl Fn(&str) -> Option<String>) -> Vec<(String, String)> {
    if !gets_search_keys(config) {
        return Vec::new();
    }
    WEB_SEARCH_KEYS
        .iter()
        .filter_map(|(name, var)| lookup(name).map(|key| ((*var).to_owned(), key)))
        .collect()
}

/// Whether `config` is Perch's own web entry: the bundled one, running Perch's web server (by
/// its program, wherever it lives). An entry of the user's own running that program is not.
pub fn gets_search_keys(config: &ServerConfig) -> bool {
    config.bundled && config.name == WEB_ENTRY && runs(config, WEB_SERVER)
}

/// Whether `config` runs the bundled program `program` (by its name, wherever it lives).
fn runs(config: &ServerConfig, program: &str) -> bool {
    let Transport::Stdio { command, .. } = &config.transport else { return false };
    Path::new(command).file_name().is_some_and(|name| name == program)
}

/// The manager's hook over the key store (the keyring, or the encrypted file) and the Google
/// connection.
pub fn from_keys(keys: Arc<Keys>, google: google::Connection) -> SecretEnv {
    Arc::new(move |config, freshness| {
        let (keys, google, config) = (keys.clone(), google.clone(), config.clone());
        Box::pin(async move {
            // Only the bundled entry: a server the user adds that happens to run a program of
            // that name is not given the account.
            if config.bundled && config.name == google::SERVER_NAME && runs(&config, google::SERVER_PROGRAM) {
                let access = google.server_access(freshness == Freshness::Renewed).await;
                return ServerSecrets {
                    env: google::server_env(access.as_ref(), google.endpoints()),
                    valid_until: access.map(|a| a.expires_at),
                };
            }
            // Key stores may block (the keyring over D-Bus): off the async threads.
            let env = tokio::task::spawn_blocking(move || {
                for_server(&config, |name| match keys.get(name, None) {
                    Ok(found) => found.map(|(secret, _)| secret.expose().to_owned()),
                    Err(e) => {
                        tracing::warn!(key = name, error = %e, "a web search key could not be read");
                        None
                    }
                })
            })
            .await
            .unwrap_or_default();
            ServerSecrets { env, valid_until: None }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bundled(name: &str, command: &str) -> ServerConfig {
        ServerConfig { bundled: true, ..stdio(name, command) }
    }

    fn stdio(name: &str, command: &str) -> ServerConfig {
        ServerConfig {
            name: name.into(),
            transport: Transport::Stdio {
                command: command.into(),
                args: Vec::new(),
                env: Default::default(),
                cwd: None,
            },
            enabled: true,
            auto_start: true,
            timeout_secs: 60,
            always_on: Vec::new(),
            bundled: false,
            stop_when_idle_secs: 0,
        }
    }

    fn stored(name: &str) -> Option<String> {
        match name {
            "brave" => Some("brv-1".into()),
            _ => None,
        }
    }

    #[test]
    fn only_perchs_own_web_entry_gets_the_keys_it_has() {
        let web = for_server(&bundled("web", "perch-mcp-web"), stored);
        assert_eq!(web, [("BRAVE_API_KEY".to_owned(), "brv-1".to_owned())]);
        let moved = for_server(&bundled("web", "/opt/perch/perch-mcp-web"), stored);
        assert_eq!(moved.len(), 1, "by the program, wherever it lives");
        assert!(for_server(&stdio("search", "perch-mcp-web"), stored).is_empty(), "an entry of one's own");
        assert!(for_server(&stdio("web", "perch-mcp-web"), stored).is_empty(), "not the bundled entry");
        assert!(for_server(&bundled("demo", "perch-mcp-demo"), stored).is_empty());
        assert!(for_server(&bundled("web", "npx"), stored).is_empty(), "a server named web is not ours");
        assert!(is_web_search_key("tavily") && !is_web_search_key("anthropic"));
    }
}
