#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! The settings over a real history database: kept across a reopen, and a row that no longer
//! reads (a bad value, a setting from a newer Perch) falls back to its default.

use perch_core::settings::{SettingsHandle, ThemePreference};
use perch_core::store::{Integrity, Store};

async fn open(path: &std::path::Path) -> Store {
    Store::open(path, Integrity::Full).await.unwrap().0
}

#[tokio::test]
async fn settings_survive_a_reopen_and_bad_rows_fall_back() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("perch.db");
    {
        let store = open(&db).await;
        let settings = SettingsHandle::load(store.clone()).await.unwrap();
        settings.update(|s| s.theme = ThemePreference::Dark).await.unwrap();
        store.put_setting("providers", r#"{"ollama_url": "not a url"}"#.into()).await.unwrap();
        store.put_setting("someday_setting", "true".into()).await.unwrap();
    }
    let store = open(&db).await;
    let settings = SettingsHandle::load(store).await.unwrap().get().await;
    assert_eq!(settings.theme, ThemePreference::Dark);
    assert_eq!(settings.providers.ollama_url.as_str(), perch_core::settings::DEFAULT_OLLAMA_URL);
}
