//! Settings -> Logs: the live tail of Perch's log and the MCP servers' stderr, the log folder,
//! and "Copy diagnostics": the bundle `perch doctor --bundle` writes, saved to Downloads.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use perch_core::diagnostics::{self, BundleOptions, BundleSources, DiagnosticsError, Redactor};
use perch_core::logs::{self, Cursor, Tail};
use serde::Serialize;
use tauri::State;
use tauri_plugin_opener::OpenerExt;

use crate::error::{CommandError, CommandResult, ErrorKind};
use crate::state::AppState;

/// What the page keeps of the log.
const TAIL_ENTRIES: usize = 1_000;
/// A key saved while the page is open is known by its value within this time (its shape is
/// recognised at once).
const REDACTOR_LIFETIME: Duration = Duration::from_secs(60);

/// The tail's redactor (it reads the key store, too slow for every poll), and the bundles
/// saved in this session: the only files "Show in folder" reveals.
#[derive(Default)]
pub struct LogsState {
    redactor: Arc<Mutex<Option<(Instant, Redactor)>>>,
    saved: Mutex<Vec<PathBuf>>,
}

/// The entries written since `cursor` (the last ones when there is none), secrets removed.
#[tauri::command]
#[specta::specta]
pub async fn logs_tail(
    state: State<'_, AppState>,
    logs_state: State<'_, LogsState>,
    cursor: Option<Cursor>,
) -> CommandResult<Tail> {
    let engine = state.engine()?;
    let settings = engine.settings().get().await;
    let (data_dir, keys) = (engine.data_dir().root().to_path_buf(), engine.keys().clone());
    let cache = logs_state.redactor.clone();
    tokio::task::spawn_blocking(move || {
        let mut cached = cache.lock().unwrap_or_else(PoisonError::into_inner);
        let (built, redactor) = match cached.take() {
            // Built anew each time the page opens, so it starts with the keys of now.
            Some((built, redactor)) if cursor.is_some() && built.elapsed() < REDACTOR_LIFETIME => {
                (built, redactor)
            }
            _ => (Instant::now(), logs::redactor(&data_dir, &keys, &settings)),
        };
        let (_, redactor) = cached.insert((built, redactor));
        logs::read(&data_dir.join("logs"), cursor.as_ref(), TAIL_ENTRIES, redactor)
    })
    .await
    .map_err(|e| CommandError::new(ErrorKind::External, e.to_string()))
}

/// Opens the log folder in the file manager.
#[tauri::command]
#[specta::specta]
pub fn logs_open_folder(app: tauri::AppHandle, state: State<'_, AppState>) -> CommandResult<()> {
    let dir = state.engine()?.data_dir().logs_dir();
    app.opener()
        .open_path(dir.to_string_lossy(), None::<&str>)
        .map_err(|e| CommandError::new(ErrorKind::External, format!("could not open {}: {e}", dir.display())))
}

/// A saved bundle, for the page: where, how big, and what was taken out.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct DiagnosticsSaved {
    pub path: String,
    pub size_bytes: u64,
    pub files: Vec<String>,
    /// What was removed, counted by kind ("2 stored or environment secrets, 1 authorization
    /// header"), or "nothing".
    pub removed: String,
    /// Only the newest logs are in it, to keep it small.
    pub logs_cut: bool,
    /// Key store entries that could not be read: their values were looked for by shape only.
    pub unreadable_keys: u32,
}

/// Writes a diagnostics bundle into Downloads (the data folder where there is none), with
/// secrets removed and, if asked, the home folder shown as `~`.
#[tauri::command]
#[specta::specta]
pub async fn diagnostics_save(
    state: State<'_, AppState>,
    logs_state: State<'_, LogsState>,
    redact_home: bool,
) -> CommandResult<DiagnosticsSaved> {
    let engine = state.engine()?;
    let data_dir = engine.data_dir().root();
    let folder = dirs::download_dir().filter(|d| d.is_dir()).unwrap_or_else(|| data_dir.to_path_buf());
    let out = logs::diagnostics_file(&folder);
    let report = perch_core::doctor::run().await;
    let sources = BundleSources::new(Some(data_dir), engine.keys().clone(), &report);
    let summary = diagnostics::write_bundle(sources, &out, BundleOptions { redact_home })
        .await
        .map_err(bundle_error)?;
    logs_state.saved.lock().unwrap_or_else(PoisonError::into_inner).push(summary.path.clone());
    Ok(DiagnosticsSaved {
        path: summary.path.display().to_string(),
        size_bytes: summary.size_bytes,
        files: summary.files,
        removed: summary.removed.describe(),
        logs_cut: summary.logs_cut,
        unreadable_keys: u32::try_from(summary.unreadable_keys).unwrap_or(u32::MAX),
    })
}

/// Shows a bundle saved in this session in the file manager.
#[tauri::command]
#[specta::specta]
pub fn diagnostics_reveal(
    app: tauri::AppHandle,
    logs_state: State<'_, LogsState>,
    path: String,
) -> CommandResult<()> {
    let path = PathBuf::from(path);
    let saved = logs_state.saved.lock().unwrap_or_else(PoisonError::into_inner).contains(&path);
    if !saved {
        return Err(CommandError::new(ErrorKind::Invalid, "only a bundle saved here can be shown"));
    }
    app.opener().reveal_item_in_dir(&path).map_err(|e| {
        CommandError::new(ErrorKind::External, format!("could not show {}: {e}", path.display()))
    })
}

fn bundle_error(e: DiagnosticsError) -> CommandError {
    let kind = match &e {
        DiagnosticsError::Io { .. } => ErrorKind::Storage,
        _ => ErrorKind::External,
    };
    CommandError::new(kind, e.to_string())
}

/// A crash report as Settings -> Logs lists it.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct CrashSummary {
    /// The report's file name: what `crash_report_text` takes.
    pub name: String,
    /// What crashed: `app`, `cli`, `perch-mcp-web`...
    pub component: String,
    /// RFC 3339.
    pub at: String,
    /// The panic's message, quoted text already cut by the hook.
    pub summary: String,
}

/// The crash reports in the data folder, newest first.
#[tauri::command]
#[specta::specta]
pub fn crash_reports(state: State<'_, AppState>) -> CommandResult<Vec<CrashSummary>> {
    let dir = state.engine()?.data_dir().crashes_dir();
    Ok(perch_core::crash::list(&dir)
        .into_iter()
        .filter_map(|r| {
            Some(CrashSummary {
                name: r.file.file_name()?.to_str()?.to_owned(),
                component: r.component,
                at: r.at.to_rfc3339(),
                summary: r.summary,
            })
        })
        .collect())
}

/// One report's whole text (message, versions, backtrace), by the name `crash_reports` gave.
#[tauri::command]
#[specta::specta]
pub fn crash_report_text(state: State<'_, AppState>, name: String) -> CommandResult<String> {
    let dir = state.engine()?.data_dir().crashes_dir();
    // Only a listed report: the page cannot name another file.
    let report = perch_core::crash::list(&dir)
        .into_iter()
        .find(|r| r.file.file_name().and_then(|n| n.to_str()) == Some(name.as_str()))
        .ok_or_else(|| CommandError::new(ErrorKind::NotFound, "That crash report is no longer there."))?;
    perch_core::crash::read(&report.file)
        .map_err(|e| CommandError::new(ErrorKind::External, format!("Could not read the report: {e}")))
}
