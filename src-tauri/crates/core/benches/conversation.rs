//! The hands-free conversation's whole turn: from the end of the user's speech to the first
//! spoken word of the answer, with the fake model service (Ollama dialect, a scripted answer of
//! three sentences, 10 ms between words) and with the local model (SmolLM2-135M Q4_1 from the
//! test venv, or `PERCH_BENCH_GGUF`, through the `perch-llm` sidecar), each spoken by espeak-ng
//! and by the Piper test voice.
//!
//! One turn, as the app runs it: `Voice::start_hands_free` records a question (a WAV file of
//! espeak-ng speech, paced like a microphone) and ends by itself after a pause of 1.5 s (the
//! app's `TURN_ENDS_AFTER`), emitting `Final`; the text is sent as a chat turn whose answer
//! `ReadAloud` speaks sentence by sentence; the figure ends at the speaker's `Speaking` event
//! (the first sentence's audio queued to the loudspeaker). The end of speech is the end of the
//! speech samples in the file: the moment the paced source reaches it is the dictation's start
//! plus that many seconds. Each turn starts a new conversation (the same prompt every time) and
//! the next starts once the answer has been spoken. What the app adds on top, the `Final` event's
//! way to the window and its `chat_send` back, is not in these figures.
//!
//! The loudspeaker is a virtual ALSA device that writes to a file through ALSA's `null` device
//! (as in the speech crate's tests): the bench binary runs itself again as a child with
//! `ALSA_CONFIG_PATH` pointing at it, since ALSA reads its configuration once per process.
//!
//! Needs: `PERCH_WHISPER_TEST_MODEL`, `PERCH_PIPER_TEST_VOICE` and `PERCH_ONNXRUNTIME` (the
//! Makefile sets them), `PERCH_FAKE_LLM` (the fake's binary), the `perch-llm` sidecar built
//! beside the bench (`cargo build --release -p perch-llm`), espeak-ng. `PERCH_BENCH_QUICK=1`:
//! one turn each, no warm-up.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use perch_core::Engine;
use perch_core::agent::{TurnEvent, TurnKind, TurnRequest, TurnSink, run_turn};
use perch_core::local::LocalSettings;
use perch_core::paths::{DataDir, DataDirSource, Resolved};
use perch_core::read_aloud::ReadAloud;
use perch_core::settings::BaseUrl;
use perch_core::speech::{SpeechEvent, SpeechSettings, VoiceChoice};
use perch_core::voice::{AudioSource, DictationEvent, DictationSink, DictationUpdate, VoiceSettings};
use perch_fake_llm::Script;

mod common;

/// The app's pause that ends a hands-free turn (`commands/speech.rs`).
const END_AFTER: Duration = Duration::from_millis(1500);
const QUESTION: &str = "What is the capital of France?";
const FAKE_ANSWER: &str = "Paris is the capital of France. It lies on the river Seine, in the north \
    of the country. About two million people live in the city itself.";
const FAKE_TOKEN_DELAY_MS: u64 = 10;
const FAKE_MODEL: &str = "ollama:qwen3-vl:8b-instruct";
const LOCAL_MODEL: &str = "local:bench";
const SPEAKER: &str = "Perch conversation bench speaker";
/// Samples louder than this are speech (espeak-ng's own silence is digital zero).
const SPEECH_LEVEL: f32 = 0.002;
const CHILD: &str = "PERCH_CONVERSATION_BENCH_CHILD";

fn file_from_env(name: &str, what: &str) -> PathBuf {
    let path = std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from).unwrap_or_else(|| {
        panic!("set {name} to {what} (the Makefile sets it; `make deps` provides the file)")
    });
    assert!(path.is_file(), "{name} names {}, which is not a file ({what})", path.display());
    path
}

fn gguf() -> PathBuf {
    std::env::var_os("PERCH_BENCH_GGUF")
        .map(PathBuf::from)
        .unwrap_or_else(perch_llm_protocol::test_support::smollm2_gguf)
}

