//! The sidecar's life: started on the first local answer, the model loaded once and kept warm,
//! one answer at a time, stopped after the keep-alive, and started again (with the same model)
//! if it dies, which the user is told about. Nothing of llama.cpp lives in this process.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use perch_llm_protocol::wire::{
    ChatParams, ErrorKind, LoadParams, ModelReport, Placement, Reply, Request, RequestId,
};
use serde::Serialize;
use tokio::sync::{Mutex, OwnedMutexGuard, mpsc, watch};

use super::library::LocalModel;
use super::settings::LocalSettings;
use super::sidecar::Sidecar;
use super::{LocalError, machine};
use perch_foundation::crash_loop::CrashLoop;

/// The sidecar's program name; it is installed beside Perch's executables.
pub const PROGRAM: &str = "perch-llm";
/// How long a stopping sidecar may take before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(2);
/// Crashes in a row it is started again after; a run this long (loading included) was healthy.
const RESTARTS: u32 = 3;
const HEALTHY_AFTER: Duration = Duration::from_secs(120);
/// Prompt tokens evaluated at once.
const BATCH: u32 = 512;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum RuntimeState {
    Stopped,
    Starting,
    Loading,
    Ready,
    Answering,
    Crashed,
}

/// What the local runtime is doing, for Settings and tests.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct RuntimeStatus {
    pub state: RuntimeState,
    pub pid: Option<u32>,
    pub model: Option<String>,
    pub context_length: Option<u32>,
    pub threads: Option<u32>,
    /// Where the loaded model runs, in words: the graphics card (and how much of the model), or
    /// the CPU and why.
    pub runs_on: Option<String>,
    /// Something the user should hear (it stopped unexpectedly, it was restarted).
    pub message: Option<String>,
    pub restarts: u32,
}

impl Default for RuntimeStatus {
    fn default() -> Self {
        Self {
            state: RuntimeState::Stopped,
            pid: None,
            model: None,
            context_length: None,
            threads: None,
            runs_on: None,
            message: None,
            restarts: 0,
        }
    }
}

struct State {
    sidecar: Option<Arc<Sidecar>>,
    /// What the running sidecar has loaded.
    loaded: Option<LoadParams>,
    /// What to load again after a crash.
    wanted: Option<(LocalModel, LocalSettings)>,
    keep_alive: Duration,
    crashes: CrashLoop,
}

impl Default for State {
    fn default() -> Self {
        Self {
            sidecar: None,
            loaded: None,
            wanted: None,
            keep_alive: Duration::ZERO,
            crashes: CrashLoop::new(RESTARTS, HEALTHY_AFTER),
        }
    }
}

pub(crate) struct Inner {
    program: Option<PathBuf>,
    /// Where the sidecar writes a crash report (`perch-crash`), told through its environment.
    crash_dir: Option<PathBuf>,
    state: Mutex<State>,
    /// Held for the whole of an answer: one at a time.
    busy: Arc<Mutex<()>>,
    /// When the last answer ended (or the model was loaded), for the keep-alive.
    last_used: std::sync::Mutex<Option<Instant>>,
    status: watch::Sender<RuntimeStatus>,
    /// Bytes of the graphics card to leave for the whisper model (`Runtime::reserve_gpu`).
    gpu_reserved: AtomicU64,
}

#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").field("status", &*self.inner.status.borrow()).finish_non_exhaustive()
    }
}

impl Runtime {
    /// `program` overrides where the sidecar is looked for (beside the executable otherwise).
    pub fn new(program: Option<PathBuf>) -> Self {
        Self::with_crash_dir(program, None)
    }

    /// As [`Runtime::new`], the sidecar writing a crash report to `crash_dir` if it panics.
    pub fn with_crash_dir(program: Option<PathBuf>, crash_dir: Option<PathBuf>) -> Self {
        let inner = Inner {
            program,
            crash_dir,
            state: Mutex::default(),
            busy: Arc::default(),
            last_used: std::sync::Mutex::default(),
            status: watch::channel(RuntimeStatus::default()).0,
            gpu_reserved: AtomicU64::new(0),
        };
        Self { inner: Arc::new(inner) }
    }

