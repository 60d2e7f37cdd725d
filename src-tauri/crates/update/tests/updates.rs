//! The update steps without a window: a releases side that answers as told (Tauri's updater
//! plugin is the real one; `tests/e2e/specs/update.test.js` drives it against a loopback
//! release server with a throwaway key), and the state the card and `perch update` see.
#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use perch_update::{
    InstallRoute, Release, ReleaseError, Releases, UpdateError, UpdateOffer, UpdatePhase, UpdateStatus,
    UpdateStep, Updates,
};

#[derive(Clone)]
struct FakeRelease {
    version: String,
    path: String,
    package: Vec<u8>,
    /// Chunks the download reports, with a pause before each.
    chunks: Vec<usize>,
    pause: Duration,
    download_fails: Option<ReleaseError>,
    install_fails: Option<ReleaseError>,
    /// The packages install was given.
    installed: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl FakeRelease {
    fn new(version: &str) -> Self {
        Self {
            version: version.into(),
            path: format!("/releases/download/v{version}/Perch_{version}_amd64.deb"),
            package: b"a signed package".to_vec(),
            chunks: vec![8, 8],
            pause: Duration::ZERO,
            download_fails: None,
            install_fails: None,
            installed: Arc::default(),
        }
    }
}

impl Release for FakeRelease {
    fn offer(&self) -> UpdateOffer {
        UpdateOffer { version: self.version.clone(), notes: Some("Faster.".into()), date: None }
    }
    fn download_path(&self) -> String {
        self.path.clone()
    }
    async fn download(
        &self,
        progress: &mut (dyn FnMut(usize, Option<u64>) + Send),
    ) -> Result<Vec<u8>, ReleaseError> {
        for chunk in &self.chunks {
            tokio::time::sleep(self.pause).await;
            progress(*chunk, Some(self.package.len() as u64));
        }
        match &self.download_fails {
            Some(e) => Err(e.clone()),
            None => Ok(self.package.clone()),
        }
    }
    fn install(&self, package: &[u8]) -> Result<(), ReleaseError> {
        if let Some(e) = &self.install_fails {
            return Err(e.clone());
        }
        self.installed.lock().unwrap().push(package.to_vec());
        Ok(())
    }
}

/// What the releases side answers next; the test keeps a handle to change it.
type Answer = Arc<Mutex<Result<Option<FakeRelease>, ReleaseError>>>;

struct FakeReleases(Answer);

impl Releases for FakeReleases {
    type Release = FakeRelease;
    async fn check(&self) -> Result<Option<FakeRelease>, ReleaseError> {
        self.0.lock().unwrap().clone()
    }
}

struct Setup {
    updates: Updates<FakeReleases>,
    answer: Answer,
    seen: Arc<Mutex<Vec<UpdatePhase>>>,
    dir: tempfile::TempDir,
}

fn setup(answer: Result<Option<FakeRelease>, ReleaseError>, route: InstallRoute) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let answer: Answer = Arc::new(Mutex::new(answer));
    let seen: Arc<Mutex<Vec<UpdatePhase>>> = Arc::default();
    let log = seen.clone();
    let on_change = Box::new(move |s: &UpdateStatus| log.lock().unwrap().push(s.phase.clone()));
    let updates =
        Updates::new(FakeReleases(answer.clone()), "0.1.0", route, dir.path().join("updates"), on_change);
    Setup { updates, answer, seen, dir }
}

fn in_place() -> InstallRoute {
    InstallRoute::InPlace { package: "deb".into() }
}

fn manual() -> InstallRoute {
    InstallRoute::Manual { reason: "This copy was built from source.".into() }
}

#[tokio::test]
async fn a_check_offers_the_newer_release_and_says_each_step() {
    let s = setup(Ok(Some(FakeRelease::new("0.2.0"))), in_place());
    let status = s.updates.check(false).await.unwrap();
    assert_eq!(status.phase, UpdatePhase::Available);
    assert_eq!(status.offer.unwrap().version, "0.2.0");
    assert!(status.last_checked_ms.is_some());
    assert_eq!(*s.seen.lock().unwrap(), vec![UpdatePhase::Checking, UpdatePhase::Available]);

    let none = setup(Ok(None), in_place());
    assert_eq!(none.updates.check(false).await.unwrap().phase, UpdatePhase::UpToDate);
}

#[tokio::test]
async fn a_quiet_check_that_fails_leaves_no_failure_on_the_card() {
    let s = setup(Ok(Some(FakeRelease::new("0.2.0"))), in_place());
    s.updates.check(true).await.unwrap();
    *s.updates_answer() = Err(ReleaseError::Network);
    let err = s.updates.check(true).await.unwrap_err();
    assert!(
        matches!(&err, UpdateError::Failed { step: UpdateStep::Check, message } if message.contains("Could not reach"))
    );
    assert_eq!(s.updates.status().phase, UpdatePhase::Available, "the offer found before stays");
    // Asked for ("Check now"), the same failure is shown.
    s.updates.check(false).await.unwrap_err();
    assert!(matches!(s.updates.status().phase, UpdatePhase::Failed { step: UpdateStep::Check, .. }));
}

impl Setup {
    fn updates_answer(&self) -> std::sync::MutexGuard<'_, Result<Option<FakeRelease>, ReleaseError>> {
        self.answer.lock().unwrap()
    }
}

