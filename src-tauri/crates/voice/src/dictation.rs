//! One dictation: the microphone's audio converted to 16 kHz mono as it arrives, a level for
//! the meter, speech tracked by the VAD, text re-transcribed about every second while the user
//! speaks, a warning before the length limit, and the final text once they stop.
//!
//! Threads: the microphone's own (cpal), one worker per dictation that owns the audio, and one
//! for a partial transcription at a time. Nothing here touches the async runtime.

use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::audio::{ToWhisper, WHISPER_RATE, level};
use super::device::{CaptureEvent, CaptureFormat};
use super::keeper::ModelKeeper;
use super::vad::SpeechTracker;
use super::whisper::{Model, TranscribeOptions};
use super::{VoiceError, VoiceErrorKind};

/// What a dictation tells the window (or the terminal), in order.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "event", content = "data", rename_all = "snake_case")]
pub enum DictationEvent {
    /// The microphone is open.
    Listening {
        device: String,
        sample_rate: u32,
        channels: u16,
        max_seconds: u32,
    },
    /// About 20 times a second: loudness 0..1 and the length so far.
    Level {
        level: f32,
        seconds: f32,
    },
    /// Text so far, to show greyed while the user speaks; replaced by the next one.
    Partial {
        text: String,
    },
    /// Something the user should know without stopping: the limit is near, the device went away.
    Warning {
        message: String,
    },
    /// Recording stopped; the final transcription is running.
    Transcribing {
        seconds: f32,
    },
    /// The text to insert. `send` is the "send after dictation" setting at the time.
    Final {
        text: String,
        audio_seconds: f32,
        transcribe_ms: u32,
        send: bool,
    },
    Failed {
        kind: VoiceErrorKind,
        message: String,
    },
    Cancelled,
    /// Speech was heard for the first time (a hands-free conversation stops the voice then).
    Heard,
    /// A hands-free turn: the user paused, and the question is sent in `remaining_ms` unless
    /// they speak again; `None` when they did (the countdown is off until the next pause).
    Countdown {
        remaining_ms: Option<u32>,
    },
}

/// A dictation's event, tagged with the dictation it belongs to.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct DictationUpdate {
    pub session: u32,
    pub event: DictationEvent,
}

/// Where a dictation's events go (the window's event, the terminal, a test's Vec).
pub trait DictationSink: Send + Sync + 'static {
    fn send(&self, update: DictationUpdate);
}

/// The settings a dictation runs with, fixed at its start.
#[derive(Debug, Clone)]
pub struct DictationConfig {
    pub model_path: PathBuf,
    pub options: TranscribeOptions,
    pub max_seconds: u32,
    pub partials: bool,
    pub send_after: bool,
    pub keep_model: Duration,
    /// Applied to the partial and final texts (Settings -> Voice's clean-up).
    pub tidy: super::cleanup::Tidy,
    /// A hands-free turn ends by itself after this long a pause in speech.
    pub end_after_silence: Option<Duration>,
}

pub(super) enum Control {
    Stop,
    Cancel,
    /// A hands-free turn's countdown is cancelled: it goes on as a dictation ended by hand.
    KeepListening,
    /// Answers "still running?" by being received at all.
    Ping,
}

/// What a finished dictation produced.
#[derive(Debug, Clone, PartialEq)]
pub struct DictationOutcome {
    pub text: String,
    pub audio_seconds: f32,
    pub transcribe_time: Duration,
    /// The 16 kHz mono audio that was recorded (for `perch dictate --save`).
    pub audio: Vec<f32>,
}

/// How often partial text is refreshed while speaking.
const PARTIAL_EVERY: Duration = Duration::from_millis(1000);
const LEVEL_EVERY: Duration = Duration::from_millis(50);
/// Beyond this much new speech, a partial pass fixes all but its last sentence, so each later
/// pass (and the final one) transcribes at most this much: the wait after a long dictation
/// stays that of a short one.
const COMMIT_AFTER_SAMPLES: usize = 20 * WHISPER_RATE as usize;

/// Text fixed by earlier partial passes of a long dictation.
#[derive(Default)]
struct Committed {
    text: String,
    /// Audio before this sample is covered by `text`.
    until: usize,
}

