//! Speech out: answers read aloud on this machine. A Piper voice (a neural VITS model, run by
//! ONNX Runtime on the CPU) speaks when one is downloaded; espeak-ng's own voice speaks when none
//! is, or when a voice fails, so reading aloud always works. Nothing leaves the machine.
//!
//! `Speaker` is the one way sound is made: sentences go in as an answer streams (see
//! [`text::Sentences`]), a worker thread turns each into audio while the one before is playing,
//! and `stop` silences it at once. `Speech::render` makes the same audio for a file.

pub mod espeak;
pub mod piper;
pub mod player;
pub mod settings;
pub mod text;
pub mod voices;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use serde::Serialize;

pub use perch_download::Progress;
pub use settings::SpeechSettings;
pub use text::{Phrases, Sentences};
pub use voices::{CatalogVoice, VoiceState, VoiceStore, VoiceView};

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SpeechError {
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the voice {path} cannot be used: {message}")]
    BadVoice { path: PathBuf, message: String },
    #[error(
        "natural voices need ONNX Runtime, which could not be loaded ({message}); espeak-ng speaks instead"
    )]
    RuntimeMissing { message: String },
    #[error(
        "espeak-ng could not be loaded ({message}): install the espeak-ng package (Debian and Ubuntu: sudo apt install espeak-ng)"
    )]
    EspeakMissing { message: String },
    #[error("espeak-ng has no voice \"{voice}\"")]
    UnknownEspeakVoice { voice: String },
    #[error("there is no voice \"{name}\" in the catalogue (Settings -> Voice lists them)")]
    UnknownVoice { name: String },
    #[error("the voice could not speak: {message}")]
    Synthesis { message: String },
    #[error("the sound could not be played: {message}")]
    Output { message: String },
    #[error("the loudspeaker \"{name}\" is not connected; choose another in Settings -> Voice")]
    OutputNotFound { name: String },
    #[error("the voice could not be downloaded: {0}")]
    Download(#[from] perch_download::DownloadError),
}

/// Which voice speaks, as resolved from the settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum VoiceChoice {
    /// A Piper model file.
    Piper { name: String, path: String },
    /// espeak-ng's own voice for a language; `reason` says why no natural voice speaks.
    Espeak { voice: String, reason: String },
}

/// What a speaker reports.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SpeechEvent {
    /// The first sound of an answer is playing; `latency_ms` from its first sentence's arrival.
    Speaking { id: String, latency_ms: u32 },
    /// Everything of the answer was spoken.
    Finished { id: String },
    /// Stopped before the end (Stop, Esc, or the user talking over it).
    Stopped { id: String },
    /// A sentence could not be spoken; `message` says why and what to do.
    Failed { id: String, message: String },
}

/// How long a loaded voice stays in memory after it last spoke.
const KEEP_VOICE: Duration = Duration::from_secs(300);

/// How much speech is made ahead of the loudspeaker: enough that the next sentence is ready
/// before this one ends on a busy machine, not a whole answer's audio in memory (about 190 KB a
/// second at 48 kHz) nor the cores taken from a local model still writing it.
const MAKE_AHEAD: f64 = 3.0;

/// Speech out for one data folder: the voices and the speaker.
pub struct Speech {
    store: VoiceStore,
    /// A hands-free conversation is on: every answer is spoken, whatever the settings say.
    conversation: std::sync::atomic::AtomicBool,
    /// What is said for code and tables, in the UI's language (the window sends it).
    phrases: Mutex<Phrases>,
    downloads: perch_download::Downloads,
    speaker: Speaker,
}

impl std::fmt::Debug for Speech {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Speech").field("voices", &self.store.dir()).finish_non_exhaustive()
    }
}

impl Speech {
    pub fn new(data_dir: &Path) -> Self {
        let store = VoiceStore::in_data_dir(data_dir);
        Self {
            speaker: Speaker::new(store.clone()),
            store,
            downloads: perch_download::Downloads::default(),
            conversation: std::sync::atomic::AtomicBool::new(false),
            phrases: Mutex::new(Phrases::default()),
        }
    }

    /// The phrases said for code and tables from now on (the window's language).
    pub fn set_phrases(&self, phrases: Phrases) {
        *self.phrases.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = phrases;
    }

    pub fn phrases(&self) -> Phrases {
        self.phrases.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Turns the hands-free conversation on or off (off also silences the voice).
    pub fn set_conversation(&self, on: bool) {
        self.conversation.store(on, Ordering::SeqCst);
        if !on {
            self.speaker.stop();
        }
    }

    /// Whether answers are spoken because a hands-free conversation is on.
    pub fn in_conversation(&self) -> bool {
        self.conversation.load(Ordering::SeqCst)
    }

    /// What the speaker reports from now on.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<SpeechEvent> {
        self.speaker.shared.events.subscribe()
    }