#[tokio::test]
async fn a_download_reports_progress_and_survives_a_later_check() {
    let mut release = FakeRelease::new("0.2.0");
    release.pause = Duration::from_millis(250);
    let s = setup(Ok(Some(release)), in_place());
    s.updates.check(false).await.unwrap();
    let status = s.updates.download().await.unwrap();
    assert_eq!(status.phase, UpdatePhase::Ready { install_on_quit: false, saved: None });
    let seen = s.seen.lock().unwrap().clone();
    assert!(
        seen.iter()
            .any(|p| matches!(p, UpdatePhase::Downloading { received, total: Some(16) } if *received > 0)),
        "{seen:?}"
    );
    // The server now says nothing is newer: the verified download in hand is kept.
    *s.updates_answer() = Ok(None);
    assert!(matches!(s.updates.check(true).await.unwrap().phase, UpdatePhase::Ready { .. }));
    assert!(!s.dir.path().join("updates").exists(), "an in-place copy saves nothing");
}

#[tokio::test]
async fn steps_out_of_order_are_refused_with_the_next_step() {
    let s = setup(Ok(Some(FakeRelease::new("0.2.0"))), in_place());
    assert_eq!(s.updates.download().await.unwrap_err(), UpdateError::NothingToDownload);
    s.updates.check(false).await.unwrap();
    assert_eq!(s.updates.install(false).await.unwrap_err(), UpdateError::NotDownloaded);
}

#[tokio::test]
async fn a_download_without_perchs_signature_is_discarded() {
    let mut release = FakeRelease::new("0.2.0");
    release.download_fails = Some(ReleaseError::BadSignature);
    let s = setup(Ok(Some(release)), manual());
    s.updates.check(false).await.unwrap();
    let err = s.updates.download().await.unwrap_err();
    assert!(
        matches!(&err, UpdateError::Failed { step: UpdateStep::Download, message } if message.contains("signature"))
    );
    assert!(!s.dir.path().join("updates").exists(), "nothing unverified is saved");
    assert_eq!(
        s.updates.install(false).await.unwrap_err(),
        UpdateError::CannotInstallHere("This copy was built from source.".into())
    );
}

#[tokio::test]
async fn a_copy_that_cannot_replace_itself_saves_the_verified_package() {
    let s = setup(Ok(Some(FakeRelease::new("0.2.0"))), manual());
    s.updates.check(false).await.unwrap();
    let status = s.updates.download().await.unwrap();
    let saved = s.dir.path().join("updates/Perch_0.2.0_amd64.deb");
    assert_eq!(
        status.phase,
        UpdatePhase::Ready { install_on_quit: false, saved: Some(saved.display().to_string()) }
    );
    assert_eq!(std::fs::read(&saved).unwrap(), b"a signed package");
    assert!(matches!(s.updates.install(false).await.unwrap_err(), UpdateError::CannotInstallHere(_)));
}

#[tokio::test]
async fn a_failed_install_keeps_the_package_and_says_how_to_install_it() {
    let mut release = FakeRelease::new("0.2.0");
    release.install_fails = Some(ReleaseError::PasswordRefused);
    let s = setup(Ok(Some(release)), in_place());
    s.updates.check(false).await.unwrap();
    s.updates.download().await.unwrap();
    let UpdateError::Failed { step: UpdateStep::Install, message } =
        s.updates.install(false).await.unwrap_err()
    else {
        panic!("an install failure")
    };
    let saved: PathBuf = s.dir.path().join("updates/Perch_0.2.0_amd64.deb");
    assert!(message.contains("password was not given"), "{message}");
    assert!(message.contains(&format!("sudo apt install {}", saved.display())), "{message}");
    assert_eq!(std::fs::read(&saved).unwrap(), b"a signed package");
}

#[tokio::test]
async fn install_on_quit_waits_for_the_exit() {
    let release = FakeRelease::new("0.2.0");
    let installed = release.installed.clone();
    let s = setup(Ok(Some(release)), in_place());
    s.updates.check(false).await.unwrap();
    s.updates.download().await.unwrap();
    let status = s.updates.install(true).await.unwrap();
    assert!(matches!(status.phase, UpdatePhase::Ready { install_on_quit: true, .. }));
    assert!(installed.lock().unwrap().is_empty(), "nothing installed before quitting");
    s.updates.install_at_exit();
    assert_eq!(*installed.lock().unwrap(), vec![b"a signed package".to_vec()]);

    // Installed now instead: the package goes and the card says so.
    let release = FakeRelease::new("0.2.0");
    let s = setup(Ok(Some(release)), in_place());
    s.updates.check(false).await.unwrap();
    s.updates.download().await.unwrap();
    assert_eq!(s.updates.install(false).await.unwrap().phase, UpdatePhase::Installed);
    s.updates.install_at_exit();
}

#[tokio::test]
async fn the_command_line_checks_and_applies_with_the_same_steps() {
    let s = setup(Ok(None), in_place());
    assert_eq!(s.updates.for_command_line(true).await.unwrap().0, "Perch 0.1.0 is up to date.");

    let s = setup(Ok(Some(FakeRelease::new("0.2.0"))), in_place());
    let (said, status) = s.updates.for_command_line(false).await.unwrap();
    assert!(
        said.starts_with("Perch 0.2.0 is available (this is 0.1.0). `perch update apply` installs it."),
        "{said}"
    );
    assert!(said.ends_with("Faster."), "the notes follow: {said}");
    assert_eq!(status.phase, UpdatePhase::Available, "checking is not a yes to download");
    let (said, status) = s.updates.for_command_line(true).await.unwrap();
    assert_eq!(said, "Perch 0.2.0 is installed. Restart Perch to use it.");
    assert_eq!(status.phase, UpdatePhase::Installed);

    let s = setup(Ok(Some(FakeRelease::new("0.2.0"))), manual());
    let (said, _) = s.updates.for_command_line(true).await.unwrap();
    assert!(said.contains("This copy was built from source.") && said.contains("sudo apt install"), "{said}");
}