pub(super) struct Worker {
    pub session: u32,
    pub config: DictationConfig,
    pub format: CaptureFormat,
    /// The running recording; dropping it stops the microphone.
    pub capture: Option<Box<dyn Send>>,
    pub audio_rx: mpsc::Receiver<CaptureEvent>,
    pub control_rx: mpsc::Receiver<Control>,
    /// The model loading while the user speaks.
    pub loading: Option<JoinHandle<Result<Arc<Model>, VoiceError>>>,
    pub model: Option<Arc<Model>>,
    pub keeper: Arc<ModelKeeper>,
    pub sink: Arc<dyn DictationSink>,
}

struct Partials {
    committed: Arc<Mutex<Committed>>,
    running: Option<(JoinHandle<()>, Arc<AtomicBool>)>,
    last: Instant,
}

impl Worker {
    fn emit(&self, event: DictationEvent) {
        self.sink.send(DictationUpdate { session: self.session, event });
    }

    /// Records until told to stop, then transcribes. The outcome also goes to the sink.
    pub fn run(mut self) -> Result<DictationOutcome, VoiceError> {
        let result = self.record_and_transcribe();
        // Close the control channel before the last event: whoever reacts to that event by
        // starting the next dictation must not find this one still running.
        self.control_rx = mpsc::channel().1;
        match &result {
            Ok(outcome) => self.emit(DictationEvent::Final {
                text: outcome.text.clone(),
                audio_seconds: outcome.audio_seconds,
                transcribe_ms: outcome.transcribe_time.as_millis() as u32,
                send: self.config.send_after,
            }),
            Err(VoiceError::Cancelled) => self.emit(DictationEvent::Cancelled),
            Err(e) => self.emit(DictationEvent::Failed { kind: e.kind(), message: e.to_string() }),
        }
        self.keeper.release_after(self.config.keep_model);
        result
    }

