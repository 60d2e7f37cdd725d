//! Piper voices: VITS models exported to ONNX with a `.onnx.json` beside them, run by ONNX
//! Runtime on the CPU. Text becomes espeak-ng IPA phonemes, each phoneme an id from the voice's
//! table (with a pad between, a start and an end mark, as Piper trains them), and the model
//! turns the ids into audio at the voice's rate.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::Tensor;
use serde::Deserialize;
use unicode_normalization::UnicodeNormalization;

use super::{SpeechError, espeak};

/// The parts of a voice's `.onnx.json` that synthesis needs.
#[derive(Debug, Clone, Deserialize)]
pub struct VoiceConfig {
    pub audio: AudioConfig,
    #[serde(default)]
    pub espeak: EspeakConfig,
    #[serde(default)]
    pub inference: InferenceConfig,
    #[serde(default = "espeak_type")]
    pub phoneme_type: String,
    pub phoneme_id_map: HashMap<String, Vec<i64>>,
    #[serde(default = "one")]
    pub num_speakers: u32,
    #[serde(default)]
    pub language: Option<LanguageConfig>,
}

fn espeak_type() -> String {
    "espeak".into()
}

fn one() -> u32 {
    1
}

#[derive(Debug, Clone, Deserialize)]
pub struct AudioConfig {
    pub sample_rate: u32,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct EspeakConfig {
    #[serde(default)]
    pub voice: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct InferenceConfig {
    pub noise_scale: f32,
    pub length_scale: f32,
    pub noise_w: f32,
}

impl Default for InferenceConfig {
    fn default() -> Self {
        // Piper's defaults.
        Self { noise_scale: 0.667, length_scale: 1.0, noise_w: 0.8 }
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct LanguageConfig {
    #[serde(default)]
    pub code: String,
}

/// ONNX Runtime, opened once per process from the library Perch ships (or one named by
/// `PERCH_ONNXRUNTIME`).
fn environment() -> Result<&'static ort::environment::Environment, SpeechError> {
    static ENVIRONMENT: OnceLock<Result<ort::environment::Environment, String>> = OnceLock::new();
    ENVIRONMENT
        .get_or_init(|| {
            let library = runtime_library().ok_or_else(|| {
                "the ONNX Runtime library was not found beside Perch (set PERCH_ONNXRUNTIME to a libonnxruntime.so)"
                    .to_owned()
            })?;
            ort::init_from(&library)
                .map_err(|e| format!("{}: {e}", library.display()))?
                .with_name("perch-speech")
                .build()
                .map_err(|e| format!("{}: {e}", library.display()))
        })
        .as_ref()
        .map_err(|message| SpeechError::RuntimeMissing { message: message.clone() })
}

/// ONNX Runtime opened (once per process), for `perch doctor`: the library's path, or why not.
pub fn runtime() -> Result<PathBuf, SpeechError> {
    environment()?;
    runtime_library().ok_or_else(|| SpeechError::RuntimeMissing { message: "not found".into() })
}

/// Where ONNX Runtime is: `PERCH_ONNXRUNTIME`, else beside the executable or in Perch's library
/// folder (where the packages put it), else none.
pub fn runtime_library() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("PERCH_ONNXRUNTIME").filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    let exe_dir = std::env::current_exe().ok()?.parent()?.to_path_buf();
    [
        exe_dir.join("libonnxruntime.so.1"),
        exe_dir.join("../lib/perch/libonnxruntime.so.1"),
        PathBuf::from("/usr/lib/perch/libonnxruntime.so.1"),
    ]
    .into_iter()
    .find(|p| p.is_file())
    // Said in Settings and `perch doctor` as where it is, not by the way it was reached.
    .map(|p| p.canonicalize().unwrap_or(p))
}

/// A loaded Piper voice.
pub struct PiperVoice {
    session: Mutex<Session>,
    config: VoiceConfig,
    path: PathBuf,
}

impl std::fmt::Debug for PiperVoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PiperVoice").field("path", &self.path).finish_non_exhaustive()
    }
}

