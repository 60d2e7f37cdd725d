//! The whisper models Perch offers: tiny, base and small, English-only and multilingual, as
//! whisper.cpp publishes them (ggml, f16). Each is one file in `models/whisper/` in the data
//! folder, downloaded once with `perch-download` (resumable, checked against its SHA-256).

use std::path::{Path, PathBuf};

use perch_download::{Fetch, Progress, RemoteFile};
use serde::Serialize;
use tokio_util::sync::CancellationToken;

use super::VoiceError;

/// One model of the catalogue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogModel {
    /// The name users type: `tiny.en`, `base`, ...
    pub name: &'static str,
    pub english_only: bool,
    pub file: RemoteFile,
    /// Resident memory while loaded and transcribing, in MB (whisper.cpp's published figures,
    /// and ours for tiny.en: see ARCHITECTURE.md).
    pub memory_mb: u32,
    pub summary: &'static str,
}

#[cfg(test)]
const BASE_URL: &str = "https://huggingface.co/ggerganov/whisper.cpp/resolve/main";

// SHA-256 and sizes of the files at huggingface.co/ggerganov/whisper.cpp (their Git LFS ids).
pub const CATALOG: &[CatalogModel] = &[
    CatalogModel {
        name: "tiny.en",
        english_only: true,
        file: RemoteFile::fixed(
            "ggml-tiny.en.bin",
            "https://huggingface.co/ggerganov/whisper.cpp/resolve/main/ggml-tiny.en.bin",
            "921e4cf8686fdd993dcd081a5da5b6c365bfde1162e72b08d75ac75289920b1f",
            77_704_715,
        ),
        memory_mb: 273,
        summary: "Fastest; good for short English dictation",
    },
    CatalogModel {
        name: "tiny",
        english_only: false,
        file: RemoteFile::fixed(
            "ggml-tiny.bin",
            "https://huggingface.co/ggerganov/whisper.cpp/resolve/main/ggml-tiny.bin",
            "be07e048e1e599ad46341c8d2a135645097a538221678b7acdd1b1919c6e1b21",
            77_691_713,
        ),
        memory_mb: 273,
        summary: "Fastest; 99 languages, rough outside English",
    },
    CatalogModel {
        name: "base.en",
        english_only: true,
        file: RemoteFile::fixed(
            "ggml-base.en.bin",
            "https://huggingface.co/ggerganov/whisper.cpp/resolve/main/ggml-base.en.bin",
            "a03779c86df3323075f5e796cb2ce5029f00ec8869eee3fdfb897afe36c6d002",
            147_964_211,
        ),
        memory_mb: 388,
        summary: "Fewer mistakes than tiny, about twice as slow",
    },
    CatalogModel {
        name: "base",
        english_only: false,
        file: RemoteFile::fixed(
            "ggml-base.bin",
            "https://huggingface.co/ggerganov/whisper.cpp/resolve/main/ggml-base.bin",
            "60ed5bc3dd14eea856493d334349b405782ddcaf0028d4b5df4088345fba2efe",
            147_951_465,
        ),
        memory_mb: 388,
        summary: "99 languages, a good balance",
    },
    CatalogModel {
        name: "small.en",
        english_only: true,
        file: RemoteFile::fixed(
            "ggml-small.en.bin",
            "https://huggingface.co/ggerganov/whisper.cpp/resolve/main/ggml-small.en.bin",
            "c6138d6d58ecc8322097e0f987c32f1be8bb0a18532a3f88f734d1bbf9c41e5d",
            487_614_201,
        ),
        memory_mb: 852,
        summary: "Most accurate English; slow on older machines",
    },
    CatalogModel {
        name: "small",
        english_only: false,
        file: RemoteFile::fixed(
            "ggml-small.bin",
            "https://huggingface.co/ggerganov/whisper.cpp/resolve/main/ggml-small.bin",
            "1be3a9b2063867b937e64e2ec7483364a79917e157fa98c5d94b5c1fffea987b",
            487_601_967,
        ),
        memory_mb: 852,
        summary: "Most accurate, 99 languages; slow on older machines",
    },
];

/// The model a new installation dictates with.
pub const DEFAULT_MODEL: &str = "tiny.en";

impl CatalogModel {
    pub fn find(name: &str) -> Option<&'static CatalogModel> {
        CATALOG.iter().find(|m| m.name.eq_ignore_ascii_case(name.trim()))
    }

    pub fn remote(&self) -> RemoteFile {
        self.file.clone()
    }
}

/// A model as Settings and `perch voice models` show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
pub struct ModelView {
    pub name: String,
    pub english_only: bool,
    pub summary: String,
    /// Bytes on disk once downloaded.
    pub size: u64,
    pub memory_mb: u32,
    pub state: ModelState,
    /// Bytes of a download in progress or paused.
    pub partial: u64,
    pub path: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum ModelState {
    Absent,
    /// Part of it is here; downloading again resumes.
    Partial,
    Ready,
}

/// The model files in one folder.
#[derive(Debug, Clone)]
pub struct ModelStore {
    dir: PathBuf,
}

impl ModelStore {
    pub fn new(dir: PathBuf) -> Self {
        Self { dir }
    }

