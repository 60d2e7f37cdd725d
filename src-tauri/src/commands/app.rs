use perch_core::autostart::{self, Autostart, AutostartState};
use perch_core::engine::StartupNotice;
use perch_core::paths::DataDirSource;
use perch_core::settings::{Settings, ThemePreference};
use serde::Serialize;
use tauri::State;

use crate::error::{CommandError, CommandResult, ErrorKind};
use crate::state::AppState;

/// What the UI needs to know at start: the version, where data lives, and anything to report.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct AppStatus {
    pub version: String,
    /// Set when the engine could not start; the UI shows it instead of the app.
    pub fatal: Option<String>,
    pub data_dir: Option<String>,
    pub data_dir_source: Option<DataDirSource>,
    pub schema_version: Option<i64>,
    pub notices: Vec<StartupNotice>,
}

#[tauri::command]
#[specta::specta]
pub fn app_status(state: State<'_, AppState>) -> AppStatus {
    let mut status = AppStatus {
        version: perch_core::VERSION.into(),
        fatal: None,
        data_dir: None,
        data_dir_source: None,
        schema_version: None,
        notices: Vec::new(),
    };
    match &state.engine {
        Ok(engine) => {
            status.data_dir = Some(engine.data_dir().root().display().to_string());
            status.data_dir_source = Some(engine.data_dir().source());
            status.schema_version = Some(engine.open_report().schema_version);
            status.notices = engine.startup_notices();
        }
        Err(reason) => status.fatal = Some(reason.to_string()),
    }
    status
}

/// Whether the desktop composites windows (without it the UI draws square corners and an
/// opaque bubble) and shows tray icons (without one Close shrinks Perch to its bubble). Asked
/// after the first paint, not before it.
#[tauri::command]
#[specta::specta]
pub async fn desktop_status() -> perch_core::desktop::DesktopStatus {
    perch_core::desktop::status().await
}

/// Settings -> General -> Start at login: what the autostart entry says, and where it is.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct StartAtLogin {
    pub state: AutostartState,
    pub entry: String,
}

impl StartAtLogin {
    fn of(autostart: &Autostart) -> Self {
        Self { state: autostart.state(), entry: autostart.entry_path().display().to_string() }
    }
}

#[tauri::command]
#[specta::specta]
pub async fn start_at_login() -> CommandResult<StartAtLogin> {
    let autostart =
        Autostart::for_user().map_err(|e| CommandError::new(ErrorKind::External, e.to_string()))?;
    Ok(StartAtLogin::of(&autostart))
}

/// Writes or removes the autostart entry (for the program running now: the package's, the
/// AppImage, or a build the user started).
#[tauri::command]
#[specta::specta]
pub async fn set_start_at_login(state: State<'_, AppState>, on: bool) -> CommandResult<StartAtLogin> {
    let failed = |e: &dyn std::fmt::Display| CommandError::new(ErrorKind::External, e.to_string());
    let autostart = Autostart::for_user().map_err(|e| failed(&e))?;
    if on {
        let program = autostart::program().map_err(|e| failed(&e))?;
        autostart.enable(&program).map_err(|e| failed(&e))?;
        tracing::info!(entry = %autostart.entry_path().display(), program = %program.display(), "Perch starts at login");
    } else {
        autostart.disable().map_err(|e| failed(&e))?;
        tracing::info!(entry = %autostart.entry_path().display(), "Perch no longer starts at login");
    }
    // A choice made answers the offer too (one that failed leaves it, with its message).
    if let Ok(engine) = &state.engine {
        engine.settings().update(|s| s.start_at_login_offered = true).await?;
    }
    Ok(StartAtLogin::of(&autostart))
}

/// The offer after a first answer was answered ("Not now" included): it is not made again.
#[tauri::command]
#[specta::specta]
pub async fn start_at_login_offered(state: State<'_, AppState>) -> CommandResult<Settings> {
    Ok(state.engine()?.settings().update(|s| s.start_at_login_offered = true).await?)
}

#[tauri::command]
#[specta::specta]
pub async fn get_settings(state: State<'_, AppState>) -> CommandResult<Settings> {
    Ok(state.engine()?.settings().get().await)
}

#[tauri::command]
#[specta::specta]
pub async fn set_theme(state: State<'_, AppState>, theme: ThemePreference) -> CommandResult<Settings> {
    Ok(state.engine()?.settings().update(|s| s.theme = theme).await?)
}

/// The UI's language as chosen in Settings (`None`: follow the system) and the system's locale,
/// read before the first paint so the page starts in the right language.
#[derive(Debug, Clone, serde::Serialize, specta::Type)]
pub struct UiLanguage {
    pub chosen: Option<String>,
    pub system: Option<String>,
}

#[tauri::command]
#[specta::specta]
pub async fn ui_language(state: State<'_, AppState>) -> CommandResult<UiLanguage> {
    let chosen = state.engine()?.settings().get().await.language;
    Ok(UiLanguage { chosen, system: perch_core::locale::system_locale() })
}

/// Settings -> General -> Language: a BCP 47 tag, or `None` to follow the system.
#[tauri::command]
#[specta::specta]
pub async fn set_language(
    app: tauri::AppHandle,
    state: State<'_, AppState>,
    language: Option<String>,
) -> CommandResult<Settings> {
    if let Some(tag) = &language
        && !perch_core::locale::is_language_tag(tag)
    {
        return Err(CommandError::new(ErrorKind::Invalid, format!("{tag:?} is not a language tag")));
    }
    let settings = state.engine()?.settings().update(|s| s.language = language).await?;
    crate::tray::relabel(&app, settings.language.as_deref());
    Ok(settings)
}

/// The text sizes the UI offers, in percent: at 200 every page still fits the 450x450 window.
const TEXT_SIZES: std::ops::RangeInclusive<u16> = 100..=200;

/// Settings -> General -> Appearance -> Text size (percent).
#[tauri::command]
#[specta::specta]
pub async fn set_text_size(state: State<'_, AppState>, percent: u16) -> CommandResult<Settings> {
    if !TEXT_SIZES.contains(&percent) {
        return Err(CommandError::new(
            ErrorKind::Invalid,
            format!("text size {percent}% is outside 100% to 200%"),
        ));
    }
    Ok(state.engine()?.settings().update(|s| s.text_size = percent).await?)
}

/// Ctrl+Q: saves the window placement and exits.
#[tauri::command]
#[specta::specta]
pub fn quit_app(app: tauri::AppHandle) {
    app.exit(0);
}

/// Opens a web link from rendered markdown in the system browser. Only http(s) and mailto:
/// the webview never navigates away from Perch.
#[tauri::command]
#[specta::specta]
pub fn open_url(app: tauri::AppHandle, url: String) -> CommandResult<()> {
    use tauri_plugin_opener::OpenerExt;
    let allowed = ["https://", "http://", "mailto:"].iter().any(|p| url.to_ascii_lowercase().starts_with(p));
    if !allowed {
        return Err(CommandError::new(ErrorKind::Invalid, format!("{url} is not a web link")));
    }
    app.opener()
        .open_url(url, None::<&str>)
        .map_err(|e| CommandError::new(ErrorKind::External, e.to_string()))
}
