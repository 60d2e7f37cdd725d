//! Captures waiting to be sent (the chips), as files in the data folder's `captures/`:
//! `<id>.png` (the original, lossless), `<id>.model.png|jpg` (what the model gets) and
//! `<id>.json` (the chip, thumbnail included, written last so a half-written capture is never
//! listed). They survive a restart; unused ones are removed after a while.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use image::RgbaImage;
use serde::{Deserialize, Serialize};

use super::CaptureError;
use super::encode::{self, Format};

/// A capture waiting on the shelf, as the UI shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, specta::Type)]
pub struct Capture {
    pub id: String,
    /// What was captured, in words ("Monitor HDMI-1", "Region 400 x 300", "Window: Editor").
    pub source: String,
    /// The original's size.
    pub width: u32,
    pub height: u32,
    /// The size the model gets (the original's when it fits the longest-edge setting).
    pub model_width: u32,
    pub model_height: u32,
    pub format: Format,
    pub model_bytes: u32,
    /// Milliseconds since the Unix epoch.
    pub created_at: i64,
    /// A small JPEG as a data URL.
    pub thumbnail: String,
}

/// How a capture is prepared for the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prepare {
    pub max_edge: u32,
    pub jpeg_quality: u8,
}

#[derive(Debug)]
pub struct Shelf {
    dir: PathBuf,
    pending: Mutex<Vec<Capture>>,
}

fn io_error(path: &Path, e: impl std::fmt::Display) -> CaptureError {
    CaptureError::Io { path: path.to_path_buf(), reason: e.to_string() }
}

impl Shelf {
    /// Opens the folder, forgets captures older than `keep` and removes their files, and files
    /// no capture owns (left by a crash while saving).
    pub fn open(dir: PathBuf, keep: Duration) -> Self {
        let shelf = Self { dir, pending: Mutex::new(Vec::new()) };
        if let Err(e) = std::fs::create_dir_all(&shelf.dir) {
            tracing::warn!(dir = %shelf.dir.display(), error = %e, "the captures folder cannot be created");
        }
        let mut found: Vec<Capture> = read_dir(&shelf.dir)
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .filter_map(|p| std::fs::read(&p).ok().and_then(|b| serde_json::from_slice(&b).ok()))
            .collect();
        found.sort_by_key(|c| c.created_at);
        *shelf.lock() = found;
        let removed = shelf.clean_up(keep);
        if removed > 0 {
            tracing::info!(removed, "unused captures removed");
        }
        shelf
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Capture>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn pending(&self) -> Vec<Capture> {
        self.lock().clone()
    }

    pub fn get(&self, id: &str) -> Option<Capture> {
        self.lock().iter().find(|c| c.id == id).cloned()
    }

    fn original_path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.png"))
    }
    fn model_path(&self, capture: &Capture) -> PathBuf {
        self.dir.join(format!("{}.model.{}", capture.id, capture.format.extension()))
    }

    /// Encodes and saves a capture, and puts it on the shelf. Blocking and CPU-bound.
    pub fn add(&self, image: &RgbaImage, source: String, prepare: Prepare) -> Result<Capture, CaptureError> {
        let id = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
        let encoding =
            |e: image::ImageError| CaptureError::Backend(format!("the capture could not be encoded: {e}"));
        // The lossless original is encoded on a second thread while the model's copy and the
        // thumbnail are made: on a 4K capture the two take about as long as each other.
        let (scaled, format, model, thumbnail, original) = std::thread::scope(|scope| {
            let original = scope.spawn(|| encode::encode(image, Format::Png, prepare.jpeg_quality));
            let scaled = encode::downscale(image, prepare.max_edge);
            let for_model = scaled.as_ref().unwrap_or(image);
            let format = encode::choose_format(for_model);
            let model = encode::encode(for_model, format, prepare.jpeg_quality);
            let thumbnail = encode::thumbnail(for_model);
            let original = original.join().unwrap_or_else(|_| {
                Err(image::ImageError::IoError(std::io::Error::other("the PNG encoder panicked")))
            });
            (scaled, format, model, thumbnail, original)
        });
        let (model, thumbnail) = (model.map_err(encoding)?, thumbnail.map_err(encoding)?);
        let original = original.map_err(encoding)?;
        let for_model = scaled.as_ref().unwrap_or(image);
        let capture = Capture {
            id: id.clone(),
            source,
            width: image.width(),
            height: image.height(),
            model_width: for_model.width(),
            model_height: for_model.height(),
            format,
            model_bytes: u32::try_from(model.len()).unwrap_or(u32::MAX),
            created_at: chrono::Utc::now().timestamp_millis(),
            thumbnail: format!("data:image/jpeg;base64,{}", STANDARD.encode(thumbnail)),
        };
        let write =
            |path: PathBuf, bytes: &[u8]| std::fs::write(&path, bytes).map_err(|e| io_error(&path, e));
        write(self.original_path(&id), &original)?;
        write(self.model_path(&capture), &model)?;
        let json = serde_json::to_vec(&capture).map_err(|e| io_error(&self.dir, e))?;
        write(self.dir.join(format!("{id}.json")), &json)?;
        self.lock().push(capture.clone());
        Ok(capture)
    }

    /// The model's copy (bytes and MIME type) and the original, for attaching to a question.
    pub fn files(&self, id: &str) -> Result<CaptureFiles, CaptureError> {
        let capture = self.get(id).ok_or_else(|| CaptureError::NotFound(id.to_owned()))?;
        let read = |p: PathBuf| std::fs::read(&p).map_err(|e| io_error(&p, e));
        Ok(CaptureFiles {
            model: read(self.model_path(&capture))?,
            mime: capture.format.mime(),
            original: read(self.original_path(id))?,
            capture,
        })
    }