    pub fn store(&self) -> &VoiceStore {
        &self.store
    }

    pub fn speaker(&self) -> &Speaker {
        &self.speaker
    }

    pub fn voices(&self) -> Vec<VoiceView> {
        self.store.list()
    }

    /// Downloads a catalogue voice; `cancel_download` stops it (what arrived is kept).
    pub async fn download(
        &self,
        name: &str,
        progress: impl FnMut(Progress) + Send,
    ) -> Result<VoiceView, SpeechError> {
        let running = self.downloads.start(name)?;
        // `PERCH_VOICES_MIRROR`: fetch from a mirror instead of the voices' URLs (tests, mirrors).
        let mirror = std::env::var("PERCH_VOICES_MIRROR").ok().filter(|m| !m.trim().is_empty());
        self.store.download(name, mirror.as_deref(), running.token(), progress).await
    }

    pub fn cancel_download(&self, name: &str) -> bool {
        self.downloads.cancel(name)
    }

    pub fn delete(&self, name: &str) -> Result<VoiceView, SpeechError> {
        self.store.delete(name)
    }

    /// The voice `settings` pick for `language` (the UI's).
    pub fn choose(&self, settings: &SpeechSettings, language: &str) -> VoiceChoice {
        choose(&self.store, settings, language)
    }

    /// `text` (Markdown) spoken into samples, for a file: mono at the returned rate.
    pub fn render(
        &self,
        text: &str,
        settings: &SpeechSettings,
        language: &str,
        phrases: Phrases,
    ) -> Result<(Vec<f32>, u32), SpeechError> {
        let mut voice = Voice::load_or_espeak(choose(&self.store, settings, language), language)?;
        let mut audio = Vec::new();
        for sentence in Sentences::all(text, phrases) {
            let (samples, _) = voice.speak(&sentence, settings.speed())?;
            audio.extend(samples);
            audio.extend(std::iter::repeat_n(0.0, voice.rate() as usize / 5));
        }
        Ok((audio, voice.rate()))
    }
}

fn choose(store: &VoiceStore, settings: &SpeechSettings, language: &str) -> VoiceChoice {
    let espeak = |reason: String| VoiceChoice::Espeak { voice: espeak::voice_for_language(language), reason };
    let wanted = settings.voice.trim();
    if wanted.eq_ignore_ascii_case("espeak") {
        return espeak("espeak-ng was chosen in Settings".into());
    }
    let path = PathBuf::from(wanted);
    if wanted.ends_with(".onnx") {
        return if path.is_file() && piper::config_path(&path).is_file() {
            VoiceChoice::Piper {
                name: path.file_stem().map_or_else(String::new, |s| s.to_string_lossy().into_owned()),
                path: wanted.to_owned(),
            }
        } else {
            espeak(format!("the voice file {wanted} (or its .onnx.json) is missing"))
        };
    }
    let catalogue = if wanted.is_empty() || wanted.eq_ignore_ascii_case("auto") {
        match voices::default_for(language) {
            Some(voice) => voice,
            None => return espeak(format!("there is no natural voice for \"{language}\" yet")),
        }
    } else {
        match CatalogVoice::find(wanted) {
            Some(voice) => voice,
            None => return espeak(format!("there is no voice \"{wanted}\"")),
        }
    };
    if store.is_ready(catalogue) {
        VoiceChoice::Piper {
            name: catalogue.name.to_owned(),
            path: store.model_path(catalogue).display().to_string(),
        }
    } else {
        espeak(format!("the natural voice {} is not downloaded", catalogue.name))
    }
}

/// A voice ready to speak.
enum Voice {
    Piper { voice: Box<piper::PiperVoice>, path: PathBuf },
    Espeak { voice: String },
}

impl Voice {
    fn threads() -> usize {
        std::thread::available_parallelism().map_or(2, |n| n.get().min(4))
    }

    /// Loads the choice; a Piper voice that cannot load falls back to espeak-ng (said in the log
    /// and in the choice's reason the next time Settings asks).
    fn load(choice: VoiceChoice) -> Result<Self, SpeechError> {
        match choice {
            VoiceChoice::Piper { path, .. } => {
                let path = PathBuf::from(path);
                Ok(Self::Piper { voice: Box::new(piper::PiperVoice::load(&path, Self::threads())?), path })
            }
            VoiceChoice::Espeak { voice, .. } => {
                espeak::available()?;
                Ok(Self::Espeak { voice })
            }
        }
    }

