//! Updates with the user's consent (Settings -> General -> Updates, `perch update check|apply`).
//!
//! Where releases come from, how a download's signature is checked and how a package is
//! installed are the desktop's (Tauri's updater plugin, behind [`Releases`] and [`Release`]).
//! What this crate adds is the honest middle: every step waits for a yes (the check at start
//! only asks whether there is a newer Perch), progress and failures are an [`UpdateStatus`]
//! sent on every change, one step runs at a time, a download in hand survives a later check,
//! and where this copy cannot replace itself (built from source, no password prompt for a
//! package) the verified download is saved with the command that installs it, instead of an
//! install that fails at every launch.

mod words;

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

pub use words::{RELEASES_PAGE, how_to_install, package_name};

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

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
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

#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
pub struct UpdateOffer {
    pub version: String,
    /// The release notes, as the manifest gives them (Markdown).
    pub notes: Option<String>,
    /// RFC 3339.
    pub date: Option<String>,
}

/// How this copy of Perch gets a new version.
#[derive(Debug, Clone, PartialEq, Serialize, specta::Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum InstallRoute {
    /// Perch installs it: the AppImage file replaced, or the package through the system's
    /// password prompt.
    InPlace { package: String },
    /// Perch cannot replace itself here; `reason` says why, and a verified download is saved
    /// for the user to install.
    Manual { reason: String },
}

/// What went wrong on the releases' side, in the kinds a person can act on differently.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ReleaseError {
    /// The download does not carry Perch's signature (or it does not check).
    #[error("the signature does not check")]
    BadSignature,
    #[error("announced as {announced}, signed as {signed}")]
    SignedVersionMismatch { signed: String, announced: String },
    #[error("the signature names no version")]
    MissingSignedVersion,
    #[error("the server did not answer in time")]
    Timeout,
    #[error("the connection failed")]
    Network,
    /// The server's answer (the manifest) could not be read.
    #[error("the answer could not be read")]
    Unreadable,
    #[error("no package for this system")]
    NoPackageForSystem,
    #[error("not a package for this system")]
    NotAPackage,
    #[error("the administrator password was not given")]
    PasswordRefused,
    #[error("the package installer refused it")]
    InstallerRefused,
    #[error("{0}")]
    Other(String),
}

/// Why a step was refused or failed; the message is the one the card shows.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum UpdateError {
    #[error("There is no update to download: check for one first.")]
    NothingToDownload,
    #[error("Download the update first.")]
    NotDownloaded,
    /// This copy cannot install (the reason of [`InstallRoute::Manual`]).
    #[error("{0}")]
    CannotInstallHere(String),
    #[error("{message}")]
    Failed { step: UpdateStep, message: String },
}

/// One newer release, as found by [`Releases::check`].
pub trait Release: Clone + Send + Sync + 'static {
    fn offer(&self) -> UpdateOffer;
    /// The path of the download's URL (its last part names the saved package).
    fn download_path(&self) -> String;
    /// Downloads the package and checks its signature; `progress` hears each chunk's size and
    /// the whole size when known.
    fn download(
        &self,
        progress: &mut (dyn FnMut(usize, Option<u64>) + Send),
    ) -> impl Future<Output = Result<Vec<u8>, ReleaseError>> + Send;
    /// Installs the verified package. Blocking: it may wait for the user's password.
    fn install(&self, package: &[u8]) -> Result<(), ReleaseError>;
}

/// Where releases are found.
pub trait Releases: Send + Sync + 'static {
    type Release: Release;
    /// A release newer than this copy, if there is one.
    fn check(&self) -> impl Future<Output = Result<Option<Self::Release>, ReleaseError>> + Send;
}

/// Told every status as it changes (the desktop sends it to the window).
pub type OnChange = Box<dyn Fn(&UpdateStatus) + Send + Sync>;

/// The updates of one running Perch.
pub struct Updates<R: Releases> {
    releases: R,
    current_version: String,
    route: InstallRoute,
    /// Where a verified package is saved for the user to install by hand.
    save_dir: PathBuf,
    on_change: OnChange,
    inner: Mutex<Inner<R::Release>>,
    /// One check, download or install at a time.
    busy: tokio::sync::Mutex<()>,
}

struct Inner<T> {
    phase: UpdatePhase,
    release: Option<T>,
    /// The verified package, kept until installed.
    package: Option<Arc<Vec<u8>>>,
    install_on_quit: bool,
    last_checked_ms: Option<i64>,
}

