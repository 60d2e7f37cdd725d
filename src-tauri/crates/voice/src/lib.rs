//! Voice dictation with a local whisper model: record, transcribe, hand back the text.
//!
//! `device` records from a microphone (cpal), `audio` turns any format into 16 kHz mono
//! (rubato), `vad` finds the speech (earshot), `whisper` transcribes (whisper.cpp through
//! whisper-rs), `dictation` runs one recording with its level meter and partial text,
//! `keeper` holds the model only while it is used, `models` is the catalogue and its
//! downloads, `wav` reads files, `text` scores transcripts. [`Voice`] ties them together for
//! the app and the CLI.

pub mod audio;
pub mod cleanup;
pub mod device;
pub mod dictation;
pub mod file;
pub mod gpu;
mod keeper;
pub mod models;
pub mod settings;
pub mod text;
pub mod vad;
pub mod wav;
pub mod whisper;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use serde::Serialize;

use dictation::{Control, DictationConfig, Worker};
pub use dictation::{DictationEvent, DictationOutcome, DictationSink, DictationUpdate};
use keeper::ModelKeeper;
use models::{ModelStore, ModelView};
pub use settings::{PushToTalkMode, VoiceSettings};
use whisper::{Language, TranscribeOptions, Transcript};

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum VoiceError {
    #[error("No microphone found ({detail}). Connect one, or pick another in Settings -> Voice.")]
    NoMicrophone { detail: String },
    #[error("The microphone \"{name}\" is not connected. Pick another in Settings -> Voice.")]
    DeviceNotFound { name: String },
    #[error(
        "Perch may not use the microphone \"{device}\". Allow microphone access for Perch in your system's privacy settings."
    )]
    PermissionDenied { device: String },
    #[error("The microphone \"{device}\" stopped working (it was unplugged or taken by the system).")]
    DeviceLost { device: String },
    #[error("The microphone \"{device}\" could not record: {message}")]
    DeviceFailed { device: String, message: String },
    #[error(
        "The whisper model {name} is not downloaded. Download it in Settings -> Voice, or run `perch voice models download {name}`."
    )]
    ModelMissing { name: String, path: PathBuf },
    #[error(
        "There is no whisper model called \"{name}\". Known models: tiny, tiny.en, base, base.en, small, small.en (or give the path of a ggml file)."
    )]
    UnknownModel { name: String },
    #[error("{path} cannot be used: {message}")]
    ModelInvalid { path: PathBuf, message: String },
    #[error("\"{code}\" is not a language whisper knows; use a code such as en, de, fr, or auto.")]
    UnknownLanguage { code: String },
    #[error("{path}: {message}")]
    UnsupportedAudio { path: PathBuf, message: String },
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("Dictation is already running; stop it first.")]
    Busy,
    #[error("No dictation is running.")]
    NotRunning,
    #[error(
        "No speech was heard. Check that the right microphone is chosen in Settings -> Voice and that its level moves when you speak."
    )]
    NoSpeech,
    #[error("Transcription failed: {0}")]
    Transcription(String),
    #[error(transparent)]
    Download(#[from] perch_download::DownloadError),
    #[error("Stopped.")]
    Cancelled,
}

/// The kind of a voice error, for the window to choose what to offer (Settings, retry, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum VoiceErrorKind {
    Microphone,
    Permission,
    Model,
    Audio,
    Busy,
    NoSpeech,
    Transcription,
    Download,
    Cancelled,
    /// Words dictated for another application could not be typed there (they went to the
    /// clipboard instead).
    Typing,
}

