//! perch-tools: the words every source of tools and the agent share. What a tool is
//! ([`ToolView`]), one call of it (where it comes from, its progress, its result, why it
//! failed), the trait a tool server built into Perch implements ([`BuiltinServer`]), and the
//! questions a call raises for the user ([`questions`]: may it run, what a server wants filled
//! in, may a server use the model), with the one registry they wait in.
//!
//! It sits below every capability that offers tools (the terminal, MCP) and below the store
//! that keeps their results, so none of them depends on another to speak of a tool call.

pub mod call;
pub mod output;
pub mod questions;
pub mod view;

pub use call::{BuiltinServer, CallError, CallOrigin, Progress, Vetting};
pub use output::{ToolImage, ToolOutput};
pub use view::{HARMLESS_WHEN_META, ToolUi, ToolView};
