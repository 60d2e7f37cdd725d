//! The local model on each device, side by side in one run: the CPU and every Vulkan device
//! this machine has (Mesa's lavapipe included, which ggml never picks by itself), through the
//! `perch-llm` sidecar as the engine drives it, and through llama.cpp's own `llama-bench` built
//! from the same vendored source with the same backend (`make bench` builds it and passes it as
//! `PERCH_LLAMA_BENCH`; without it, only Perch's figures are printed).
//!
//! Per device: load time, time to first token, prompt evaluation and generation in tokens per
//! second (greedy, the same prompt length and answer length for both), threads 2, batch 512.
//! The model is SmolLM2-135M Q4_1 from the test venv, or `PERCH_BENCH_GGUF`.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

use perch_llm_protocol::wire::{ChatParams, LoadParams, Message, Reply, Request, Role, line};
use serde_json::Value;

const THREADS: u32 = 2;
const BATCH: u32 = 512;

fn quick() -> bool {
    std::env::var_os("PERCH_BENCH_QUICK").is_some_and(|v| !v.is_empty() && v != "0")
}

fn gguf() -> PathBuf {
    std::env::var_os("PERCH_BENCH_GGUF")
        .map(PathBuf::from)
        .unwrap_or_else(perch_llm_protocol::test_support::smollm2_gguf)
}

fn prompt(i: usize, paragraphs: usize) -> String {
    let paragraph = "Perch is a small desktop assistant that floats beside the editor. It keeps its \
        history on the computer, runs local models in a separate process, and asks before it runs \
        any command. ";
    format!("Request number {i}.\n{}\nRetell the text above as a long story.", paragraph.repeat(paragraphs))
}

/// Where a run goes: the CPU, or the Vulkan device with this index (`GGML_VK_VISIBLE_DEVICES`).
#[derive(Clone, Copy)]
enum Target {
    Cpu,
    Vulkan(usize),
}

impl Target {
    fn env(self) -> Vec<(&'static str, String)> {
        match self {
            Self::Cpu => vec![],
            Self::Vulkan(i) => vec![("GGML_VK_VISIBLE_DEVICES", i.to_string())],
        }
    }
}

struct Sidecar {
    child: std::process::Child,
    replies: std::sync::mpsc::Receiver<Reply>,
    ready: Reply,
}

impl Sidecar {
    fn start(target: Target) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_perch-llm"))
            .env_remove("GGML_VK_VISIBLE_DEVICES")
            .envs(target.env())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, replies) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(serde_json::from_str::<Reply>(&l).unwrap()).is_err() {
                    break;
                }
            }
        });
        let ready = replies.recv().unwrap();
        Self { child, replies, ready }
    }

    fn send(&mut self, request: &Request) {
        self.child.stdin.as_mut().unwrap().write_all(line(request).as_bytes()).unwrap();
    }

    fn device(&self) -> Option<String> {
        match &self.ready {
            Reply::Ready { devices, .. } => devices.first().map(|d| d.description.clone()),
            _ => None,
        }
    }
}

impl Drop for Sidecar {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Default)]
struct Figures {
    load_ms: f64,
    first_ms: Vec<f64>,
    prompt_rate: Vec<f64>,
    generation_rate: Vec<f64>,
    prompt_tokens: u64,
}

fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    if v.is_empty() { f64::NAN } else { v[v.len() / 2] }
}

fn run_perch(target: Target, runs: usize, paragraphs: usize, generate: u32) -> Option<(String, Figures)> {
    let mut sidecar = Sidecar::start(target);
    let device = match target {
        Target::Cpu => "CPU".to_owned(),
        Target::Vulkan(_) => sidecar.device()?,
    };
    // The CPU only, or every layer on the card.
    let gpu_layers = match target {
        Target::Cpu => Some(0),
        Target::Vulkan(_) => Some(u32::MAX),
    };
    let params = LoadParams {
        path: gguf().display().to_string(),
        context_length: 2048,
        threads: THREADS,
        batch: BATCH,
        gpu_layers,
        gpu_reserved: 0,
    };
    let mut figures = Figures::default();
    sidecar.send(&Request::Load { id: 1, params });
    match sidecar.replies.recv().unwrap() {
        Reply::Loaded { model, .. } => figures.load_ms = model.load_ms as f64,
        other => panic!("{other:?}"),
    }
    // One answer to warm the device up (shader pipelines are built on first use).
    for i in 0..=runs {
        let chat = ChatParams {
            messages: vec![Message::new(Role::User, prompt(i, paragraphs))],
            max_tokens: Some(generate),
            temperature: Some(0.0),
            ..ChatParams::default()
        };
        let id = 10 + i as u64;
        let started = Instant::now();
        sidecar.send(&Request::Chat { id, params: chat });
        let mut first = None;
        loop {
            match sidecar.replies.recv().unwrap() {
                Reply::Text { .. } | Reply::Thinking { .. } => {
                    first.get_or_insert_with(Instant::now);
                }
                Reply::Done { usage, .. } => {
                    if i > 0 {
                        let first = first.unwrap_or_else(Instant::now) - started;
                        figures.first_ms.push(first.as_secs_f64() * 1000.0);
                        figures.prompt_rate.push(usage.prompt_tokens as f64 / usage.prompt_ms * 1000.0);
                        figures
                            .generation_rate
                            .push(usage.output_tokens as f64 / usage.generation_ms * 1000.0);
                        figures.prompt_tokens = usage.prompt_tokens;
                    }
                    break;
                }
                Reply::Error { message, .. } => panic!("{message}"),
                _ => {}
            }
        }
    }
    Some((device, figures))
}

