//! Holds the whisper model only while dictation is in use.
//!
//! The model is loaded when recording starts, in parallel with the microphone (audio is
//! buffered meanwhile, so no speech is lost: tiny.en loads in about 0.1 s, small in about a
//! second), and kept for `keep` after the last use, so a run of dictations pays the load once.
//! Then it is dropped and its memory (about 130 MB for tiny.en, 850 MB for small) returns to
//! the system. Loading at start-up instead would cost that memory all day for a feature used
//! a few times an hour; loading only after the key is released would add the load time to
//! every dictation's wait.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::VoiceError;
use super::whisper::Model;

#[derive(Default)]
struct Slot {
    model: Option<Arc<Model>>,
    /// A load in progress (other callers wait for it instead of loading twice).
    loading: Option<PathBuf>,
    last_used: Option<Instant>,
    /// Bumped on every use, so a release timer set before a later use does nothing.
    generation: u64,
}

#[derive(Default)]
pub struct ModelKeeper {
    slot: Mutex<Slot>,
    loaded: Condvar,
}

impl std::fmt::Debug for ModelKeeper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelKeeper").field("loaded", &self.loaded_path()).finish()
    }
}

impl ModelKeeper {
    fn lock(&self) -> MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The model at `path`, loading it if needed (on the graphics card if `gpu` and it fits
    /// there). Blocks: call from a blocking thread.
    pub fn get(&self, path: &Path, gpu: bool) -> Result<Arc<Model>, VoiceError> {
        let mut slot = self.lock();
        loop {
            if let Some(model) = slot.model.clone().filter(|m| m.path() == path && m.gpu_wanted == gpu) {
                slot.generation += 1;
                slot.last_used = Some(Instant::now());
                return Ok(model);
            }
            if slot.loading.is_none() {
                break;
            }
            slot = self.loaded.wait(slot).unwrap_or_else(|p| p.into_inner());
        }
        // Another model (a different choice in Settings) is dropped before loading this one.
        slot.model = None;
        slot.loading = Some(path.to_path_buf());
        drop(slot);
        let loaded = Model::load(path, gpu).map(Arc::new);
        let mut slot = self.lock();
        slot.loading = None;
        if let Ok(model) = &loaded {
            slot.model = Some(model.clone());
            slot.generation += 1;
            slot.last_used = Some(Instant::now());
        }
        self.loaded.notify_all();
        loaded
    }

    /// Marks the end of a use: the model is dropped after `keep` unless used again.
    pub fn release_after(self: &Arc<Self>, keep: Duration) {
        let generation = {
            let mut slot = self.lock();
            slot.last_used = Some(Instant::now());
            slot.generation
        };
        if keep.is_zero() {
            self.drop_if_idle(generation);
            return;
        }
        let keeper = Arc::downgrade(self);
        let spawned = std::thread::Builder::new().name("perch-whisper-release".into()).spawn(move || {
            std::thread::sleep(keep);
            if let Some(keeper) = keeper.upgrade() {
                keeper.drop_if_idle(generation);
            }
        });
        if let Err(e) = spawned {
            tracing::warn!(error = %e, "no timer thread; the whisper model stays loaded");
        }
    }

    fn drop_if_idle(&self, generation: u64) {
        let released = {
            let mut slot = self.lock();
            // Still in use by a transcription, or used again since: keep it.
            let busy = slot.model.as_ref().is_some_and(|m| Arc::strong_count(m) > 1);
            if slot.generation == generation && !busy { slot.model.take() } else { None }
        };
        if let Some(model) = released {
            drop(model);
            // What the dictations freed around the model goes back with it.
            perch_foundation::memory::give_back_free_heap();
            tracing::info!("whisper model released after being idle");
        }
    }

    /// Drops the model now (a delete, or the app quitting).
    pub fn unload(&self) {
        self.lock().model = None;
    }

    /// The model in memory, if any.
    pub fn loaded(&self) -> Option<Arc<Model>> {
        self.lock().model.clone()
    }

    pub fn loaded_path(&self) -> Option<PathBuf> {
        self.lock().model.as_ref().map(|m| m.path().to_path_buf())
    }
}
