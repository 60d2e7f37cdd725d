//! Where Perch keeps its data: the database, logs and attachments.
//!
//! Resolution order: `PERCH_DATA_DIR`, then portable mode (a `user_data/` folder beside the
//! executable), then dev mode (debug builds use the repository's `user_data/`), then the OS
//! app-data dir. Resolution is a pure function of its inputs so every branch is testable.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// The environment variable that overrides every other choice of data dir.
pub const DATA_DIR_ENV: &str = "PERCH_DATA_DIR";
/// The folder name used by portable and dev mode.
pub const PORTABLE_DIR_NAME: &str = "user_data";
const APP_DIR_NAME: &str = "perch";

/// Why this data dir was chosen; shown by `perch doctor` and in Settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum DataDirSource {
    /// `PERCH_DATA_DIR` was set.
    Env,
    /// A `user_data/` folder sits beside the executable.
    Portable,
    /// A debug build run from the repository.
    Dev,
    /// The OS app-data dir.
    Default,
}

impl DataDirSource {
    /// How a person would say why this folder was chosen.
    pub fn describe(self) -> &'static str {
        match self {
            DataDirSource::Env => "set by PERCH_DATA_DIR",
            DataDirSource::Portable => "portable mode",
            DataDirSource::Dev => "development build",
            DataDirSource::Default => "default location",
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PathsError {
    #[error("{DATA_DIR_ENV} is set but empty; unset it or point it at a folder")]
    EmptyOverride,
    #[error("no app-data folder is known for this system; set {DATA_DIR_ENV} to a folder Perch can write to")]
    NoDefault,
    #[error(
        "the data folder {path} cannot be used: {reason}. Make sure it is a folder you can write to, or set {DATA_DIR_ENV} to another one"
    )]
    Unusable { path: PathBuf, reason: String },
}

/// What resolution looks at, gathered from the process environment by [`ResolveInputs::from_env`].
#[derive(Debug, Default, Clone)]
pub struct ResolveInputs {
    pub env_override: Option<OsString>,
    pub exe_dir: Option<PathBuf>,
    pub dev_dir: Option<PathBuf>,
    pub os_data_dir: Option<PathBuf>,
}

impl ResolveInputs {
    pub fn from_env() -> Self {
        // Dev mode: only debug builds, and only when the repository's user_data/ exists.
        let dev_dir = cfg!(debug_assertions)
            .then(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..").join(PORTABLE_DIR_NAME));
        Self {
            env_override: std::env::var_os(DATA_DIR_ENV),
            exe_dir: std::env::current_exe().ok().and_then(|exe| exe.parent().map(Path::to_path_buf)),
            dev_dir,
            os_data_dir: dirs::data_dir(),
        }
    }
}

/// A resolved data dir, not yet checked for use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    pub path: PathBuf,
    pub source: DataDirSource,
}

/// Where a program that ships with Perch (the bundled MCP servers, the `perch-llm` sidecar)
/// lives: beside the running executable, or one folder up (test binaries run from
/// `target/debug/deps`).
pub fn bundled_program(name: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    let file = format!("{name}{}", std::env::consts::EXE_SUFFIX);
    [dir.to_path_buf(), dir.parent()?.to_path_buf()].into_iter().map(|d| d.join(&file)).find(|p| p.is_file())
}

/// Where the crash reports of the data dir `root` go, for those that know only the root (the
/// MCP manager, the local runtime, a panic hook set before the folder is prepared).
pub fn crashes_dir_in(root: &Path) -> PathBuf {
    root.join("crashes")
}

/// Picks the data dir from the inputs, without touching the file system beyond `is_dir` checks.
pub fn resolve(inputs: &ResolveInputs) -> Result<Resolved, PathsError> {
    if let Some(value) = &inputs.env_override {
        if value.is_empty() {
            return Err(PathsError::EmptyOverride);
        }
        return Ok(Resolved { path: PathBuf::from(value), source: DataDirSource::Env });
    }
    if let Some(portable) = inputs.exe_dir.as_ref().map(|d| d.join(PORTABLE_DIR_NAME))
        && portable.is_dir()
    {
        return Ok(Resolved { path: portable, source: DataDirSource::Portable });
    }
    if let Some(dev) = &inputs.dev_dir
        && dev.is_dir()
    {
        let path = dev.canonicalize().unwrap_or_else(|_| dev.clone());
        return Ok(Resolved { path, source: DataDirSource::Dev });
    }
    let os = inputs.os_data_dir.as_ref().ok_or(PathsError::NoDefault)?;
    Ok(Resolved { path: os.join(APP_DIR_NAME), source: DataDirSource::Default })
}

/// A data dir that exists and is writable, with the layout of the files inside it.
#[derive(Debug, Clone)]
pub struct DataDir {
    root: PathBuf,
    source: DataDirSource,
}

impl DataDir {
    /// Resolves from the process environment and prepares the folder.
    pub fn from_env() -> Result<Self, PathsError> {
        Self::prepare(resolve(&ResolveInputs::from_env())?)
    }