    /// Loads the choice; a natural voice that cannot load (no ONNX Runtime, a damaged file)
    /// leaves espeak-ng to speak, as the errors say.
    fn load_or_espeak(choice: VoiceChoice, language: &str) -> Result<Self, SpeechError> {
        Self::load(choice).or_else(|e| {
            tracing::warn!(error = %e, "the voice could not load; espeak-ng speaks");
            Self::load(VoiceChoice::Espeak {
                voice: espeak::voice_for_language(language),
                reason: e.to_string(),
            })
        })
    }

    fn rate(&self) -> u32 {
        match self {
            Self::Piper { voice, .. } => voice.sample_rate(),
            Self::Espeak { .. } => espeak::SAMPLE_RATE,
        }
    }

    /// One sentence: its samples and the rate they are at.
    fn speak(&mut self, sentence: &str, speed: f32) -> Result<(Vec<f32>, u32), SpeechError> {
        match self {
            Self::Piper { voice, .. } => Ok((voice.speak(sentence, speed)?, voice.sample_rate())),
            Self::Espeak { voice } => {
                let words_per_minute = (175.0 * speed).round() as u32;
                Ok((espeak::synthesize(voice, sentence, words_per_minute)?, espeak::SAMPLE_RATE))
            }
        }
    }

    fn same_as(&self, choice: &VoiceChoice) -> bool {
        match (self, choice) {
            (Self::Piper { path, .. }, VoiceChoice::Piper { path: wanted, .. }) => path == Path::new(wanted),
            (Self::Espeak { voice }, VoiceChoice::Espeak { voice: wanted, .. }) => voice == wanted,
            _ => false,
        }
    }
}

enum Command {
    /// `generation`: the one `begin` started, so a Stop sent after it (before the worker took
    /// it) still drops the answer.
    Begin {
        id: String,
        generation: u64,
        settings: SpeechSettings,
        language: String,
    },
    Sentence {
        id: String,
        text: String,
    },
    End {
        id: String,
    },
}

/// The speaker: one worker thread that turns sentences into sound, one answer at a time.
pub struct Speaker {
    commands: Option<mpsc::Sender<Command>>,
    shared: Arc<Shared>,
    worker: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Speaker {
    /// The worker ends with its channel, and the loudspeaker is closed before returning (an
    /// output that records, as the tests' does, is finished then).
    fn drop(&mut self) {
        self.commands.take();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
        self.shared.player().take();
    }
}

struct Shared {
    /// Bumped by `stop`: sentences of an older generation are dropped unspoken.
    generation: AtomicU64,
    player: Mutex<Option<player::Player>>,
    /// The answer being spoken, if any.
    current: Mutex<Option<String>>,
    events: tokio::sync::broadcast::Sender<SpeechEvent>,
}

impl Shared {
    fn report(&self, event: SpeechEvent) {
        // Nobody listening (the command line) is fine.
        let _ = self.events.send(event);
    }

