//! Signing in with OAuth 2.1 from a desktop app, for whatever needs it (MCP servers in
//! `mcp::sign_in`): the user's own browser ([`browser`]), the loopback redirect it comes back to
//! ([`loopback`]), the credentials in the key store ([`store`]) and signing out at the server
//! ([`revoke`]). Discovery, PKCE, registration and refresh are rmcp's `auth`
//! (`AuthorizationManager`); where Perch goes its own way is said where it does.

pub mod browser;
pub mod loopback;
pub mod revoke;
pub mod store;
