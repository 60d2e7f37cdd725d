//! The review service: the current review and its versions, the selection Perch's UI reports,
//! opening references in the editor, and committing with the review as the message.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use perch_ipc::{Command, PresentReview};
use serde::Serialize;
use serde_json::{Value, json};
use tokio::sync::broadcast;

use super::editor::{self, EditorError};
use super::references::{self, FileReference, ReferenceError};
use super::server::{RequestError, RequestHandler};
use perch_store::{ReviewRow, Store, StoreError};

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReviewError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Editor(#[from] EditorError),
    #[error(transparent)]
    Reference(#[from] ReferenceError),
    #[error("git could not run: {0}")]
    Git(String),
}

/// A version of the review, with its references checked against its base folder.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct ReviewDocument {
    pub id: i64,
    pub content: String,
    pub base_uri: String,
    pub mode: String,
    pub section: Option<String>,
    pub created_at: i64,
    pub references: Vec<FileReference>,
}

/// A line in the list of earlier versions.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct ReviewVersion {
    pub id: i64,
    pub title: String,
    pub mode: String,
    pub section: Option<String>,
    pub created_at: i64,
}

#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct CommitOutcome {
    pub success: bool,
    /// What git printed (stdout and stderr).
    pub output: String,
}

#[derive(Debug)]
pub struct ReviewService {
    store: Store,
    selection: Mutex<Option<String>>,
    /// Pushes are applied one at a time, so appends land in the order they arrived.
    apply_lock: tokio::sync::Mutex<()>,
    updates: broadcast::Sender<ReviewDocument>,
}

impl ReviewService {
    pub fn new(store: Store) -> Self {
        Self {
            store,
            selection: Mutex::new(None),
            apply_lock: tokio::sync::Mutex::new(()),
            updates: broadcast::channel(16).0,
        }
    }

    /// Every new version, as it is stored (the app shows it).
    pub fn subscribe(&self) -> broadcast::Receiver<ReviewDocument> {
        self.updates.subscribe()
    }

    /// Applies a pushed review to the latest version and stores the result as a new version.
    pub async fn present(&self, review: PresentReview) -> Result<ReviewDocument, ReviewError> {
        let _one_at_a_time = self.apply_lock.lock().await;
        let current = self.store.latest_review().await?.map(|r| r.content).unwrap_or_default();
        let content =
            super::document::apply(&current, &review.content, review.mode, review.section.as_deref());
        let row = self
            .store
            .insert_review(&review.base_uri, &content, review.mode.as_str(), review.section.as_deref())
            .await?;
        let document = with_references(row).await;
        let _ = self.updates.send(document.clone());
        Ok(document)
    }

    pub async fn latest(&self) -> Result<Option<ReviewDocument>, ReviewError> {
        match self.store.latest_review().await? {
            Some(row) => Ok(Some(with_references(row).await)),
            None => Ok(None),
        }
    }

    pub async fn version(&self, id: i64) -> Result<ReviewDocument, ReviewError> {
        Ok(with_references(self.store.review(id).await?).await)
    }

    pub async fn versions(&self, limit: u32) -> Result<Vec<ReviewVersion>, ReviewError> {
        let rows = self.store.list_reviews(limit).await?;
        Ok(rows
            .into_iter()
            .map(|r| ReviewVersion {
                id: r.id,
                title: title_of(&r.content),
                mode: r.mode,
                section: r.section,
                created_at: r.created_at,
            })
            .collect())
    }

    pub fn set_selection(&self, text: Option<String>) {
        let text = text.filter(|t| !t.trim().is_empty());
        *self.selection.lock().unwrap_or_else(|p| p.into_inner()) = text;
    }

