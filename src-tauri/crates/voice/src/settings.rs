//! Settings -> Voice (one row, `voice`, in the settings table).

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// How the push-to-talk shortcut works.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum PushToTalkMode {
    /// Record while the keys are held; releasing them transcribes.
    #[default]
    Hold,
    /// One press starts, the next stops.
    Toggle,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct VoiceSettings {
    /// A catalogue name (`tiny.en`) or the path of a ggml model file.
    pub model: String,
    /// `auto` or a language code (`en`, `de`, ...); English-only models always use English.
    pub language: String,
    /// The microphone's name; empty for the system default.
    pub device: String,
    /// The global push-to-talk shortcut ("Ctrl+Alt+Space"); empty turns it off.
    pub push_to_talk: String,
    pub push_to_talk_mode: PushToTalkMode,
    /// The global dictate-anywhere shortcut ("Ctrl+Alt+D"): what is said is typed into the
    /// focused application instead of Perch's box (hold or toggle as push-to-talk); empty
    /// turns it off.
    pub dictate_anywhere: String,
    /// Send the message as soon as the text lands, instead of leaving it to edit.
    pub send_after_dictation: bool,
    /// Applications dictate-anywhere never types into (`WM_CLASS` names, any case): their
    /// words go to the clipboard and the recent dictations instead.
    pub never_type_into: Vec<String>,
    /// Tidy dictated text: a capital at each sentence's start and a full stop at the end.
    pub tidy_punctuation: bool,
    /// Remove hesitations ("um", "uh", "äh") from dictated text.
    pub remove_fillers: bool,
    /// Names and terms spelled the user's way ("Perch", "Kubernetes"): whisper is shown them
    /// before it listens, and the text takes their spelling.
    pub vocabulary: Vec<String>,
    /// Show text while speaking (re-transcribed about every second).
    pub partial_results: bool,
    /// The longest recording, in seconds; a warning comes before it.
    pub max_seconds: u32,
    /// How long the model stays in memory after a dictation, in seconds (0: release at once).
    pub keep_model_secs: u32,
    /// Transcribe on the graphics card when the model fits its free memory (Vulkan); off keeps
    /// dictation on the CPU.
    pub use_gpu: bool,
}

impl Default for VoiceSettings {
    fn default() -> Self {
        Self {
            model: super::models::DEFAULT_MODEL.to_owned(),
            language: "auto".to_owned(),
            device: String::new(),
            push_to_talk: "Ctrl+Alt+Space".to_owned(),
            push_to_talk_mode: PushToTalkMode::Hold,
            dictate_anywhere: "Ctrl+Alt+D".to_owned(),
            send_after_dictation: false,
            // Password managers: a dictation meant for another window must never land in a
            // vault's search or password field.
            never_type_into: ["KeePassXC", "org.keepassxc.KeePassXC", "1Password", "Bitwarden"]
                .map(str::to_owned)
                .to_vec(),
            tidy_punctuation: false,
            remove_fillers: true,
            vocabulary: Vec::new(),
            partial_results: true,
            max_seconds: 300,
            keep_model_secs: super::DEFAULT_KEEP_MODEL.as_secs() as u32,
            use_gpu: true,
        }
    }
}

impl VoiceSettings {
    /// Bytes of the graphics card a dictation model takes when it runs there, for the local
    /// chat model to leave free (`perch_local::Runtime::reserve_gpu`): the catalogue's size, or
    /// the file's for a model given by path; 0 when dictation stays on the CPU.
    pub fn gpu_reserve(&self) -> u64 {
        if !self.use_gpu {
            return 0;
        }
        let size = match super::models::CatalogModel::find(&self.model) {
            Some(model) => model.file.size,
            None => std::fs::metadata(&self.model).map_or(0, |m| m.len()),
        };
        if size == 0 { 0 } else { super::gpu::need(size) }
    }

    pub fn keep_model(&self) -> Duration {
        Duration::from_secs(u64::from(self.keep_model_secs))
    }

    /// The chosen microphone, `None` for the default.
    pub fn device(&self) -> Option<String> {
        Some(self.device.trim().to_owned()).filter(|d| !d.is_empty())
    }
}