    fn player(&self) -> std::sync::MutexGuard<'_, Option<player::Player>> {
        self.player.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Speaker {
    fn new(store: VoiceStore) -> Self {
        let (commands, receiver) = mpsc::channel();
        let shared = Arc::new(Shared {
            generation: AtomicU64::new(0),
            player: Mutex::new(None),
            current: Mutex::new(None),
            events: tokio::sync::broadcast::channel(64).0,
        });
        let worker = shared.clone();
        let spawned = std::thread::Builder::new().name("perch-speech".into()).spawn(move || {
            Worker { store, shared: worker, voice: None, last_used: Instant::now() }.run(&receiver)
        });
        let worker =
            spawned.inspect_err(|e| tracing::error!(error = %e, "the speech thread could not start")).ok();
        Self { commands: Some(commands), shared, worker }
    }

    /// Starts speaking answer `id` (stopping whatever was being spoken).
    pub fn begin(&self, id: &str, settings: &SpeechSettings, language: &str) {
        self.stop();
        let generation = self.shared.generation.load(Ordering::SeqCst);
        *self.shared.current.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(id.to_owned());
        self.send(Command::Begin {
            id: id.to_owned(),
            generation,
            settings: settings.clone(),
            language: language.to_owned(),
        });
    }

    /// A sentence of answer `id`, spoken after the ones before it.
    pub fn sentence(&self, id: &str, text: &str) {
        self.send(Command::Sentence { id: id.to_owned(), text: text.to_owned() });
    }

    /// Answer `id` has no more sentences; `Finished` follows when the last is heard.
    pub fn end(&self, id: &str) {
        self.send(Command::End { id: id.to_owned() });
    }

    fn send(&self, command: Command) {
        if let Some(commands) = &self.commands {
            let _ = commands.send(command);
        }
    }

    /// Silences the voice at once and drops what was still to be said.
    pub fn stop(&self) -> Option<String> {
        self.shared.generation.fetch_add(1, Ordering::SeqCst);
        espeak::stop();
        if let Some(player) = self.shared.player().as_ref() {
            player.stop();
        }
        let stopped = self.shared.current.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        if let Some(id) = &stopped {
            self.shared.report(SpeechEvent::Stopped { id: id.clone() });
        }
        stopped
    }

    /// The answer being spoken.
    pub fn speaking(&self) -> Option<String> {
        self.shared.current.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }
}

/// One answer in the worker's hands.
struct Answer {
    id: String,
    generation: u64,
    settings: SpeechSettings,
    language: String,
    sentences: VecDeque<(String, Instant)>,
    ended: bool,
    /// When the first sentence arrived, until its sound starts.
    first_arrival: Option<Instant>,
    failed: bool,
}

struct Worker {
    store: VoiceStore,
    shared: Arc<Shared>,
    voice: Option<Voice>,
    last_used: Instant,
}

impl Worker {
    fn run(mut self, commands: &mpsc::Receiver<Command>) {
        let mut answer: Option<Answer> = None;
        loop {
            // Awake while an answer is spoken; otherwise asleep until a command comes, or until
            // a loaded voice is due to be released.
            let received = if answer.is_some() {
                commands.recv_timeout(Duration::from_millis(10))
            } else if self.voice.is_some() {
                commands.recv_timeout(
                    KEEP_VOICE.saturating_sub(self.last_used.elapsed()) + Duration::from_millis(10),
                )
            } else {
                commands.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected)
            };
            match received {
                Ok(command) => self.take(command, &mut answer),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
            // Everything already sent is taken before the next sentence is spoken, so a Stop
            // that came with it drops it unsaid.
            while let Ok(command) = commands.try_recv() {
                self.take(command, &mut answer);
            }
            if let Some(current) = &answer
                && current.generation != self.shared.generation.load(Ordering::SeqCst)
            {
                answer = None;
            }
            if let Some(current) = answer.as_mut() {
                if let Some(message) = self.player_failure() {
                    // The loudspeaker went away: what is queued will never play.
                    self.release_player();
                    self.fail(current, &SpeechError::Output { message });
                }
                if current.sentences.is_empty() {
                    if current.ended && self.queued() <= 0.0 {
                        self.finish(current);
                        answer = None;
                    }
                } else if self.queued() < MAKE_AHEAD
                    && let Some((sentence, arrived)) = current.sentences.pop_front()
                {
                    // The answer's first sound is what the user waits for: a long first sentence
                    // is spoken from its first clause, the rest made while that plays.
                    let opening = current.first_arrival.is_some().then(|| text::opening(&sentence)).flatten();
                    if let Some((head, tail)) = opening {
                        current.sentences.push_front((tail, arrived));
                        self.say(current, &head, arrived);
                    } else {
                        self.say(current, &sentence, arrived);
                    }
                }
            } else if self.voice.is_some() && self.last_used.elapsed() >= KEEP_VOICE {
                tracing::info!(
                    "releasing the voice and the loudspeaker after {} s unused",
                    KEEP_VOICE.as_secs()
                );
                self.voice = None;
                self.release_player();
                // ONNX Runtime's arena goes back to the allocator; give its pages to the system.
                perch_foundation::memory::give_back_free_heap();
            }
        }
    }

    fn take(&mut self, command: Command, answer: &mut Option<Answer>) {
        match command {
            Command::Begin { id, generation, settings, language } => {
                // A loudspeaker whose stream ended after the last answer (unplugged while
                // quiet) is not this answer's failure: it opens afresh for it.
                if self.player_failure().is_some() {
                    self.release_player();
                }
                *answer = Some(Answer {
                    id,
                    generation,
                    settings,
                    language,
                    sentences: VecDeque::new(),
                    ended: false,
                    first_arrival: None,
                    failed: false,
                });
            }
            Command::Sentence { id, text } => {
                if let Some(current) = answer.as_mut().filter(|a| a.id == id) {
                    let now = Instant::now();
                    current.first_arrival.get_or_insert(now);
                    current.sentences.push_back((text, now));
                }
            }
            Command::End { id } => {
                if let Some(current) = answer.as_mut().filter(|a| a.id == id) {
                    current.ended = true;
                }
            }
        }
    }

