//! Dictation's real-time factor by device, side by side in one run: whisper on the CPU and on
//! every Vulkan device this machine has (Mesa's lavapipe included, which ggml never picks by
//! itself), on the same spoken sentences (espeak-ng), model (whisper tiny.en from the test
//! venv, or `PERCH_WHISPER_TEST_MODEL`) and threads (2).
//!
//! ggml reads `GGML_VK_VISIBLE_DEVICES` once per process, so each device runs in a child
//! process of this bench started with it (`--device N`).
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use perch_voice::whisper::{Model, TranscribeOptions};

// As in the app: the system's Vulkan loader is opened at run time, and only where a card may be
// (`perch_gpu::loader`). Linked directly, as a bare bench would be, the loader opens every
// installed driver at the first device search, and the registry's figure below would be theirs.
perch_gpu::vulkan_loader_shim!();

const SENTENCES: &[&str] = &[
    "Please take a screenshot of my editor and tell me what the error means.",
    "Open the settings, turn on dark mode, and remind me to call the dentist tomorrow.",
];

fn model() -> PathBuf {
    std::env::var_os("PERCH_WHISPER_TEST_MODEL").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
            .join(".cache/perch/models/ggml-tiny.en.bin")
    })
}

fn audio() -> Vec<Vec<f32>> {
    let dir = tempfile::tempdir().unwrap();
    SENTENCES
        .iter()
        .map(|sentence| {
            let wav = dir.path().join("s.wav");
            let ok = Command::new("espeak-ng").args(["-s", "150", "-w"]).arg(&wav).arg(sentence).status();
            assert!(ok.is_ok_and(|s| s.success()), "espeak-ng (scripts/setup-system.sh --test)");
            perch_voice::wav::read_wav(&wav).unwrap().0
        })
        .collect()
}

/// Load time, and the median real-time factor (transcription time / audio time) of `runs`.
fn measure(gpu: bool, runs: usize) -> (String, f64, f64) {
    let started = Instant::now();
    let model = Model::load(&model(), gpu).unwrap();
    let load_ms = started.elapsed().as_secs_f64() * 1000.0;
    let options = TranscribeOptions { threads: 2, ..TranscribeOptions::default() };
    let clips = audio();
    // One pass first: the device builds its pipelines on first use.
    model.transcribe(&clips[0], &options, None).unwrap();
    let mut factors = Vec::new();
    for _ in 0..runs {
        for clip in &clips {
            let started = Instant::now();
            model.transcribe(clip, &options, None).unwrap();
            factors.push(started.elapsed().as_secs_f64() / (clip.len() as f64 / 16_000.0));
        }
    }
    factors.sort_by(f64::total_cmp);
    (model.runs_on(), load_ms, factors[factors.len() / 2])
}

/// This process's proportional set size, in KiB.
fn pss_kib() -> i64 {
    let text = std::fs::read_to_string("/proc/self/smaps_rollup").unwrap_or_default();
    let line = text.lines().find(|l| l.starts_with("Pss:")).unwrap_or("Pss: 0 kB");
    line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or(0)
}

fn main() {
    let quick = std::env::var_os("PERCH_BENCH_QUICK").is_some_and(|v| !v.is_empty() && v != "0");
    let runs = if quick { 1 } else { 5 };
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--device").and_then(|p| args.get(p + 1)) {
        // SAFETY: the first statement of this child's work, before any other thread exists.
        #[allow(unsafe_code)]
        unsafe {
            std::env::set_var("GGML_VK_VISIBLE_DEVICES", i);
        }
        let before = pss_kib();
        if perch_voice::gpu::card().is_err() {
            return;
        }
        let registry = (pss_kib() - before) as f64 / 1024.0;
        let (runs_on, load_ms, rtf) = measure(true, runs);
        println!(
            "    {:<52} {load_ms:>7.0} ms {rtf:>8.3} {registry:>+8.1} MiB",
            format!("Vulkan {i}: {runs_on}").chars().take(52).collect::<String>()
        );
        return;
    }
    // What asking for a card costs a process that then dictates on the CPU: the app on a machine
    // without one, where the loader is not even opened (no render node). Where a card is, each
    // device's line below gives the same figure: the loader, every driver it opens (Mesa's
    // radeon and lavapipe drivers bring LLVM), ggml's instance.
    let before = pss_kib();
    let card = perch_voice::gpu::card();
    let after = pss_kib();
    println!(
        "Vulkan device registry: {:+.1} MiB PSS in this process ({})",
        (after - before) as f64 / 1024.0,
        card.map_or_else(|why| why, |c| c.description)
    );
    println!(
        "dictation by device (whisper {}, 2 threads, {} sentences of espeak-ng, {runs} runs; real-time factor: lower is faster)",
        model().file_name().unwrap().to_string_lossy(),
        SENTENCES.len()
    );
    println!("    {:<52} {:>10} {:>8} {:>12}", "", "load", "RTF", "registry");
    let (_, load_ms, rtf) = measure(false, runs);
    println!("    {:<52} {load_ms:>7.0} ms {rtf:>8.3}", "CPU");
    let me = std::env::current_exe().unwrap();
    for i in 0..8 {
        let out = Command::new(&me)
            .args(["--device", &i.to_string()])
            .env_remove("GGML_VK_VISIBLE_DEVICES")
            .output()
            .unwrap();
        // ggml's own start-up lines aside: the child prints one line of figures, or none where
        // there is no device `i`.
        let stdout = String::from_utf8_lossy(&out.stdout);
        let Some(line) = stdout.lines().find(|l| l.starts_with("    Vulkan")) else { break };
        println!("{line}");
    }
    println!("  (lavapipe is Mesa's software device: correctness, not speed)");
}
