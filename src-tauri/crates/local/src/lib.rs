//! perch-local: local models, built in: GGUF files run by the `perch-llm` sidecar (llama.cpp in its own
//! process), so chat works with no Ollama, no key and no network after one download.
//! `catalog`: the curated models; `library`: the models on this machine; `runtime` and
//! `sidecar`: the process that runs them; `machine`: threads and memory. The `local` provider
//! (`providers::local`) puts them behind the same `Provider` trait as every other backend.

pub mod catalog;
pub mod library;
pub mod machine;
pub mod runtime;
pub mod settings;
mod sidecar;

use std::path::{Path, PathBuf};

use perch_download::{DownloadError, Fetch, Progress, RemoteFile};
use perch_llm_protocol::gguf::GgufError;
use tokio::sync::broadcast;

pub use catalog::{CATALOG, CatalogEntry, CatalogModel};
pub use library::{Deleted, LocalModel, ModelSource};
pub use runtime::{Answer, Runtime, RuntimeState, RuntimeStatus};
pub use settings::{GpuLayers, LocalSettings};
pub use sidecar::{Gpus, SidecarError};

/// The graphics cards the local model runtime finds (and why none), from a runtime started for
/// the question and stopped at once (`perch doctor`; the app asks its running one).
pub async fn find_gpus(program: Option<PathBuf>) -> Result<Gpus, LocalError> {
    let program = program
        .or_else(|| perch_foundation::paths::bundled_program(runtime::PROGRAM))
        .ok_or(LocalError::MissingRuntime)?;
    let sidecar = sidecar::Sidecar::spawn(&program, None, |_, _| {}).await?;
    let gpus = sidecar.gpus();
    sidecar.stop(std::time::Duration::from_secs(2)).await;
    Ok(gpus)
}

/// Fetch catalogue files from `{mirror}/{file name}` instead of Hugging Face.
pub const MIRROR_ENV: &str = "PERCH_MODEL_MIRROR";

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LocalError {
    #[error("there is no local model {name:?}{}", available_hint(.available))]
    NotFound { name: String, available: Vec<String> },
    #[error(transparent)]
    BadFile(#[from] GgufError),
    #[error(
        "{model} needs about {need} of memory and {room} is {}; close other programs, lower the context length in Settings -> Models -> Local, or pick a smaller model",
        if *.limited { "the limit set in Settings -> Models -> Local" } else { "free" }
    )]
    TooLarge { model: String, need: String, room: String, limited: bool },
    #[error("{message}")]
    Unsupported { message: String },
    #[error("the model could not be loaded: {message}")]
    LoadFailed { message: String },
    #[error(transparent)]
    Sidecar(#[from] SidecarError),
    #[error("{message}")]
    Runtime { message: String },
    #[error("{message}")]
    Crashed { message: String },
    #[error(
        "Perch's local model runtime (perch-llm) is missing; it belongs beside Perch's executable, so reinstall Perch"
    )]
    MissingRuntime,
    #[error("there is a local model called {name} already ({path}); pick another name")]
    NameTaken { name: String, path: String },
    #[error("{name:?} cannot be a model name: use lowercase letters, digits, '.', '_' and '-' (64 at most)")]
    InvalidName { name: String },
    #[error("there is no model {id:?} in the catalogue; choose one of: {}", catalog_ids())]
    UnknownCatalog { id: String },
    #[error(transparent)]
    Download(#[from] DownloadError),
    #[error("there is no file at {}: check the path (the whole path, such as /home/you/models/model.gguf)", .0.display())]
    NoSuchFile(PathBuf),
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl LocalError {
    fn io(action: &'static str, path: impl AsRef<Path>, source: std::io::Error) -> Self {
        Self::Io { action, path: path.as_ref().to_path_buf(), source }
    }
}

fn available_hint(available: &[String]) -> String {
    if available.is_empty() {
        "; download one in Settings -> Models -> Local or with `perch local download`".into()
    } else {
        format!("; there are: {}", available.join(", "))
    }
}

fn catalog_ids() -> String {
    CATALOG.iter().map(|e| e.id).collect::<Vec<_>>().join(", ")
}

/// The local models and the runtime that runs them; one per engine.
pub struct LocalModels {
    library: std::sync::Arc<library::Library>,
    runtime: Runtime,
    mirror: Option<String>,
    downloads: perch_download::Downloads,
    /// Models were added, downloaded or deleted.
    changes: broadcast::Sender<()>,
}

impl std::fmt::Debug for LocalModels {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalModels").field("library", &self.library).finish_non_exhaustive()
    }
}

