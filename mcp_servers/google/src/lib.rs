//! perch-mcp-google as a library: `perch-mcp` (the bundled servers in one binary) runs
//! [`server::main`], and the parts are unit-tested on their own.

pub mod answer;
pub mod api;
pub mod args;
pub mod calendar;
pub mod config;
pub mod error;
pub mod gmail;
pub mod html;
pub mod mime;
pub mod scopes;
pub mod server;
pub mod time;
