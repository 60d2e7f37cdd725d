//! perch-llm: Perch's local model runtime, a sidecar process the engine starts on first use and
//! stops when idle. It runs GGUF models with llama.cpp and speaks NDJSON on stdio (see
//! `perch_llm_protocol::wire`): requests on stdin, replies on stdout, logs on stderr. It exits
//! when stdin closes, so it never outlives the app that started it.

mod cancel;
mod devices;
mod failure;
mod generate;
mod logs;
mod output;
mod prompt;
mod serve;

use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::mpsc::Sender;

use llama_cpp_2::llama_backend::LlamaBackend;
use perch_llm_protocol::wire::{self, ErrorKind, Reply, Request};

use crate::cancel::Cancels;

// llama.cpp's Vulkan backend finds the system's Vulkan loader at run time, so the sidecar starts
// (and runs on the CPU) where there is none.
perch_gpu::vulkan_loader_shim!();

/// The protocol's output: one reply a line, flushed at once so tokens stream.
pub struct Out(std::io::Stdout);

impl Out {
    pub fn send(&mut self, reply: &Reply) {
        let mut lock = self.0.lock();
        // A closed stdout means the engine is gone; stdin closing ends the process next.
        let _ = lock.write_all(wire::line(reply).as_bytes()).and_then(|()| lock.flush());
    }
}

fn main() -> ExitCode {
    if std::env::args().any(|a| a == "--version") {
        println!("perch-llm {}", env!("CARGO_PKG_VERSION"));
        return ExitCode::SUCCESS;
    }
    // The engine says where crash reports go (PERCH_CRASH_DIR). A crash in llama.cpp's own
    // code is no panic: the engine sees the sidecar end and says so.
    perch_crash::install_from_env("perch-llm", env!("CARGO_PKG_VERSION"));
    let logs = logs::init();
    let backend = match LlamaBackend::init() {
        Ok(backend) => backend,
        Err(e) => {
            eprintln!("perch-llm: llama.cpp did not start: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut out = Out(std::io::stdout());
    let cancels = Arc::new(Cancels::default());
    let (tx, requests) = std::sync::mpsc::channel();
    read_stdin(tx, cancels.clone(), Out(std::io::stdout()));
    let gpus = devices::Gpus::find();
    out.send(&Reply::Ready {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        system_info: build_flags(),
        devices: gpus.devices.iter().map(|d| d.report.clone()).collect(),
        no_gpu: gpus.none_because.clone(),
    });
    serve::Server::new(&backend, requests, &cancels, &mut out, logs, gpus).run();
    ExitCode::SUCCESS
}

/// Reads requests on a thread of their own, so a `cancel` takes effect while the main thread
/// is busy generating. Lines that are not requests are answered with an error and skipped.
fn read_stdin(requests: Sender<Request>, cancels: Arc<Cancels>, mut out: Out) {
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Request>(&line) {
                Ok(Request::Cancel { id }) => cancels.cancel(id),
                Ok(request) => {
                    if requests.send(request).is_err() {
                        break;
                    }
                }
                Err(e) => out.send(&Reply::Error {
                    id: None,
                    kind: ErrorKind::BadRequest,
                    message: format!("not a request: {e}"),
                }),
            }
        }
        // Perch is gone: stop generating now rather than at the end of the answer.
        cancels.close();
    });
}

/// The ggml CPU options this binary was built with (from `.cargo/config.toml`).
fn build_flags() -> String {
    fn flag(value: Option<&'static str>) -> &'static str {
        value.unwrap_or("default")
    }
    format!(
        "GGML_NATIVE={} AVX={} AVX2={} FMA={} F16C={}",
        flag(option_env!("GGML_NATIVE")),
        flag(option_env!("GGML_AVX")),
        flag(option_env!("GGML_AVX2")),
        flag(option_env!("GGML_FMA")),
        flag(option_env!("GGML_F16C")),
    )
}