/// llama-bench's prompt and generation rates (tokens per second) on `target`.
fn run_llama_bench(
    bench: &str,
    target: Target,
    prompt: u64,
    generate: u32,
    runs: usize,
) -> Result<(f64, f64), String> {
    let mut command = Command::new(bench);
    command.env_remove("GGML_VK_VISIBLE_DEVICES").envs(target.env());
    command.arg("-m").arg(gguf()).args(["-t", &THREADS.to_string(), "-b", &BATCH.to_string()]);
    command.args(["-ub", &BATCH.to_string(), "-p", &prompt.to_string(), "-n", &generate.to_string()]);
    command.args(["-r", &runs.max(1).to_string(), "-o", "json"]);
    match target {
        Target::Cpu => command.args(["-ngl", "0", "-dev", "none"]),
        Target::Vulkan(_) => command.args(["-ngl", "99"]),
    };
    let output = command.stderr(Stdio::null()).output().map_err(|e| e.to_string())?;
    let results: Value = serde_json::from_slice(&output.stdout).map_err(|e| format!("not JSON: {e}"))?;
    let rate = |key: &str| {
        results
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| r[key].as_u64().is_some_and(|n| n > 0))
            .and_then(|r| r["avg_ts"].as_f64())
    };
    Ok((rate("n_prompt").ok_or("no prompt figure")?, rate("n_gen").ok_or("no generation figure")?))
}

fn main() {
    let (runs, paragraphs, generate) = if quick() { (1, 1, 4) } else { (5, 8, 128) };
    let bench = std::env::var("PERCH_LLAMA_BENCH").ok().filter(|b| std::path::Path::new(b).is_file());
    let mut targets = vec![Target::Cpu];
    // Every Vulkan device, by index, until one is not there (at most 8).
    for i in 0..8 {
        let sidecar = Sidecar::start(Target::Vulkan(i));
        if sidecar.device().is_none() {
            break;
        }
        targets.push(Target::Vulkan(i));
    }
    println!(
        "local model by device ({} cores; {}; {THREADS} threads, batch {BATCH}, {runs} greedy answers of {generate} tokens)",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        gguf().file_name().unwrap().to_string_lossy(),
    );
    println!(
        "    {:<44} {:>8} {:>11} {:>14} {:>14} | {:>14} {:>14}",
        "", "load", "first token", "prompt tok/s", "gen tok/s", "llama-bench pp", "llama-bench tg"
    );
    let mut prompt_tokens = 0;
    for target in targets {
        let Some((device, ours)) = run_perch(target, runs, paragraphs, generate) else { continue };
        prompt_tokens = ours.prompt_tokens;
        let theirs = match &bench {
            Some(bench) => match run_llama_bench(bench, target, ours.prompt_tokens, generate, runs) {
                Ok((pp, tg)) => format!("{pp:>14.1} {tg:>14.1}"),
                Err(why) => format!("(llama-bench failed: {why})"),
            },
            None => "(llama-bench not built: make bench builds it)".to_owned(),
        };
        let label = match target {
            Target::Cpu => "CPU".to_owned(),
            Target::Vulkan(i) => format!("Vulkan {i}: {device}"),
        };
        println!(
            "    {:<44} {:>5.0} ms {:>8.0} ms {:>14.1} {:>14.1} | {theirs}",
            label.chars().take(44).collect::<String>(),
            ours.load_ms,
            median(&ours.first_ms),
            median(&ours.prompt_rate),
            median(&ours.generation_rate),
        );
    }
    println!(
        "  (prompt {prompt_tokens} tokens; medians; lavapipe is Mesa's software device: correctness, not speed)"
    );
}
