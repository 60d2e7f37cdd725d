//! Settings -> Voice, the speaking half (one row, `speech`, in the settings table).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(default)]
pub struct SpeechSettings {
    /// `auto` (the natural voice of the UI's language when downloaded, else espeak-ng), a
    /// catalogue name (`en_US-lessac-medium`), the path of a Piper `.onnx` file, or `espeak`.
    pub voice: String,
    /// Speaking speed in percent of the voice's own (50 to 200).
    pub speed_percent: u32,
    /// The loudspeaker's name; empty for the system default.
    pub device: String,
    /// Read each answer aloud as it is written, sentence by sentence.
    pub speak_answers: bool,
}

impl Default for SpeechSettings {
    fn default() -> Self {
        Self { voice: "auto".into(), speed_percent: 100, device: String::new(), speak_answers: false }
    }
}

impl SpeechSettings {
    /// The speed as a factor (1.0 is the voice's own).
    pub fn speed(&self) -> f32 {
        self.speed_percent.clamp(50, 200) as f32 / 100.0
    }

    /// The chosen loudspeaker, `None` for the default.
    pub fn device(&self) -> Option<String> {
        Some(self.device.trim().to_owned()).filter(|d| !d.is_empty())
    }
}
