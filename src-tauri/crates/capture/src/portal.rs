//! The screen on Wayland through the desktop's Screenshot portal
//! (`org.freedesktop.portal.Screenshot.Screenshot`, non-interactive), Perch's own call rather
//! than xcap's, so that the portal's answer reaches the user and the wait has a limit:
//! - 0: the results' `uri` names a PNG the backend wrote (KDE and wlroots in the temporary
//!   folder, GNOME in the user's Pictures). The specification does not say whose the file is,
//!   so Perch deletes it only where it is clearly a scratch file: in the temporary folder;
//! - 1: the user, or the desktop on the user's behalf (a stored "deny", KDE Plasma 5.27 for
//!   any application it does not trust), declined;
//! - 2: the backend failed;
//! - no answer within [`SCREENSHOT_WAIT`]: a dialog left open, or a hung backend.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use image::RgbaImage;
use zbus::Connection;
use zbus::zvariant::{OwnedObjectPath, Value};

use super::CaptureError;
use perch_portals::portal::{Answer, CallError, request};

/// How long a screenshot waits for the portal: long enough for a user to answer the desktop's
/// permission dialog, short enough that a hung backend does not leave Perch waiting for ever.
pub const SCREENSHOT_WAIT: Duration = Duration::from_secs(45);

#[zbus::proxy(
    interface = "org.freedesktop.portal.Screenshot",
    default_service = "org.freedesktop.portal.Desktop",
    default_path = "/org/freedesktop/portal/desktop"
)]
trait Screenshot {
    fn screenshot(
        &self,
        parent_window: &str,
        options: HashMap<&str, Value<'_>>,
    ) -> zbus::Result<OwnedObjectPath>;
}

/// Why the portal gave no screenshot: none there (other ways may still work), or its answer.
#[derive(Debug)]
pub enum PortalFailure {
    /// No session bus, or no Screenshot portal on it.
    Absent(String),
    /// The portal answered, or failed to: the error for the user.
    Answered(CaptureError),
}

/// The whole desktop, as the portal on the user's session bus gives it. Blocks: call it from
/// a blocking thread (it runs the bus exchange on a runtime of its own).
pub fn screenshot_on_session_bus() -> Result<RgbaImage, PortalFailure> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(|e| PortalFailure::Answered(CaptureError::Backend(format!("no async runtime: {e}"))))?;
    runtime.block_on(async {
        let conn = Connection::session()
            .await
            .map_err(|e| PortalFailure::Absent(format!("no D-Bus session bus ({e})")))?;
        screenshot(&conn, SCREENSHOT_WAIT).await
    })
}

/// The whole desktop from the Screenshot portal on `conn`, waiting at most `wait`.
pub async fn screenshot(conn: &Connection, wait: Duration) -> Result<RgbaImage, PortalFailure> {
    let portal = ScreenshotProxy::new(conn).await.map_err(|e| PortalFailure::Absent(e.to_string()))?;
    let call = request::call(conn, |handle_token| {
        let options = HashMap::from([
            ("handle_token", Value::from(handle_token)),
            ("interactive", Value::from(false)),
            ("modal", Value::from(true)),
        ]);
        async move { portal.screenshot("", options).await }
    });
    let answered = PortalFailure::Answered;
    match tokio::time::timeout(wait, call).await {
        Err(_) => Err(answered(CaptureError::PortalTimedOut { seconds: wait.as_secs().max(1) })),
        Ok(Err(CallError::NoBus(m) | CallError::NoPortal(m))) => Err(PortalFailure::Absent(m)),
        Ok(Err(e)) => Err(answered(CaptureError::PortalFailed(e.to_string()))),
        Ok(Ok(Answer::Cancelled)) => Err(answered(CaptureError::PortalDeclined)),
        Ok(Ok(Answer::Ended)) => Err(answered(CaptureError::PortalFailed(
            "it answered that the screenshot could not be taken".into(),
        ))),
        Ok(Ok(Answer::Success(results))) => {
            let uri = results.get("uri").and_then(|v| <&str>::try_from(&**v).ok()).unwrap_or_default();
            read_screenshot(uri).map_err(answered)
        }
    }
}

/// The picture at `uri`, deleted afterwards if it is a scratch file.
fn read_screenshot(uri: &str) -> Result<RgbaImage, CaptureError> {
    let failed = CaptureError::PortalFailed;
    let path: PathBuf = url::Url::parse(uri)
        .ok()
        .filter(|u| u.scheme() == "file")
        .and_then(|u| u.to_file_path().ok())
        .ok_or_else(|| failed(format!("it gave {uri:?} instead of a screenshot file")))?;
    let image = image::open(&path).map(|i| i.to_rgba8());
    if is_scratch(&path) {
        let _ = std::fs::remove_file(&path);
    }
    image.map_err(|e| failed(format!("its screenshot {} could not be read ({e})", path.display())))
}

/// Whether `path` is in the temporary folder, where a backend writes what no one keeps.
fn is_scratch(path: &Path) -> bool {
    let temp = std::env::temp_dir();
    let temp = temp.canonicalize().unwrap_or(temp);
    path.parent().and_then(|p| p.canonicalize().ok()).is_some_and(|dir| dir.starts_with(&temp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_files_in_the_temporary_folder_are_scratch() {
        let dir = tempfile::tempdir().unwrap();
        assert!(is_scratch(&dir.path().join("shot.png")));
        assert!(!is_scratch(Path::new("/home/someone/Pictures/Screenshot.png")));
    }

    #[test]
    fn a_uri_that_is_not_a_file_is_said() {
        let error = read_screenshot("https://example.com/shot.png").unwrap_err();
        assert!(error.to_string().contains("instead of a screenshot file"), "{error}");
    }
}
