//! The parts of perch-mcp-web, as a library: the benchmark times extraction on its own, and
//! `perch-mcp` (the bundled servers in one binary) runs [`server::main`].

pub mod error;
pub mod extract;
pub mod fetch;
pub mod guard;
pub mod search;
pub mod server;

/// The redirects a fetch follows (reqwest's own default, which the search's client keeps):
/// past it, or back to a page already seen, the fetch fails as too many redirects.
pub const MAX_REDIRECTS: usize = 10;
