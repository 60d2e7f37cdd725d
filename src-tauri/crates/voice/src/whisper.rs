//! whisper.cpp through whisper-rs: loading a ggml model (checked before whisper.cpp sees it)
//! and transcribing 16 kHz mono audio. Everything here blocks: callers run it on a blocking
//! thread, never on the async runtime.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use whisper_rs::{FullParams, SamplingStrategy, WhisperContext, WhisperContextParameters};

use super::VoiceError;
use super::audio::WHISPER_RATE;

/// "ggml" as whisper.cpp writes it (little-endian u32).
const GGML_MAGIC: u32 = 0x6767_6d6c;

/// Which language to transcribe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Language {
    /// Detected from the audio (multilingual models); English for English-only models.
    Auto,
    /// A whisper language code such as `en` or `de`.
    Fixed(String),
}

impl Language {
    /// `auto` or a code whisper knows; anything else is refused with the reason.
    pub fn parse(text: &str) -> Result<Self, VoiceError> {
        let code = text.trim().to_ascii_lowercase();
        if code.is_empty() || code == "auto" {
            return Ok(Self::Auto);
        }
        match whisper_rs::get_lang_id(&code) {
            Some(_) => Ok(Self::Fixed(code)),
            None => Err(VoiceError::UnknownLanguage { code: text.to_owned() }),
        }
    }
}

#[derive(Debug, Clone)]
pub struct TranscribeOptions {
    pub language: Language,
    pub threads: usize,
    /// A quick pass for text shown while the user is still speaking: no temperature fallback
    /// (its text is replaced by the next pass anyway).
    pub quick: bool,
    /// Shown to whisper before the audio: the user's vocabulary, which it then spells their way.
    pub prompt: Option<String>,
}

impl Default for TranscribeOptions {
    fn default() -> Self {
        Self { language: Language::Auto, threads: default_threads(), quick: false, prompt: None }
    }
}

/// The encoder's window: 30 s of audio in 1500 positions of 20 ms.
const WINDOW_SAMPLES: usize = 30 * WHISPER_RATE as usize;
const WINDOW_POSITIONS: usize = 1500;
/// Positions of silence the encoder sees after the audio (2.56 s, whisper.cpp's padding).
/// The model only ever saw whole 30 s windows, short clips padded with silence; this much of
/// it lets the model end the last word and the sentence.
const SILENCE_AFTER: usize = 128;

/// Encoder positions for a pass over `samples` samples of audio: those the audio fills and
/// some silence after them, or `None` (the whole window) when that reaches 30 s.
///
/// whisper.cpp encodes a full 30 s window whatever the audio's length, and the encoder is
/// nine tenths of a pass: for a 6 s dictation, encoding 8.6 s instead of 30 makes the pass
/// about four times faster. The words stay as good: word error rate over 84 espeak-ng
/// sentences 0.138 against 0.155 with whole windows (faster-whisper, which always encodes
/// whole windows: 0.149), over 10 dictations of 7 to 23 s 0.050 against 0.059 (0.067).
/// Windows after the first (audio over 30 s) stay whole.
pub fn encoder_positions(samples: usize) -> Option<usize> {
    let positions = samples.div_ceil(WINDOW_SAMPLES / WINDOW_POSITIONS) + SILENCE_AFTER;
    (positions < WINDOW_POSITIONS).then_some(positions)
}

/// Threads for whisper: all cores up to four, then one left for the window and the audio
/// thread, at most eight (whisper.cpp gains little beyond that on CPU).
pub fn default_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    if cores <= 4 { cores } else { (cores - 1).min(8) }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Segment {
    pub start_ms: u64,
    pub end_ms: u64,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    pub text: String,
    pub segments: Vec<Segment>,
    /// The language whisper used (detected or fixed).
    pub language: Option<String>,
    pub elapsed: Duration,
}