/// Everything the child needs, checked before anything runs.
fn check_inputs() {
    file_from_env("PERCH_WHISPER_TEST_MODEL", "the whisper test model, ggml-tiny.en.bin");
    let voice = file_from_env("PERCH_PIPER_TEST_VOICE", "the Piper test voice (en_US-joe-medium.onnx)");
    let config = perch_core::speech::piper::config_path(&voice);
    assert!(config.is_file(), "the Piper voice's {} is missing", config.display());
    file_from_env("PERCH_ONNXRUNTIME", "libonnxruntime.so from the venv's onnxruntime wheel");
    file_from_env("PERCH_FAKE_LLM", "the perch-fake-llm binary (cargo build -p perch-fake-llm)");
    let model = gguf();
    assert!(model.is_file(), "the local model {} is missing: run `make deps`", model.display());
    assert!(
        perch_core::paths::bundled_program("perch-llm").is_some(),
        "the perch-llm sidecar is not built beside this bench: `cargo build --release -p perch-llm` \
         (`cargo build -p perch-llm` for `cargo test --benches`) with the same CARGO_TARGET_DIR"
    );
    assert!(Path::new("/usr/share/alsa/alsa.conf").is_file(), "ALSA's alsa.conf is missing (libasound2)");
}

/// An ALSA configuration with a loudspeaker that writes what it plays to `out` and keeps no time
/// (ALSA's `null` device), like the speech crate's tests.
fn virtual_speaker(dir: &Path) -> PathBuf {
    let conf = dir.join("asound.conf");
    std::fs::write(
        &conf,
        format!(
            "</usr/share/alsa/alsa.conf>\npcm.perch_bench_speaker {{\n    type file\n    slave.pcm \"null\"\n    file \"{}\"\n    format \"raw\"\n    hint {{ show on description \"{SPEAKER}\" }}\n}}\n",
            dir.join("speaker.raw").display()
        ),
    )
    .unwrap();
    conf
}

/// The question spoken by espeak-ng; the seconds of speech in it (to its last audible sample).
fn question_wav(dir: &Path) -> (PathBuf, f64, f64) {
    let path = dir.join("question.wav");
    let ok =
        Command::new("espeak-ng").args(["-v", "en-us", "-s", "150", "-w"]).arg(&path).arg(QUESTION).status();
    assert!(ok.is_ok_and(|s| s.success()), "espeak-ng is needed: scripts/setup-system.sh --bench");
    // As the dictation hears it: 16 kHz mono (the resampler keeps the timing to the sample).
    let (samples, info) = perch_core::voice::wav::read_wav(&path).unwrap();
    let last = samples.iter().rposition(|s| s.abs() > SPEECH_LEVEL).expect("espeak-ng wrote silence");
    let rate = f64::from(perch_core::voice::audio::WHISPER_RATE);
    (path, (last + 1) as f64 / rate, info.seconds)
}

fn main() {
    if let Some(dir) = std::env::var_os(CHILD) {
        let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
        return runtime.block_on(child(PathBuf::from(dir)));
    }
    check_inputs();
    let dir = tempfile::tempdir().unwrap();
    let conf = virtual_speaker(dir.path());
    let status = Command::new(std::env::current_exe().unwrap())
        .env(CHILD, dir.path())
        .env("ALSA_CONFIG_PATH", &conf)
        .status()
        .unwrap();
    assert!(status.success(), "the conversation bench's child failed");
}

/// When each thing of one turn happened.
#[derive(Default)]
struct Marks {
    transcribing: Option<Instant>,
    final_at: Option<Instant>,
    text: Option<Result<String, String>>,
    transcribe_ms: u32,
}

/// The dictation's events: when recording stopped and when the final text came.
struct Dictation {
    marks: Mutex<Marks>,
    done: tokio::sync::Notify,
}

