//! The parts of perch-mcp-web, as a library so the benchmark can time extraction on its own.

pub mod error;
pub mod extract;
pub mod fetch;
pub mod guard;
pub mod pdf;
pub mod search;
