//! Diagnostics bundles (`perch doctor --bundle FILE`): one zip a user can attach to a bug
//! report, with what a maintainer needs and none of the user's secrets.
//!
//! - `doctor.json`: the doctor's report (components, sandbox, sign-ins, Google; no tokens).
//! - `versions.txt`: Perch, the OS, the kernel, the sandbox probe.
//! - `settings.json`: the settings from the database.
//! - `mcp_servers.json`: the user's MCP servers, with env and header values, URL query strings
//!   and passwords, and secret-looking arguments removed.
//! - `logs/`: Perch's recent log files and the MCP servers' stderr logs, newest first, up to
//!   [`bundle::LOG_BUDGET_BYTES`].
//! - `crashes/`: the crash reports (`perch-crash`: message, backtrace, versions), newest first,
//!   up to [`bundle::CRASH_BUDGET_BYTES`].
//! - `bundle.txt`: what was removed, by kind and count.
//!
//! Every file goes through [`redact::Redactor`], which knows the exact values in the key store,
//! in secret-named environment variables and in the MCP config (each server's `env`, `headers`,
//! URL passwords and parameters, secret arguments), and recognises private keys and other keys
//! and tokens by their shape.
//!
//! Why a zip: tar is not among the workspace's crates and zip is (flate2 too, for Deflate), and
//! a zip opens without tools on every OS a maintainer might read it on.

pub mod bundle;
pub mod redact;
pub mod secrets;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use serde_json::{Value, json};

use crate::doctor::DoctorReport;
use crate::keys::Keys;
use crate::settings::Settings;
use crate::store::{Integrity, Store};
use bundle::Entry;
pub use redact::{RedactionCounts, Redactor};

#[derive(Debug, Clone, Copy, Default)]
pub struct BundleOptions {
    /// Show the home folder as `~` in every file (it usually holds the user's name).
    pub redact_home: bool,
}

/// What a bundle is made from.
pub struct BundleSources<'a> {
    /// The data folder (`None` when the doctor found it unusable: the bundle still says so).
    pub data_dir: Option<&'a Path>,
    /// The key store whose secrets are looked for.
    pub keys: Arc<Keys>,
    pub report: &'a DoctorReport,
    /// The environment whose secret-named values are looked for; this process's by default.
    pub environment: Vec<(String, String)>,
}

impl<'a> BundleSources<'a> {
    pub fn new(data_dir: Option<&'a Path>, keys: Arc<Keys>, report: &'a DoctorReport) -> Self {
        let environment = std::env::vars_os()
            .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()))
            .collect();
        Self { data_dir, keys, report, environment }
    }
}

