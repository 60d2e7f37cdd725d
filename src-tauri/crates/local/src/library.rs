//! The local models on this machine: GGUF files in the data folder's `models/llm/` (downloaded
//! from the catalogue, or copied there), and files elsewhere the user added by path, which are
//! listed in `models/llm/added.json` and never moved or deleted. Every file's header is checked
//! (cached by size and modification time), so a damaged file is listed with its problem.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use perch_llm_protocol::gguf::{self, Header};
use perch_llm_protocol::template;
use serde::{Deserialize, Serialize};

use super::LocalError;
use super::catalog;

const ADDED_FILE: &str = "added.json";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ModelSource {
    /// Downloaded from the catalogue into the models folder.
    Downloaded,
    /// A GGUF file someone put in the models folder.
    Folder,
    /// A file elsewhere, registered with "Add a GGUF file…" or `perch local add`.
    Added,
}

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct LocalModel {
    /// The name after `local:`.
    pub name: String,
    pub title: String,
    pub path: String,
    pub size: u64,
    pub source: ModelSource,
    pub architecture: Option<String>,
    /// Tokens of context the model was trained with.
    pub trained_context: Option<u32>,
    /// KV cache bytes a token of context costs, when the header says enough to tell.
    pub kv_bytes_per_token: Option<u64>,
    pub tools: bool,
    pub thinking: bool,
    /// Why the file cannot be used (damaged, cut short), when it cannot.
    pub problem: Option<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Added {
    models: Vec<AddedModel>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct AddedModel {
    name: String,
    path: PathBuf,
}

/// What `delete` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deleted {
    File,
    /// Only forgotten: the file belongs to the user and stays where it is.
    Forgotten,
}

type Inspected = Result<Header, Unreadable>;

/// Why a model file's header could not be read (shown as the model's problem).
#[derive(Debug, Clone, thiserror::Error)]
enum Unreadable {
    #[error("{path} cannot be read: {reason}")]
    File { path: PathBuf, reason: String },
    #[error("{0}")]
    Header(String),
}
/// A header checked once per (size, modification time) of its file.
type Cached = (u64, Option<SystemTime>, Inspected);

pub struct Library {
    dir: PathBuf,
    headers: Mutex<HashMap<PathBuf, Cached>>,
    /// Serialises changes to `added.json`.
    writing: Mutex<()>,
}

impl std::fmt::Debug for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Library").field("dir", &self.dir).finish_non_exhaustive()
    }
}

impl Library {
    pub fn new(dir: PathBuf) -> Self {
        Self { dir, headers: Mutex::default(), writing: Mutex::default() }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every local model, sorted by name. Blocking (reads headers): call off the runtime.
    pub fn list(&self) -> Vec<LocalModel> {
        let mut models = Vec::new();
        if let Ok(entries) = std::fs::read_dir(&self.dir) {
            for entry in entries.filter_map(Result::ok) {
                let path = entry.path();
                let file = entry.file_name().to_string_lossy().into_owned();
                if !file.ends_with(".gguf") || !path.is_file() {
                    continue;
                }
                let (name, source) = match catalog::by_file(&file) {
                    Some(e) => (e.id.to_owned(), ModelSource::Downloaded),
                    None => (name_from_file(&path), ModelSource::Folder),
                };
                models.push(self.describe(name, path, source));
            }
        }
        for added in self.added().models {
            if !models.iter().any(|m| m.name == added.name) {
                models.push(self.describe(added.name, added.path, ModelSource::Added));
            }
        }
        models.sort_by(|a, b| a.name.cmp(&b.name));
        models
    }

    pub fn get(&self, name: &str) -> Result<LocalModel, LocalError> {
        let all = self.list();
        match all.iter().find(|m| m.name == name) {
            Some(m) => Ok(m.clone()),
            None => Err(LocalError::NotFound {
                name: name.to_owned(),
                available: all.into_iter().map(|m| m.name).collect(),
            }),
        }
    }

    /// Registers a GGUF already on disk under `name` (default: from its file name), after
    /// checking its header. The file stays where it is.
    pub fn add(&self, path: &Path, name: Option<&str>) -> Result<LocalModel, LocalError> {
        let path = std::fs::canonicalize(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => LocalError::NoSuchFile(path.to_owned()),
            _ => LocalError::io("reading", path, e),
        })?;
        gguf::inspect(&path)?;
        let name = match name {
            Some(n) => valid_name(n)?,
            None => name_from_file(&path),
        };
        let _writing = self.writing.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(existing) = self.list().into_iter().find(|m| m.name == name) {
            return Err(LocalError::NameTaken { name, path: existing.path });
        }
        let mut added = self.added();
        added.models.push(AddedModel { name: name.clone(), path: path.clone() });
        self.save_added(&added)?;
        Ok(self.describe(name, path, ModelSource::Added))
    }

