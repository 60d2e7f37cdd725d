//! perch-foundation: what every part of Perch stands on and none of them owns. Where data
//! lives (`paths`) and which process owns an answer (`owner`); logging; API keys in the
//! keyring or an encrypted file; finding programs as the user's shell would (`shell_path`); the
//! user's language; whether the network is metered; the one way an HTTP client is made; what a
//! probe of the machine answers; telling a crash from a crash loop; the window's geometry; a
//! block of the user's material that its own text cannot close early; the one list of
//! environment variables that change what runs (`run_env`); the autostart entry that starts
//! Perch at login (`autostart`); where secrets live (`secrets`: the credential stores, what a
//! secret file looks like).
//!
//! It depends on no other Perch crate, and no capability crate's types appear here.

pub mod autostart;
pub mod blocks;
pub mod crash_loop;
pub mod http;
pub mod keys;
pub mod locale;
pub mod logging;
pub mod memory;
pub mod network;
pub mod owner;
pub mod paths;
pub mod probe;
pub mod run_env;
pub mod secrets;
pub mod shell_path;
pub mod window_state;
