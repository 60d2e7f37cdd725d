//! Settings -> Terminal.

use serde::{Deserialize, Serialize};

/// The terminal's name as a tool server (`terminal:run_command`); here, beside its settings, so
/// the settings' defaults can name its tools without reaching into the server.
pub const SERVER: &str = "terminal";

/// When Perch asks before a command runs (the blocklist and the sandbox apply at every level).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum AskLevel {
    /// Before every command.
    Always,
    /// Unless the command was always-allowed before (or a session is on).
    #[default]
    OnMiss,
    /// Never; commands the parser cannot reduce to plain words are still asked about.
    Off,
}

/// A word that names no ask level.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not an ask level (always, on-miss, off)")]
pub struct NotAnAskLevel(pub String);

impl std::str::FromStr for AskLevel {
    type Err = NotAnAskLevel;
    fn from_str(s: &str) -> Result<Self, NotAnAskLevel> {
        match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "always" => Ok(Self::Always),
            "on-miss" => Ok(Self::OnMiss),
            "off" | "never" => Ok(Self::Off),
            other => Err(NotAnAskLevel(other.to_owned())),
        }
    }
}

/// The longest any command may run.
pub const MAX_TIMEOUT_SECS: u32 = 120;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct TerminalSettings {
    /// Offer the terminal tools to models at all.
    pub enabled: bool,
    pub ask_level: AskLevel,
    /// Every command ends by this many seconds (at most 120).
    pub timeout_secs: u32,
    /// Where commands run when the model names no folder, and where they may write. Empty
    /// until the user chooses one: there is no silent default (the home folder would make all
    /// of it writable), so the first command asks for it.
    pub working_folder: String,
    /// Folders commands may change besides the working folder and their own temp folder
    /// (`~` is the home folder; a missing one is reported on the card).
    pub writable_folders: Vec<String>,
    /// Names of environment variables passed to commands besides the usual ones (HOME, LANG,
    /// PATH...). Keys, tokens and the session's sockets are never passed, named here or not.
    pub pass_env: Vec<String>,
    /// Let commands use the network.
    pub network: bool,
    /// A command printing more than this many MB is killed.
    pub max_output_mb: u32,
}

impl Default for TerminalSettings {
    fn default() -> Self {
        Self {
            enabled: true,
            ask_level: AskLevel::OnMiss,
            timeout_secs: MAX_TIMEOUT_SECS,
            working_folder: String::new(),
            writable_folders: Vec::new(),
            pass_env: Vec::new(),
            network: true,
            max_output_mb: 64,
        }
    }
}

impl TerminalSettings {
    /// The timeout for one command: the setting, lowered by the model's wish, never above 120 s.
    pub fn timeout_for(&self, asked: Option<u64>) -> std::time::Duration {
        let cap = u64::from(self.timeout_secs.clamp(1, MAX_TIMEOUT_SECS));
        std::time::Duration::from_secs(asked.map_or(cap, |a| a.clamp(1, cap)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_may_lower_the_timeout_but_never_raise_it() {
        let s = TerminalSettings { timeout_secs: 60, ..TerminalSettings::default() };
        assert_eq!(s.timeout_for(None).as_secs(), 60);
        assert_eq!(s.timeout_for(Some(5)).as_secs(), 5);
        assert_eq!(s.timeout_for(Some(999)).as_secs(), 60);
        let wild = TerminalSettings { timeout_secs: 10_000, ..TerminalSettings::default() };
        assert_eq!(wild.timeout_for(None).as_secs(), 120);
        assert_eq!("on_miss".parse::<AskLevel>(), Ok(AskLevel::OnMiss));
        assert!("sometimes".parse::<AskLevel>().is_err());
    }
}