    /// Takes a capture off the shelf and deletes its files. False when it was not there.
    pub fn remove(&self, id: &str) -> bool {
        let capture = {
            let mut pending = self.lock();
            let Some(i) = pending.iter().position(|c| c.id == id) else { return false };
            pending.remove(i)
        };
        self.delete_files(&capture.id);
        true
    }

    fn delete_files(&self, id: &str) {
        for path in read_dir(&self.dir).filter(|p| owner_of(p) == Some(id)) {
            let _ = std::fs::remove_file(path);
        }
    }

    /// Removes captures older than `keep`, and files that belong to no capture on the shelf
    /// and are more than a minute old (a capture being saved right now is younger). Returns how
    /// many captures were removed.
    pub fn clean_up(&self, keep: Duration) -> usize {
        let cutoff =
            chrono::Utc::now().timestamp_millis() - i64::try_from(keep.as_millis()).unwrap_or(i64::MAX);
        let old: Vec<String> =
            self.lock().iter().filter(|c| c.created_at < cutoff).map(|c| c.id.clone()).collect();
        for id in &old {
            self.remove(id);
        }
        let known: Vec<String> = self.lock().iter().map(|c| c.id.clone()).collect();
        let a_minute_ago = SystemTime::now() - Duration::from_secs(60);
        for path in read_dir(&self.dir) {
            let owned = owner_of(&path).is_some_and(|id| known.iter().any(|k| k == id));
            let old_enough =
                std::fs::metadata(&path).and_then(|m| m.modified()).is_ok_and(|t| t < a_minute_ago);
            if !owned && old_enough {
                let _ = std::fs::remove_file(&path);
            }
        }
        old.len()
    }
}

/// What a question needs of a capture.
#[derive(Debug)]
pub struct CaptureFiles {
    pub capture: Capture,
    pub model: Vec<u8>,
    pub mime: &'static str,
    pub original: Vec<u8>,
}

fn read_dir(dir: &Path) -> impl Iterator<Item = PathBuf> {
    std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path()).filter(|p| p.is_file())
}

/// `abc123.model.png` -> `abc123`.
fn owner_of(path: &Path) -> Option<&str> {
    path.file_name()?.to_str()?.split('.').next()
}

#[cfg(test)]
mod tests {
    use image::Rgba;

    use super::*;

    const PREPARE: Prepare = Prepare { max_edge: 100, jpeg_quality: 85 };

    fn checker(w: u32, h: u32) -> RgbaImage {
        RgbaImage::from_fn(w, h, |x, y| {
            if (x / 10 + y / 10) % 2 == 0 { Rgba([255, 0, 0, 255]) } else { Rgba([0, 0, 255, 255]) }
        })
    }

    #[test]
    fn a_capture_keeps_its_original_and_a_smaller_copy_for_the_model() {
        let tmp = tempfile::tempdir().unwrap();
        let shelf = Shelf::open(tmp.path().join("captures"), Duration::from_secs(3600));
        let c = shelf.add(&checker(400, 200), "Region 400 x 200".into(), PREPARE).unwrap();
        assert_eq!((c.width, c.height, c.model_width, c.model_height), (400, 200, 100, 50));
        assert_eq!(c.format, Format::Png);
        assert!(c.thumbnail.starts_with("data:image/jpeg;base64,"));
        let files = shelf.files(&c.id).unwrap();
        assert_eq!(image::load_from_memory(&files.original).unwrap().to_rgba8(), checker(400, 200));
        assert_eq!(image::load_from_memory(&files.model).unwrap().width(), 100);
        assert_eq!(files.mime, "image/png");

        // A restart finds it again; removing it deletes every file.
        let reopened = Shelf::open(tmp.path().join("captures"), Duration::from_secs(3600));
        assert_eq!(reopened.pending(), vec![c.clone()]);
        assert!(reopened.remove(&c.id));
        assert!(!reopened.remove(&c.id));
        assert_eq!(std::fs::read_dir(tmp.path().join("captures")).unwrap().count(), 0);
        assert!(matches!(reopened.files(&c.id), Err(CaptureError::NotFound(_))));
    }

    #[test]
    fn unused_captures_and_stray_files_are_cleaned_up() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("captures");
        let shelf = Shelf::open(dir.clone(), Duration::from_secs(3600));
        let kept = shelf.add(&checker(50, 50), "kept".into(), PREPARE).unwrap();
        let old = shelf.add(&checker(50, 50), "old".into(), PREPARE).unwrap();
        // Age one capture by rewriting its record, as if it were taken two days ago.
        let mut aged = old.clone();
        aged.created_at -= 48 * 3600 * 1000;
        std::fs::write(dir.join(format!("{}.json", old.id)), serde_json::to_vec(&aged).unwrap()).unwrap();
        // A file left by a crash mid-save, an hour old.
        let stray = dir.join("deadbeef0000.png");
        std::fs::write(&stray, b"partial").unwrap();
        let an_hour_ago = SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::options().write(true).open(&stray).unwrap().set_modified(an_hour_ago).unwrap();

        let reopened = Shelf::open(dir.clone(), Duration::from_secs(24 * 3600));
        assert_eq!(reopened.pending(), vec![kept.clone()]);
        let mut left: Vec<String> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        left.sort();
        assert_eq!(
            left,
            vec![format!("{}.json", kept.id), format!("{}.model.png", kept.id), format!("{}.png", kept.id)]
        );
    }
}