impl LocalModels {
    /// Models live in `data_dir/models/llm`.
    pub fn new(data_dir: &Path) -> Self {
        Self {
            library: std::sync::Arc::new(library::Library::new(data_dir.join("models").join("llm"))),
            runtime: Runtime::with_crash_dir(None, Some(perch_foundation::paths::crashes_dir_in(data_dir))),
            mirror: std::env::var(MIRROR_ENV).ok().filter(|m| !m.trim().is_empty()),
            downloads: perch_download::Downloads::default(),
            changes: broadcast::channel(16).0,
        }
    }

    pub fn runtime(&self) -> &Runtime {
        &self.runtime
    }

    pub fn dir(&self) -> &Path {
        self.library.dir()
    }

    pub fn subscribe(&self) -> broadcast::Receiver<()> {
        self.changes.subscribe()
    }

    pub async fn list(&self) -> Vec<LocalModel> {
        self.blocking(library::Library::list).await
    }

    pub async fn get(&self, name: &str) -> Result<LocalModel, LocalError> {
        let name = name.to_owned();
        self.blocking(move |l| l.get(&name)).await
    }

    /// The catalogue with what is installed, and what each model needs with `settings`.
    pub async fn catalog(&self, settings: &LocalSettings) -> Vec<CatalogModel> {
        let installed = self.list().await;
        CATALOG
            .iter()
            .map(|e| {
                let context = if settings.context_length == 0 { 8192 } else { settings.context_length };
                let part = perch_download::partial_bytes(std::slice::from_ref(&e.file), self.dir());
                CatalogModel {
                    id: e.id.into(),
                    title: e.title.into(),
                    file: e.file.name.to_string(),
                    size: e.file.size,
                    memory: machine::memory_need(e.file.size, e.kv_bytes_per_token, context),
                    licence: e.licence.into(),
                    licence_url: e.licence_url.into(),
                    tools: e.tools,
                    thinking: e.thinking,
                    note: e.note.into(),
                    installed: installed
                        .iter()
                        .any(|m| m.name == e.id && m.source == ModelSource::Downloaded),
                    partial: part,
                }
            })
            .collect()
    }

    /// Downloads a catalogue model (resuming an interrupted download), checked against its
    /// SHA-256, reporting progress; `cancel_download` stops it, keeping what arrived.
    pub async fn download(
        &self,
        id: &str,
        progress: impl FnMut(Progress) + Send,
    ) -> Result<LocalModel, LocalError> {
        let entry = catalog::find(id).ok_or_else(|| LocalError::UnknownCatalog { id: id.to_owned() })?;
        let model = self.download_file(&entry.file, id, progress).await?;
        Ok(model)
    }

    /// Downloads any model file into the models folder the same way; `key` names the download
    /// for `cancel_download`.
    pub async fn download_file(
        &self,
        file: &RemoteFile,
        key: &str,
        progress: impl FnMut(Progress) + Send,
    ) -> Result<LocalModel, LocalError> {
        let running = self.downloads.start(key)?;
        let client = perch_foundation::http::client();
        let options = Fetch { base_override: self.mirror.as_deref(), cancel: Some(running.token()) };
        let fetched =
            perch_download::fetch(&client, std::slice::from_ref(file), self.dir(), options, progress).await;
        drop(running);
        fetched?;
        let _ = self.changes.send(());
        let path = self.dir().join(&*file.name);
        let all = self.list().await;
        all.into_iter()
            .find(|m| Path::new(&m.path) == path)
            .ok_or_else(|| LocalError::NotFound { name: key.to_owned(), available: Vec::new() })
    }

    /// Stops a download in progress; true when there was one.
    pub fn cancel_download(&self, id: &str) -> bool {
        self.downloads.cancel(id)
    }

    /// Registers a GGUF file on disk (checked first) under `name`, or a name from its file name.
    pub async fn add(&self, path: &Path, name: Option<&str>) -> Result<LocalModel, LocalError> {
        let (path, name) = (path.to_path_buf(), name.map(str::to_owned));
        let added = self.blocking(move |l| l.add(&path, name.as_deref())).await?;
        let _ = self.changes.send(());
        Ok(added)
    }

    /// Deletes a downloaded model's file, or forgets an added one; unloads it first if loaded.
    pub async fn delete(&self, name: &str) -> Result<Deleted, LocalError> {
        if self.runtime.status().model.as_deref() == Some(name) {
            self.runtime.stop().await;
        }
        let name = name.to_owned();
        let deleted = self.blocking(move |l| l.delete(&name)).await?;
        let _ = self.changes.send(());
        Ok(deleted)
    }

    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&library::Library) -> T + Send + 'static,
    ) -> T {
        let library = self.library.clone();
        match tokio::task::spawn_blocking(move || f(&library)).await {
            Ok(value) => value,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }
}
