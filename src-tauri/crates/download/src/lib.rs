//! Model files fetched over HTTP(S) into a folder: each streamed to `NAME.part`, resumed with
//! an HTTP Range request when a `.part` is already there, checked against its SHA-256, then
//! renamed into place. One mechanism for every model Perch downloads (the retrieval model,
//! whisper models, local chat models), so each gets resume, checksums, progress and Stop.

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use reqwest::StatusCode;
use reqwest::header::{CONTENT_RANGE, RANGE};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// One file of a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteFile {
    /// The file name in the model folder.
    pub name: Cow<'static, str>,
    pub url: Cow<'static, str>,
    /// Lowercase hex.
    pub sha256: Cow<'static, str>,
    /// Bytes.
    pub size: u64,
}

impl RemoteFile {
    /// A file known at compile time (a shipped catalogue).
    pub const fn fixed(name: &'static str, url: &'static str, sha256: &'static str, size: u64) -> Self {
        Self { name: Cow::Borrowed(name), url: Cow::Borrowed(url), sha256: Cow::Borrowed(sha256), size }
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DownloadError {
    #[error("{action} {path}: {source}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{url} could not be reached: {message}")]
    Unreachable { url: String, message: String },
    #[error("{url} answered HTTP {status}: {message}")]
    Http { url: String, status: u16, message: String },
    #[error("{file} is larger than the expected {expected} bytes; the download was stopped")]
    TooLarge { file: String, expected: u64 },
    #[error(
        "{file} does not match its checksum (expected sha256 {expected}, got {actual}); the download was deleted, try again"
    )]
    Checksum { file: String, expected: String, actual: String },
    #[error("the download was stopped; what arrived is kept and the next attempt resumes from it")]
    Cancelled,
    #[error("{name} is already being downloaded")]
    AlreadyRunning { name: String },
}

/// What went wrong at the bottom of a request's error chain ("Connection refused", "failed to
/// lookup address information: ..."): reqwest's own text repeats the URL the message names.
fn cause(e: &reqwest::Error) -> String {
    let mut deepest: &dyn std::error::Error = e;
    while let Some(next) = deepest.source() {
        deepest = next;
    }
    deepest.to_string()
}

impl DownloadError {
    fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io { action, path: path.into(), source }
    }
}

/// Progress of a whole download, in bytes (files already present count as done).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub done: u64,
    pub total: u64,
}

/// The files of `files` that `dir` lacks or holds at the wrong size (cheap: no hashing).
pub fn missing<'a>(files: &'a [RemoteFile], dir: &Path) -> Vec<&'a RemoteFile> {
    files
        .iter()
        .filter(|f| std::fs::metadata(dir.join(&*f.name)).map(|m| m.len() != f.size).unwrap_or(true))
        .collect()
}

/// Bytes still to fetch for `files` into `dir`, counting what `.part` files already hold.
pub fn remaining(files: &[RemoteFile], dir: &Path) -> u64 {
    missing(files, dir)
        .into_iter()
        .map(|f| {
            let part = std::fs::metadata(part_path(dir, f)).map(|m| m.len()).unwrap_or(0);
            f.size.saturating_sub(part)
        })
        .sum()
}

/// Where a file's download in progress is kept.
pub fn part_path(dir: &Path, file: &RemoteFile) -> PathBuf {
    dir.join(format!("{}.part", file.name))
}

/// Bytes that interrupted downloads of `files` left in `dir` (resumed by the next).
pub fn partial_bytes(files: &[RemoteFile], dir: &Path) -> u64 {
    files.iter().map(|f| std::fs::metadata(part_path(dir, f)).map_or(0, |m| m.len())).sum()
}

/// Deletes `files` from `dir`, and what interrupted downloads of them left; a file already gone
/// is no error.
pub fn remove(files: &[RemoteFile], dir: &Path) -> Result<(), DownloadError> {
    for file in files {
        for path in [dir.join(&*file.name), part_path(dir, file)] {
            match std::fs::remove_file(&path) {
                Ok(()) => tracing::info!(path = %path.display(), "deleted a model file"),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(DownloadError::io("deleting", path, e)),
            }
        }
    }
    Ok(())
}

