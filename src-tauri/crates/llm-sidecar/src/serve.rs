//! The request loop. A model stays loaded (and its KV cache warm) until another model is asked
//! for, `unload` arrives, or stdin closes; requests are answered one at a time in order.
//!
//! A model goes to the graphics card as far as it fits (`perch_gpu::place`). When the card
//! cannot load it, it loads on the CPU instead; when the card fails in the middle of an answer,
//! the model is loaded again on the CPU and the answer goes on from where it was. Either way the
//! model stays on the CPU for as long as this process runs, and the engine is told why.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::path::Path;
use std::sync::mpsc::Receiver;
use std::time::Instant;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::token::LlamaToken;
use perch_gpu::{DeviceMemory, ModelShape};
use perch_llm_protocol::gguf;
use perch_llm_protocol::wire::{
    ChatParams, ErrorKind, LoadParams, ModelReport, Placement, Reply, Request, RequestId,
};

use crate::Out;
use crate::cancel::Cancels;
use crate::devices::{Gpu, Gpus, InjectedFailure};
use crate::failure::Failure;
use crate::generate::{Interrupted, Session};
use crate::logs::Recent;

pub struct Server<'a> {
    backend: &'a LlamaBackend,
    requests: Receiver<Request>,
    cancels: &'a Cancels,
    out: &'a mut Out,
    logs: Recent,
    gpus: Gpus,
    /// Models the card failed with (by path), and why: they run on the CPU from then on.
    failed_on_gpu: HashMap<String, String>,
    injected: InjectedFailure,
}

struct Loaded {
    model: LlamaModel,
    placement: Placement,
}

/// An answer the card failed in the middle of, to finish on the CPU.
struct Resume {
    load: LoadParams,
    chat: RequestId,
    params: ChatParams,
    /// The tokens already generated (and sent) before the failure.
    generated: Vec<LlamaToken>,
}

enum Next {
    Request(Request),
    Resume(Resume),
}

impl<'a> Server<'a> {
    pub fn new(
        backend: &'a LlamaBackend,
        requests: Receiver<Request>,
        cancels: &'a Cancels,
        out: &'a mut Out,
        logs: Recent,
        gpus: Gpus,
    ) -> Self {
        let injected = InjectedFailure::from_env();
        Self { backend, requests, cancels, out, logs, gpus, failed_on_gpu: HashMap::new(), injected }
    }

    /// Serves until stdin closes.
    pub fn run(&mut self) {
        let mut next = None;
        while let Some(step) = next.take().or_else(|| self.next_request().map(Next::Request)) {
            match step {
                Next::Request(Request::Load { id, params }) => {
                    let started = Instant::now();
                    match self.load(&params) {
                        Ok(loaded) => next = self.serve(&loaded, id, &params, started, None),
                        Err(e) => self.fail(id, e),
                    }
                }
                Next::Resume(resume) => {
                    let started = Instant::now();
                    let (load, chat) = (resume.load.clone(), resume.chat);
                    match self.load(&load) {
                        Ok(loaded) => next = self.serve(&loaded, chat, &load, started, Some(resume)),
                        Err(e) => self.fail(chat, e),
                    }
                }
                Next::Request(Request::Unload { id }) => self.out.send(&Reply::Unloaded { id }),
                Next::Request(Request::Chat { id, .. }) => {
                    self.fail(id, Failure::new(ErrorKind::NotLoaded, "no model is loaded"))
                }
                Next::Request(Request::Cancel { .. }) => {}
            }
        }
    }

    /// Loads a model, on the card as far as it fits, else (or if the card fails) on the CPU.
    fn load(&mut self, params: &LoadParams) -> Result<Loaded, Failure> {
        self.logs.clear();
        let path = Path::new(&params.path);
        if !path.is_file() {
            return Err(Failure::new(ErrorKind::LoadFailed, format!("{} does not exist", params.path)));
        }
        let (gpu, mut placement) = self.plan(params);
        if let Some(gpu) = gpu.filter(|_| placement.gpu_layers > 0) {
            match self.load_with(path, Some(&gpu), placement.gpu_layers) {
                Ok(model) => return Ok(Loaded { model, placement }),
                Err(()) => {
                    let why = format!(
                        "{} could not load it ({}), so it runs on the CPU",
                        gpu.report.description,
                        explain(&self.logs.lines())
                    );
                    tracing::warn!(model = %params.path, "{why}");
                    self.failed_on_gpu.insert(params.path.clone(), why.clone());
                    placement =
                        Placement { device: None, gpu_layers: 0, layers: placement.layers, note: Some(why) };
                }
            }
        }
        self.logs.clear();
        let model = self.load_with(path, None, 0).map_err(|()| {
            let lines = self.logs.lines();
            match lines.iter().find_map(|l| l.split("unknown model architecture: ").nth(1)) {
                Some(arch) => Failure::new(
                    ErrorKind::UnsupportedArchitecture,
                    format!(
                        "this version of Perch cannot run {} models ({})",
                        arch.trim_matches('\''),
                        params.path
                    ),
                ),
                None => Failure::new(
                    ErrorKind::LoadFailed,
                    format!("llama.cpp could not load {}: {}", params.path, explain(&lines)),
                ),
            }
        })?;
        Ok(Loaded { model, placement })
    }