/// A loaded model, shareable across threads (each transcription has its own state).
pub struct Model {
    ctx: WhisperContext,
    path: PathBuf,
    multilingual: bool,
    pub load_time: Duration,
    /// Whether the graphics card was asked for (Settings -> Voice), and the card the model was
    /// loaded on (its description), or why the CPU.
    pub gpu_wanted: bool,
    pub card: Result<String, String>,
    /// The model loaded again on the CPU after the card failed a transcription (the audio is
    /// transcribed again there: nothing said is lost).
    on_cpu: std::sync::OnceLock<Result<WhisperContext, String>>,
}

impl std::fmt::Debug for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Model").field("path", &self.path).field("multilingual", &self.multilingual).finish()
    }
}

/// The numbers at the start of a ggml whisper file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelHeader {
    pub n_vocab: i32,
    pub n_audio_layer: i32,
    pub n_text_layer: i32,
    pub n_mels: i32,
}

/// Reads and sanity-checks the header, so a damaged or foreign file gets a clear message
/// instead of whisper.cpp allocating whatever a corrupt header asks for.
pub fn read_header(path: &Path) -> Result<ModelHeader, VoiceError> {
    let invalid =
        |message: &str| VoiceError::ModelInvalid { path: path.to_path_buf(), message: message.to_owned() };
    let mut file = std::fs::File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            VoiceError::ModelMissing { name: path.display().to_string(), path: path.to_path_buf() }
        }
        _ => VoiceError::io("opening", path, e),
    })?;
    let mut head = [0u8; 48];
    file.read_exact(&mut head).map_err(|_| invalid("the file is too short to be a whisper model"))?;
    let word = |i: usize| i32::from_le_bytes(head[i * 4..i * 4 + 4].try_into().expect("4 bytes"));
    if word(0) as u32 != GGML_MAGIC {
        return Err(invalid("this is not a whisper.cpp (ggml) model file"));
    }
    let header =
        ModelHeader { n_vocab: word(1), n_audio_layer: word(5), n_text_layer: word(9), n_mels: word(10) };
    let (n_audio_ctx, n_audio_state, n_text_ctx) = (word(2), word(3), word(6));
    let sane = (51_000..=52_000).contains(&header.n_vocab)
        && [4, 6, 12, 24, 32].contains(&header.n_audio_layer)
        && (1..=32).contains(&header.n_text_layer)
        && [80, 128].contains(&header.n_mels)
        && n_audio_ctx == 1500
        && (256..=1536).contains(&n_audio_state)
        && n_text_ctx == 448;
    if !sane {
        return Err(invalid("the model's header is damaged (its sizes are not those of any whisper model)"));
    }
    Ok(header)
}

impl Model {
    /// Loads a model, on the graphics card when `gpu` and it fits there, else on the CPU (also
    /// when the card fails to load it).
    pub fn load(path: &Path, gpu: bool) -> Result<Self, VoiceError> {
        install_logging();
        let header = read_header(path)?;
        let started = Instant::now();
        let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
        let mut card = super::gpu::choose(bytes, gpu, super::gpu::card()).map(|card| card.description);
        let mut ctx = None;
        if let Ok(description) = &card {
            let loaded = match super::gpu::InjectedFailure::from_env() {
                Some(super::gpu::InjectedFailure::Load) => Err(whisper_rs::WhisperError::InitError),
                _ => context(path, true),
            };
            match loaded {
                Ok(loaded) => ctx = Some(loaded),
                Err(e) => {
                    tracing::warn!(model = %path.display(), error = %e, "the graphics card could not load the whisper model");
                    card = Err(format!("{description} could not load it ({e})"));
                }
            }
        }
        let ctx = match ctx {
            Some(ctx) => ctx,
            None => context(path, false).map_err(|e| VoiceError::ModelInvalid {
                path: path.to_path_buf(),
                message: format!("whisper.cpp could not load it ({e}); the file is probably damaged: delete it and download it again"),
            })?,
        };
        let load_time = started.elapsed();
        tracing::info!(model = %path.display(), ms = load_time.as_millis() as u64, ?card, "whisper model loaded");
        Ok(Self {
            ctx,
            path: path.to_path_buf(),
            multilingual: header.n_vocab >= 51_865,
            load_time,
            gpu_wanted: gpu,
            card,
            on_cpu: std::sync::OnceLock::new(),
        })
    }