/// What was written, for the user: where, how big, which files, and what was removed.
#[derive(Debug, Clone, Serialize)]
pub struct BundleSummary {
    pub path: PathBuf,
    pub size_bytes: u64,
    pub files: Vec<String>,
    pub removed: RedactionCounts,
    /// Older logs or crash reports were left out (or the oldest log included was cut) to keep
    /// the bundle small.
    pub logs_cut: bool,
    /// Key store entries that could not be read: their values were looked for by shape only.
    pub unreadable_keys: usize,
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DiagnosticsError {
    #[error("could not use {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("could not make the archive: {0}")]
    Archive(String),
    #[error("the bundle could not be made: {0}")]
    Task(String),
}

/// The one redactor for what Perch hands a person to pass on (a bundle, the Logs page): the
/// values in the key store under the names Perch stores them (`secrets`), those of secret-named
/// variables in `environment`, what the MCP config hands each server, then the shapes of keys
/// and tokens; `home` shown as `~`.
/// Returns it with the number of key-store entries that could not be read (their values are
/// then found by shape only). Blocking: the keyring may answer over D-Bus.
pub fn redactor(
    data_dir: Option<&Path>,
    settings: &Settings,
    keys: &Keys,
    environment: impl IntoIterator<Item = (String, String)>,
    home: Option<&str>,
) -> (Redactor, usize) {
    let servers = data_dir.map(|d| crate::mcp::config::load(d).servers).unwrap_or_default();
    let names = secrets::stored_names(settings, &servers);
    let (mut known, unreadable_keys) = secrets::stored_values(keys, &names);
    known.extend(secrets::environment_values(environment));
    known.extend(secrets::config_values(&servers));
    (Redactor::new(known, home), unreadable_keys)
}

/// Writes the bundle to `out` (a zip, whatever the name says) and says what is in it.
pub async fn write_bundle(
    sources: BundleSources<'_>,
    out: &Path,
    options: BundleOptions,
) -> Result<BundleSummary, DiagnosticsError> {
    let report = serde_json::to_value(sources.report).map_err(|e| DiagnosticsError::Task(e.to_string()))?;
    let sandbox = sources.report.components.iter().find(|c| c.name == "sandbox").cloned();
    let (settings, settings_source) = match sources.data_dir {
        Some(dir) => load_settings(&dir.join("perch.db")).await,
        None => (Settings::default(), "defaults: the data folder is unusable".to_owned()),
    };
    let data_dir = sources.data_dir.map(Path::to_path_buf);
    let (keys, environment, out) = (sources.keys, sources.environment, out.to_path_buf());
    tokio::task::spawn_blocking(move || {
        let home =
            options.redact_home.then(dirs::home_dir).flatten().map(|h| h.to_string_lossy().into_owned());
        let (mut redactor, unreadable_keys) =
            redactor(data_dir.as_deref(), &settings, &keys, environment, home.as_deref());

        let mut entries = vec![
            Entry::text("doctor.json", pretty(&redactor.json(&report))),
            Entry::text(
                "versions.txt",
                bundle::versions(sandbox.as_ref(), data_dir.as_deref(), &mut redactor),
            ),
            Entry::text(
                "settings.json",
                pretty(&redactor.json(&json!({ "source": settings_source, "settings": settings }))),
            ),
        ];
        let mut logs_cut = false;
        if let Some(dir) = &data_dir {
            if let Ok(text) = std::fs::read_to_string(dir.join(crate::mcp::config::USER_FILE)) {
                entries.push(Entry::text("mcp_servers.json", bundle::mcp_servers(&text, &mut redactor)));
            }
            let (logs, cut) = bundle::logs(&dir.join("logs"), bundle::LOG_BUDGET_BYTES, &mut redactor);
            entries.extend(logs);
            logs_cut = cut;
            let (crashes, cut) = bundle::crashes(
                &crate::paths::crashes_dir_in(dir),
                bundle::CRASH_BUDGET_BYTES,
                &mut redactor,
            );
            entries.extend(crashes);
            logs_cut |= cut;
        }
        let removed = redactor.counts();
        entries.push(Entry::text("bundle.txt", about(&removed, logs_cut, unreadable_keys)));

        let size_bytes = bundle::write_zip(&out, &entries)?;
        Ok(BundleSummary {
            path: out,
            size_bytes,
            files: entries.into_iter().map(|e| e.name).collect(),
            removed,
            logs_cut,
            unreadable_keys,
        })
    })
    .await
    .map_err(|e| DiagnosticsError::Task(e.to_string()))?
}

/// The settings as stored, or the defaults and why. A missing database is not created.
async fn load_settings(db: &Path) -> (Settings, String) {
    if !db.exists() {
        return (Settings::default(), "defaults: there is no database yet".into());
    }
    match Store::open(db, Integrity::Quick).await {
        Ok((store, _)) => match store.setting_rows().await {
            Ok(rows) => (Settings::from_rows(rows), "database".into()),
            Err(e) => (Settings::default(), format!("defaults: the settings could not be read ({e})")),
        },
        Err(e) => (Settings::default(), format!("defaults: the database could not be opened ({e})")),
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
}

fn about(removed: &RedactionCounts, logs_cut: bool, unreadable_keys: usize) -> String {
    let mut text = format!(
        "Perch diagnostics bundle, Perch {}.\nRemoved before writing: {}.\n",
        crate::VERSION,
        removed.describe()
    );
    if logs_cut {
        text.push_str("Logs and crash reports: the newest only, cut to keep the bundle small.\n");
    }
    if unreadable_keys > 0 {
        text.push_str(&format!(
            "{unreadable_keys} key store entries could not be read; their values were looked for by shape only.\n"
        ));
    }
    text
}

/// The files of a bundle, by name, in order. Blocking. For tests, and for showing a user what
/// a bundle holds before they send it.
pub fn read_bundle(path: &Path) -> Result<Vec<(String, Vec<u8>)>, DiagnosticsError> {
    use std::io::Read;
    let io = |source| DiagnosticsError::Io { path: path.to_path_buf(), source };
    let archive_error = |e: zip::result::ZipError| DiagnosticsError::Archive(e.to_string());
    let mut archive = zip::ZipArchive::new(std::fs::File::open(path).map_err(io)?).map_err(archive_error)?;
    let mut files = Vec::with_capacity(archive.len());
    for i in 0..archive.len() {
        let mut file = archive.by_index(i).map_err(archive_error)?;
        let name = file.name().map_err(archive_error)?.into_owned();
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io)?;
        files.push((name, bytes));
    }
    Ok(files)
}