    fn record_and_transcribe(&mut self) -> Result<DictationOutcome, VoiceError> {
        let max = self.config.max_seconds.max(1);
        self.emit(DictationEvent::Listening {
            device: self.format.device.clone(),
            sample_rate: self.format.sample_rate,
            channels: self.format.channels,
            max_seconds: max,
        });
        let mut convert =
            ToWhisper::new(self.format.sample_rate, usize::from(self.format.channels)).map_err(|e| {
                VoiceError::DeviceFailed { device: self.format.device.clone(), message: e.to_string() }
            })?;
        let mut audio: Vec<f32> = Vec::with_capacity(WHISPER_RATE as usize * 30);
        let mut vad = SpeechTracker::default();
        let mut partials = Partials { committed: Arc::default(), running: None, last: Instant::now() };
        let (mut metered, mut last_level) = (0usize, Instant::now());
        let max_samples = max as usize * WHISPER_RATE as usize;
        let warn_at = max_samples.saturating_sub(warning_lead(max) as usize * WHISPER_RATE as usize);
        let mut warned = false;
        let mut heard = false;
        let mut counting: Option<u32> = None;
        loop {
            match self.control_rx.try_recv() {
                Ok(Control::Cancel) => {
                    stop_partial(&mut partials);
                    return Err(VoiceError::Cancelled);
                }
                Ok(Control::Stop) | Err(mpsc::TryRecvError::Disconnected) => break,
                Ok(Control::KeepListening) => {
                    self.config.end_after_silence = None;
                    if counting.take().is_some() {
                        self.emit(DictationEvent::Countdown { remaining_ms: None });
                    }
                }
                Ok(Control::Ping) | Err(mpsc::TryRecvError::Empty) => {}
            }
            match self.audio_rx.recv_timeout(Duration::from_millis(20)) {
                Ok(CaptureEvent::Samples(frames)) => {
                    let before = audio.len();
                    convert.push(&frames, &mut audio);
                    vad.push(&audio[before..]);
                }
                Ok(CaptureEvent::Failed(e)) => {
                    if vad.heard_speech() {
                        self.emit(DictationEvent::Warning {
                            message: format!("{e} Transcribing what was recorded before that."),
                        });
                        break;
                    }
                    return Err(e);
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            if !heard && vad.heard_speech() {
                heard = true;
                self.emit(DictationEvent::Heard);
            }
            if let (Some(end_after), Some(silence)) =
                (self.config.end_after_silence, vad.silence_after_speech())
            {
                match countdown(end_after, silence) {
                    Some(0) => break,
                    // Reported in tenths of a second, so the window redraws ten times a second.
                    Some(remaining) if counting.is_none_or(|shown| shown / 100 != remaining / 100) => {
                        counting = Some(remaining);
                        self.emit(DictationEvent::Countdown { remaining_ms: Some(remaining) });
                    }
                    Some(_) => {}
                    None if counting.take().is_some() => {
                        self.emit(DictationEvent::Countdown { remaining_ms: None });
                    }
                    None => {}
                }
            }
            if last_level.elapsed() >= LEVEL_EVERY && audio.len() > metered {
                let seconds = audio.len() as f32 / WHISPER_RATE as f32;
                self.emit(DictationEvent::Level { level: level(&audio[metered..]), seconds });
                (metered, last_level) = (audio.len(), Instant::now());
            }
            if !warned && audio.len() >= warn_at {
                warned = true;
                let left = (max_samples - audio.len().min(max_samples)).div_ceil(WHISPER_RATE as usize);
                self.emit(DictationEvent::Warning {
                    message: format!("Recording stops in {left} s (the limit is {}).", duration_words(max)),
                });
            }
            if audio.len() >= max_samples {
                audio.truncate(max_samples);
                self.emit(DictationEvent::Warning {
                    message: format!(
                        "Reached the limit of {}; transcribing what you said.",
                        duration_words(max)
                    ),
                });
                break;
            }
            let due = partials.last.elapsed() >= PARTIAL_EVERY;
            let idle = partials.running.as_ref().is_none_or(|(h, _)| h.is_finished());
            // A model that fails to load is reported now, not after the user has finished.
            let model = self.model(false).transpose()?;
            if let (true, true, true, Some(model), true) =
                (self.config.partials, due, idle, model, vad.heard_speech())
            {
                partials.last = Instant::now();
                self.start_partial(&mut partials, model, &audio, &vad);
            }
        }
        drop(self.capture.take());
        convert.finish(&mut audio);
        vad.push(&[]);
        stop_partial(&mut partials);
        let seconds = audio.len() as f32 / WHISPER_RATE as f32;
        self.emit(DictationEvent::Transcribing { seconds });
        let span = vad.speech_span(audio.len()).ok_or(VoiceError::NoSpeech)?;
        let model = self.model(true).transpose()?.ok_or(VoiceError::Cancelled)?;
        let started = Instant::now();
        let committed = std::mem::take(&mut *partials.committed.lock().unwrap_or_else(|p| p.into_inner()));
        let range = final_range(committed.until, span);
        let tail = if range.is_empty() {
            String::new()
        } else {
            model.transcribe(&audio[range], &self.config.options, None)?.text
        };
        let text = self.config.tidy.apply(&join(&committed.text, &tail));
        let transcribe_time = started.elapsed();
        if text.is_empty() {
            return Err(VoiceError::NoSpeech);
        }
        Ok(DictationOutcome { text, audio_seconds: seconds, transcribe_time, audio })
    }

    /// The model once loaded; with `wait`, waits for the load to finish.
    fn model(&mut self, wait: bool) -> Option<Result<Arc<Model>, VoiceError>> {
        if let Some(model) = &self.model {
            return Some(Ok(model.clone()));
        }
        let loading = self.loading.take_if(|h| wait || h.is_finished())?;
        let loaded = loading
            .join()
            .unwrap_or_else(|_| Err(VoiceError::Transcription("loading the whisper model crashed".into())));
        self.model = loaded.as_ref().ok().cloned();
        Some(loaded)
    }

    fn start_partial(&self, partials: &mut Partials, model: Arc<Model>, audio: &[f32], vad: &SpeechTracker) {
        let Some(span) = vad.speech_span(audio.len()) else { return };
        let committed = partials.committed.clone();
        let from = committed.lock().unwrap_or_else(|p| p.into_inner()).until.max(span.start);
        let window: Vec<f32> = audio[from..].to_vec();
        let abort = Arc::new(AtomicBool::new(false));
        let (sink, session, mut options) = (self.sink.clone(), self.session, self.config.options.clone());
        let tidy = self.config.tidy.clone();
        let flag = abort.clone();
        let spawned = std::thread::Builder::new().name("perch-whisper-partial".into()).spawn(move || {
            let long = window.len() > COMMIT_AFTER_SAMPLES;
            options.quick = !long;
            let transcript = match model.transcribe(&window, &options, Some(flag)) {
                Ok(t) => t,
                Err(VoiceError::Cancelled) => return,
                Err(e) => {
                    tracing::warn!(error = %e, "a partial transcription failed; the final one will still run");
                    return;
                }
            };
            tracing::debug!(seconds = window.len() / WHISPER_RATE as usize, text = %transcript.text, "partial text");
            let mut fixed = committed.lock().unwrap_or_else(|p| p.into_inner());
            if long && transcript.segments.len() > 1 {
                let keep = &transcript.segments[..transcript.segments.len() - 1];
                let text: Vec<&str> = keep.iter().map(|s| s.text.as_str()).collect();
                fixed.text = join(&fixed.text, &text.join(" "));
                let end_ms = keep.last().map_or(0, |s| s.end_ms) as usize;
                fixed.until = from + end_ms * WHISPER_RATE as usize / 1000;
                let rest = transcript.segments.last().map_or("", |s| s.text.as_str());
                let text = tidy.apply(&join(&fixed.text, rest));
                sink.send(DictationUpdate { session, event: DictationEvent::Partial { text } });
            } else {
                let text = tidy.apply(&join(&fixed.text, &transcript.text));
                sink.send(DictationUpdate { session, event: DictationEvent::Partial { text } });
            }
        });
        match spawned {
            Ok(handle) => partials.running = Some((handle, abort)),
            Err(e) => tracing::warn!(error = %e, "no thread for partial text"),
        }
    }
}

/// A pause shorter than this is a breath inside a sentence: no countdown is shown for it.
const PAUSE_SHOWN_AFTER: f32 = 0.3;

/// What is left of a hands-free turn's countdown after `silence` seconds of pause: `None` while
/// the pause is too short to show, `Some(0)` when the turn ends.
fn countdown(end_after: Duration, silence: f32) -> Option<u32> {
    if silence < PAUSE_SHOWN_AFTER {
        return None;
    }
    let remaining = end_after.as_secs_f32() - silence;
    Some((remaining.max(0.0) * 1000.0) as u32)
}

fn stop_partial(partials: &mut Partials) {
    if let Some((handle, abort)) = partials.running.take() {
        abort.store(true, Ordering::Relaxed);
        let _ = handle.join();
    }
}

/// Seconds of warning before the limit: 30 s, or a fifth of a short limit.
fn warning_lead(max_seconds: u32) -> u32 {
    if max_seconds >= 150 { 30 } else { (max_seconds / 5).max(1) }
}

/// "5 minutes", "90 seconds", "1 minute".
fn duration_words(seconds: u32) -> String {
    let plural = |n: u32, unit: &str| if n == 1 { format!("1 {unit}") } else { format!("{n} {unit}s") };
    if seconds.is_multiple_of(60) { plural(seconds / 60, "minute") } else { plural(seconds, "second") }
}

fn join(a: &str, b: &str) -> String {
    match (a.trim(), b.trim()) {
        ("", b) => b.to_owned(),
        (a, "") => a.to_owned(),
        (a, b) => format!("{a} {b}"),
    }
}

/// The part of `audio` the final pass covers (exposed for tests of the commit logic).
pub fn final_range(committed_until: usize, span: Range<usize>) -> Range<usize> {
    committed_until.max(span.start)..span.end.max(committed_until)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_warning_comes_thirty_seconds_before_a_long_limit() {
        assert_eq!(warning_lead(300), 30);
        assert_eq!(warning_lead(20), 4);
        assert_eq!(duration_words(300), "5 minutes");
        assert_eq!(duration_words(60), "1 minute");
        assert_eq!(duration_words(45), "45 seconds");
    }

    #[test]
    fn texts_join_with_one_space() {
        assert_eq!(join("Hello there.", " How are you? "), "Hello there. How are you?");
        assert_eq!(join("", "Hi"), "Hi");
        assert_eq!(join("Hi", ""), "Hi");
    }

    #[test]
    fn the_final_pass_starts_where_committed_text_ends() {
        assert_eq!(final_range(0, 100..500), 100..500);
        assert_eq!(final_range(300, 100..500), 300..500);
        assert!(final_range(600, 100..500).is_empty());
    }
}