/// The downloads under way of one kind of model, by name (any case): a second download of a
/// name is refused while the first runs (two writers on one `.part` would spoil it), and
/// `cancel` reaches the running one.
#[derive(Debug, Default)]
pub struct Downloads(Mutex<HashMap<String, CancellationToken>>);

/// A download's place in [`Downloads`], given up when dropped (finished, failed, or its future
/// dropped).
#[derive(Debug)]
pub struct Running<'a> {
    downloads: &'a Downloads,
    key: String,
    token: CancellationToken,
}

impl Downloads {
    fn key(name: &str) -> String {
        name.trim().to_lowercase()
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts `name`'s download, unless one is running.
    pub fn start(&self, name: &str) -> Result<Running<'_>, DownloadError> {
        let key = Self::key(name);
        let mut map = self.map();
        if map.contains_key(&key) {
            return Err(DownloadError::AlreadyRunning { name: name.trim().to_owned() });
        }
        let token = CancellationToken::new();
        map.insert(key.clone(), token.clone());
        Ok(Running { downloads: self, key, token })
    }

    /// Stops `name`'s download (what arrived is kept); false when none runs.
    pub fn cancel(&self, name: &str) -> bool {
        self.map().get(&Self::key(name)).map(CancellationToken::cancel).is_some()
    }
}

impl Running<'_> {
    /// What stops this download (`Fetch::cancel`).
    pub fn token(&self) -> &CancellationToken {
        &self.token
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.downloads.map().remove(&self.key);
    }
}

/// Options of one download.
#[derive(Default)]
pub struct Fetch<'a> {
    /// Fetch each file from `{base}/{name}` instead of its URL (tests, mirrors).
    pub base_override: Option<&'a str>,
    /// Stops the download between chunks; the `.part` file is kept for resuming.
    pub cancel: Option<&'a CancellationToken>,
}

/// Downloads `files` into `dir`. Files already present with the right hash are skipped; a
/// `.part` left by an interrupted attempt is resumed. `progress` is called as bytes arrive.
pub async fn fetch(
    client: &reqwest::Client,
    files: &[RemoteFile],
    dir: &Path,
    options: Fetch<'_>,
    mut progress: impl FnMut(Progress) + Send,
) -> Result<(), DownloadError> {
    tokio::fs::create_dir_all(dir).await.map_err(|e| DownloadError::io("creating", dir, e))?;
    let total: u64 = files.iter().map(|f| f.size).sum();
    let mut done = 0u64;
    progress(Progress { done, total });
    for file in files {
        let dest = dir.join(&*file.name);
        if dest.is_file() && hash_file(&dest).await? == file.sha256 {
            done += file.size;
            progress(Progress { done, total });
            continue;
        }
        let url = match options.base_override {
            Some(base) => format!("{}/{}", base.trim_end_matches('/'), file.name),
            None => file.url.to_string(),
        };
        let part = part_path(dir, file);
        let report = |n: u64| Progress { done: done + n.min(file.size), total };
        match fetch_one(client, file, &url, &part, options.cancel, &mut |n| progress(report(n))).await {
            Ok(()) => {}
            Err(e @ (DownloadError::Cancelled | DownloadError::Unreachable { .. })) => return Err(e),
            Err(e) => {
                // Anything but a pause or a dropped connection means the part is no good.
                let _ = tokio::fs::remove_file(&part).await;
                return Err(e);
            }
        }
        tokio::fs::rename(&part, &dest).await.map_err(|e| DownloadError::io("renaming", &part, e))?;
        done += file.size;
        progress(Progress { done, total });
        tracing::info!(file = %file.name, "downloaded");
    }
    Ok(())
}

