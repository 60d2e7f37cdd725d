//! Mail messages: addresses, building the messages Perch sends, reading those Gmail returns.

pub mod address;
pub mod read;
pub mod write;