    /// Creates the folder (and its subfolders) when missing and proves it is writable.
    pub fn prepare(resolved: Resolved) -> Result<Self, PathsError> {
        let root = resolved.path;
        let unusable = |reason: String| PathsError::Unusable { path: root.clone(), reason };
        if root.exists() && !root.is_dir() {
            return Err(unusable("it is a file, not a folder".into()));
        }
        fs::create_dir_all(&root).map_err(|e| unusable(format!("it could not be created ({e})")))?;
        let probe = root.join(".perch-write-probe");
        fs::write(&probe, b"ok").map_err(|e| unusable(format!("it is not writable ({e})")))?;
        let _ = fs::remove_file(&probe);
        let dir = Self { root, source: resolved.source };
        for sub in [dir.logs_dir(), dir.attachments_dir()] {
            fs::create_dir_all(&sub).map_err(|e| PathsError::Unusable {
                path: sub.clone(),
                reason: format!("it could not be created ({e})"),
            })?;
        }
        Ok(dir)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
    pub fn source(&self) -> DataDirSource {
        self.source
    }
    pub fn db_path(&self) -> PathBuf {
        self.root.join("perch.db")
    }
    pub fn logs_dir(&self) -> PathBuf {
        self.root.join("logs")
    }
    /// Crash reports (`perch-crash`); made by the first crash, not before.
    pub fn crashes_dir(&self) -> PathBuf {
        crashes_dir_in(&self.root)
    }
    /// Attachment files live here; rows in the database refer to them by relative path.
    pub fn attachments_dir(&self) -> PathBuf {
        self.root.join("attachments")
    }
    /// Screen captures not yet sent with a question.
    pub fn captures_dir(&self) -> PathBuf {
        self.root.join("captures")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(tmp: &Path) -> ResolveInputs {
        ResolveInputs {
            env_override: None,
            exe_dir: Some(tmp.join("bin")),
            dev_dir: Some(tmp.join("repo/user_data")),
            os_data_dir: Some(tmp.join("os")),
        }
    }

    #[test]
    fn env_override_wins_over_everything() {
        let tmp = tempfile::tempdir().unwrap();
        fs::create_dir_all(tmp.path().join("bin/user_data")).unwrap();
        let mut i = inputs(tmp.path());
        i.env_override = Some(tmp.path().join("custom").into_os_string());
        let r = resolve(&i).unwrap();
        assert_eq!(r, Resolved { path: tmp.path().join("custom"), source: DataDirSource::Env });
    }

    #[test]
    fn empty_override_is_an_error_not_the_cwd() {
        let tmp = tempfile::tempdir().unwrap();
        let mut i = inputs(tmp.path());
        i.env_override = Some(OsString::new());
        assert!(matches!(resolve(&i), Err(PathsError::EmptyOverride)));
    }

    #[test]
    fn portable_folder_beside_the_executable_is_used_when_present() {
        let tmp = tempfile::tempdir().unwrap();
        fs::create_dir_all(tmp.path().join("bin/user_data")).unwrap();
        fs::create_dir_all(tmp.path().join("repo/user_data")).unwrap();
        let r = resolve(&inputs(tmp.path())).unwrap();
        assert_eq!(r.source, DataDirSource::Portable);
        assert_eq!(r.path, tmp.path().join("bin/user_data"));
    }

    #[test]
    fn dev_folder_then_os_default() {
        let tmp = tempfile::tempdir().unwrap();
        let r = resolve(&inputs(tmp.path())).unwrap();
        assert_eq!(r, Resolved { path: tmp.path().join("os/perch"), source: DataDirSource::Default });

        fs::create_dir_all(tmp.path().join("repo/user_data")).unwrap();
        let r = resolve(&inputs(tmp.path())).unwrap();
        assert_eq!(r.source, DataDirSource::Dev);
        assert!(r.path.ends_with("user_data"));
    }

    #[test]
    fn no_os_dir_and_nothing_else_is_a_clear_error() {
        let i = ResolveInputs::default();
        let err = resolve(&i).unwrap_err();
        assert!(err.to_string().contains(DATA_DIR_ENV), "{err}");
    }

    #[test]
    fn prepare_creates_a_missing_folder_and_its_layout() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a/b/c");
        let dir = DataDir::prepare(Resolved { path: path.clone(), source: DataDirSource::Env }).unwrap();
        assert!(dir.logs_dir().is_dir());
        assert!(dir.attachments_dir().is_dir());
        assert_eq!(dir.db_path(), path.join("perch.db"));
    }

    #[test]
    fn prepare_names_the_path_when_it_cannot_be_created() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("a-file");
        fs::write(&file, "x").unwrap();
        // A folder below a regular file cannot exist, whoever runs the test (root included).
        let path = file.join("data");
        let err = DataDir::prepare(Resolved { path: path.clone(), source: DataDirSource::Env }).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(&path.display().to_string()), "{msg}");
        assert!(msg.contains("could not be created"), "{msg}");

        let err = DataDir::prepare(Resolved { path: file.clone(), source: DataDirSource::Env }).unwrap_err();
        assert!(err.to_string().contains("is a file"), "{err}");
    }
}