impl DictationSink for Dictation {
    fn send(&self, update: DictationUpdate) {
        let now = Instant::now();
        let mut marks = self.marks.lock().unwrap();
        match update.event {
            DictationEvent::Transcribing { .. } => marks.transcribing = Some(now),
            DictationEvent::Final { text, transcribe_ms, send, .. } => {
                assert!(send, "a hands-free turn's text is always sent");
                marks.final_at = Some(now);
                marks.transcribe_ms = transcribe_ms;
                marks.text = Some(Ok(text));
                self.done.notify_one();
            }
            DictationEvent::Failed { message, .. } => {
                marks.text = Some(Err(message));
                self.done.notify_one();
            }
            DictationEvent::Cancelled => {
                marks.text = Some(Err("cancelled".into()));
                self.done.notify_one();
            }
            _ => {}
        }
    }
}

/// The chat view's end of the turn: when the first words of the answer came, and its id.
#[derive(Default)]
struct Chat {
    first_text: Mutex<Option<Instant>>,
    answer: Mutex<Option<String>>,
}

impl TurnSink for Chat {
    fn send(&self, event: TurnEvent) {
        match event {
            TurnEvent::Started(started) => {
                *self.answer.lock().unwrap() = Some(started.assistant_message.id.to_string());
            }
            TurnEvent::Text(_) => {
                self.first_text.lock().unwrap().get_or_insert_with(Instant::now);
            }
            _ => {}
        }
    }
}

/// One measured turn, in milliseconds.
struct Turn {
    /// End of speech to the recording's stop (the hands-free pause, as the VAD sees it).
    pause: f64,
    /// The final transcription (the stop to `Final`).
    final_pass: f64,
    /// `Final` to the answer's first words.
    first_token: f64,
    /// The first words to the first sentence's audio queued.
    to_audio: f64,
    /// The speaker's own figure: the first sentence's arrival to its audio queued.
    speaker_latency: f64,
    /// End of speech to the first audio queued.
    total: f64,
    heard: String,
    answer: String,
}

struct Bench {
    engine: Engine,
    wav: PathBuf,
    speech_seconds: f64,
    voice: VoiceSettings,
    fake_url: String,
    client: reqwest::Client,
}