impl PiperVoice {
    /// Loads `model` (`NAME.onnx`, with `NAME.onnx.json` beside it) to run on `threads` CPU
    /// threads.
    pub fn load(model: &Path, threads: usize) -> Result<Self, SpeechError> {
        let config_path = config_path(model);
        let text = std::fs::read_to_string(&config_path).map_err(|e| SpeechError::Io {
            action: "reading",
            path: config_path.clone(),
            source: e,
        })?;
        let config: VoiceConfig = serde_json::from_str(&text)
            .map_err(|e| SpeechError::BadVoice { path: config_path.clone(), message: e.to_string() })?;
        if config.phoneme_type != "espeak" {
            return Err(SpeechError::BadVoice {
                path: config_path,
                message: format!(
                    "its phonemes are of type \"{}\"; Perch reads espeak voices",
                    config.phoneme_type
                ),
            });
        }
        for mark in ["^", "_", "$"] {
            if !config.phoneme_id_map.contains_key(mark) {
                return Err(SpeechError::BadVoice {
                    path: config_path,
                    message: format!("its phoneme table has no \"{mark}\""),
                });
            }
        }
        let environment = environment()?;
        let bad = |e: ort::Error| SpeechError::BadVoice { path: model.to_path_buf(), message: e.to_string() };
        let session = Session::builder(environment)
            .map_err(bad)?
            .with_optimization_level(GraphOptimizationLevel::All)
            .map_err(|e| bad(e.into()))?
            .with_intra_threads(threads.max(1))
            .map_err(|e| bad(e.into()))?
            .with_inter_threads(1)
            .map_err(|e| bad(e.into()))?
            .commit_from_file(model)
            .map_err(bad)?;
        Ok(Self { session: Mutex::new(session), config, path: model.to_path_buf() })
    }

    pub fn sample_rate(&self) -> u32 {
        self.config.audio.sample_rate
    }

    pub fn config(&self) -> &VoiceConfig {
        &self.config
    }

    /// The espeak-ng voice its phonemes come from.
    pub fn espeak_voice(&self) -> &str {
        if self.config.espeak.voice.is_empty() { "en-us" } else { &self.config.espeak.voice }
    }

    /// The ids the model reads for `phonemes` (decomposed into code points, as Piper trains).
    pub fn ids(&self, phonemes: &str) -> Vec<i64> {
        let map = &self.config.phoneme_id_map;
        let pad = &map["_"];
        let mut ids = Vec::with_capacity(phonemes.len() * 2 + 3);
        ids.extend(&map["^"]);
        ids.extend(pad);
        let mut key = String::new();
        for phoneme in phonemes.nfd() {
            key.clear();
            key.push(phoneme);
            if let Some(id) = map.get(&key) {
                ids.extend(id);
                ids.extend(pad);
            }
        }
        ids.extend(&map["$"]);
        ids
    }

    /// One sentence spoken: mono samples in [-1, 1] at [`Self::sample_rate`]. `speed` above 1
    /// speaks faster.
    pub fn speak(&self, sentence: &str, speed: f32) -> Result<Vec<f32>, SpeechError> {
        let phonemes = espeak::phonemes(self.espeak_voice(), sentence)?;
        if phonemes.trim().is_empty() {
            return Ok(Vec::new());
        }
        self.speak_phonemes(&phonemes, speed)
    }

    /// The model run on given phonemes (also what the benchmark times on its own).
    pub fn speak_phonemes(&self, phonemes: &str, speed: f32) -> Result<Vec<f32>, SpeechError> {
        let ids = self.ids(phonemes);
        let count = ids.len();
        let inference = &self.config.inference;
        let length_scale = inference.length_scale / speed.clamp(0.5, 2.0);
        let failed = |e: ort::Error| SpeechError::Synthesis { message: e.to_string() };
        let input = Tensor::from_array(([1usize, count], ids)).map_err(failed)?;
        let lengths = Tensor::from_array(([1usize], vec![count as i64])).map_err(failed)?;
        let scales =
            Tensor::from_array(([3usize], vec![inference.noise_scale, length_scale, inference.noise_w]))
                .map_err(failed)?;
        let mut session = self.session.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let outputs = if self.config.num_speakers > 1 {
            let speaker = Tensor::from_array(([1usize], vec![0i64])).map_err(failed)?;
            session.run(ort::inputs!["input" => input, "input_lengths" => lengths, "scales" => scales, "sid" => speaker])
        } else {
            session.run(ort::inputs!["input" => input, "input_lengths" => lengths, "scales" => scales])
        }
        .map_err(failed)?;
        let (_, audio) = outputs[0].try_extract_tensor::<f32>().map_err(failed)?;
        Ok(normalize(audio))
    }
}

/// Piper's models do not fix their loudness: each sentence is scaled to the same peak (a little
/// under full scale, so resampling cannot clip).
fn normalize(audio: &[f32]) -> Vec<f32> {
    let peak = audio.iter().fold(0f32, |m, s| m.max(s.abs()));
    if peak < 1e-6 {
        return vec![0.0; audio.len()];
    }
    let gain = 0.9 / peak;
    audio.iter().map(|s| (s * gain).clamp(-1.0, 1.0)).collect()
}

/// `NAME.onnx.json` beside `NAME.onnx`.
pub fn config_path(model: &Path) -> PathBuf {
    let mut name = model.as_os_str().to_owned();
    name.push(".json");
    PathBuf::from(name)
}