    /// Leaves `bytes` of the graphics card's memory for something else Perch keeps there (the
    /// whisper model, when dictation runs on the card); the next load places the model around it.
    pub fn reserve_gpu(&self, bytes: u64) {
        self.inner.gpu_reserved.store(bytes, Ordering::Relaxed);
    }

    /// The graphics cards the running runtime found; `None` until it has started.
    pub async fn gpus(&self) -> Option<crate::sidecar::Gpus> {
        let state = self.inner.state.lock().await;
        state.sidecar.as_ref().filter(|s| s.is_alive()).map(|s| s.gpus())
    }

    pub fn status(&self) -> RuntimeStatus {
        self.inner.status.borrow().clone()
    }

    pub fn subscribe(&self) -> watch::Receiver<RuntimeStatus> {
        self.inner.status.subscribe()
    }

    /// Memory the sidecar holds (PSS), when it runs.
    pub fn memory(&self) -> Option<u64> {
        self.status().pid.and_then(machine::process_memory)
    }

    /// Starts an answer: the sidecar and the model are made ready first (checked, and loaded
    /// unless already loaded with the same settings). Answers wait for each other.
    pub async fn chat(
        &self,
        model: &LocalModel,
        settings: &LocalSettings,
        params: ChatParams,
    ) -> Result<Answer, LocalError> {
        let busy = self.inner.busy.clone().lock_owned().await;
        let sidecar = self.ensure_loaded(model, settings).await?;
        let (id, replies) = sidecar.request(|id| Request::Chat { id, params }).await?;
        self.set(|s| s.state = RuntimeState::Answering);
        Ok(Answer {
            id,
            replies,
            sidecar,
            runtime: Arc::downgrade(&self.inner),
            _busy: busy,
            finished: false,
        })
    }

    async fn ensure_loaded(
        &self,
        model: &LocalModel,
        settings: &LocalSettings,
    ) -> Result<Arc<Sidecar>, LocalError> {
        let params = load_params(model, settings, self.inner.gpu_reserved.load(Ordering::Relaxed));
        let mut state = self.inner.state.lock().await;
        state.keep_alive = Duration::from_secs(settings.keep_alive_secs.into());
        state.wanted = Some((model.clone(), settings.clone()));
        let running = state.sidecar.clone().filter(|s| s.is_alive());
        if let (Some(sidecar), Some(loaded)) = (&running, &state.loaded)
            && *loaded == params
        {
            return Ok(sidecar.clone());
        }
        // The header is read from disk (megabytes for a large vocabulary): off the async threads.
        let path = PathBuf::from(&model.path);
        tokio::task::spawn_blocking(move || perch_llm_protocol::gguf::inspect(&path))
            .await
            .map_err(|e| LocalError::Runtime { message: format!("checking the model file failed: {e}") })??;
        check_fits(model, &params, settings, running.as_ref().map(|s| s.pid()))?;
        let sidecar = match running {
            Some(s) => s,
            None => {
                self.set(|s| {
                    s.state = RuntimeState::Starting;
                    s.pid = None;
                });
                let sidecar = self.spawn().await?;
                state.crashes.started(Instant::now());
                state.sidecar = Some(sidecar.clone());
                state.loaded = None;
                sidecar
            }
        };
        self.set(|s| {
            s.state = RuntimeState::Loading;
            s.pid = Some(sidecar.pid());
            s.model = Some(model.name.clone());
        });
        let loaded = load(&sidecar, &params).await;
        match loaded {
            Ok(report) => {
                let runs_on = runs_on(&report.placement);
                self.set(|s| {
                    s.state = RuntimeState::Ready;
                    s.context_length = Some(report.context_length);
                    s.threads = Some(report.threads);
                    s.runs_on = Some(runs_on.clone());
                });
                tracing::info!(model = %model.name, load_ms = report.load_ms, context = report.context_length, %runs_on, "local model loaded");
                state.loaded = Some(params);
                self.inner.touch();
                Ok(sidecar)
            }
            Err(e) => {
                state.loaded = None;
                self.set(|s| {
                    s.state = RuntimeState::Ready;
                    s.model = None;
                });
                Err(e)
            }
        }
    }