impl VoiceError {
    pub(crate) fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io { action, path: path.into(), source }
    }

    pub fn kind(&self) -> VoiceErrorKind {
        match self {
            Self::NoMicrophone { .. }
            | Self::DeviceNotFound { .. }
            | Self::DeviceLost { .. }
            | Self::DeviceFailed { .. } => VoiceErrorKind::Microphone,
            Self::PermissionDenied { .. } => VoiceErrorKind::Permission,
            Self::ModelMissing { .. } | Self::UnknownModel { .. } | Self::ModelInvalid { .. } => {
                VoiceErrorKind::Model
            }
            Self::UnknownLanguage { .. } | Self::UnsupportedAudio { .. } | Self::Io { .. } => {
                VoiceErrorKind::Audio
            }
            Self::Busy | Self::NotRunning => VoiceErrorKind::Busy,
            Self::NoSpeech => VoiceErrorKind::NoSpeech,
            Self::Transcription(_) => VoiceErrorKind::Transcription,
            Self::Download(_) => VoiceErrorKind::Download,
            Self::Cancelled => VoiceErrorKind::Cancelled,
        }
    }
}

/// Where a dictation's audio comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AudioSource {
    /// A microphone by name; `None` is the system default.
    Device(Option<String>),
    /// A WAV file played as if a microphone heard it (tests, and checking a setup without
    /// speaking); `realtime` paces it like a live microphone.
    Wav { path: PathBuf, realtime: bool },
}

struct Running {
    session: u32,
    control: mpsc::Sender<Control>,
    done: Option<tokio::sync::oneshot::Receiver<Result<DictationOutcome, VoiceError>>>,
}

/// Dictation and whisper models for the app and the CLI. Cheap to share behind an `Arc`.
pub struct Voice {
    store: ModelStore,
    keeper: Arc<ModelKeeper>,
    running: Mutex<Option<Running>>,
    next_session: AtomicU32,
    downloads: perch_download::Downloads,
    /// Fetch models from here instead of their URLs (`PERCH_WHISPER_MIRROR`: mirrors, tests).
    mirror: Option<String>,
}

impl std::fmt::Debug for Voice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Voice").field("models", &self.store.dir()).finish_non_exhaustive()
    }
}

impl Voice {
    pub fn new(data_dir: &Path) -> Self {
        Self::with_store(ModelStore::in_data_dir(data_dir))
    }

    pub fn with_store(store: ModelStore) -> Self {
        Self {
            store,
            keeper: Arc::default(),
            running: Mutex::default(),
            next_session: AtomicU32::new(1),
            downloads: perch_download::Downloads::default(),
            mirror: std::env::var("PERCH_WHISPER_MIRROR").ok().filter(|m| !m.trim().is_empty()),
        }
    }

    pub fn store(&self) -> &ModelStore {
        &self.store
    }

    pub fn models(&self) -> Vec<ModelView> {
        self.store.list()
    }

    /// The loaded model's file, if one is in memory.
    pub fn loaded_model(&self) -> Option<PathBuf> {
        self.keeper.loaded_path()
    }

    /// Downloads a model of the catalogue; `cancel_download` stops it (resumable later).
    pub async fn download(
        &self,
        name: &str,
        progress: impl FnMut(perch_download::Progress) + Send,
    ) -> Result<ModelView, VoiceError> {
        let running = self.downloads.start(name)?;
        self.store.download(name, self.mirror.as_deref(), running.token(), progress).await
    }

    /// Stops a download in progress; what arrived is kept for the next attempt.
    pub fn cancel_download(&self, name: &str) -> bool {
        self.downloads.cancel(name)
    }

    pub fn delete_model(&self, name: &str) -> Result<ModelView, VoiceError> {
        self.cancel_download(name);
        let view = self.store.view(
            models::CatalogModel::find(name)
                .ok_or_else(|| VoiceError::UnknownModel { name: name.to_owned() })?,
        );
        if self.keeper.loaded_path().is_some_and(|p| p.display().to_string() == view.path) {
            self.keeper.unload();
        }
        self.store.delete(name)
    }

    fn options(settings: &VoiceSettings) -> Result<TranscribeOptions, VoiceError> {
        Ok(TranscribeOptions {
            language: Language::parse(&settings.language)?,
            prompt: cleanup::initial_prompt(&settings.vocabulary),
            ..TranscribeOptions::default()
        })
    }

