//! The request loop. A model stays loaded (and its KV cache warm) until another model is asked
//! for, `unload` arrives, or stdin closes; requests are answered one at a time in order.

use std::num::NonZeroU32;
use std::path::Path;
use std::sync::mpsc::Receiver;
use std::time::Instant;

use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::model::params::LlamaModelParams;
use perch_llm_protocol::wire::{ErrorKind, LoadParams, ModelReport, Reply, Request, RequestId};

use crate::Out;
use crate::cancel::Cancels;
use crate::failure::Failure;
use crate::generate::Session;
use crate::logs::Recent;

pub struct Server<'a> {
    pub backend: &'a LlamaBackend,
    pub requests: Receiver<Request>,
    pub cancels: &'a Cancels,
    pub out: &'a mut Out,
    pub logs: Recent,
}

impl Server<'_> {
    /// Serves until stdin closes.
    pub fn run(&mut self) {
        let mut next = None;
        while let Some(request) = next.take().or_else(|| self.next_request()) {
            match request {
                Request::Load { id, params } => {
                    let started = Instant::now();
                    match self.load(&params) {
                        Ok(model) => next = self.serve(&model, id, &params, started),
                        Err(e) => self.fail(id, e),
                    }
                }
                Request::Unload { id } => self.out.send(&Reply::Unloaded { id }),
                Request::Chat { id, .. } => {
                    self.fail(id, Failure::new(ErrorKind::NotLoaded, "no model is loaded"))
                }
                Request::Cancel { .. } => {}
            }
        }
    }

    fn load(&self, params: &LoadParams) -> Result<LlamaModel, Failure> {
        self.logs.clear();
        let path = Path::new(&params.path);
        if !path.is_file() {
            return Err(Failure::new(ErrorKind::LoadFailed, format!("{} does not exist", params.path)));
        }
        LlamaModel::load_from_file(self.backend, path, &LlamaModelParams::default()).map_err(|_| {
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
        })
    }

    /// Answers requests with `model` loaded; returns the request that needs another model.
    fn serve(
        &mut self,
        model: &LlamaModel,
        id: RequestId,
        params: &LoadParams,
        started: Instant,
    ) -> Option<Request> {
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
            Err(_) => {
                let why = explain(&self.logs.lines());
                let message = format!(
                    "could not make room for a context of {n_ctx} tokens ({why}); lower the context length in Settings -> Models -> Local"
                );
                self.fail(id, Failure::new(ErrorKind::LoadFailed, message));
                return None;
            }
        };
        let mut session = Session::new(model, ctx, batch as usize);
        let report = ModelReport {
            architecture: model.meta_val_str("general.architecture").unwrap_or_default(),
            context_length: session.context_length(),
            trained_context_length: trained,
            threads: threads as u32,
            batch,
            template: session.template.source,
            features: session.template.features,
            load_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        };
        self.out.send(&Reply::Loaded { id, model: report.clone() });
        loop {
            match self.next_request()? {
                Request::Chat { id, params } => {
                    self.cancels.start();
                    match session.chat(id, &params, self.cancels, self.out) {
                        Ok((stop, usage)) => self.out.send(&Reply::Done { id, stop, usage }),
                        Err(e) => self.fail(id, e),
                    }
                    self.cancels.finish(id);
                }
                Request::Load { id: again, params: wanted } if &wanted == params => {
                    // Already loaded: nothing to do, and the warm cache stays.
                    self.out.send(&Reply::Loaded {
                        id: again,
                        model: ModelReport { load_ms: 0, ..report.clone() },
                    });
                }
                Request::Unload { id } => {
                    self.out.send(&Reply::Unloaded { id });
                    return None;
                }
                other @ Request::Load { .. } => return Some(other),
                Request::Cancel { .. } => {}
            }
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