    async fn spawn(&self) -> Result<Arc<Sidecar>, LocalError> {
        let program = self
            .inner
            .program
            .clone()
            .or_else(|| perch_foundation::paths::bundled_program(PROGRAM))
            .ok_or(LocalError::MissingRuntime)?;
        let weak = Arc::downgrade(&self.inner);
        let sidecar = Sidecar::spawn(&program, self.inner.crash_dir.as_deref(), move |how, asked| {
            if let Some(inner) = weak.upgrade() {
                tokio::spawn(Runtime { inner }.exited(how, asked));
            }
        })
        .await?;
        tokio::spawn(watch_idle(Arc::downgrade(&self.inner), Arc::downgrade(&sidecar)));
        tracing::info!(pid = sidecar.pid(), "local model runtime started");
        Ok(sidecar)
    }

    /// The sidecar ended. Unless Perch stopped it, that is a crash: the user is told, and it is
    /// started again with the model it had, unless it keeps crashing.
    /// (Boxed: it starts the sidecar again, whose exit handler calls it.)
    fn exited(self, how: String, asked: bool) -> futures::future::BoxFuture<'static, ()> {
        Box::pin(async move {
            let mut state = self.inner.state.lock().await;
            if state.sidecar.as_ref().is_some_and(|s| !s.is_alive()) {
                state.sidecar = None;
                state.loaded = None;
            }
            if asked {
                return;
            }
            tracing::warn!(%how, "the local model runtime stopped unexpectedly");
            let again = state.crashes.crashed(Instant::now()).is_some();
            let message = if again {
                format!(
                    "The local model runtime stopped unexpectedly (it {how}). Perch is starting it again."
                )
            } else {
                // The user's next question is a new start; the count begins again there.
                state.crashes.forgive();
                format!(
                    "The local model runtime stopped unexpectedly (it {how}), {} times in a row; Perch will start it again with your next question.",
                    RESTARTS + 1
                )
            };
            self.set(|s| {
                s.state = RuntimeState::Crashed;
                s.pid = None;
                s.message = Some(message);
            });
            let wanted = state.wanted.clone();
            drop(state);
            if let (true, Some((model, settings))) = (again, wanted) {
                let restarted = self.ensure_loaded(&model, &settings).await;
                if let Err(e) = restarted {
                    tracing::warn!(error = %e, "the local model runtime could not be started again");
                }
                self.set(|s| s.restarts += 1);
            }
        })
    }

    /// Stops the sidecar now (Unload in Settings, app exit); the next answer starts it again.
    pub async fn stop(&self) {
        let mut state = self.inner.state.lock().await;
        stop_locked(&self.inner, &mut state, None).await;
    }

    fn set(&self, change: impl FnOnce(&mut RuntimeStatus)) {
        self.inner.set(change);
    }
}

impl Inner {
    fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
    }

    fn idle(&self) -> Duration {
        self.last_used.lock().unwrap_or_else(|p| p.into_inner()).map_or(Duration::MAX, |t| t.elapsed())
    }

    fn set(&self, change: impl FnOnce(&mut RuntimeStatus)) {
        self.status.send_modify(change);
    }
}

async fn stop_locked(inner: &Inner, state: &mut State, message: Option<String>) {
    if let Some(sidecar) = state.sidecar.take() {
        sidecar.stop(STOP_GRACE).await;
        tracing::info!(pid = sidecar.pid(), "local model runtime stopped");
    }
    state.loaded = None;
    inner.set(|s| *s = RuntimeStatus { restarts: s.restarts, message, ..RuntimeStatus::default() });
}

