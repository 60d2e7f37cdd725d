//! A short list of well-known remote MCP servers (Streamable HTTP), offered in the Add dialog
//! of Settings -> MCP. Picking one only fills the form; the user's `mcp_servers.json` is written
//! when they press Add, as for any other server.
//!
//! Every address is the one its publisher documents (checked when the entry was added; the
//! `docs` link is where to look again). Only servers Perch can reach without a local program.

use serde::Serialize;

/// One well-known server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
pub struct CatalogEntry {
    /// The name it gets in the servers file (a valid server name).
    pub name: &'static str,
    /// Who runs it, as people call it.
    pub title: &'static str,
    /// Its Streamable HTTP endpoint.
    pub url: &'static str,
    /// One line on what it offers.
    pub about: &'static str,
    /// What it takes to use it.
    pub needs: Needs,
    /// The publisher's page about it.
    pub docs: &'static str,
}

/// What a catalogue server needs before its tools can be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Needs {
    /// Nothing: it is public.
    Nothing,
    /// Signing in in the browser (OAuth), which the dashboard offers once the server is added.
    SignIn,
    /// A token the user makes on the service's site, sent in a header with every request.
    Token {
        /// The header, e.g. `Authorization`.
        header: &'static str,
        /// What goes before the token in the header's value, e.g. `Bearer `.
        prefix: &'static str,
        /// Where to make one.
        where_to_get: &'static str,
    },
}

/// The catalogue, in the order the Add dialog shows it.
pub const CATALOG: &[CatalogEntry] = &[
    CatalogEntry {
        name: "github",
        title: "GitHub",
        url: "https://api.githubcopilot.com/mcp/",
        about: "GitHub's own server: repositories, code, issues, pull requests and Actions runs.",
        // Its sign-in works only for OAuth apps registered with GitHub (no dynamic registration).
        needs: Needs::Token {
            header: "Authorization",
            prefix: "Bearer ",
            where_to_get: "https://github.com/settings/personal-access-tokens/new",
        },
        docs: "https://github.com/github/github-mcp-server",
    },
    CatalogEntry {
        name: "linear",
        title: "Linear",
        url: "https://mcp.linear.app/mcp",
        about: "Find, create and update Linear issues, projects and comments.",
        needs: Needs::SignIn,
        docs: "https://linear.app/docs/mcp",
    },
    CatalogEntry {
        name: "notion",
        title: "Notion",
        url: "https://mcp.notion.com/mcp",
        about: "Search, read and write the pages and databases of your Notion workspace.",
        needs: Needs::SignIn,
        docs: "https://developers.notion.com/docs/mcp",
    },
    CatalogEntry {
        name: "sentry",
        title: "Sentry",
        url: "https://mcp.sentry.dev/mcp",
        about: "Sentry's issues, errors, traces and projects, and Seer's suggested fixes.",
        needs: Needs::SignIn,
        docs: "https://docs.sentry.io/product/sentry-mcp/",
    },
    CatalogEntry {
        name: "atlassian",
        title: "Atlassian (Jira, Confluence)",
        url: "https://mcp.atlassian.com/v1/mcp",
        about: "Atlassian's Rovo server: search, create and update Jira issues and Confluence pages.",
        needs: Needs::SignIn,
        docs: "https://developer.atlassian.com/cloud/rovo-mcp/",
    },
    CatalogEntry {
        name: "cloudflare-docs",
        title: "Cloudflare documentation",
        url: "https://docs.mcp.cloudflare.com/mcp",
        about: "Searches Cloudflare's developer documentation; public, no account.",
        needs: Needs::Nothing,
        docs: "https://developers.cloudflare.com/agents/model-context-protocol/mcp-servers-for-cloudflare/",
    },
    CatalogEntry {
        name: "huggingface",
        title: "Hugging Face",
        url: "https://huggingface.co/mcp?login",
        about: "Search models, datasets, papers and Spaces on the Hugging Face Hub.",
        needs: Needs::SignIn,
        docs: "https://huggingface.co/settings/mcp",
    },
    CatalogEntry {
        name: "stripe",
        title: "Stripe",
        url: "https://mcp.stripe.com",
        about: "Stripe's API (customers, payments, invoices) and its documentation.",
        needs: Needs::SignIn,
        docs: "https://docs.stripe.com/mcp",
    },
];

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    /// The rule the servers file applies to names (`config::valid_name`).
    fn valid_name(name: &str) -> bool {
        !name.is_empty()
            && name.len() <= 40
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            && !name.contains("__")
    }

    #[test]
    fn names_are_valid_server_names_and_unique() {
        let mut seen = HashSet::new();
        for entry in CATALOG {
            assert!(valid_name(entry.name), "{:?} is not a valid server name", entry.name);
            assert!(seen.insert(entry.name), "{:?} is listed twice", entry.name);
        }
        assert!((6..=10).contains(&CATALOG.len()), "a short list: {} entries", CATALOG.len());
    }

    #[test]
    fn addresses_are_https_with_a_host() {
        for entry in CATALOG {
            for (what, address) in [("url", entry.url), ("docs", entry.docs)] {
                let url = reqwest::Url::parse(address)
                    .unwrap_or_else(|e| panic!("{}: {what} {address:?}: {e}", entry.name));
                assert_eq!(url.scheme(), "https", "{}: {what} {address:?}", entry.name);
                assert!(
                    url.host_str().is_some_and(|h| h.contains('.')),
                    "{}: {what} {address:?}",
                    entry.name
                );
                assert!(
                    url.username().is_empty() && url.password().is_none(),
                    "{}: no credentials",
                    entry.name
                );
            }
            if let Needs::Token { where_to_get, header, .. } = entry.needs {
                assert!(where_to_get.starts_with("https://"), "{}: {where_to_get}", entry.name);
                assert!(!header.is_empty());
            }
            assert!(!entry.about.is_empty() && !entry.title.is_empty());
        }
    }

    /// Each entry is what the Add form saves, so the servers file must take it as it is.
    #[test]
    fn every_entry_loads_as_a_streamable_http_server() {
        let servers: serde_json::Map<String, serde_json::Value> = CATALOG
            .iter()
            .map(|e| (e.name.to_owned(), serde_json::json!({ "type": "http", "url": e.url })))
            .collect();
        let user = serde_json::json!({ "mcpServers": servers }).to_string();
        let loaded =
            super::super::config::load_texts("", Some(&user), std::path::Path::new("mcp_servers.json"));
        assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
        for entry in CATALOG {
            let server = loaded.servers.iter().find(|s| s.name == entry.name).expect("loaded");
            assert!(
                matches!(&server.transport, super::super::Transport::Http { url, .. } if url == entry.url),
                "{}",
                entry.name
            );
        }
    }
}
