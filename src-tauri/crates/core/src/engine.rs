//! The engine: the data dir, the store and the settings, opened once and shared.

use std::sync::Arc;

use serde::Serialize;

use crate::paths::{DataDir, PathsError};
use crate::settings::SettingsHandle;
use crate::store::{Integrity, OpenReport, Store, StoreError};

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StartError {
    #[error(transparent)]
    DataDir(#[from] PathsError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A cheap-to-clone handle on everything the app and the CLI share.
#[derive(Clone, Debug)]
pub struct Engine {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    data_dir: DataDir,
    store: Store,
    settings: SettingsHandle,
    opened: OpenReport,
}

/// What happened at start that a person should hear about.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct StartupNotice {
    pub title: String,
    pub detail: String,
}

impl Engine {
    pub async fn start(data_dir: DataDir) -> Result<Self, StartError> {
        let (store, opened) = Store::open(&data_dir.db_path(), Integrity::Quick).await?;
        let settings = SettingsHandle::load(store.clone()).await?;
        tracing::info!(data_dir = %data_dir.root().display(), schema = opened.schema_version, "engine started");
        Ok(Self { inner: Arc::new(Inner { data_dir, store, settings, opened }) })
    }

    pub fn data_dir(&self) -> &DataDir {
        &self.inner.data_dir
    }
    pub fn store(&self) -> &Store {
        &self.inner.store
    }
    pub fn settings(&self) -> &SettingsHandle {
        &self.inner.settings
    }
    pub fn open_report(&self) -> &OpenReport {
        &self.inner.opened
    }

    /// Things from start-up the UI shows once, such as a database that had to be replaced.
    pub fn startup_notices(&self) -> Vec<StartupNotice> {
        let mut notices = Vec::new();
        if let Some(r) = &self.inner.opened.recovered {
            notices.push(StartupNotice {
                title: "Your history database was damaged".into(),
                detail: format!(
                    "Perch could not read it ({}), so it started a new one. The damaged file was kept as {}.",
                    r.reason,
                    r.backup.display()
                ),
            });
        }
        notices
    }
}