/// Stops the sidecar once it has been idle for the keep-alive.
async fn watch_idle(inner: Weak<Inner>, sidecar: Weak<Sidecar>) {
    loop {
        let Some(runtime) = inner.upgrade() else { return };
        let keep_alive = runtime.state.lock().await.keep_alive;
        drop(runtime);
        tokio::time::sleep((keep_alive / 4).clamp(Duration::from_millis(100), Duration::from_secs(5))).await;
        let (Some(runtime), Some(sidecar)) = (inner.upgrade(), sidecar.upgrade()) else { return };
        if !sidecar.is_alive() {
            return;
        }
        let Ok(_answering) = runtime.busy.try_lock() else { continue };
        let mut state = runtime.state.lock().await;
        if !state.sidecar.as_ref().is_some_and(|s| Arc::ptr_eq(s, &sidecar)) {
            return;
        }
        if runtime.idle() >= state.keep_alive {
            let note = format!("Unloaded after {} s without use.", state.keep_alive.as_secs());
            stop_locked(&runtime, &mut state, Some(note)).await;
            return;
        }
    }
}

/// The load a model needs with these settings.
fn load_params(model: &LocalModel, settings: &LocalSettings, gpu_reserved: u64) -> LoadParams {
    LoadParams {
        path: model.path.clone(),
        context_length: effective_context(model, settings),
        threads: if settings.threads == 0 { machine::default_threads() } else { settings.threads },
        batch: BATCH,
        gpu_layers: settings.gpu_layers.get(&model.name).copied().unwrap_or_default().asked(),
        gpu_reserved,
    }
}

/// Where a loaded model runs, as Settings and `perch doctor` say it.
pub fn runs_on(placement: &Placement) -> String {
    let note = placement.note.as_deref().map(|n| format!(" ({n})")).unwrap_or_default();
    match &placement.device {
        Some(device) if placement.gpu_layers >= placement.layers => {
            format!("the graphics card, {device}: all {} layers", placement.layers)
        }
        Some(device) => format!(
            "the graphics card, {device}, for {} of {} layers, and the CPU for the rest{note}",
            placement.gpu_layers, placement.layers
        ),
        None => format!("the CPU{note}"),
    }
}

/// The context a model gets: the setting, within what the model was trained for.
pub fn effective_context(model: &LocalModel, settings: &LocalSettings) -> u32 {
    let trained = model.trained_context.unwrap_or(4096);
    if settings.context_length == 0 { trained } else { settings.context_length.min(trained) }
}

/// Refuses, before anything is loaded, a model that does not fit in the memory that is free
/// (counting what the running sidecar would give back).
fn check_fits(
    model: &LocalModel,
    params: &LoadParams,
    settings: &LocalSettings,
    running: Option<u32>,
) -> Result<(), LocalError> {
    let need = machine::memory_need(model.size, model.kv_bytes_per_token.unwrap_or(0), params.context_length);
    let freed = running.and_then(machine::process_memory).unwrap_or(0);
    let free = machine::available_memory().map(|m| m + freed);
    let limit = (settings.memory_limit_mb > 0).then(|| u64::from(settings.memory_limit_mb) << 20);
    let room = match (free, limit) {
        (Some(f), Some(l)) => Some(f.min(l)),
        (f, l) => f.or(l),
    };
    match room {
        Some(room) if need > room => Err(LocalError::TooLarge {
            model: model.name.clone(),
            need: machine::human_size(need),
            room: machine::human_size(room),
            limited: limit.is_some_and(|l| l <= free.unwrap_or(u64::MAX)),
        }),
        _ => Ok(()),
    }
}

async fn load(sidecar: &Sidecar, params: &LoadParams) -> Result<ModelReport, LocalError> {
    let (_, mut replies) = sidecar.request(|id| Request::Load { id, params: params.clone() }).await?;
    match replies.recv().await {
        Some(Reply::Loaded { model, .. }) => Ok(model),
        Some(Reply::Error { kind: ErrorKind::UnsupportedArchitecture, message, .. }) => {
            Err(LocalError::Unsupported { message })
        }
        Some(Reply::Error { message, .. }) => Err(LocalError::LoadFailed { message }),
        Some(other) => Err(LocalError::Runtime { message: format!("unexpected reply to a load: {other:?}") }),
        None => Err(LocalError::Runtime {
            message: format!("the local model runtime {} while loading the model", sidecar.exit_reason()),
        }),
    }
}

