//! Every version of every review pushed over the review socket.

use rusqlite::{OptionalExtension, Row, params};

use super::{Store, StoreError, now_ms};

#[derive(Debug, Clone, PartialEq)]
pub struct ReviewRow {
    pub id: i64,
    pub base_uri: String,
    pub content: String,
    pub mode: String,
    pub section: Option<String>,
    pub created_at: i64,
}

fn review_from_row(row: &Row<'_>) -> rusqlite::Result<ReviewRow> {
    Ok(ReviewRow {
        id: row.get(0)?,
        base_uri: row.get(1)?,
        content: row.get(2)?,
        mode: row.get(3)?,
        section: row.get(4)?,
        created_at: row.get(5)?,
    })
}

const COLUMNS: &str = "id, base_uri, content, mode, section, created_at";

impl Store {
    pub async fn insert_review(
        &self,
        base_uri: &str,
        content: &str,
        mode: &str,
        section: Option<&str>,
    ) -> Result<ReviewRow, StoreError> {
        let (base_uri, content, mode, section) =
            (base_uri.to_owned(), content.to_owned(), mode.to_owned(), section.map(str::to_owned));
        self.call(move |c| {
            c.execute(
                "INSERT INTO review_documents (base_uri, content, mode, section, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![base_uri, content, mode, section, now_ms()],
            )?;
            let id = c.last_insert_rowid();
            Ok(c.query_row(&format!("SELECT {COLUMNS} FROM review_documents WHERE id = ?1"), [id], review_from_row)?)
        })
        .await
    }

    pub async fn latest_review(&self) -> Result<Option<ReviewRow>, StoreError> {
        self.call(|c| {
            Ok(c.query_row(
                &format!("SELECT {COLUMNS} FROM review_documents ORDER BY id DESC LIMIT 1"),
                [],
                review_from_row,
            )
            .optional()?)
        })
        .await
    }

    pub async fn review(&self, id: i64) -> Result<ReviewRow, StoreError> {
        self.call(move |c| {
            c.query_row(
                &format!("SELECT {COLUMNS} FROM review_documents WHERE id = ?1"),
                [id],
                review_from_row,
            )
            .optional()?
            .ok_or_else(|| StoreError::NotFound(format!("review version {id}")))
        })
        .await
    }

    /// Newest first.
    pub async fn list_reviews(&self, limit: u32) -> Result<Vec<ReviewRow>, StoreError> {
        self.call(move |c| {
            let mut stmt =
                c.prepare(&format!("SELECT {COLUMNS} FROM review_documents ORDER BY id DESC LIMIT ?1"))?;
            let rows = stmt.query_map([limit], review_from_row)?;
            Ok(rows.collect::<Result<_, _>>()?)
        })
        .await
    }
}
