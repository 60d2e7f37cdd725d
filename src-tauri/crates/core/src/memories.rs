//! The engine's side of memories (`perch-memories`): the user's list (the Memories page,
//! `perch memories`), and the memories a question is given, decided per turn by the settings
//! and where the model runs.

use std::path::PathBuf;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use perch_memories::Recall;
use perch_memories::tool::{HOLDS_A_SECRET, SecretCheck};
pub use perch_memories::{MEMORY_MAX_CHARS, Memory, MemoryUse};
use perch_retrieval::MiniLmSlot;
use perch_store::{Store, StoreError};

use crate::keys::Keys;
use crate::settings::{MemorySettings, SettingsHandle};

pub struct Memories {
    store: Store,
    minilm: MiniLmSlot,
    recall: Arc<Recall>,
    /// What the secret check reads: the stored keys, by the names the settings give them.
    data_dir: PathBuf,
    settings: Arc<SettingsHandle>,
    keys: Arc<Keys>,
}

impl std::fmt::Debug for Memories {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Memories").finish_non_exhaustive()
    }
}

impl Memories {
    pub fn new(
        store: Store,
        minilm: MiniLmSlot,
        data_dir: PathBuf,
        settings: Arc<SettingsHandle>,
        keys: Arc<Keys>,
    ) -> Self {
        Self { store, minilm, recall: Arc::default(), data_dir, settings, keys }
    }

    pub async fn list(&self) -> Result<Vec<Memory>, StoreError> {
        self.store.memories().await
    }

    /// A memory the user wrote.
    pub async fn add(&self, text: &str) -> Result<Memory, StoreError> {
        self.refuse_secrets(text).await?;
        self.store.add_memory(text, None).await
    }

    pub async fn edit(&self, id: i64, text: &str) -> Result<Memory, StoreError> {
        self.refuse_secrets(text).await?;
        self.store.edit_memory(id, text).await
    }

    async fn refuse_secrets(&self, text: &str) -> Result<(), StoreError> {
        match self.holds_secret(text).await {
            true => Err(StoreError::Invalid(format!("not kept: {HOLDS_A_SECRET}"))),
            false => Ok(()),
        }
    }

    pub async fn forget(&self, id: i64) -> Result<(), StoreError> {
        self.store.forget_memory(id).await
    }

    /// The memories `question` is about, when this turn may be given any: memories are on and
    /// the model runs on this computer, or the user allowed other models to read them. The
    /// embedding model is used when it is downloaded (shared with the tool picker), else shared
    /// words decide.
    pub async fn for_question(
        &self,
        settings: &MemorySettings,
        on_this_machine: bool,
        question: &str,
    ) -> Vec<Memory> {
        let allowed = settings.enabled && (on_this_machine || settings.cloud);
        if !allowed || question.trim().is_empty() {
            return Vec::new();
        }
        let kept = match self.store.memories().await {
            Ok(kept) if !kept.is_empty() => kept,
            Ok(_) => return Vec::new(),
            Err(e) => {
                tracing::warn!(error = %e, "the memories could not be read; the answer goes without them");
                return Vec::new();
            }
        };
        let model = self.minilm.get().await;
        let recall = self.recall.clone();
        let question = question.to_owned();
        tokio::task::spawn_blocking(move || recall.relevant(&question, &kept, model.as_deref()))
            .await
            .unwrap_or_default()
    }
}

/// The diagnostics bundle's redactor decides: a stored key's value, a token's shape, a
/// private key. Blocking inside (the keyring may answer over D-Bus), so off the async threads.
impl SecretCheck for Memories {
    fn holds_secret<'a>(&'a self, text: &'a str) -> BoxFuture<'a, bool> {
        async move {
            let settings = self.settings.get().await;
            let (data_dir, keys, text) = (self.data_dir.clone(), self.keys.clone(), text.to_owned());
            tokio::task::spawn_blocking(move || {
                let mut redactor = crate::logs::redactor(&data_dir, &keys, &settings);
                redactor.text(&text) != text
            })
            .await
            // Unsure is a yes: nothing is kept that could not be checked.
            .unwrap_or(true)
        }
        .boxed()
    }
}
