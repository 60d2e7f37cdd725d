//! Signing in with OAuth from a desktop app, for whatever needs it (MCP servers in
//! `mcp::sign_in`, Google in `google`): the user's own browser ([`browser`]), the loopback
//! redirect it comes back to ([`loopback`]), the credentials in the key store ([`store`]) and
//! signing out at the server ([`revoke`]).
//!
//! Two ways through the authorization server share those parts. An MCP server's is discovered,
//! and rmcp's `auth` (`AuthorizationManager`) does discovery, registration, PKCE and refresh
//! with the MCP rules (a resource indicator on every request). A provider whose endpoints are
//! fixed and that is not an MCP server (Google) goes through [`flow`]: the plain
//! authorization-code grant with PKCE, with the provider's own parameters, using the same
//! oauth2 types for PKCE and tokens.

pub mod browser;
pub mod flow;
pub mod loopback;
pub mod revoke;
pub mod store;

/// Where a sign-in's page goes: the browser, a terminal, a test.
pub type OpenUrl = Box<dyn FnOnce(&str) + Send>;
