//! Fetching model files over HTTPS, checked against their sha256.

use std::path::Path;

use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::RetrievalError;

/// One file of a model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelFile {
    /// The file name in the model folder.
    pub name: &'static str,
    pub url: &'static str,
    /// Lowercase hex.
    pub sha256: &'static str,
    /// Bytes.
    pub size: u64,
}

/// all-MiniLM-L6-v2 as [`MiniLm::load`](crate::MiniLm::load) reads it. Its `config.json` is
/// built in, so only the weights and the tokenizer are fetched.
pub const MINILM_FILES: &[ModelFile] = &[
    ModelFile {
        name: "model.safetensors",
        url: "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/main/model.safetensors",
        sha256: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        size: 90_868_376,
    },
    ModelFile {
        name: "tokenizer.json",
        url: "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/main/tokenizer.json",
        sha256: "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        size: 466_247,
    },
];

/// The files of `files` that `dir` lacks or holds at the wrong size (cheap: no hashing).
pub fn missing<'a>(files: &'a [ModelFile], dir: &Path) -> Vec<&'a ModelFile> {
    files
        .iter()
        .filter(|f| std::fs::metadata(dir.join(f.name)).map(|m| m.len() != f.size).unwrap_or(true))
        .collect()
}

/// Downloads `files` into `dir`, each streamed to `NAME.part`, checked against its sha256 and
/// then renamed into place. Files already present with the right hash are skipped. With
/// `base_override`, each file is fetched from `{base_override}/{name}` instead of its URL.
/// `progress(done, total)` is called as bytes arrive (skipped files count as done).
pub async fn fetch(
    client: &reqwest::Client,
    files: &[ModelFile],
    dir: &Path,
    base_override: Option<&str>,
    mut progress: impl FnMut(u64, u64),
) -> Result<(), RetrievalError> {
    tokio::fs::create_dir_all(dir).await.map_err(|e| RetrievalError::io("creating", dir, e))?;
    let total: u64 = files.iter().map(|f| f.size).sum();
    let mut done = 0u64;
    progress(done, total);
    for file in files {
        let dest = dir.join(file.name);
        if dest.is_file() && hash_file(&dest).await? == file.sha256 {
            done += file.size;
            progress(done, total);
            continue;
        }
        let url = match base_override {
            Some(base) => format!("{}/{}", base.trim_end_matches('/'), file.name),
            None => file.url.to_owned(),
        };
        let part = dir.join(format!("{}.part", file.name));
        let result = download(client, file, &url, &part, done, total, &mut progress).await;
        if let Err(e) = result {
            let _ = tokio::fs::remove_file(&part).await;
            return Err(e);
        }
        tokio::fs::rename(&part, &dest).await.map_err(|e| RetrievalError::io("renaming", &part, e))?;
        done += file.size;
        progress(done, total);
        tracing::info!(file = file.name, "downloaded");
    }
    Ok(())
}

async fn download(
    client: &reqwest::Client,
    file: &ModelFile,
    url: &str,
    part: &Path,
    done: u64,
    total: u64,
    progress: &mut impl FnMut(u64, u64),
) -> Result<(), RetrievalError> {
    let unreachable =
        |e: reqwest::Error| RetrievalError::Unreachable { url: url.to_owned(), message: e.to_string() };
    let mut response = client.get(url).send().await.map_err(unreachable)?;
    let status = response.status();
    if !status.is_success() {
        let body: String = response.text().await.unwrap_or_default().trim().chars().take(200).collect();
        return Err(RetrievalError::Http { url: url.to_owned(), status: status.as_u16(), message: body });
    }
    let mut out = tokio::fs::File::create(part).await.map_err(|e| RetrievalError::io("creating", part, e))?;
    let mut hasher = Sha256::new();
    let mut received = 0u64;
    while let Some(chunk) = response.chunk().await.map_err(unreachable)? {
        received += chunk.len() as u64;
        // A wrong file may be much larger; stop before it fills the disk.
        if received > file.size.saturating_mul(2).max(1 << 20) {
            return Err(RetrievalError::BadResponse {
                url: url.to_owned(),
                message: format!("{} is larger than the expected {} bytes", file.name, file.size),
            });
        }
        hasher.update(&chunk);
        out.write_all(&chunk).await.map_err(|e| RetrievalError::io("writing", part, e))?;
        progress(done + received.min(file.size), total);
    }
    out.flush().await.map_err(|e| RetrievalError::io("writing", part, e))?;
    out.sync_all().await.map_err(|e| RetrievalError::io("writing", part, e))?;
    drop(out);
    let actual = hex(&hasher.finalize());
    if actual != file.sha256 {
        return Err(RetrievalError::Checksum {
            file: file.name.to_owned(),
            expected: file.sha256.to_owned(),
            actual,
        });
    }
    Ok(())
}

/// The sha256 of a file, in lowercase hex.
pub async fn hash_file(path: &Path) -> Result<String, RetrievalError> {
    let mut file = tokio::fs::File::open(path).await.map_err(|e| RetrievalError::io("opening", path, e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf).await.map_err(|e| RetrievalError::io("reading", path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
