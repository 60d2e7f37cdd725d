//! whisper.cpp on ggml's Vulkan backend, on Mesa's software device (lavapipe): the same spoken
//! sentences give the same words as on the CPU, and a model that does not fit the card, or a
//! card turned off in Settings, stays on the CPU with the reason; a card that fails to load the
//! model, or fails in the middle of a transcription, leaves the words to the CPU, none lost
//! (`PERCH_VOICE_FAIL_GPU`, in a child process of this test).
//!
//! Its own test binary without the test harness: ggml reads `GGML_VK_VISIBLE_DEVICES` once, when
//! its device registry starts, and naming lavapipe (which ggml never picks by itself) must happen
//! before that, in a process with no other thread.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use perch_voice::gpu;
use perch_voice::text::word_error_rate;
use perch_voice::whisper::{Model, TranscribeOptions};

// The loader reached as the app reaches it (`perch_gpu::loader`), not linked directly.
perch_gpu::vulkan_loader_shim!();

const SENTENCES: &[&str] = &[
    "Please take a screenshot of my editor.",
    "Open the settings and turn on dark mode.",
    "Remind me to call the dentist tomorrow.",
];

fn test_model() -> PathBuf {
    let path = std::env::var_os("PERCH_WHISPER_TEST_MODEL").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
            .join(".cache/perch/models/ggml-tiny.en.bin")
    });
    assert!(path.is_file(), "the whisper test model {} is missing: run `make deps`", path.display());
    path
}

fn spoken(text: &str, dir: &Path) -> Vec<f32> {
    let wav = dir.join("sentence.wav");
    let status = Command::new("espeak-ng").args(["-s", "150", "-w"]).arg(&wav).arg(text).status();
    assert!(status.is_ok_and(|s| s.success()), "espeak-ng could not speak (scripts/setup-system.sh --test)");
    perch_voice::wav::read_wav(&wav).unwrap().0
}

fn main() {
    // SAFETY: the first statement of main, before any other thread exists.
    #[allow(unsafe_code)]
    unsafe {
        std::env::set_var("GGML_VK_VISIBLE_DEVICES", "0");
    }
    let card = gpu::card().expect("lavapipe, named by GGML_VK_VISIBLE_DEVICES");
    if let Some(failure) = gpu::InjectedFailure::from_env() {
        return card_fails(failure, &card);
    }
    assert!(card.description.contains("llvmpipe") && card.total > 0, "{card:?}");
    println!("card: {} ({} MiB free)", card.description, card.free >> 20);

    let path = test_model();
    let on_card = Model::load(&path, true).unwrap();
    assert_eq!(on_card.card.as_deref(), Ok(card.description.as_str()));
    assert!(on_card.runs_on().starts_with("the graphics card, llvmpipe"), "{}", on_card.runs_on());
    let on_cpu = Model::load(&path, false).unwrap();
    assert!(on_cpu.runs_on().contains("turned off for dictation"), "{}", on_cpu.runs_on());

    let dir = tempfile::tempdir().unwrap();
    let options = TranscribeOptions { threads: 2, ..TranscribeOptions::default() };
    for sentence in SENTENCES {
        let audio = spoken(sentence, dir.path());
        let vulkan = on_card.transcribe(&audio, &options, None).unwrap().text;
        let cpu = on_cpu.transcribe(&audio, &options, None).unwrap().text;
        println!("{sentence}\n  Vulkan: {vulkan}\n  CPU:    {cpu}");
        assert_eq!(word_error_rate(&cpu, &vulkan), 0.0, "the same words on the card as on the CPU");
        assert!(word_error_rate(sentence, &vulkan) <= 0.25, "{vulkan}");
    }

    // A card with too little free memory for the model keeps it on the CPU, and says so.
    let small = gpu::Card { free: 100 << 20, ..card.clone() };
    let size = std::fs::metadata(&path).unwrap().len();
    let why = gpu::choose(size, true, Ok(small)).unwrap_err();
    assert!(why.contains("100 MiB free"), "{why}");
    println!("ok: whisper on lavapipe ({} sentences)", SENTENCES.len());

    for failure in ["load", "pass"] {
        let me = std::env::current_exe().unwrap();
        let status = Command::new(me).env("PERCH_VOICE_FAIL_GPU", failure).status().unwrap();
        assert!(status.success(), "the card failing at {failure}: see above");
    }
}

/// A card that fails (on purpose): the model still transcribes, on the CPU, and says why.
fn card_fails(failure: gpu::InjectedFailure, card: &gpu::Card) {
    let dir = tempfile::tempdir().unwrap();
    let options = TranscribeOptions { threads: 2, ..TranscribeOptions::default() };
    let model = Model::load(&test_model(), true).unwrap();
    match failure {
        gpu::InjectedFailure::Load => {
            let why = model.card.as_ref().unwrap_err();
            assert!(why.starts_with(&card.description) && why.contains("could not load it"), "{why}");
        }
        gpu::InjectedFailure::Pass => {
            assert!(model.runs_on().starts_with("the graphics card"), "{}", model.runs_on());
        }
    }
    for sentence in &SENTENCES[..2] {
        let words = model.transcribe(&spoken(sentence, dir.path()), &options, None).unwrap().text;
        println!("{failure:?} failed on the card: {words}");
        assert!(word_error_rate(sentence, &words) <= 0.25, "{words}");
    }
    let runs_on = model.runs_on();
    assert!(runs_on.starts_with("the CPU (") && runs_on.contains("llvmpipe"), "{runs_on}");
    if failure == gpu::InjectedFailure::Pass {
        assert!(runs_on.contains("failed a transcription"), "{runs_on}");
    }
    println!("ok: {failure:?} failed on the card, transcribed on the CPU");
}
