//! Signed updates through Tauri's updater plugin: Settings -> General -> Updates and
//! `perch update check|apply` (which asks the running app over its socket).
//!
//! The plugin fetches the release manifest, compares versions, downloads, checks the minisign
//! signature against the public key in `tauri.conf.json` (bound to the announced version:
//! `requireSignedVersion`) and installs the .deb (through pkexec) or the AppImage. What this
//! module adds is the user's consent and the honest middle: every step waits for a yes (checking
//! at start only asks whether there is a newer Perch), progress and failures reach the UI as
//! [`UpdateStatus`], and where this copy cannot replace itself (built from source, no password
//! prompt for a package) the verified download is saved with the command that installs it,
//! instead of an install that fails at every launch.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use tauri::{AppHandle, Manager};
use tauri_plugin_updater::{Error as UpdaterError, Update, Updater, UpdaterExt};
use tauri_specta::Event;

use crate::error::{CommandError, ErrorKind};
use crate::state::AppState;

/// Where a person finds releases when Perch cannot install one itself.
pub const RELEASES_PAGE: &str = "https://github.com/perch-app/perch/releases";
/// Waits after start before the first check, so it never competes with the first paint.
const FIRST_CHECK_AFTER: Duration = Duration::from_secs(10);
/// A running Perch looks again once a day.
const CHECK_EVERY: Duration = Duration::from_secs(24 * 60 * 60);
/// The manifest is small: a server that takes longer is treated as down.
const CHECK_TIMEOUT: Duration = Duration::from_secs(30);
/// Progress reaches the UI at most this often.
const PROGRESS_EVERY: Duration = Duration::from_millis(200);

/// Everything the Updates card shows.
#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct UpdateStatus {
    pub current_version: String,
    pub phase: UpdatePhase,
    /// The newer release, once a check found one.
    pub offer: Option<UpdateOffer>,
    pub route: InstallRoute,
    /// When the last check finished (ms since the epoch), whatever it found.
    pub last_checked_ms: Option<i64>,
}

#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum UpdatePhase {
    Idle,
    Checking,
    UpToDate,
    /// A newer release is on offer; nothing downloaded yet.
    Available,
    Downloading {
        received: u64,
        total: Option<u64>,
    },
    /// Downloaded and its signature verified. `saved` is where the package was put when this
    /// copy installs it by hand ([`InstallRoute::Manual`]).
    Ready {
        install_on_quit: bool,
        saved: Option<String>,
    },
    Installing,
    /// Installed; the next start runs it.
    Installed,
    Failed {
        step: UpdateStep,
        message: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum UpdateStep {
    Check,
    Download,
    Install,
}

#[derive(Debug, Clone, Serialize, specta::Type)]
pub struct UpdateOffer {
    pub version: String,
    /// The release notes, as the manifest gives them (Markdown).
    pub notes: Option<String>,
    /// RFC 3339.
    pub date: Option<String>,
}

/// How this copy of Perch gets a new version.
#[derive(Debug, Clone, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum InstallRoute {
    /// Perch installs it: the AppImage file replaced, or the package through the system's
    /// password prompt.
    InPlace { package: String },
    /// Perch cannot replace itself here; `reason` says why, and a verified download is saved
    /// for the user to install.
    Manual { reason: String },
}

/// The state the app keeps ([`tauri::Manager::manage`]d).
#[derive(Default)]
pub struct Updates {
    inner: Mutex<Inner>,
    /// One check, download or install at a time.
    busy: tokio::sync::Mutex<()>,
}

#[derive(Default)]
struct Inner {
    phase: Option<UpdatePhase>,
    update: Option<Update>,
    /// The verified package, kept until installed.
    package: Option<Arc<Vec<u8>>>,
    install_on_quit: bool,
    last_checked_ms: Option<i64>,
}

/// Sent whenever the status changes.
#[derive(Debug, Clone, Serialize, specta::Type, tauri_specta::Event)]
pub struct UpdateChanged {
    pub status: UpdateStatus,
}

