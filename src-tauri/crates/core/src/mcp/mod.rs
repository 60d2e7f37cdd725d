//! The MCP client (`perch-mcp-client`) as the engine uses it, with which secrets a server may
//! see (they come from the key store and the Google connection: [`secrets`]). Saving a link's
//! server, which needs the permissions too, is the engine's (`engine::add_link_save`).

pub mod secrets;

pub use perch_mcp_client::*;