    /// Closes the loudspeaker, outside its lock (closing waits for its thread).
    fn release_player(&self) {
        let player = self.shared.player().take();
        drop(player);
    }

    fn player_failure(&self) -> Option<String> {
        self.shared.player().as_ref().and_then(player::Player::failure)
    }

    fn queued(&self) -> f64 {
        self.shared.player().as_ref().map_or(0.0, player::Player::queued_seconds)
    }

    /// Opens the loudspeaker `device` names unless it is open. Outside the loudspeaker's lock:
    /// Stop, from the window's Esc, takes that lock and must not wait for a sound server.
    fn open_player(&self, device: Option<&str>) -> Result<(), SpeechError> {
        if self.shared.player().as_ref().is_some_and(|p| p.requested() == device) {
            return Ok(());
        }
        self.release_player();
        let opened = player::Player::open(device)?;
        *self.shared.player() = Some(opened);
        Ok(())
    }

    fn say(&mut self, answer: &mut Answer, sentence: &str, arrived: Instant) {
        let choice = choose(&self.store, &answer.settings, &answer.language);
        if !self.voice.as_ref().is_some_and(|v| v.same_as(&choice)) {
            self.voice = match Voice::load_or_espeak(choice, &answer.language) {
                Ok(voice) => Some(voice),
                Err(e) => return self.fail(answer, &e),
            };
        }
        let Some(voice) = self.voice.as_mut() else { return };
        self.last_used = Instant::now();
        let spoken = voice.speak(sentence, answer.settings.speed());
        let (samples, rate) = match spoken {
            Ok(spoken) => spoken,
            Err(e) => return self.fail(answer, &e),
        };
        if let Err(e) = self.open_player(answer.settings.device().as_deref()) {
            return self.fail(answer, &e);
        }
        // Checked under the loudspeaker's lock, which Stop takes to empty the queue: a sentence
        // made while Stop came is never queued after it.
        let player = self.shared.player();
        if answer.generation != self.shared.generation.load(Ordering::SeqCst) {
            return;
        }
        let Some(out) = player.as_ref() else { return };
        out.play(&samples, rate);
        // A short breath between sentences.
        out.play(&vec![0.0; rate as usize / 8], rate);
        drop(player);
        if answer.first_arrival.take().is_some() {
            let latency = arrived.elapsed();
            self.shared.report(SpeechEvent::Speaking {
                id: answer.id.clone(),
                latency_ms: latency.as_millis().min(u128::from(u32::MAX)) as u32,
            });
        }
    }

    fn fail(&self, answer: &mut Answer, error: &SpeechError) {
        answer.failed = true;
        answer.sentences.clear();
        answer.ended = true;
        self.shared.report(SpeechEvent::Failed { id: answer.id.clone(), message: error.to_string() });
    }

    fn finish(&self, answer: &Answer) {
        let mut current = self.shared.current.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if current.as_deref() == Some(answer.id.as_str()) {
            *current = None;
        }
        drop(current);
        if !answer.failed {
            self.shared.report(SpeechEvent::Finished { id: answer.id.clone() });
        }
    }
}

/// Whether answers can be read aloud here, and in which voices (`perch doctor`). Blocking: it
/// opens espeak-ng and ONNX Runtime.
pub fn probe() -> perch_foundation::probe::Probe {
    const NAME: &str = "speech out";
    if let Err(e) = espeak::available() {
        return perch_foundation::probe::Probe::no(NAME, e.to_string());
    }
    match piper::runtime() {
        Ok(path) => perch_foundation::probe::Probe::yes(
            NAME,
            format!("espeak-ng, and natural voices through ONNX Runtime ({})", path.display()),
        ),
        Err(e) => perch_foundation::probe::Probe::yes(NAME, format!("espeak-ng only: {e}")),
    }
}

/// Writes mono `samples` at `rate` to a 16-bit WAV file.
pub fn write_wav(path: &Path, samples: &[f32], rate: u32) -> Result<(), SpeechError> {
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: rate,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let io = |e: hound::Error| SpeechError::Io {
        action: "writing",
        path: path.to_path_buf(),
        source: std::io::Error::other(e),
    };
    let mut writer = hound::WavWriter::create(path, spec).map_err(io)?;
    for sample in samples {
        writer.write_sample((sample.clamp(-1.0, 1.0) * 32_767.0) as i16).map_err(io)?;
    }
    writer.finalize().map_err(io)
}