    /// Deletes a file in the models folder, or forgets an added file (leaving it on disk).
    pub fn delete(&self, name: &str) -> Result<Deleted, LocalError> {
        let model = self.get(name)?;
        if model.source == ModelSource::Added {
            let _writing = self.writing.lock().unwrap_or_else(|p| p.into_inner());
            let mut added = self.added();
            added.models.retain(|m| m.name != name);
            self.save_added(&added)?;
            return Ok(Deleted::Forgotten);
        }
        std::fs::remove_file(&model.path).map_err(|e| LocalError::io("deleting", &model.path, e))?;
        Ok(Deleted::File)
    }

    fn describe(&self, name: String, path: PathBuf, source: ModelSource) -> LocalModel {
        let meta = std::fs::metadata(&path);
        let size = meta.as_ref().map_or(0, std::fs::Metadata::len);
        let inspected = match meta {
            Ok(meta) => self.inspect(&path, size, meta.modified().ok()),
            Err(e) => Err(Unreadable::File { path: path.clone(), reason: e.to_string() }),
        };
        let header = inspected.as_ref().ok();
        let features = header.and_then(Header::chat_template).map(template::features).unwrap_or_default();
        let title = catalog::find(&name)
            .map(|e| e.title.to_owned())
            .or_else(|| header.and_then(|h| h.str("general.name")).map(str::to_owned))
            .unwrap_or_else(|| name.clone());
        LocalModel {
            title,
            path: path.display().to_string(),
            size,
            source,
            architecture: header.and_then(|h| h.architecture()).map(str::to_owned),
            trained_context: header.and_then(Header::context_length),
            kv_bytes_per_token: header.and_then(Header::kv_bytes_per_token),
            tools: features.tools.is_some(),
            thinking: features.thinking,
            problem: inspected.err().map(|e| e.to_string()),
            name,
        }
    }

    fn inspect(&self, path: &Path, size: u64, modified: Option<SystemTime>) -> Inspected {
        let mut headers = self.headers.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((s, m, inspected)) = headers.get(path)
            && *s == size
            && *m == modified
        {
            return inspected.clone();
        }
        let inspected = gguf::inspect(path).map_err(|e| Unreadable::Header(e.to_string()));
        headers.insert(path.to_path_buf(), (size, modified, inspected.clone()));
        inspected
    }

    fn added(&self) -> Added {
        match std::fs::read_to_string(self.dir.join(ADDED_FILE)) {
            Ok(text) => serde_json::from_str(&text).unwrap_or_else(|e| {
                tracing::warn!(error = %e, "models/llm/added.json is not readable; ignoring it");
                Added::default()
            }),
            Err(_) => Added::default(),
        }
    }

    fn save_added(&self, added: &Added) -> Result<(), LocalError> {
        std::fs::create_dir_all(&self.dir).map_err(|e| LocalError::io("creating", &self.dir, e))?;
        let path = self.dir.join(ADDED_FILE);
        let temp = self.dir.join(format!("{ADDED_FILE}.tmp"));
        let text = serde_json::to_string_pretty(added).unwrap_or_default();
        std::fs::write(&temp, text).map_err(|e| LocalError::io("writing", &temp, e))?;
        std::fs::rename(&temp, &path).map_err(|e| LocalError::io("writing", &path, e))
    }
}

/// `My Model.Q4_K_M.gguf` -> `my-model.q4_k_m`.
fn name_from_file(path: &Path) -> String {
    let stem = path.file_stem().map(|s| s.to_string_lossy().to_lowercase()).unwrap_or_default();
    let cleaned: String = stem.chars().map(|c| if allowed(c) { c } else { '-' }).collect();
    let trimmed = cleaned.trim_matches('-');
    if trimmed.is_empty() { "model".to_owned() } else { trimmed.to_owned() }
}

fn allowed(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c)
}

fn valid_name(name: &str) -> Result<String, LocalError> {
    let name = name.trim().to_lowercase();
    if name.is_empty() || name.len() > 64 || !name.chars().all(allowed) {
        return Err(LocalError::InvalidName { name });
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_file_names_and_are_checked() {
        assert_eq!(
            name_from_file(Path::new("/x/SmolLM2-135M-Instruct.Q4_1.gguf")),
            "smollm2-135m-instruct.q4_1"
        );
        assert_eq!(name_from_file(Path::new("/x/My Model (v2).gguf")), "my-model--v2");
        assert_eq!(valid_name(" Tiny ").ok().as_deref(), Some("tiny"));
        assert!(valid_name("a/b").is_err() && valid_name("").is_err() && valid_name("x:y").is_err());
    }
}