impl Updates {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

pub fn status(app: &AppHandle) -> UpdateStatus {
    let inner = app.state::<Updates>();
    let inner = inner.lock();
    UpdateStatus {
        current_version: app.package_info().version.to_string(),
        phase: inner.phase.clone().unwrap_or(UpdatePhase::Idle),
        offer: inner.update.as_ref().map(|u| UpdateOffer {
            version: u.version.clone(),
            notes: u.body.clone().filter(|n| !n.trim().is_empty()),
            date: u
                .date
                .and_then(|d| chrono::DateTime::from_timestamp(d.unix_timestamp(), 0))
                .map(|d| d.to_rfc3339()),
        }),
        route: install_route(),
        last_checked_ms: inner.last_checked_ms,
    }
}

fn set_phase(app: &AppHandle, phase: UpdatePhase) {
    app.state::<Updates>().lock().phase = Some(phase);
    let _ = UpdateChanged { status: status(app) }.emit(app);
}

/// Looks for a newer Perch. `quiet` (the check at start) keeps a failure out of sight: a
/// server that is down or a laptop offline is not worth a message, and the next start tries
/// again.
pub async fn check(app: &AppHandle, quiet: bool) -> Result<UpdateStatus, CommandError> {
    let updates = app.state::<Updates>();
    let _busy = updates.busy.lock().await;
    let before = updates.lock().phase.clone();
    // A download in hand stays: checking again must not throw it away.
    if matches!(before, Some(UpdatePhase::Ready { .. } | UpdatePhase::Installed)) {
        return Ok(status(app));
    }
    set_phase(app, UpdatePhase::Checking);
    let found = match updater(app) {
        Ok(updater) => updater.check().await,
        Err(e) => Err(e),
    };
    let now = chrono::Utc::now().timestamp_millis();
    match found {
        Ok(found) => {
            let phase = if found.is_some() { UpdatePhase::Available } else { UpdatePhase::UpToDate };
            match &found {
                Some(update) => tracing::info!(version = %update.version, "an update is available"),
                None => tracing::info!("Perch is up to date"),
            }
            {
                let mut inner = updates.lock();
                inner.update = found;
                inner.package = None;
                inner.last_checked_ms = Some(now);
            }
            set_phase(app, phase);
            Ok(status(app))
        }
        Err(e) => {
            tracing::warn!(error = %e, quiet, "the update check failed");
            let message = describe(&e, UpdateStep::Check);
            let phase = if quiet {
                before.filter(|p| !matches!(p, UpdatePhase::Checking)).unwrap_or(UpdatePhase::Idle)
            } else {
                UpdatePhase::Failed { step: UpdateStep::Check, message: message.clone() }
            };
            set_phase(app, phase);
            Err(CommandError::new(ErrorKind::External, message))
        }
    }
}

/// Downloads the release on offer and verifies its signature. Where this copy cannot install
/// it, the verified package is saved in the data folder's `updates/`.
pub async fn download(app: &AppHandle) -> Result<UpdateStatus, CommandError> {
    let updates = app.state::<Updates>();
    let _busy = updates.busy.lock().await;
    let Some(update) = updates.lock().update.clone() else {
        return Err(CommandError::new(
            ErrorKind::Invalid,
            "There is no update to download: check for one first.",
        ));
    };
    set_phase(app, UpdatePhase::Downloading { received: 0, total: None });
    let mut received = 0u64;
    let mut last_sent = Instant::now();
    let result = update
        .download(
            |chunk, total| {
                received += chunk as u64;
                if last_sent.elapsed() >= PROGRESS_EVERY {
                    last_sent = Instant::now();
                    set_phase(app, UpdatePhase::Downloading { received, total });
                }
            },
            || {},
        )
        .await;
    let bytes = match result {
        Ok(bytes) => bytes,
        Err(e) => {
            tracing::warn!(error = %e, version = %update.version, "the update download failed or was refused");
            let message = describe(&e, UpdateStep::Download);
            set_phase(app, UpdatePhase::Failed { step: UpdateStep::Download, message: message.clone() });
            return Err(CommandError::new(ErrorKind::External, message));
        }
    };
    tracing::info!(version = %update.version, bytes = bytes.len(), "update downloaded and verified");
    let saved = match install_route() {
        InstallRoute::InPlace { .. } => None,
        InstallRoute::Manual { .. } => match save_package(app, &update, &bytes) {
            Ok(path) => Some(path.display().to_string()),
            Err(e) => {
                let message = format!("The update was downloaded and verified but could not be saved: {e}");
                set_phase(app, UpdatePhase::Failed { step: UpdateStep::Download, message: message.clone() });
                return Err(CommandError::new(ErrorKind::External, message));
            }
        },
    };
    updates.lock().package = Some(Arc::new(bytes));
    set_phase(app, UpdatePhase::Ready { install_on_quit: false, saved });
    Ok(status(app))
}

/// Installs the verified download now (the caller restarts Perch), or marks it to be installed
/// when Perch quits.
pub async fn install(app: &AppHandle, on_quit: bool) -> Result<UpdateStatus, CommandError> {
    let updates = app.state::<Updates>();
    let _busy = updates.busy.lock().await;
    if let InstallRoute::Manual { reason } = install_route() {
        return Err(CommandError::new(ErrorKind::Invalid, reason));
    }
    let (update, package, saved) = {
        let inner = updates.lock();
        let saved = match &inner.phase {
            Some(UpdatePhase::Ready { saved, .. }) => saved.clone(),
            _ => None,
        };
        (inner.update.clone(), inner.package.clone(), saved)
    };
    let (Some(update), Some(package)) = (update, package) else {
        return Err(CommandError::new(ErrorKind::Invalid, "Download the update first."));
    };
    if on_quit {
        updates.lock().install_on_quit = true;
        set_phase(app, UpdatePhase::Ready { install_on_quit: true, saved });
        return Ok(status(app));
    }
    set_phase(app, UpdatePhase::Installing);
    let bytes = package.clone();
    let installing = update.clone();
    // pkexec waits for the user's password: never on an async worker.
    let result = tauri::async_runtime::spawn_blocking(move || installing.install(bytes.as_slice())).await;
    match result {
        Ok(Ok(())) => {
            tracing::info!(version = %update.version, "update installed");
            {
                let mut inner = updates.lock();
                inner.package = None;
                inner.install_on_quit = false;
            }
            set_phase(app, UpdatePhase::Installed);
            Ok(status(app))
        }
        Ok(Err(e)) => {
            Err(install_failed(app, &update, &package, &e.to_string(), describe(&e, UpdateStep::Install)))
        }
        Err(e) => Err(install_failed(app, &update, &package, &e.to_string(), e.to_string())),
    }
}

/// A failed install keeps the verified package where the user can install it by hand.
fn install_failed(
    app: &AppHandle,
    update: &Update,
    package: &[u8],
    error: &str,
    message: String,
) -> CommandError {
    tracing::warn!(%error, version = %update.version, "the update could not be installed");
    let message = match save_package(app, update, package) {
        Ok(path) => format!(
            "{message} The verified package is saved at {}. {}",
            path.display(),
            how_to_install(&path)
        ),
        Err(_) => format!("{message} Download it from {RELEASES_PAGE} instead."),
    };
    set_phase(app, UpdatePhase::Failed { step: UpdateStep::Install, message: message.clone() });
    CommandError::new(ErrorKind::External, message)
}

/// Called as Perch exits: installs a download the user chose to install on quitting.
pub fn install_at_exit(app: &AppHandle) {
    let Some(updates) = app.try_state::<Updates>() else { return };
    let (update, package) = {
        let inner = updates.lock();
        if !inner.install_on_quit {
            return;
        }
        (inner.update.clone(), inner.package.clone())
    };
    if let (Some(update), Some(package)) = (update, package) {
        match update.install(package.as_slice()) {
            Ok(()) => tracing::info!(version = %update.version, "update installed at exit"),
            Err(e) => {
                tracing::warn!(error = %e, "the update could not be installed at exit");
                let _ = save_package(app, &update, &package);
            }
        }
    }
}

/// The updater with the configured endpoint and key. Debug builds take both from the
/// environment (`PERCH_UPDATE_ENDPOINT`, `PERCH_UPDATE_PUBKEY`) for the tests' loopback server
/// and throwaway key; a release build trusts only the key it was built with.
fn updater(app: &AppHandle) -> Result<Updater, UpdaterError> {
    #[allow(unused_mut)]
    let mut builder = app.updater_builder().timeout(CHECK_TIMEOUT);
    #[cfg(debug_assertions)]
    {
        if let Some(endpoint) = std::env::var("PERCH_UPDATE_ENDPOINT").ok().filter(|s| !s.is_empty()) {
            builder = builder.endpoints(vec![endpoint.parse()?])?;
        }
        if let Some(key) = std::env::var("PERCH_UPDATE_PUBKEY").ok().filter(|s| !s.is_empty()) {
            builder = builder.pubkey(key);
        }
    }
    builder.build()
}

/// What this copy can do. Worked out once: the bundle type is fixed in the binary and the status
/// (with this in it) is sent with every progress step.
pub fn install_route() -> InstallRoute {
    static ROUTE: std::sync::OnceLock<InstallRoute> = std::sync::OnceLock::new();
    ROUTE.get_or_init(find_install_route).clone()
}

/// From the bundle type the packager wrote into the binary, and the password prompt.
fn find_install_route() -> InstallRoute {
    use tauri::utils::config::BundleType;
    match tauri::utils::platform::bundle_type() {
        Some(BundleType::AppImage) => InstallRoute::InPlace { package: "AppImage".into() },
        Some(kind @ (BundleType::Deb | BundleType::Rpm)) => {
            let package = if matches!(kind, BundleType::Deb) { "deb" } else { "rpm" };
            // The plugin asks for the password through pkexec; without it, its last resort is
            // sudo on a terminal the app does not have.
            if on_path("pkexec") {
                InstallRoute::InPlace { package: package.into() }
            } else {
                InstallRoute::Manual {
                    reason:
                        "Installing a package needs an administrator's password, and this desktop has no \
                             password prompt for apps (pkexec, from polkit)."
                            .into(),
                }
            }
        }
        _ => InstallRoute::Manual {
            reason: "This copy of Perch was not installed from a package (.deb or AppImage), so it cannot \
                     replace itself."
                .into(),
        },
    }
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// Writes the verified package to the data folder's `updates/`, named as the release names it.
fn save_package(app: &AppHandle, update: &Update, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let root = match &app.state::<AppState>().engine {
        Ok(engine) => engine.data_dir().root().to_path_buf(),
        Err(_) => std::env::temp_dir(),
    };
    let dir = root.join("updates");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(package_name(update.download_url.path(), &update.version));
    let partial = path.with_extension("partial");
    std::fs::write(&partial, bytes)?;
    std::fs::rename(&partial, &path)?;
    Ok(path)
}

/// The file name from the download's URL, else `perch-VERSION.bin`; never a path.
fn package_name(url_path: &str, version: &str) -> String {
    let last = url_path.rsplit('/').next().unwrap_or_default().to_owned();
    // Percent-escapes are not decoded: a name that needs them is not kept.
    let safe = !last.is_empty()
        && !last.starts_with('.')
        && last.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+'));
    if safe { last } else { format!("perch-{version}.bin") }
}

/// The command that installs a saved package, by its kind.
pub fn how_to_install(path: &Path) -> String {
    match path.extension().and_then(|e| e.to_str()) {
        Some("deb") => format!("Install it with: sudo apt install {}", path.display()),
        Some("rpm") => format!("Install it with: sudo dnf install {}", path.display()),
        Some("AppImage") => {
            format!("Make it executable (chmod +x {}) and start it in place of this copy.", path.display())
        }
        _ => format!("Get the package for your system from {RELEASES_PAGE}."),
    }
}

/// A failure in words a person can act on.
fn describe(error: &UpdaterError, step: UpdateStep) -> String {
    use UpdaterError as E;
    match error {
        E::Minisign(_) | E::SignatureUtf8(_) | E::Base64(_) => {
            "The download does not carry Perch's signature, so it was discarded and nothing was installed. \
             It may have been damaged or tampered with on the way; try again later."
                .into()
        }
        E::SignedVersionMismatch { signed, announced } => format!(
            "The update server announced version {announced}, but the download was signed as version {signed}. \
             It was discarded and nothing was installed."
        ),
        E::MissingSignedVersion => "The download's signature does not say which version it is, so it was \
                                    discarded and nothing was installed."
            .into(),
        E::Reqwest(e) if e.is_timeout() => {
            "The update server did not answer in time. Try again later.".into()
        }
        E::Reqwest(_) | E::Network(_) => match step {
            UpdateStep::Check => {
                "Could not reach the update server. Check your connection, then try again.".into()
            }
            _ => "The download stopped. Check your connection, then try again.".into(),
        },
        E::Serialization(_) | E::ReleaseNotFound | E::Semver(_) | E::UrlParse(_) => {
            "The update server's answer could not be read. Try again later.".into()
        }
        E::TargetNotFound(_) | E::TargetsNotFound(_) => {
            format!("The latest release has no package for this system. See {RELEASES_PAGE}.")
        }
        E::InvalidUpdaterFormat => {
            "The download is not a package for this system, so it was not installed.".into()
        }
        E::AuthenticationFailed => {
            "The administrator password was not given, so the update was not installed.".into()
        }
        E::DebInstallFailed | E::PackageInstallFailed => {
            "The system's package installer refused the update.".into()
        }
        other => match step {
            UpdateStep::Check => format!("The update check failed: {other}."),
            UpdateStep::Download => format!("The download failed: {other}."),
            UpdateStep::Install => format!("The update could not be installed: {other}."),
        },
    }
}

/// Checks at start (after the first paint has had its time) and then daily, while the setting
/// is on and the connection is not reported metered.
pub fn start_background_checks(app: &AppHandle) {
    // A debug build is a developer's or a test's copy: it asks the releases only when told where
    // (`PERCH_UPDATE_ENDPOINT`), so test runs never reach the network. "Check now" still asks.
    if cfg!(debug_assertions) && std::env::var_os("PERCH_UPDATE_ENDPOINT").is_none() {
        return;
    }
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        tokio::time::sleep(FIRST_CHECK_AFTER).await;
        loop {
            let enabled = match &app.state::<AppState>().engine {
                Ok(engine) => engine.settings().get().await.updates.check_at_start,
                Err(_) => false,
            };
            if !enabled {
                tracing::debug!("update checks are off");
            } else if perch_core::network::metered().await == Some(true) {
                tracing::info!("the connection is metered: the update check waits");
            } else {
                let _ = check(&app, true).await;
            }
            tokio::time::sleep(CHECK_EVERY).await;
        }
    });
}