    /// Transcribes 16 kHz mono audio with the model in `settings` (or `model`, a name or a
    /// path). Runs on a blocking thread.
    pub async fn transcribe(
        &self,
        settings: &VoiceSettings,
        model: Option<&str>,
        samples: Vec<f32>,
    ) -> Result<Transcript, VoiceError> {
        let path = self.store.resolve(model.unwrap_or(&settings.model))?;
        let options = Self::options(settings)?;
        let keeper = self.keeper.clone();
        let (keep, gpu) = (settings.keep_model(), settings.use_gpu);
        tokio::task::spawn_blocking(move || {
            let model = keeper.get(&path, gpu)?;
            let span = vad::speech_span(&samples).ok_or(VoiceError::NoSpeech)?;
            let transcript = model.transcribe(&samples[span], &options, None);
            drop(model);
            keeper.release_after(keep);
            transcript
        })
        .await
        .map_err(|e| VoiceError::Transcription(e.to_string()))?
    }

    /// Transcribes a WAV file of any format and length, piece by piece (see [`file`]).
    pub async fn transcribe_file(
        &self,
        settings: &VoiceSettings,
        model: Option<&str>,
        path: PathBuf,
        progress: impl FnMut(file::FileProgress) + Send + 'static,
    ) -> Result<String, VoiceError> {
        // A file that is not a WAV is refused before anything else.
        drop(wav::WavStream::open(&path)?);
        let model_path = self.store.resolve(model.unwrap_or(&settings.model))?;
        let options = Self::options(settings)?;
        let (keeper, keep, gpu) = (self.keeper.clone(), settings.keep_model(), settings.use_gpu);
        tokio::task::spawn_blocking(move || {
            let model = keeper.get(&model_path, gpu)?;
            let result = file::transcribe_file(&model, &path, &options, None, progress);
            drop(model);
            keeper.release_after(keep);
            result
        })
        .await
        .map_err(|e| VoiceError::Transcription(e.to_string()))?
    }

    /// Starts a dictation; its events go to `sink`. Returns its session number.
    pub fn start_dictation(
        &self,
        settings: &VoiceSettings,
        source: AudioSource,
        sink: Arc<dyn DictationSink>,
    ) -> Result<u32, VoiceError> {
        self.start(settings, source, sink, None)
    }

    /// A hands-free turn: a dictation that ends by itself once the user has paused for
    /// `end_after` (a countdown shows the pause), and whose text is always sent.
    pub fn start_hands_free(
        &self,
        settings: &VoiceSettings,
        source: AudioSource,
        sink: Arc<dyn DictationSink>,
        end_after: Duration,
    ) -> Result<u32, VoiceError> {
        let settings = VoiceSettings { send_after_dictation: true, ..settings.clone() };
        self.start(&settings, source, sink, Some(end_after))
    }

    /// A hands-free turn's countdown cancelled: it goes on until stopped by hand.
    pub fn keep_listening(&self) -> Result<u32, VoiceError> {
        self.control(Control::KeepListening)
    }

    fn start(
        &self,
        settings: &VoiceSettings,
        source: AudioSource,
        sink: Arc<dyn DictationSink>,
        end_after_silence: Option<Duration>,
    ) -> Result<u32, VoiceError> {
        let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        // The worker holds the other end of `control` until it has finished.
        if running.as_ref().is_some_and(|r| r.control.send(Control::Ping).is_ok()) {
            return Err(VoiceError::Busy);
        }
        let model_path = self.store.resolve(&settings.model)?;
        let options = Self::options(settings)?;
        let (audio_tx, audio_rx) = mpsc::channel();
        let capture = match &source {
            AudioSource::Device(name) => device::start(name.as_deref(), audio_tx)?,
            AudioSource::Wav { path, realtime } => device::start_wav(path, *realtime, audio_tx)?,
        };
        let format = capture.format.clone();
        // The model loads while the user speaks.
        let keeper = self.keeper.clone();
        let (path, gpu) = (model_path.clone(), settings.use_gpu);
        let loading = std::thread::Builder::new()
            .name("perch-whisper-load".into())
            .spawn(move || keeper.get(&path, gpu))
            .map_err(|e| VoiceError::io("starting", "the model loader", e))?;
        let session = self.next_session.fetch_add(1, Ordering::Relaxed);
        let (control, control_rx) = mpsc::channel();
        let worker = Worker {
            session,
            config: DictationConfig {
                model_path,
                options,
                max_seconds: settings.max_seconds,
                partials: settings.partial_results,
                send_after: settings.send_after_dictation,
                keep_model: settings.keep_model(),
                tidy: cleanup::Tidy::from_settings(settings),
                end_after_silence,
            },
            format,
            capture: Some(Box::new(capture)),
            audio_rx,
            control_rx,
            loading: Some(loading),
            model: None,
            keeper: self.keeper.clone(),
            sink,
        };
        let (done_tx, done_rx) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("perch-dictation".into())
            .spawn(move || {
                let _ = done_tx.send(worker.run());
            })
            .map_err(|e| VoiceError::io("starting", "the dictation thread", e))?;
        *running = Some(Running { session, control, done: Some(done_rx) });
        Ok(session)
    }