/// Fetches one file into `part`, resuming from what it holds.
async fn fetch_one(
    client: &reqwest::Client,
    file: &RemoteFile,
    url: &str,
    part: &Path,
    cancel: Option<&CancellationToken>,
    progress: &mut (dyn FnMut(u64) + Send),
) -> Result<(), DownloadError> {
    let unreachable =
        |e: reqwest::Error| DownloadError::Unreachable { url: url.to_owned(), message: cause(&e) };
    let have = tokio::fs::metadata(part).await.map(|m| m.len()).unwrap_or(0);
    let mut request = client.get(url);
    if have > 0 {
        request = request.header(RANGE, format!("bytes={have}-"));
    }
    let mut response = request.send().await.map_err(unreachable)?;
    let status = response.status();
    let resumed = status == StatusCode::PARTIAL_CONTENT && starts_at(&response, have);
    if status == StatusCode::RANGE_NOT_SATISFIABLE && have > 0 {
        // The part may already be whole (the rename was what got interrupted).
        return check(file, hash_file(part).await?);
    }
    if !status.is_success() {
        let body: String = response.text().await.unwrap_or_default().trim().chars().take(200).collect();
        return Err(DownloadError::Http { url: url.to_owned(), status: status.as_u16(), message: body });
    }
    let mut hasher = Sha256::new();
    let mut received = 0u64;
    let mut out = if resumed {
        // Hash what is already there, then append to it.
        let mut existing =
            tokio::fs::File::open(part).await.map_err(|e| DownloadError::io("opening", part, e))?;
        hash_into(&mut existing, &mut hasher, part).await?;
        received = have;
        tokio::fs::OpenOptions::new()
            .append(true)
            .open(part)
            .await
            .map_err(|e| DownloadError::io("opening", part, e))?
    } else {
        tokio::fs::File::create(part).await.map_err(|e| DownloadError::io("creating", part, e))?
    };
    progress(received);
    loop {
        let chunk = match cancel {
            Some(token) => tokio::select! {
                _ = token.cancelled() => {
                    out.flush().await.map_err(|e| DownloadError::io("writing", part, e))?;
                    return Err(DownloadError::Cancelled);
                }
                chunk = response.chunk() => chunk,
            },
            None => response.chunk().await,
        };
        let chunk = match chunk {
            Ok(Some(chunk)) => chunk,
            Ok(None) => break,
            Err(e) => {
                // tokio's File writes in the background: what arrived must be in the part
                // before anyone resumes from it.
                out.flush().await.map_err(|e| DownloadError::io("writing", part, e))?;
                return Err(unreachable(e));
            }
        };
        received += chunk.len() as u64;
        if received > file.size {
            return Err(DownloadError::TooLarge { file: file.name.to_string(), expected: file.size });
        }
        hasher.update(&chunk);
        out.write_all(&chunk).await.map_err(|e| DownloadError::io("writing", part, e))?;
        progress(received);
    }
    out.flush().await.map_err(|e| DownloadError::io("writing", part, e))?;
    out.sync_all().await.map_err(|e| DownloadError::io("writing", part, e))?;
    drop(out);
    check(file, hex(&hasher.finalize()))
}

fn check(file: &RemoteFile, actual: String) -> Result<(), DownloadError> {
    if actual == file.sha256 {
        Ok(())
    } else {
        Err(DownloadError::Checksum {
            file: file.name.to_string(),
            expected: file.sha256.to_string(),
            actual,
        })
    }
}

/// Whether a 206 answer continues exactly where the part ends (`Content-Range: bytes N-...`).
fn starts_at(response: &reqwest::Response, offset: u64) -> bool {
    response
        .headers()
        .get(CONTENT_RANGE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("bytes "))
        .and_then(|v| v.split('-').next())
        .and_then(|start| start.trim().parse::<u64>().ok())
        == Some(offset)
}

/// The SHA-256 of a file, in lowercase hex.
pub async fn hash_file(path: &Path) -> Result<String, DownloadError> {
    let mut file = tokio::fs::File::open(path).await.map_err(|e| DownloadError::io("opening", path, e))?;
    let mut hasher = Sha256::new();
    hash_into(&mut file, &mut hasher, path).await?;
    Ok(hex(&hasher.finalize()))
}

async fn hash_into(
    file: &mut tokio::fs::File,
    hasher: &mut Sha256,
    path: &Path,
) -> Result<(), DownloadError> {
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf).await.map_err(|e| DownloadError::io("reading", path, e))?;
        if n == 0 {
            return Ok(());
        }
        hasher.update(&buf[..n]);
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