    pub fn selection(&self) -> Option<String> {
        self.selection.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Opens a reference of review version `id` in the editor. The reference is resolved again
    /// here, whatever the UI believed: only files inside the base folder are ever opened.
    pub async fn open_reference(
        &self,
        id: i64,
        target: &str,
        template: &str,
        envs: &[(String, String)],
    ) -> Result<(), ReviewError> {
        let row = self.store.review(id).await?;
        let reference = references::extract(&row.content)
            .into_iter()
            .find(|r| r.target == target)
            .ok_or_else(|| ReferenceError::Unknown { target: target.to_owned(), source_name: "review" })?;
        let (base_uri, path) = (row.base_uri.clone(), reference.path.clone());
        let file = tokio::task::spawn_blocking(move || {
            let base = references::base_dir(&base_uri)?;
            references::resolve(&base, &path)
        })
        .await
        .map_err(|e| ReferenceError::Interrupted(e.to_string()))??;
        editor::open(template, &file, reference.line.max(1), envs).await?;
        Ok(())
    }

    /// Runs `git commit` in the review's base folder with the review as the message.
    pub async fn commit(&self, id: i64, envs: &[(String, String)]) -> Result<CommitOutcome, ReviewError> {
        let row = self.store.review(id).await?;
        let base = references::base_dir(&row.base_uri)?;
        git_commit(&base, &row.content, envs).await
    }
}

async fn git_commit(
    dir: &std::path::Path,
    message: &str,
    envs: &[(String, String)],
) -> Result<CommitOutcome, ReviewError> {
    use tokio::io::AsyncWriteExt;
    let mut child = tokio::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["commit", "--file=-"])
        .envs(envs.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| ReviewError::Git(e.to_string()))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(message.as_bytes()).await.map_err(|e| ReviewError::Git(e.to_string()))?;
    }
    let output = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .map_err(|_| ReviewError::Git("git did not finish within 60 s".into()))?
        .map_err(|e| ReviewError::Git(e.to_string()))?;
    let text =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    Ok(CommitOutcome { success: output.status.success(), output: text.trim().to_owned() })
}

async fn with_references(row: ReviewRow) -> ReviewDocument {
    let (content, base_uri) = (row.content.clone(), row.base_uri.clone());
    let references = tokio::task::spawn_blocking(move || references::check_all(&content, &base_uri))
        .await
        .unwrap_or_default();
    ReviewDocument {
        id: row.id,
        content: row.content,
        base_uri: row.base_uri,
        mode: row.mode,
        section: row.section,
        created_at: row.created_at,
        references,
    }
}

/// The first heading, else the first line, shortened.
fn title_of(markdown: &str) -> String {
    let lines = markdown.lines().map(str::trim).filter(|l| !l.is_empty());
    let heading = markdown.lines().map(str::trim).find(|l| l.starts_with('#'));
    let line = heading.or_else(|| lines.clone().next()).unwrap_or("");
    let text = line.trim_start_matches('#').trim_end_matches('#').trim();
    if text.chars().count() > 80 {
        format!("{}…", text.chars().take(79).collect::<String>())
    } else {
        text.to_owned()
    }
}

impl RequestHandler for ReviewService {
    async fn handle(&self, command: Command) -> Result<Value, RequestError> {
        match command {
            Command::Ping => Ok(json!({ "pong": true, "version": env!("CARGO_PKG_VERSION") })),
            Command::GetSelection => Ok(json!(self.selection())),
            Command::App(_) | Command::ConnectionsChanged => Err(RequestError::NotForReviews),
            Command::PresentReview(review) => {
                let document = self.present(review).await?;
                let broken: Vec<Value> = document
                    .references
                    .iter()
                    .filter(|r| !r.is_ok())
                    .map(|r| json!({ "reference": r.target, "problem": r.problem }))
                    .collect();
                Ok(json!({
                    "version": document.id,
                    "characters": document.content.chars().count(),
                    "references": document.references.len(),
                    "broken": broken,
                }))
            }
        }
    }
}

/// Shared by the engine, the socket server and the shell.
pub type SharedReviews = Arc<ReviewService>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_come_from_the_first_heading() {
        assert_eq!(title_of("intro\n\n## Auth changes ##\n"), "Auth changes");
        assert_eq!(title_of("\n\nplain first line\nmore"), "plain first line");
        assert_eq!(title_of(""), "");
    }
}