    /// Where the model's layers should go: the card and how many, with the reason for fewer.
    fn plan(&self, params: &LoadParams) -> (Option<Gpu>, Placement) {
        let header = gguf::inspect(Path::new(&params.path)).ok();
        let layers =
            header.as_ref().and_then(|h| h.arch_int("block_count")).and_then(|n| u32::try_from(n).ok());
        let offloadable = layers.map_or(0, |n| n + 1);
        let cpu =
            |note: String| Placement { device: None, gpu_layers: 0, layers: offloadable, note: Some(note) };
        if let Some(why) = self.failed_on_gpu.get(&params.path) {
            return (None, cpu(why.clone()));
        }
        let Some(gpu) = self.gpus.main() else {
            return (None, cpu(self.gpus.none_because.clone().unwrap_or_default()));
        };
        let (Some(header), Some(layers)) = (header, layers) else {
            return (None, cpu("the model's file does not say how many layers it has".to_owned()));
        };
        let context = match params.context_length {
            0 => header.context_length().unwrap_or(4096),
            n => n.min(header.context_length().unwrap_or(n)),
        };
        let shape = ModelShape {
            weights: header.data_bytes,
            layers,
            kv_bytes_per_token: header.kv_bytes_per_token().unwrap_or(0),
            context,
        };
        let memory = DeviceMemory { free: gpu.report.memory_free, total: gpu.report.memory_total };
        let placed = perch_gpu::place(&shape, memory, params.gpu_layers, params.gpu_reserved);
        let placement = Placement {
            device: (placed.layers > 0).then(|| gpu.report.description.clone()),
            gpu_layers: placed.layers,
            layers: placed.of,
            note: placed.limited_by,
        };
        (Some(gpu), placement)
    }

    /// One attempt at loading, with `layers` on `gpu` (none: the CPU only). llama.cpp's reason
    /// for a failure is in `self.logs`.
    fn load_with(&self, path: &Path, gpu: Option<&Gpu>, layers: u32) -> Result<LlamaModel, ()> {
        let params = LlamaModelParams::default().with_n_gpu_layers(layers);
        // An empty device list keeps llama.cpp off every card, even for the operations it
        // would otherwise move to one while reading a long prompt.
        let params = params.with_devices(gpu.map(|g| std::slice::from_ref(&g.index)).unwrap_or(&[]));
        let params = params.map_err(|e| tracing::warn!("{e}"))?;
        if gpu.is_some() && self.injected == InjectedFailure::Load {
            tracing::error!("the graphics card failed to load the model (PERCH_LLM_FAIL_GPU=load)");
            return Err(());
        }
        LlamaModel::load_from_file(self.backend, path, &params).map_err(|_| ())
    }