    /// Stops recording and waits for the final text.
    pub async fn finish_dictation(&self) -> Result<DictationOutcome, VoiceError> {
        self.stop_dictation()?;
        self.wait_dictation().await
    }

    /// Waits until the dictation ends (stopped, at its length limit, or failed).
    pub async fn wait_dictation(&self) -> Result<DictationOutcome, VoiceError> {
        let done = {
            let mut running = self.running.lock().unwrap_or_else(|p| p.into_inner());
            running.as_mut().and_then(|run| run.done.take()).ok_or(VoiceError::NotRunning)?
        };
        done.await.unwrap_or(Err(VoiceError::Cancelled))
    }

    /// Stops recording; the final text arrives as an event. Returns at once.
    pub fn stop_dictation(&self) -> Result<u32, VoiceError> {
        self.control(Control::Stop)
    }

    /// Throws the recording away.
    pub fn cancel_dictation(&self) -> Result<u32, VoiceError> {
        self.control(Control::Cancel)
    }

    fn control(&self, message: Control) -> Result<u32, VoiceError> {
        let running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        let run = running.as_ref().ok_or(VoiceError::NotRunning)?;
        run.control.send(message).map_err(|_| VoiceError::NotRunning)?;
        Ok(run.session)
    }

    /// Where dictation runs, in words for Settings -> Voice and `perch doctor`: the model in
    /// memory's place, else where the model in `settings` would go. Blocking (it may start
    /// ggml's Vulkan device registry, which opens the drivers): call from a blocking thread.
    pub fn runs_on(&self, settings: &VoiceSettings) -> String {
        if let Some(model) = self.keeper.loaded() {
            return model.runs_on();
        }
        let size = self.store.resolve(&settings.model).ok().and_then(|p| std::fs::metadata(p).ok());
        match gpu::choose(size.map_or(0, |m| m.len()), settings.use_gpu, gpu::card()) {
            Ok(card) => format!("the graphics card, {}", card.description),
            Err(why) => format!("the CPU ({why})"),
        }
    }

    /// Whether a dictation is recording or transcribing.
    pub fn is_active(&self) -> bool {
        let running = self.running.lock().unwrap_or_else(|p| p.into_inner());
        running.as_ref().is_some_and(|r| r.control.send(Control::Ping).is_ok())
    }

    /// Stops any dictation and drops the model (the app is quitting).
    pub fn shutdown(&self) {
        let _ = self.cancel_dictation();
        self.keeper.unload();
    }
}

/// How long the model stays loaded after a dictation. Short, because the next dictation loads
/// it while the microphone records (tiny.en in about 0.1 s, small in about 1 s), so a released
/// model costs that wait only when the speech is shorter than the load; kept longer, the model
/// (130 MB for tiny.en, 850 MB for small) was most of what the app still held a minute after
/// a day of use (the soak, issue 45).
pub const DEFAULT_KEEP_MODEL: Duration = Duration::from_secs(30);
