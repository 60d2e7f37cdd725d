//! Wayland screenshots through the XDG Screenshot portal, against a fake portal that speaks the
//! real interface on a real private D-Bus daemon (`support/screenshot.rs`): the picture it
//! gives, and each of its other answers in words the user can act on.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use perch_capture::CaptureError;
use perch_capture::portal::{PortalFailure, screenshot};

use perch_test_support::portal;
use perch_test_support::screenshot as fake;

use fake::{FakeScreenshot, Shot};
use portal::PrivateBus;

const WAIT: Duration = Duration::from_secs(10);

fn answered(result: Result<image::RgbaImage, PortalFailure>) -> CaptureError {
    match result {
        Err(PortalFailure::Answered(e)) => e,
        Err(other) => panic!("expected the portal's answer, got {other:?}"),
        Ok(image) => panic!("expected an error, got a {}x{} picture", image.width(), image.height()),
    }
}

#[tokio::test]
async fn the_portal_s_picture_is_read_and_its_scratch_file_deleted() {
    let bus = PrivateBus::start();
    let pixel = [10, 200, 30, 255];
    let fake = FakeScreenshot::start(&bus, Shot::Picture { width: 64, height: 48, pixel }).await;
    let image = screenshot(&bus.connect().await, WAIT).await.unwrap();
    assert_eq!(image.dimensions(), (64, 48));
    assert_eq!(image.get_pixel(63, 47).0, pixel);

    let state = fake.state();
    let options = &state.calls[0];
    assert!(!bool::try_from(&options["interactive"]).unwrap(), "no dialog asked for");
    assert!(options.contains_key("handle_token"));
    assert!(!state.files[0].exists(), "the portal's file in the temporary folder is left behind");
}

#[tokio::test]
async fn a_declined_screenshot_says_so_and_where_to_allow_it() {
    let bus = PrivateBus::start();
    let _fake = FakeScreenshot::start(&bus, Shot::Declined).await;
    let error = answered(screenshot(&bus.connect().await, WAIT).await);
    assert!(matches!(error, CaptureError::PortalDeclined), "{error:?}");
    let text = error.to_string();
    assert!(text.contains("declined to give Perch a screenshot"), "{text}");
    assert!(text.contains("privacy or app-permission settings"), "{text}");
    assert!(!text.contains("install xdg-desktop-portal"), "a portal that answered is installed: {text}");
}

#[tokio::test]
async fn a_failed_screenshot_names_the_portal_and_the_next_step() {
    let bus = PrivateBus::start();
    let _fake = FakeScreenshot::start(&bus, Shot::Failed).await;
    let error = answered(screenshot(&bus.connect().await, WAIT).await);
    assert!(matches!(error, CaptureError::PortalFailed(_)), "{error:?}");
    let text = error.to_string();
    assert!(text.contains("could not take the screenshot"), "{text}");
    assert!(text.contains("systemctl --user status xdg-desktop-portal"), "{text}");
}

#[tokio::test]
async fn a_portal_that_never_answers_ends_at_the_time_limit() {
    let bus = PrivateBus::start();
    let fake = FakeScreenshot::start(&bus, Shot::Never).await;
    let error = answered(screenshot(&bus.connect().await, Duration::from_secs(1)).await);
    assert!(matches!(error, CaptureError::PortalTimedOut { seconds: 1 }), "{error:?}");
    assert!(error.to_string().contains("did not answer within 1 s"), "{error}");
    assert_eq!(fake.state().calls.len(), 1);
}

#[tokio::test]
async fn no_portal_is_told_apart_from_a_refusal() {
    let bus = PrivateBus::start();
    match screenshot(&bus.connect().await, WAIT).await {
        Err(PortalFailure::Absent(reason)) => assert!(!reason.is_empty()),
        other => panic!("expected no portal, got {:?}", other.map(|i| i.dimensions())),
    }
}