impl Bench {
    async fn turn(&self, model: &'static str, speech: &SpeechSettings) -> Turn {
        if model == FAKE_MODEL {
            let script = Script::answer(FAKE_ANSWER).with_delay(FAKE_TOKEN_DELAY_MS);
            let r = self.client.post(format!("{}/__fake/script", self.fake_url)).json(&script).send().await;
            assert!(r.unwrap().status().is_success(), "the fake did not take the script");
        }
        let mut events = self.engine.speech().subscribe();
        let dictation = Arc::new(Dictation { marks: Mutex::default(), done: tokio::sync::Notify::new() });
        let source = AudioSource::Wav { path: self.wav.clone(), realtime: true };
        let started = Instant::now();
        self.engine.voice().start_hands_free(&self.voice, source, dictation.clone(), END_AFTER).unwrap();
        let speech_end = started + Duration::from_secs_f64(self.speech_seconds);
        tokio::time::timeout(Duration::from_secs(60), dictation.done.notified())
            .await
            .expect("the hands-free turn did not end within 60 s");
        let (text, transcribing, final_at) = {
            let marks = dictation.marks.lock().unwrap();
            let text = marks.text.clone().unwrap().unwrap_or_else(|e| panic!("the dictation failed: {e}"));
            (text, marks.transcribing.unwrap(), marks.final_at.unwrap())
        };

        // The question goes out as the app's `chat_send` sends it in a conversation: read aloud.
        let (engine, settings, question) = (self.engine.clone(), speech.clone(), text.clone());
        let chat = Arc::new(Chat::default());
        let sink = chat.clone();
        let turn = tokio::spawn(async move {
            let speaking = ReadAloud::new(&*sink, engine.speech().clone(), settings, "en".into());
            let request = TurnRequest {
                conversation_id: None,
                model: model.to_owned(),
                kind: TurnKind::Ask {
                    text: question,
                    images: Vec::new(),
                    files: Vec::new(),
                    selections: Vec::new(),
                },
                run_id: None,
            };
            run_turn(engine.agent(), request, &speaking).await
        });
        let wait = async {
            let (mut spoke, mut latency) = (None, 0);
            loop {
                match events.recv().await {
                    Ok(SpeechEvent::Speaking { id, latency_ms }) if spoke.is_none() => {
                        spoke = Some((Instant::now(), id));
                        latency = latency_ms;
                    }
                    Ok(SpeechEvent::Finished { id }) if spoke.as_ref().is_some_and(|(_, s)| *s == id) => {
                        let (at, id) = spoke.unwrap();
                        break (at, id, latency);
                    }
                    Ok(SpeechEvent::Failed { message, .. }) => panic!("the answer was not spoken: {message}"),
                    Ok(_) => {}
                    Err(e) => panic!("the speaker's events: {e}"),
                }
            }
        };
        let (spoke, spoken_id, latency) =
            tokio::time::timeout(Duration::from_secs(180), wait).await.expect("the answer was not spoken");
        let answer = turn.await.unwrap().expect("the chat turn failed");
        let first_text = chat.first_text.lock().unwrap().expect("the answer had no text");
        assert_eq!(chat.answer.lock().unwrap().as_deref(), Some(answer.id.to_string().as_str()));
        assert_eq!(spoken_id, answer.id.to_string(), "another answer was spoken");
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        Turn {
            pause: ms(transcribing.saturating_duration_since(speech_end)),
            final_pass: ms(final_at - transcribing),
            first_token: ms(first_text - final_at),
            to_audio: ms(spoke.saturating_duration_since(first_text)),
            speaker_latency: f64::from(latency),
            total: ms(spoke.saturating_duration_since(speech_end)),
            heard: text,
            answer: answer.content,
        }
    }
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn start_fake() -> (Child, String) {
    let program = std::env::var("PERCH_FAKE_LLM").unwrap();
    let mut fake = Command::new(&program).arg("ollama").stdout(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(fake.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let url =
        line.trim().strip_prefix("listening ").expect("the fake's first line is its address").to_owned();
    (fake, url)
}

async fn child(dir: PathBuf) {
    let quick = common::quick();
    let (runs, warm_up) = if quick { (1, 0) } else { (5, 1) };
    let (wav, speech_seconds, file_seconds) = question_wav(&dir);
    let (mut fake, fake_url) = start_fake();

    let data = DataDir::prepare(Resolved { path: dir.join("data"), source: DataDirSource::Env }).unwrap();
    let engine = Engine::start(data).await.unwrap();
    let url = BaseUrl::try_from(fake_url.clone()).unwrap();
    let local =
        LocalSettings { context_length: 2048, threads: 2, max_answer_tokens: 64, ..LocalSettings::default() };
    engine
        .settings()
        .update(|s| {
            s.providers.ollama_url = url;
            s.local = local;
        })
        .await
        .unwrap();
    engine.local().add(&gguf(), Some("bench")).await.unwrap();
    // A hands-free conversation is on, as the app's `conversation_set` turns it on.
    engine.speech().set_conversation(true);

    let whisper = std::env::var("PERCH_WHISPER_TEST_MODEL").unwrap();
    let voice = VoiceSettings { model: whisper, keep_model_secs: 600, ..VoiceSettings::default() };
    let piper = std::env::var("PERCH_PIPER_TEST_VOICE").unwrap();
    if let Err(e) = perch_core::speech::piper::runtime() {
        panic!("the Piper voice cannot speak here: {e}");
    }
    let voices = [("espeak-ng", "espeak".to_owned()), ("Piper joe-medium", piper)];
    let bench = Bench {
        engine: engine.clone(),
        wav,
        speech_seconds,
        voice: voice.clone(),
        fake_url,
        client: perch_core::providers::http::client_builder().build().unwrap(),
    };

    let mut rows = Vec::new();
    for (service, model) in [("fake Ollama", FAKE_MODEL), ("local SmolLM2-135M", LOCAL_MODEL)] {
        for (voice_name, voice_setting) in &voices {
            let speech = SpeechSettings {
                voice: voice_setting.clone(),
                device: SPEAKER.into(),
                ..SpeechSettings::default()
            };
            let choice = engine.speech().choose(&speech, "en");
            match (&choice, voice_setting.as_str()) {
                (VoiceChoice::Espeak { .. }, "espeak") | (VoiceChoice::Piper { .. }, _) => {}
                _ => panic!("the voice {voice_name} was not chosen: {choice:?}"),
            }
            for _ in 0..warm_up {
                bench.turn(model, &speech).await;
            }
            let mut turns = Vec::new();
            for _ in 0..runs {
                turns.push(bench.turn(model, &speech).await);
            }
            rows.push((format!("{service}, {voice_name}"), turns));
        }
    }
    let _ = fake.kill();
    let _ = fake.wait();
    let whisper_on = tokio::task::spawn_blocking({
        let engine = engine.clone();
        move || engine.voice().runs_on(&voice)
    })
    .await
    .unwrap();
    let local_on = engine.local().runtime().status().runs_on.unwrap_or_else(|| "?".into());
    engine.local().runtime().stop().await;

    println!(
        "\nconversation mode, end of speech to the answer's first audio ({} cores; {}, median of {runs} turns{})",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        if quick { "quick" } else { "release" },
        if warm_up > 0 { " after a warm-up" } else { ", no warm-up" },
    );
    println!(
        "  question {QUESTION:?}: espeak-ng, {speech_seconds:.2} s of speech ({file_seconds:.2} s file), paced like a microphone;"
    );
    println!(
        "  turn ends after a {:.1} s pause; whisper tiny.en on {whisper_on}; local model on {local_on}, 2 threads, {}",
        END_AFTER.as_secs_f64(),
        gguf().file_name().unwrap().to_string_lossy()
    );
    println!(
        "  fake: {} words, {FAKE_TOKEN_DELAY_MS} ms apart; loudspeaker: ALSA file plugin to null (takes audio at once)",
        perch_fake_llm::words(FAKE_ANSWER).count()
    );
    println!(
        "    {:<38} {:>7} {:>7} {:>7} {:>7} {:>7} {:>8} {:>8}",
        "ms", "pause", "final", "1st tok", "to aud", "(synth)", "total", "-1.5 s"
    );
    for (name, turns) in &rows {
        let m = |f: fn(&Turn) -> f64| median(&turns.iter().map(f).collect::<Vec<_>>());
        println!(
            "    {name:<38} {:>7.0} {:>7.0} {:>7.0} {:>7.0} {:>7.0} {:>8.0} {:>8.0}",
            m(|t| t.pause),
            m(|t| t.final_pass),
            m(|t| t.first_token),
            m(|t| t.to_audio),
            m(|t| t.speaker_latency),
            m(|t| t.total),
            m(|t| t.total) - END_AFTER.as_secs_f64() * 1000.0,
        );
    }
    println!(
        "  pause: end of speech to the recording's stop; final: the final transcription; 1st tok: Final to the\n  answer's first words; to aud: to the first sentence's audio queued (synth: the speaker's own latency_ms,\n  the first sentence's arrival to its audio); total: end of speech to first audio; -1.5 s: without the pause"
    );
    for (name, turns) in &rows {
        let last = turns.last().unwrap();
        println!(
            "  {name}: heard {:?}; answered {:?}",
            last.heard,
            last.answer.chars().take(100).collect::<String>()
        );
        println!(
            "    totals: {}",
            turns.iter().map(|t| format!("{:.0}", t.total)).collect::<Vec<_>>().join(", ")
        );
    }
}