/// `perch update check|apply` from the socket: the same steps as the buttons, the user's
/// command being the yes.
pub async fn from_command_line(app: &AppHandle, apply: bool) -> Result<serde_json::Value, CommandError> {
    // After this the phase is up to date, available, or a download already in hand.
    check(app, false).await?;
    let current = status(app);
    let Some(offer) = current.offer.clone() else {
        let message = format!("Perch {} is up to date.", current.current_version);
        return Ok(serde_json::json!({ "message": message, "status": current }));
    };
    if !apply {
        let notes = offer.notes.as_deref().map(|n| format!("\n\n{n}")).unwrap_or_default();
        let message = format!(
            "Perch {} is available (this is {}). `perch update apply` installs it.{notes}",
            offer.version, current.current_version
        );
        return Ok(serde_json::json!({ "message": message, "status": current }));
    }
    if matches!(current.phase, UpdatePhase::Available) {
        download(app).await?;
    }
    let message = match (install_route(), status(app).phase) {
        (_, UpdatePhase::Installed) => {
            format!("Perch {} is installed. Restart Perch to use it.", offer.version)
        }
        (InstallRoute::InPlace { .. }, _) => {
            install(app, false).await?;
            format!("Perch {} is installed. Restart Perch to use it.", offer.version)
        }
        (InstallRoute::Manual { reason }, phase) => {
            let saved = match phase {
                UpdatePhase::Ready { saved: Some(path), .. } => path,
                _ => String::new(),
            };
            format!(
                "Perch {} was downloaded and its signature verified. {reason} The package is saved at {saved}. {}",
                offer.version,
                how_to_install(Path::new(&saved))
            )
        }
    };
    Ok(serde_json::json!({ "message": message, "status": status(app) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_names_come_from_the_url_and_never_make_a_path() {
        assert_eq!(
            package_name("/releases/download/v0.2.0/Perch_0.2.0_amd64.deb", "0.2.0"),
            "Perch_0.2.0_amd64.deb"
        );
        assert_eq!(package_name("/x/Perch%200.2.deb", "0.2.0"), "perch-0.2.0.bin", "an escape is not kept");
        assert_eq!(package_name("/x/..", "0.2.0"), "perch-0.2.0.bin");
        assert_eq!(package_name("/x/%2e%2e%2fetc", "0.2.0"), "perch-0.2.0.bin");
        assert_eq!(package_name("/", "0.2.0"), "perch-0.2.0.bin");
    }

    #[test]
    fn the_way_to_install_by_hand_fits_the_package() {
        assert!(
            how_to_install(Path::new("/d/updates/Perch_0.2.0_amd64.deb"))
                .contains("sudo apt install /d/updates/")
        );
        assert!(how_to_install(Path::new("/d/p.AppImage")).contains("chmod +x"));
        assert!(how_to_install(Path::new("/d/p.bin")).contains(RELEASES_PAGE));
    }

    #[test]
    fn a_build_from_source_installs_by_hand() {
        // Test binaries carry no bundle type: the packager writes it into released binaries.
        assert!(
            matches!(install_route(), InstallRoute::Manual { reason } if reason.contains("not installed from a package"))
        );
    }
}
