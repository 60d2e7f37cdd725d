//! `perch keys set|status|delete PROVIDER`. PROVIDER is a model provider, or a web search
//! service (`brave`, `tavily`) whose key only the bundled web server receives.

use std::io::{BufRead, IsTerminal};

use anyhow::{Context, bail};
use clap::Subcommand;
use perch_core::Engine;
use perch_core::keys::{KeySource, Secret};
use perch_core::mcp::secrets::is_web_search_key;
use perch_core::providers::ProviderError;

use crate::output::print_json;

#[derive(Subcommand)]
pub enum KeysCommand {
    /// Store a key (read from the terminal without echo, or from stdin) and check it works.
    Set {
        provider: String,
    },
    /// Which providers have a key, and where it comes from (masked).
    Status {
        provider: Option<String>,
        #[arg(long)]
        json: bool,
    },
    Delete {
        provider: String,
    },
}

pub async fn run(engine: Engine, command: KeysCommand) -> anyhow::Result<()> {
    let settings = engine.settings().get().await;
    let registry = engine.registry(&settings);
    let keys = engine.keys().clone();
    let backend = {
        let keys = keys.clone();
        tokio::task::spawn_blocking(move || keys.backend()).await?
    };
    if let Some(warning) = &backend.warning {
        eprintln!("perch: warning: {warning}");
    }
    match command {
        KeysCommand::Set { provider } if is_web_search_key(&provider) => {
            let secret = read_secret(&provider)?;
            let name = provider.clone();
            tokio::task::spawn_blocking(move || keys.set(&name, &secret))
                .await?
                .with_context(|| format!("the key for {provider} could not be stored"))?;
            outln!(
                "Stored. The web server uses it from its next start when its search backend is {provider} \
                 (\"args\": [\"--backend\", \"{provider}\"] for \"web\" in mcp_servers.json)."
            );
        }
        KeysCommand::Set { provider } => {
            let endpoint = registry.endpoint(&provider)?.clone();
            let secret = read_secret(&provider)?;
            let stored = {
                let (keys, name) = (keys.clone(), endpoint.name.clone());
                tokio::task::spawn_blocking(move || keys.set(&name, &secret)).await?
            };
            stored.with_context(|| format!("the key for {provider} could not be stored"))?;
            if let Some(env) = endpoint.key_env.as_deref().filter(|e| std::env::var_os(e).is_some()) {
                eprintln!("perch: note: {env} is set and takes precedence over the stored key");
            }
            // One cheap call to see whether the key works.
            match registry.provider(&provider).await?.list_models().await {
                Ok(models) => outln!("Stored. The key for {provider} works ({} models).", models.len()),
                Err(e @ ProviderError::Auth { .. }) => bail!("stored, but {e}"),
                Err(e) => outln!("Stored, but it could not be checked now: {e}"),
            }
        }
        KeysCommand::Status { provider, json } => {
            let mut statuses = Vec::new();
            for (name, env) in registry.keys_kept() {
                if provider.as_ref().is_some_and(|p| p != &name) {
                    continue;
                }
                let keys = keys.clone();
                statuses
                    .push(tokio::task::spawn_blocking(move || keys.status(&name, env.as_deref())).await??);
            }
            if json {
                return print_json(&serde_json::json!({ "backend": backend, "keys": statuses }));
            }
            for s in statuses {
                let where_from = match s.source {
                    Some(KeySource::Env) => " (from the environment)",
                    Some(KeySource::Keyring) => " (OS keyring)",
                    Some(KeySource::File) => " (encrypted file)",
                    None => "",
                };
                outln!("{:<10} {}{where_from}", s.provider, s.masked.as_deref().unwrap_or("no key"));
            }
        }
        KeysCommand::Delete { provider } => {
            if !is_web_search_key(&provider) {
                registry.endpoint(&provider)?;
            }
            let name = provider.clone();
            tokio::task::spawn_blocking(move || keys.delete(&name)).await??;
            outln!("The stored key for {provider} is deleted.");
        }
    }
    Ok(())
}

fn read_secret(provider: &str) -> anyhow::Result<Secret> {
    let value = if std::io::stdin().is_terminal() {
        rpassword::prompt_password(format!("API key for {provider}: "))?
    } else {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line)?;
        line
    };
    let value = value.trim();
    if value.is_empty() {
        bail!("no key was given");
    }
    Ok(Secret::new(value))
}