    /// Where the model runs, in words for Settings and `perch doctor`.
    pub fn runs_on(&self) -> String {
        match (&self.card, self.on_cpu.get()) {
            (Ok(card), Some(_)) => format!("the CPU ({card} failed a transcription)"),
            (Ok(card), None) => format!("the graphics card, {card}"),
            (Err(why), _) => format!("the CPU ({why})"),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn multilingual(&self) -> bool {
        self.multilingual
    }

    /// Transcribes 16 kHz mono audio. `abort` stops it between decoder steps. Should the
    /// graphics card fail, the model is loaded on the CPU and the audio transcribed there, and
    /// every later transcription with this model stays on the CPU.
    pub fn transcribe(
        &self,
        samples: &[f32],
        options: &TranscribeOptions,
        abort: Option<Arc<AtomicBool>>,
    ) -> Result<Transcript, VoiceError> {
        if self.card.is_err() {
            return transcribe_with(&self.ctx, self.multilingual, samples, options, abort);
        }
        if let Some(Ok(cpu)) = self.on_cpu.get() {
            return transcribe_with(cpu, self.multilingual, samples, options, abort);
        }
        let on_card = match super::gpu::InjectedFailure::from_env() {
            Some(super::gpu::InjectedFailure::Pass) => {
                Err(VoiceError::Transcription("the device was lost (PERCH_VOICE_FAIL_GPU)".to_owned()))
            }
            _ => transcribe_with(&self.ctx, self.multilingual, samples, options, abort.clone()),
        };
        match on_card {
            Err(VoiceError::Transcription(e)) => {
                tracing::warn!(model = %self.path.display(), error = %e, "the graphics card failed a transcription; going on on the CPU");
                let cpu = self.on_cpu.get_or_init(|| context(&self.path, false).map_err(|e| e.to_string()));
                match cpu {
                    Ok(cpu) => transcribe_with(cpu, self.multilingual, samples, options, abort),
                    Err(again) => Err(VoiceError::Transcription(format!("{e}; on the CPU too: {again}"))),
                }
            }
            other => other,
        }
    }
}

/// A whisper.cpp context for the model at `path`, on the graphics card or the CPU.
fn context(path: &Path, gpu: bool) -> Result<WhisperContext, whisper_rs::WhisperError> {
    let mut params = WhisperContextParameters::default();
    params.use_gpu(gpu);
    // Flash attention stays off (whisper-rs's default, not whisper.cpp's): whisper.cpp 1.8.3
    // pads its keys to a multiple of 256 positions without a mask, so a window cut to the
    // audio (see `encoder_positions`) would attend to empty positions, which cost words
    // (ARCHITECTURE.md); it is also 5-10% slower here.
    WhisperContext::new_with_params(path, params)
}

/// One transcription with one context (see [`Model::transcribe`]).
fn transcribe_with(
    ctx: &WhisperContext,
    multilingual: bool,
    samples: &[f32],
    options: &TranscribeOptions,
    abort: Option<Arc<AtomicBool>>,
) -> Result<Transcript, VoiceError> {
    let started = Instant::now();
    let failed = |e: whisper_rs::WhisperError| VoiceError::Transcription(e.to_string());
    let mut state = ctx.create_state().map_err(failed)?;
    // Greedy decoding; when a window's text fails whisper's checks (it repeats itself or
    // is unlikely), whisper.cpp decodes it again at a higher temperature, keeping the best
    // of 5 samples (its defaults, and faster-whisper's). Quick passes skip that fallback.
    let mut params = FullParams::new(SamplingStrategy::Greedy { best_of: 5 });
    params.set_temperature_inc(if options.quick { 0.0 } else { 0.2 });
    params.set_n_threads(options.threads.max(1) as i32);
    params.set_translate(false);
    params.set_no_context(true);
    params.set_print_progress(false);
    params.set_print_realtime(false);
    params.set_print_special(false);
    params.set_print_timestamps(false);
    params.set_suppress_blank(true);
    // No tokens for sounds that are not words ("(music)", "*", "[") as faster-whisper's
    // default `suppress_tokens=[-1]`.
    params.set_suppress_nst(true);
    let language = match (&options.language, multilingual) {
        (_, false) => "en".to_owned(),
        (Language::Auto, true) => "auto".to_owned(),
        (Language::Fixed(code), true) => code.clone(),
    };
    params.set_language(Some(&language));
    if let Some(prompt) = &options.prompt {
        params.set_initial_prompt(prompt);
    }
    // Padding short audio to whisper's minimum second avoids a known hallucination on
    // very short clips.
    let min = WHISPER_RATE as usize + WHISPER_RATE as usize / 10;
    let padded;
    let audio = if samples.len() < min {
        padded = [samples, &vec![0.0; min - samples.len()]].concat();
        &padded[..]
    } else {
        samples
    };
    if let Some(positions) = encoder_positions(audio.len()) {
        params.set_audio_ctx(positions as i32);
    }
    if let Some(flag) = &abort {
        stop_when_set(&mut params, flag);
    }
    let outcome = state.full(params, audio);
    if abort.is_some_and(|f| f.load(Ordering::Relaxed)) {
        return Err(VoiceError::Cancelled);
    }
    outcome.map_err(failed)?;
    let mut segments = Vec::new();
    for segment in state.as_iter() {
        let text = segment.to_str_lossy().map_err(failed)?.trim().to_owned();
        if text.is_empty() || is_non_speech(&text) {
            continue;
        }
        segments.push(Segment {
            start_ms: segment.start_timestamp().max(0) as u64 * 10,
            end_ms: segment.end_timestamp().max(0) as u64 * 10,
            text,
        });
    }
    let text = segments.iter().map(|s| s.text.as_str()).collect::<Vec<_>>().join(" ");
    let language = whisper_rs::get_lang_str(state.full_lang_id_from_state()).map(str::to_owned);
    Ok(Transcript { text, segments, language, elapsed: started.elapsed() })
}

/// Makes whisper.cpp stop between steps once `flag` is set. The flag must outlive the pass
/// that uses `params` (`transcribe` holds its `Arc` until `full` returns).
///
/// whisper-rs 0.16's `set_abort_callback_safe` is not used: its trampoline casts the user data
/// to the closure's type while it stores a boxed trait object, so it reads unrelated memory (and
/// it leaks that box on every call). This is the raw callback over the flag's own address.
#[allow(unsafe_code)]
fn stop_when_set(params: &mut FullParams<'_, '_>, flag: &Arc<AtomicBool>) {
    unsafe extern "C" fn flag_is_set(data: *mut std::ffi::c_void) -> bool {
        // SAFETY: `data` is the `AtomicBool` inside the caller's `Arc`, alive for the pass.
        unsafe { (*(data as *const AtomicBool)).load(Ordering::Relaxed) }
    }
    // SAFETY: the callback only reads the atomic, from whichever thread whisper.cpp calls it on.
    unsafe {
        params.set_abort_callback(Some(flag_is_set));
        params.set_abort_callback_user_data(Arc::as_ptr(flag) as *mut std::ffi::c_void);
    }
}

/// Whisper's markers for sounds that are not words: "[BLANK_AUDIO]", "(music)", "[ Silence ]".
fn is_non_speech(text: &str) -> bool {
    let t = text.trim();
    (t.starts_with('[') && t.ends_with(']')) || (t.starts_with('(') && t.ends_with(')'))
}

/// whisper.cpp's and ggml's logs go to `tracing` instead of stderr.
fn install_logging() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(whisper_rs::install_logging_hooks);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_are_auto_or_codes_whisper_knows() {
        assert_eq!(Language::parse("auto").unwrap(), Language::Auto);
        assert_eq!(Language::parse("").unwrap(), Language::Auto);
        assert_eq!(Language::parse("DE").unwrap(), Language::Fixed("de".into()));
        assert!(matches!(Language::parse("klingon"), Err(VoiceError::UnknownLanguage { .. })));
    }

    #[test]
    fn the_encoder_window_covers_the_audio_and_some_silence_up_to_a_whole_window() {
        // 6 s: 300 positions of audio (20 ms each) and 128 of silence.
        assert_eq!(encoder_positions(6 * WHISPER_RATE as usize), Some(428));
        assert_eq!(encoder_positions(1), Some(129));
        assert_eq!(encoder_positions(27 * WHISPER_RATE as usize), Some(1478));
        // From 27.44 s on, the window is whole (whisper.cpp's default).
        assert_eq!(encoder_positions(28 * WHISPER_RATE as usize), None);
        assert_eq!(encoder_positions(45 * WHISPER_RATE as usize), None);
    }

    #[test]
    fn non_speech_markers_are_recognised() {
        assert!(is_non_speech("[BLANK_AUDIO]"));
        assert!(is_non_speech(" (music) "));
        assert!(!is_non_speech("Take a screenshot."));
    }

    /// The abort path as `transcribe` installs it, run by the real whisper.cpp on the test
    /// model (`make deps` builds it): unset, every pass runs to its end; set, whisper.cpp itself
    /// stops the pass (not only Perch's check afterwards).
    #[test]
    fn a_pass_runs_to_the_end_unless_its_flag_is_set_and_then_whisper_stops() {
        let path = std::env::var_os("PERCH_WHISPER_TEST_MODEL").map(PathBuf::from).unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/perch/models/ggml-tiny.en.bin")
        });
        assert!(path.is_file(), "the whisper test model {} is missing: run `make deps`", path.display());
        let model = Model::load(&path, false).unwrap();
        // Two seconds of a tone: whisper decodes it (to nothing much) in well under a second.
        let audio: Vec<f32> = (0..2 * WHISPER_RATE as usize).map(|i| (i as f32 * 0.05).sin() * 0.3).collect();
        let pass = |flag: &Arc<AtomicBool>| {
            let mut state = model.ctx.create_state().unwrap();
            let mut params = FullParams::new(SamplingStrategy::Greedy { best_of: 1 });
            params.set_n_threads(2);
            params.set_language(Some("en"));
            stop_when_set(&mut params, flag);
            state.full(params, &audio)
        };
        let unset = Arc::new(AtomicBool::new(false));
        for round in 0..5 {
            assert!(pass(&unset).is_ok(), "round {round}: a pass nobody stopped was aborted");
        }
        let set = Arc::new(AtomicBool::new(true));
        assert!(pass(&set).is_err(), "whisper.cpp ran a whole pass with its abort flag set");
        let options = TranscribeOptions { threads: 2, ..TranscribeOptions::default() };
        assert!(matches!(model.transcribe(&audio, &options, Some(set)), Err(VoiceError::Cancelled)));
        assert!(model.transcribe(&audio, &options, Some(unset)).is_ok());
    }

    #[test]
    fn headers_that_are_not_whisper_models_are_refused_before_whisper_cpp_sees_them() {
        let dir = tempfile::tempdir().unwrap();
        let junk = dir.path().join("junk.bin");
        std::fs::write(&junk, vec![7u8; 4096]).unwrap();
        assert!(matches!(read_header(&junk), Err(VoiceError::ModelInvalid { .. })));
        let short = dir.path().join("short.bin");
        std::fs::write(&short, b"lmgg").unwrap();
        assert!(matches!(read_header(&short), Err(VoiceError::ModelInvalid { .. })));
        let mut header = Vec::new();
        for v in [GGML_MAGIC as i32, 51864, 1500, 384, 6, 4, 448, 384, 6, 4, 80, 1] {
            header.extend_from_slice(&v.to_le_bytes());
        }
        let ok = dir.path().join("ok.bin");
        std::fs::write(&ok, &header).unwrap();
        assert_eq!(read_header(&ok).unwrap().n_audio_layer, 4);
        header[20..24].copy_from_slice(&999i32.to_le_bytes());
        std::fs::write(&ok, &header).unwrap();
        assert!(matches!(read_header(&ok), Err(VoiceError::ModelInvalid { .. })));
        assert!(matches!(read_header(&dir.path().join("none.bin")), Err(VoiceError::ModelMissing { .. })));
    }
}