    /// Answers requests with `loaded`; returns what needs another model (a load, or an answer
    /// to finish on the CPU). `resume` is an answer the card failed in the middle of: it goes on
    /// first, and no `loaded` reply is sent for it (the engine asked for none).
    fn serve(
        &mut self,
        loaded: &Loaded,
        id: RequestId,
        params: &LoadParams,
        started: Instant,
        resume: Option<Resume>,
    ) -> Option<Next> {
        let model = &loaded.model;
        let on_gpu = loaded.placement.gpu_layers > 0;
        let trained = model.n_ctx_train();
        let n_ctx = if params.context_length == 0 { trained } else { params.context_length.min(trained) };
        let threads = i32::try_from(params.threads.max(1)).unwrap_or(1);
        let batch = params.batch.clamp(32, 4096);
        let context = LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx.max(64)))
            .with_n_batch(batch)
            .with_n_ubatch(batch)
            .with_n_threads(threads)
            .with_n_threads_batch(threads);
        self.logs.clear();
        let ctx = match model.new_context(self.backend, context) {
            Ok(ctx) => ctx,
            Err(_) if on_gpu => {
                let why = format!(
                    "{} had no room for a context of {n_ctx} tokens ({}), so the model runs on the CPU",
                    loaded.placement.device.as_deref().unwrap_or("the graphics card"),
                    explain(&self.logs.lines())
                );
                tracing::warn!(model = %params.path, "{why}");
                self.failed_on_gpu.insert(params.path.clone(), why);
                return Some(match resume {
                    Some(resume) => Next::Resume(resume),
                    None => Next::Request(Request::Load { id, params: params.clone() }),
                });
            }
            Err(_) => {
                let why = explain(&self.logs.lines());
                let message = format!(
                    "could not make room for a context of {n_ctx} tokens ({why}); lower the context length in Settings -> Models -> Local"
                );
                let failed = resume.as_ref().map_or(id, |r| r.chat);
                self.fail(failed, Failure::new(ErrorKind::LoadFailed, message));
                return None;
            }
        };
        let fail_at_token = match self.injected {
            InjectedFailure::Token(n) if on_gpu => Some(n),
            _ => None,
        };
        let mut session = Session::new(model, ctx, batch as usize, fail_at_token);
        let report = ModelReport {
            architecture: model.meta_val_str("general.architecture").unwrap_or_default(),
            context_length: session.context_length(),
            trained_context_length: trained,
            threads: threads as u32,
            batch,
            template: session.template.source,
            features: session.template.features,
            load_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            placement: loaded.placement.clone(),
        };
        let mut pending = match resume {
            Some(resume) => Some(resume),
            None => {
                self.out.send(&Reply::Loaded { id, model: report.clone() });
                None
            }
        };
        loop {
            let (chat, chat_params, generated) = match pending.take() {
                Some(resume) => (resume.chat, resume.params, resume.generated),
                None => match self.next_request()? {
                    Request::Chat { id, params } => {
                        self.cancels.start();
                        (id, params, Vec::new())
                    }
                    Request::Load { id: again, params: wanted } if &wanted == params => {
                        // Already loaded: nothing to do, and the warm cache stays.
                        self.out.send(&Reply::Loaded {
                            id: again,
                            model: ModelReport { load_ms: 0, ..report.clone() },
                        });
                        continue;
                    }
                    Request::Unload { id } => {
                        self.out.send(&Reply::Unloaded { id });
                        return None;
                    }
                    other @ Request::Load { .. } => return Some(Next::Request(other)),
                    Request::Cancel { .. } => continue,
                },
            };
            match session.chat(chat, &chat_params, &generated, self.cancels, self.out) {
                Ok((stop, usage)) => self.out.send(&Reply::Done { id: chat, stop, usage }),
                Err(Interrupted { failure, generated })
                    if on_gpu && failure.kind == ErrorKind::Generation =>
                {
                    let reason = format!(
                        "{} failed in the middle of an answer ({}); the answer goes on on the CPU",
                        loaded.placement.device.as_deref().unwrap_or("the graphics card"),
                        failure.message
                    );
                    tracing::warn!(model = %params.path, "{reason}");
                    self.out.send(&Reply::MovedToCpu { id: chat, reason: reason.clone() });
                    self.failed_on_gpu.insert(params.path.clone(), reason);
                    return Some(Next::Resume(Resume {
                        load: params.clone(),
                        chat,
                        params: chat_params,
                        generated,
                    }));
                }
                Err(Interrupted { failure, .. }) => self.fail(chat, failure),
            }
            self.cancels.finish(chat);
        }
    }

    /// The next request, or none once stdin has closed (what is still queued is not served:
    /// nobody would read the answer).
    fn next_request(&self) -> Option<Request> {
        let request = self.requests.recv().ok()?;
        (!self.cancels.is_closed()).then_some(request)
    }

    fn fail(&mut self, id: RequestId, e: Failure) {
        self.out.send(&Reply::Error { id: Some(id), kind: e.kind, message: e.message });
    }
}

/// llama.cpp's last error lines, or a note that it gave none.
fn explain(lines: &[String]) -> String {
    let relevant: Vec<&str> = lines.iter().rev().take(3).rev().map(String::as_str).collect();
    if relevant.is_empty() { "llama.cpp gave no reason".to_owned() } else { relevant.join("; ") }
}
