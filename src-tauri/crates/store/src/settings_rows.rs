//! The `settings` table: key -> JSON text. Typing and defaults live in the engine's settings.

use rusqlite::params;

use super::{Store, StoreError, now_ms};

impl Store {
    /// Every stored setting as (key, JSON text).
    pub async fn setting_rows(&self) -> Result<Vec<(String, String)>, StoreError> {
        self.call(|c| {
            let mut stmt = c.prepare("SELECT key, value FROM settings ORDER BY key")?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }

    pub async fn put_setting(&self, key: &str, json: String) -> Result<(), StoreError> {
        let key = key.to_owned();
        self.call(move |c| {
            c.execute(
                "INSERT INTO settings (key, value, updated_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                params![key, json, now_ms()],
            )?;
            Ok(())
        })
        .await
    }
}