/// An answer in progress. Dropping it before its end cancels it in the sidecar.
pub struct Answer {
    id: RequestId,
    replies: mpsc::UnboundedReceiver<Reply>,
    sidecar: Arc<Sidecar>,
    runtime: Weak<Inner>,
    _busy: OwnedMutexGuard<()>,
    finished: bool,
}

impl Answer {
    /// The next reply; `done` and `error` end it. The sidecar dying ends it with an error.
    pub async fn next(&mut self) -> Option<Result<Reply, LocalError>> {
        if self.finished {
            return None;
        }
        let reply = match self.replies.recv().await {
            Some(reply) => reply,
            None => {
                self.finish();
                let message = format!(
                    "the local model runtime {} while answering; what arrived is kept, and Perch starts it again",
                    self.sidecar.exit_reason()
                );
                return Some(Err(LocalError::Crashed { message }));
            }
        };
        if matches!(reply, Reply::Done { .. } | Reply::Error { .. }) {
            self.finish();
        }
        if let Reply::MovedToCpu { reason, .. } = &reply {
            tracing::warn!("local model moved to the CPU: {reason}");
            if let Some(inner) = self.runtime.upgrade() {
                inner.set(|s| s.runs_on = Some(format!("the CPU: {reason}")));
            }
        }
        Some(Ok(reply))
    }

    fn finish(&mut self) {
        self.finished = true;
        if let Some(inner) = self.runtime.upgrade() {
            inner.touch();
            inner.set(|s| {
                if s.state == RuntimeState::Answering {
                    s.state = RuntimeState::Ready;
                }
            });
        }
    }
}

impl Drop for Answer {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        self.finish();
        let (sidecar, id) = (self.sidecar.clone(), self.id);
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            handle.spawn(async move { sidecar.cancel(id).await });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GpuLayers;

    #[test]
    fn where_a_model_runs_reads_as_a_sentence() {
        let card = Some("AMD Radeon RX 7600 (RADV NAVI33)".to_owned());
        let all = Placement { device: card.clone(), gpu_layers: 29, layers: 29, note: None };
        assert_eq!(runs_on(&all), "the graphics card, AMD Radeon RX 7600 (RADV NAVI33): all 29 layers");
        let part =
            Placement { device: card, gpu_layers: 12, layers: 29, note: Some("12 of 29 layers fit".into()) };
        assert_eq!(
            runs_on(&part),
            "the graphics card, AMD Radeon RX 7600 (RADV NAVI33), for 12 of 29 layers, and the CPU for the rest (12 of 29 layers fit)"
        );
        let cpu = Placement {
            device: None,
            gpu_layers: 0,
            layers: 29,
            note: Some("no Vulkan graphics card was found".into()),
        };
        assert_eq!(runs_on(&cpu), "the CPU (no Vulkan graphics card was found)");
    }

    #[test]
    fn the_per_model_setting_reaches_the_load() {
        let model = LocalModel {
            name: "qwen3-0.6b".into(),
            title: "Qwen3 0.6B".into(),
            path: "/m.gguf".into(),
            size: 1,
            source: crate::ModelSource::Added,
            architecture: None,
            trained_context: None,
            kv_bytes_per_token: None,
            tools: false,
            thinking: false,
            problem: None,
        };
        let mut settings = LocalSettings::default();
        assert_eq!(load_params(&model, &settings, 7).gpu_layers, None);
        assert_eq!(load_params(&model, &settings, 7).gpu_reserved, 7);
        settings.gpu_layers.insert("qwen3-0.6b".into(), GpuLayers::Count(4));
        settings.gpu_layers.insert("other".into(), GpuLayers::None);
        assert_eq!(load_params(&model, &settings, 0).gpu_layers, Some(4));
    }
}