    /// `models/whisper` in the data folder.
    pub fn in_data_dir(data_dir: &Path) -> Self {
        Self::new(data_dir.join("models").join("whisper"))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn path_of(&self, model: &CatalogModel) -> PathBuf {
        self.dir.join(&*model.file.name)
    }

    pub fn view(&self, model: &CatalogModel) -> ModelView {
        let remote = model.remote();
        let ready = perch_download::missing(std::slice::from_ref(&remote), &self.dir).is_empty();
        let partial = perch_download::partial_bytes(std::slice::from_ref(&remote), &self.dir);
        ModelView {
            name: model.name.to_owned(),
            english_only: model.english_only,
            summary: model.summary.to_owned(),
            size: model.file.size,
            memory_mb: model.memory_mb,
            state: if ready {
                ModelState::Ready
            } else if partial > 0 {
                ModelState::Partial
            } else {
                ModelState::Absent
            },
            partial,
            path: self.path_of(model).display().to_string(),
        }
    }

    pub fn list(&self) -> Vec<ModelView> {
        CATALOG.iter().map(|m| self.view(m)).collect()
    }

    /// The file for `name_or_path`: a catalogue name (which must be downloaded) or a path to a
    /// ggml file, used as it is.
    pub fn resolve(&self, name_or_path: &str) -> Result<PathBuf, VoiceError> {
        let wanted = name_or_path.trim();
        if let Some(model) = CatalogModel::find(wanted) {
            let path = self.path_of(model);
            return match self.view(model).state {
                ModelState::Ready => Ok(path),
                _ => Err(VoiceError::ModelMissing { name: model.name.to_owned(), path }),
            };
        }
        let path = PathBuf::from(wanted);
        let looks_like_path = wanted.contains(std::path::MAIN_SEPARATOR) || wanted.ends_with(".bin");
        if looks_like_path || path.is_file() {
            if path.is_file() {
                return Ok(path);
            }
            return Err(VoiceError::ModelMissing { name: wanted.to_owned(), path });
        }
        Err(VoiceError::UnknownModel { name: wanted.to_owned() })
    }

    /// Downloads `name` (resuming a partial download), reporting progress.
    pub async fn download(
        &self,
        name: &str,
        base_override: Option<&str>,
        cancel: &CancellationToken,
        progress: impl FnMut(Progress) + Send,
    ) -> Result<ModelView, VoiceError> {
        let model =
            CatalogModel::find(name).ok_or_else(|| VoiceError::UnknownModel { name: name.to_owned() })?;
        let client = perch_foundation::http::client();
        let options = Fetch { base_override, cancel: Some(cancel) };
        perch_download::fetch(&client, &[model.remote()], &self.dir, options, progress).await?;
        Ok(self.view(model))
    }

    /// Deletes a model and any partial download of it.
    pub fn delete(&self, name: &str) -> Result<ModelView, VoiceError> {
        let model =
            CatalogModel::find(name).ok_or_else(|| VoiceError::UnknownModel { name: name.to_owned() })?;
        perch_download::remove(std::slice::from_ref(&model.remote()), &self.dir)?;
        Ok(self.view(model))
    }
}

/// Whether `model` (a catalogue name or a file's path) hears only English: a catalogue model
/// says so; a file is taken at its name (whisper.cpp names them `ggml-base.en.bin`).
pub fn english_only(model: &str) -> bool {
    match CatalogModel::find(model) {
        Some(m) => m.english_only,
        None => {
            let name = Path::new(model).file_name().and_then(|n| n.to_str()).unwrap_or(model);
            name.ends_with(".en") || name.contains(".en.")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_has_tiny_base_and_small_in_both_kinds_with_real_checksums() {
        for size in ["tiny", "base", "small"] {
            let multi = CatalogModel::find(size).unwrap();
            let english = CatalogModel::find(&format!("{size}.en")).unwrap();
            assert!(!multi.english_only && english.english_only);
            for m in [multi, english] {
                let remote = m.remote();
                assert_eq!(remote.url, format!("{BASE_URL}/{}", m.file.name));
                assert_eq!(m.file.sha256.len(), 64);
                assert!(m.file.sha256.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
                assert!(m.file.size > 70_000_000);
            }
        }
        assert!(CatalogModel::find(DEFAULT_MODEL).is_some());
        assert_eq!(CatalogModel::find(" Tiny.EN ").unwrap().name, "tiny.en");
    }

    #[test]
    fn names_paths_and_unknowns_resolve_or_explain() {
        let dir = tempfile::tempdir().unwrap();
        let store = ModelStore::new(dir.path().join("whisper"));
        assert!(matches!(store.resolve("tiny.en"), Err(VoiceError::ModelMissing { .. })));
        assert!(matches!(store.resolve("enormous"), Err(VoiceError::UnknownModel { .. })));
        let own = dir.path().join("mine.bin");
        assert!(matches!(store.resolve(own.to_str().unwrap()), Err(VoiceError::ModelMissing { .. })));
        std::fs::write(&own, b"x").unwrap();
        assert_eq!(store.resolve(own.to_str().unwrap()).unwrap(), own);
        assert_eq!(store.list().len(), CATALOG.len());
        assert!(store.list().iter().all(|m| m.state == ModelState::Absent));
    }

    #[test]
    fn a_partial_download_shows_and_delete_removes_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = ModelStore::new(dir.path().to_path_buf());
        let tiny = CatalogModel::find("tiny").unwrap();
        std::fs::write(perch_download::part_path(store.dir(), &tiny.remote()), vec![0u8; 1000]).unwrap();
        let view = store.view(tiny);
        assert_eq!((view.state, view.partial), (ModelState::Partial, 1000));
        assert_eq!(store.delete("tiny").unwrap().state, ModelState::Absent);
        assert!(matches!(store.delete("huge"), Err(VoiceError::UnknownModel { .. })));
    }
}