impl<R: Releases> Updates<R> {
    pub fn new(
        releases: R,
        current_version: &str,
        route: InstallRoute,
        save_dir: PathBuf,
        on_change: OnChange,
    ) -> Self {
        let inner = Inner {
            phase: UpdatePhase::Idle,
            release: None,
            package: None,
            install_on_quit: false,
            last_checked_ms: None,
        };
        Self {
            releases,
            current_version: current_version.to_owned(),
            route,
            save_dir,
            on_change,
            inner: Mutex::new(inner),
            busy: tokio::sync::Mutex::new(()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner<R::Release>> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn route(&self) -> &InstallRoute {
        &self.route
    }

    pub fn status(&self) -> UpdateStatus {
        let inner = self.lock();
        UpdateStatus {
            current_version: self.current_version.clone(),
            phase: inner.phase.clone(),
            offer: inner.release.as_ref().map(Release::offer),
            route: self.route.clone(),
            last_checked_ms: inner.last_checked_ms,
        }
    }

    fn set_phase(&self, phase: UpdatePhase) {
        self.lock().phase = phase;
        (self.on_change)(&self.status());
    }

    fn fail(&self, step: UpdateStep, message: String) -> UpdateError {
        self.set_phase(UpdatePhase::Failed { step, message: message.clone() });
        UpdateError::Failed { step, message }
    }

    /// Looks for a newer Perch. `quiet` (the checks Perch makes by itself) keeps a failure out
    /// of sight: a server that is down or a laptop offline is not worth a message, and the next
    /// check tries again.
    pub async fn check(&self, quiet: bool) -> Result<UpdateStatus, UpdateError> {
        let _busy = self.busy.lock().await;
        let before = self.lock().phase.clone();
        // A download in hand stays: checking again must not throw it away.
        if matches!(before, UpdatePhase::Ready { .. } | UpdatePhase::Installed) {
            return Ok(self.status());
        }
        self.set_phase(UpdatePhase::Checking);
        let found = self.releases.check().await;
        let now = chrono::Utc::now().timestamp_millis();
        match found {
            Ok(found) => {
                match &found {
                    Some(release) => {
                        tracing::info!(version = %release.offer().version, "an update is available")
                    }
                    None => tracing::info!("Perch is up to date"),
                }
                let phase = if found.is_some() { UpdatePhase::Available } else { UpdatePhase::UpToDate };
                {
                    let mut inner = self.lock();
                    inner.release = found;
                    inner.package = None;
                    inner.last_checked_ms = Some(now);
                }
                self.set_phase(phase);
                Ok(self.status())
            }
            Err(e) => {
                tracing::warn!(error = %e, quiet, "the update check failed");
                let message = words::describe(&e, UpdateStep::Check);
                if quiet {
                    let back =
                        if matches!(before, UpdatePhase::Checking) { UpdatePhase::Idle } else { before };
                    self.set_phase(back);
                    Err(UpdateError::Failed { step: UpdateStep::Check, message })
                } else {
                    Err(self.fail(UpdateStep::Check, message))
                }
            }
        }
    }

    /// Downloads the release on offer and verifies its signature. Where this copy cannot
    /// install it, the verified package is saved in the save folder.
    pub async fn download(&self) -> Result<UpdateStatus, UpdateError> {
        let _busy = self.busy.lock().await;
        let Some(release) = self.lock().release.clone() else {
            return Err(UpdateError::NothingToDownload);
        };
        let version = release.offer().version;
        self.set_phase(UpdatePhase::Downloading { received: 0, total: None });
        let mut received = 0u64;
        let mut last_sent = Instant::now();
        let mut progress = |chunk: usize, total: Option<u64>| {
            received += chunk as u64;
            if last_sent.elapsed() >= PROGRESS_EVERY {
                last_sent = Instant::now();
                self.set_phase(UpdatePhase::Downloading { received, total });
            }
        };
        let bytes = match release.download(&mut progress).await {
            Ok(bytes) => bytes,
            Err(e) => {
                tracing::warn!(error = %e, %version, "the update download failed or was refused");
                return Err(self.fail(UpdateStep::Download, words::describe(&e, UpdateStep::Download)));
            }
        };
        tracing::info!(%version, bytes = bytes.len(), "update downloaded and verified");
        let saved = match &self.route {
            InstallRoute::InPlace { .. } => None,
            InstallRoute::Manual { .. } => match self.save(&release, &bytes) {
                Ok(path) => Some(path.display().to_string()),
                Err(e) => {
                    let message =
                        format!("The update was downloaded and verified but could not be saved: {e}");
                    return Err(self.fail(UpdateStep::Download, message));
                }
            },
        };
        self.lock().package = Some(Arc::new(bytes));
        self.set_phase(UpdatePhase::Ready { install_on_quit: false, saved });
        Ok(self.status())
    }

    /// Installs the verified download now (the caller restarts Perch), or (`on_quit`) marks it
    /// to be installed when Perch quits.
    pub async fn install(&self, on_quit: bool) -> Result<UpdateStatus, UpdateError> {
        let _busy = self.busy.lock().await;
        if let InstallRoute::Manual { reason } = &self.route {
            return Err(UpdateError::CannotInstallHere(reason.clone()));
        }
        let (release, package, saved) = {
            let inner = self.lock();
            let saved = match &inner.phase {
                UpdatePhase::Ready { saved, .. } => saved.clone(),
                _ => None,
            };
            (inner.release.clone(), inner.package.clone(), saved)
        };
        let (Some(release), Some(package)) = (release, package) else {
            return Err(UpdateError::NotDownloaded);
        };
        if on_quit {
            self.lock().install_on_quit = true;
            self.set_phase(UpdatePhase::Ready { install_on_quit: true, saved });
            return Ok(self.status());
        }
        self.set_phase(UpdatePhase::Installing);
        let (installing, bytes) = (release.clone(), package.clone());
        // The password prompt waits for the user: never on an async worker.
        let result = tokio::task::spawn_blocking(move || installing.install(&bytes)).await;
        let error = match result {
            Ok(Ok(())) => {
                tracing::info!(version = %release.offer().version, "update installed");
                {
                    let mut inner = self.lock();
                    inner.package = None;
                    inner.install_on_quit = false;
                }
                self.set_phase(UpdatePhase::Installed);
                return Ok(self.status());
            }
            Ok(Err(e)) => (e.to_string(), words::describe(&e, UpdateStep::Install)),
            Err(e) => (e.to_string(), e.to_string()),
        };
        Err(self.install_failed(&release, &package, error))
    }

    /// A failed install keeps the verified package where the user can install it by hand.
    fn install_failed(
        &self,
        release: &R::Release,
        package: &[u8],
        (error, message): (String, String),
    ) -> UpdateError {
        tracing::warn!(%error, version = %release.offer().version, "the update could not be installed");
        let message = match self.save(release, package) {
            Ok(path) => {
                format!(
                    "{message} The verified package is saved at {}. {}",
                    path.display(),
                    how_to_install(&path)
                )
            }
            Err(_) => format!("{message} Download it from {RELEASES_PAGE} instead."),
        };
        self.fail(UpdateStep::Install, message)
    }

    /// Called as Perch exits: installs a download the user chose to install on quitting.
    pub fn install_at_exit(&self) {
        let (release, package) = {
            let inner = self.lock();
            if !inner.install_on_quit {
                return;
            }
            (inner.release.clone(), inner.package.clone())
        };
        if let (Some(release), Some(package)) = (release, package) {
            match release.install(&package) {
                Ok(()) => tracing::info!(version = %release.offer().version, "update installed at exit"),
                Err(e) => {
                    tracing::warn!(error = %e, "the update could not be installed at exit");
                    let _ = self.save(&release, &package);
                }
            }
        }
    }

    /// Writes the verified package to the save folder, named as the release names it.
    fn save(&self, release: &R::Release, bytes: &[u8]) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(&self.save_dir)?;
        let path = self.save_dir.join(package_name(&release.download_path(), &release.offer().version));
        let partial = path.with_extension("partial");
        std::fs::write(&partial, bytes)?;
        std::fs::rename(&partial, &path)?;
        Ok(path)
    }

    /// `perch update check|apply`: the same steps as the buttons, the user's command being the
    /// yes. Returns what to print, with the status it ended in.
    pub async fn for_command_line(&self, apply: bool) -> Result<(String, UpdateStatus), UpdateError> {
        // After this the phase is up to date, available, or a download already in hand.
        self.check(false).await?;
        let current = self.status();
        let Some(offer) = current.offer.clone() else {
            return Ok((format!("Perch {} is up to date.", current.current_version), current));
        };
        if !apply {
            let notes = offer.notes.as_deref().map(|n| format!("\n\n{n}")).unwrap_or_default();
            let message = format!(
                "Perch {} is available (this is {}). `perch update apply` installs it.{notes}",
                offer.version, current.current_version
            );
            return Ok((message, current));
        }
        if matches!(current.phase, UpdatePhase::Available) {
            self.download().await?;
        }
        let message = match (&self.route, self.status().phase) {
            (_, UpdatePhase::Installed) => {
                format!("Perch {} is installed. Restart Perch to use it.", offer.version)
            }
            (InstallRoute::InPlace { .. }, _) => {
                self.install(false).await?;
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
        Ok((message, self.status()))
    }
}
