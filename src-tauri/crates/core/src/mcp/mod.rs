//! The MCP client (`perch-mcp-client`) as the engine uses it, with the two things only the
//! engine can decide: which secrets a server may see (they come from the key store and the
//! Google connection: [`secrets`]) and saving a link's server under a name that no server and
//! no permission has ([`add_link_save`]).

pub mod add_link_save;
pub mod secrets;

pub use perch_mcp_client::*;
