//! The local model on each device, side by side in one run: the CPU and every Vulkan device
//! this machine has (Mesa's lavapipe included, which ggml never picks by itself), through the
//! `perch-llm` sidecar as the engine drives it, and through llama.cpp alone: the same vendored
//! library, backend and settings driven by a bare decode loop in a child process of this bench
//! (`--raw`: the prompt's tokens in batches, then greedy tokens one at a time; no protocol, no
//! template, no parser, no cancel checks), which is what llama.cpp's `llama-bench` measures.
//! `llama-bench` itself cannot be the peer: llama-cpp-sys-2 packages llama.cpp's library
//! sources only, not its tools, so it cannot be built from the same vendored source.
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

// llama.cpp alone (`--raw`) reaches the Vulkan loader as the sidecar does (`perch_gpu::loader`).
perch_gpu::vulkan_loader_shim!();

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

fn prompt_text(i: usize, paragraphs: usize) -> String {
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
            messages: vec![Message::new(Role::User, prompt_text(i, paragraphs))],
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

/// llama.cpp alone on `target`, in a child process (ggml reads `GGML_VK_VISIBLE_DEVICES` once):
/// prompt and generation rates in tokens per second, medians of `runs`.
fn run_raw(target: Target, prompt: u64, generate: u32, runs: usize) -> Result<(f64, f64), String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    let device = match target {
        Target::Cpu => "cpu".to_owned(),
        Target::Vulkan(i) => i.to_string(),
    };
    let output = Command::new(me)
        .args(["--raw", &device, &prompt.to_string(), &generate.to_string(), &runs.to_string()])
        .env_remove("GGML_VK_VISIBLE_DEVICES")
        .envs(target.env())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().find_map(|l| l.strip_prefix("raw ")).ok_or("no figures")?;
    let mut rates = line.split_whitespace().map(str::parse::<f64>);
    match (rates.next(), rates.next()) {
        (Some(Ok(pp)), Some(Ok(tg))) => Ok((pp, tg)),
        _ => Err(format!("unreadable figures: {line}")),
    }
}

/// The child's side of `run_raw`: `--raw DEVICE PROMPT_TOKENS GENERATE RUNS`.
fn raw(args: &[String]) {
    use llama_cpp_2::context::params::LlamaContextParams;
    use llama_cpp_2::llama_backend::LlamaBackend;
    use llama_cpp_2::llama_batch::LlamaBatch;
    use llama_cpp_2::model::LlamaModel;
    use llama_cpp_2::model::params::LlamaModelParams;
    use llama_cpp_2::sampling::LlamaSampler;

    let on_card = args[0] != "cpu";
    let (prompt, generate, runs): (usize, usize, usize) =
        (args[1].parse().unwrap(), args[2].parse().unwrap(), args[3].parse().unwrap());
    let mut backend = LlamaBackend::init().unwrap();
    backend.void_logs();
    // As perch-llm loads: every layer on the card, or none and no card at all.
    let params = LlamaModelParams::default().with_n_gpu_layers(if on_card { u32::MAX } else { 0 });
    let devices = llama_cpp_2::list_llama_ggml_backend_devices();
    let card: Vec<usize> =
        devices.iter().filter(|d| on_card && d.backend == "Vulkan").map(|d| d.index).take(1).collect();
    let params = params.with_devices(&card).unwrap();
    let model = LlamaModel::load_from_file(&backend, gguf(), &params).unwrap();
    let context = LlamaContextParams::default()
        .with_n_ctx(std::num::NonZeroU32::new(2048))
        .with_n_batch(BATCH)
        .with_n_ubatch(BATCH)
        .with_n_threads(THREADS as i32)
        .with_n_threads_batch(THREADS as i32);
    let mut ctx = model.new_context(&backend, context).unwrap();
    let text = prompt_text(0, 64);
    let mut tokens = model.vocab().tokenize(text.as_bytes(), true, false);
    tokens.truncate(prompt);
    let (mut pp, mut tg) = (Vec::new(), Vec::new());
    // One pass first, as for Perch: the card builds its pipelines on first use.
    for run in 0..=runs {
        ctx.clear_kv_cache();
        let started = Instant::now();
        for (i, chunk) in tokens.chunks(BATCH as usize).enumerate() {
            let mut batch = LlamaBatch::new(chunk.len(), 1);
            for (j, token) in chunk.iter().enumerate() {
                let pos = (i * BATCH as usize + j) as i32;
                batch.add(*token, pos, &[0], pos as usize + 1 == tokens.len()).unwrap();
            }
            ctx.decode(&mut batch).unwrap();
        }
        let prompt_time = started.elapsed().as_secs_f64();
        let mut sampler = LlamaSampler::greedy();
        let started = Instant::now();
        for n in 0..generate {
            let token = sampler.sample(&ctx, -1);
            let mut batch = LlamaBatch::new(1, 1);
            batch.add(token, (tokens.len() + n) as i32, &[0], true).unwrap();
            ctx.decode(&mut batch).unwrap();
        }
        if run > 0 {
            pp.push(tokens.len() as f64 / prompt_time);
            tg.push(generate as f64 / started.elapsed().as_secs_f64());
        }
    }
    println!("raw {:.1} {:.1}", median(&pp), median(&tg));
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--raw") {
        raw(&args[at + 1..]);
        return;
    }
    let (runs, paragraphs, generate) = if quick() { (1, 1, 4) } else { (5, 8, 128) };
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
        "    {:<44} {:>8} {:>11} {:>14} {:>14} | {:>16} {:>16}",
        "", "load", "first token", "prompt tok/s", "gen tok/s", "llama.cpp prompt", "llama.cpp gen"
    );
    let mut prompt_tokens = 0;
    for target in targets {
        // A software device (lavapipe) is for correctness, and slow: one short answer there.
        let software = match target {
            Target::Cpu => false,
            Target::Vulkan(_) => Sidecar::start(target).device().is_some_and(|d| d.contains("llvmpipe")),
        };
        let (runs, generate) = if software { (1, generate.min(16)) } else { (runs, generate) };
        let Some((device, ours)) = run_perch(target, runs, paragraphs, generate) else { continue };
        prompt_tokens = ours.prompt_tokens;
        let theirs = match run_raw(target, ours.prompt_tokens, generate, runs) {
            Ok((pp, tg)) => format!("{pp:>16.1} {tg:>16.1}"),
            Err(why) => format!("(llama.cpp alone failed: {why})"),
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
