//! Signed updates through Tauri's updater plugin: Settings -> General -> Updates and
//! `perch update check|apply` (which asks the running app over its socket).
//!
//! The plugin fetches the release manifest, compares versions, downloads, checks the minisign
//! signature against the public key in `tauri.conf.json` (bound to the announced version:
//! `requireSignedVersion`) and installs the .deb (through pkexec) or the AppImage. The steps,
//! the user's consent and what the card shows are `perch-update`'s ([`Updates`]); this module
//! is the plugin seen as its `Releases`, the way this copy can install (from the bundle type),
//! and the daily check.

use std::time::Duration;

use perch_update::{InstallRoute, Release, ReleaseError, Releases, UpdateOffer};
pub use perch_update::{UpdatePhase, UpdateStatus};
use serde::Serialize;
use tauri::{AppHandle, Manager};
use tauri_plugin_updater::{Error as UpdaterError, Update, Updater, UpdaterExt};
use tauri_specta::Event;

use crate::error::CommandError;
use crate::state::AppState;

/// Waits after start before the first check, so it never competes with the first paint.
const FIRST_CHECK_AFTER: Duration = Duration::from_secs(10);
/// A running Perch looks again once a day.
const CHECK_EVERY: Duration = Duration::from_secs(24 * 60 * 60);
/// The manifest is small: a server that takes longer is treated as down.
const CHECK_TIMEOUT: Duration = Duration::from_secs(30);

/// The updates the app keeps ([`tauri::Manager::manage`]d).
pub type Updates = perch_update::Updates<PluginReleases>;

/// Sent whenever the status changes.
#[derive(Debug, Clone, Serialize, specta::Type, tauri_specta::Event)]
pub struct UpdateChanged {
    pub status: UpdateStatus,
}

/// The updates of this app: verified packages it cannot install go to the data folder's
/// `updates/` (the temporary folder when the engine did not start).
pub fn create(app: &AppHandle) -> Updates {
    let save_dir = match &app.state::<AppState>().engine {
        Ok(engine) => engine.data_dir().root().join("updates"),
        Err(_) => std::env::temp_dir().join("perch-updates"),
    };
    let emitter = app.clone();
    let on_change = Box::new(move |status: &UpdateStatus| {
        let _ = UpdateChanged { status: status.clone() }.emit(&emitter);
    });
    let version = app.package_info().version.to_string();
    Updates::new(PluginReleases { app: app.clone() }, &version, install_route(), save_dir, on_change)
}

/// Releases as the updater plugin finds them.
pub struct PluginReleases {
    app: AppHandle,
}

impl Releases for PluginReleases {
    type Release = PluginRelease;

    async fn check(&self) -> Result<Option<PluginRelease>, ReleaseError> {
        let updater = updater(&self.app).map_err(release_error)?;
        Ok(updater.check().await.map_err(release_error)?.map(PluginRelease))
    }
}

/// A newer release the plugin found.
#[derive(Clone)]
pub struct PluginRelease(Update);

impl Release for PluginRelease {
    fn offer(&self) -> UpdateOffer {
        let update = &self.0;
        UpdateOffer {
            version: update.version.clone(),
            notes: update.body.clone().filter(|n| !n.trim().is_empty()),
            date: update
                .date
                .and_then(|d| chrono::DateTime::from_timestamp(d.unix_timestamp(), 0))
                .map(|d| d.to_rfc3339()),
        }
    }

    fn download_path(&self) -> String {
        self.0.download_url.path().to_owned()
    }

    async fn download(
        &self,
        progress: &mut (dyn FnMut(usize, Option<u64>) + Send),
    ) -> Result<Vec<u8>, ReleaseError> {
        self.0.download(progress, || {}).await.map_err(release_error)
    }

    fn install(&self, package: &[u8]) -> Result<(), ReleaseError> {
        self.0.install(package).map_err(release_error)
    }
}

/// The plugin's error as the kind of failure a person acts on.
fn release_error(error: UpdaterError) -> ReleaseError {
    use UpdaterError as E;
    match error {
        E::Minisign(_) | E::SignatureUtf8(_) | E::Base64(_) => ReleaseError::BadSignature,
        E::SignedVersionMismatch { signed, announced } => ReleaseError::SignedVersionMismatch {
            signed: signed.to_string(),
            announced: announced.to_string(),
        },
        E::MissingSignedVersion => ReleaseError::MissingSignedVersion,
        E::Reqwest(e) if e.is_timeout() => ReleaseError::Timeout,
        E::Reqwest(_) | E::Network(_) => ReleaseError::Network,
        E::Serialization(_) | E::ReleaseNotFound | E::Semver(_) | E::UrlParse(_) => ReleaseError::Unreadable,
        E::TargetNotFound(_) | E::TargetsNotFound(_) => ReleaseError::NoPackageForSystem,
        E::InvalidUpdaterFormat => ReleaseError::NotAPackage,
        E::AuthenticationFailed => ReleaseError::PasswordRefused,
        E::DebInstallFailed | E::PackageInstallFailed => ReleaseError::InstallerRefused,
        other => ReleaseError::Other(other.to_string()),
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
                let _ = app.state::<Updates>().check(true).await;
            }
            tokio::time::sleep(CHECK_EVERY).await;
        }
    });
}

/// `perch update check|apply` from the socket: the same steps as the buttons, the user's
/// command being the yes.
pub async fn from_command_line(app: &AppHandle, apply: bool) -> Result<serde_json::Value, CommandError> {
    let (message, status) = app.state::<Updates>().for_command_line(apply).await?;
    Ok(serde_json::json!({ "message": message, "status": status }))
}

/// Called as Perch exits: installs a download the user chose to install on quitting.
pub fn install_at_exit(app: &AppHandle) {
    if let Some(updates) = app.try_state::<Updates>() {
        updates.install_at_exit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_build_from_source_installs_by_hand() {
        // Test binaries carry no bundle type: the packager writes it into released binaries.
        assert!(
            matches!(install_route(), InstallRoute::Manual { reason } if reason.contains("not installed from a package"))
        );
    }
}
