//! Global shortcuts through the XDG GlobalShortcuts portal, against a fake portal that speaks
//! the real interface on a real private D-Bus daemon (`support/portal.rs`).
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use perch_portals::shortcut_portal::{
    Assigned, PortalError, PortalShortcuts, SessionPlan, ShortcutEvent, ShortcutRequest, Standing,
};
use tokio::sync::mpsc;

use perch_test_support::poll;
use perch_test_support::portal;

use portal::{Dialog, FakePortal, PrivateBus};

const WAIT: Duration = Duration::from_secs(10);

fn screenshot() -> ShortcutRequest {
    ShortcutRequest {
        id: "screenshot".into(),
        description: "Take a screenshot for the next question".into(),
        accelerator: "Alt+Period".into(),
    }
}

async fn bind(
    bus: &PrivateBus,
    shortcuts: &[ShortcutRequest],
) -> (Result<PortalShortcuts, PortalError>, mpsc::UnboundedReceiver<ShortcutEvent>) {
    let conn = bus.connect().await;
    let (tx, rx) = mpsc::unbounded_channel();
    let result = PortalShortcuts::bind(&conn, shortcuts, move |event| {
        let _ = tx.send(event);
    })
    .await;
    (result, rx)
}

async fn next(rx: &mut mpsc::UnboundedReceiver<ShortcutEvent>) -> ShortcutEvent {
    tokio::time::timeout(WAIT, rx.recv()).await.expect("no shortcut event").expect("events ended")
}

/// The bind opened one session, and it is closed (the binding failed).
async fn the_one_session_closes(fake: &FakePortal) {
    let sessions: Vec<String> = fake.state().sessions.keys().cloned().collect();
    assert_eq!(sessions.len(), 1);
    poll::until("the session to be closed", WAIT, || async { fake.is_closed(&sessions[0]).then_some(()) })
        .await;
}

#[tokio::test]
async fn binding_offers_the_translated_trigger_and_reports_what_the_desktop_assigned() {
    let bus = PrivateBus::start();
    let fake = FakePortal::start(&bus, 1, Dialog::Accept).await;
    // The user picks another key in the desktop's dialog.
    fake.state().assign = Some("Super+S".into());
    let window = ShortcutRequest {
        id: "screenshot_window".into(),
        description: "Capture the focused window".into(),
        accelerator: "Alt+Shift+Period".into(),
    };
    let (binding, _rx) = bind(&bus, &[screenshot(), window]).await;
    let binding = binding.unwrap();

    let bound = fake.bound();
    assert_eq!(bound.len(), 2, "{bound:?}");
    assert_eq!(bound[0].0, binding.session().as_str());
    assert_eq!(bound[0].1.id, "screenshot");
    assert_eq!(bound[0].1.preferred_trigger, "ALT+period");
    assert_eq!(bound[0].1.description, "Take a screenshot for the next question");
    assert_eq!(bound[1].1.preferred_trigger, "ALT+SHIFT+period");
    let assigned = vec![
        Assigned { id: "screenshot".into(), trigger: Some("Super+S".into()) },
        Assigned { id: "screenshot_window".into(), trigger: Some("Super+S".into()) },
    ];
    assert_eq!(binding.assigned(), assigned);
    // ListShortcuts, through a Request of its own, gives the same.
    let mut listed = binding.list().await.unwrap();
    listed.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(listed, assigned);
}

#[tokio::test]
async fn activated_is_a_press_and_deactivated_a_release_of_that_session_only() {
    let bus = PrivateBus::start();
    let fake = FakePortal::start(&bus, 2, Dialog::Accept).await;
    let (first, mut events) = bind(&bus, &[screenshot()]).await;
    let first = first.unwrap();
    let talk = ShortcutRequest {
        id: "push_to_talk".into(),
        description: "Dictate".into(),
        accelerator: "F9".into(),
    };
    let (second, mut other_events) = bind(&bus, &[talk]).await;
    let second = second.unwrap();
    let session = first.session().to_string();

    fake.key(&session, "screenshot", true).await;
    assert_eq!(next(&mut events).await, ShortcutEvent::Pressed("screenshot".into()));
    fake.key(&session, "screenshot", false).await;
    assert_eq!(next(&mut events).await, ShortcutEvent::Released("screenshot".into()));

    // The other session hears only its own key.
    fake.key(second.session().as_str(), "push_to_talk", true).await;
    assert_eq!(next(&mut other_events).await, ShortcutEvent::Pressed("push_to_talk".into()));
    assert!(events.try_recv().is_err(), "the first session heard the second's key");

    // The user changes the trigger in the desktop's settings.
    fake.change(&session, "screenshot", "Ctrl+Alt+P").await;
    let changed = vec![Assigned { id: "screenshot".into(), trigger: Some("Ctrl+Alt+P".into()) }];
    assert_eq!(next(&mut events).await, ShortcutEvent::Changed(changed.clone()));
    assert_eq!(first.assigned(), changed);
}

#[tokio::test]
async fn a_cancelled_dialog_says_so_and_leaves_no_session_open() {
    let bus = PrivateBus::start();
    let fake = FakePortal::start(&bus, 1, Dialog::Cancel).await;
    let (result, _rx) = bind(&bus, &[screenshot()]).await;
    let error = result.err().unwrap();
    assert!(matches!(error, PortalError::Cancelled(_)), "{error:?}");
    assert!(error.to_string().contains("dialog was cancelled"), "{error}");
    the_one_session_closes(&fake).await;
}

#[tokio::test]
async fn a_refusal_is_told_apart_from_a_cancel() {
    let bus = PrivateBus::start();
    let _fake = FakePortal::start(&bus, 1, Dialog::Fail).await;
    let error = bind(&bus, &[screenshot()]).await.0.err().unwrap();
    assert!(matches!(error, PortalError::Refused(_)), "{error:?}");
    assert!(error.to_string().contains("refused to bind screenshot"), "{error}");
}

#[tokio::test]
async fn without_a_portal_the_message_points_to_the_desktop_settings() {
    let bus = PrivateBus::start();
    let error = bind(&bus, &[screenshot()]).await.0.err().unwrap();
    assert!(matches!(error, PortalError::NoPortal(_)), "{error:?}");
    let text = error.to_string();
    assert!(text.contains("does not offer the GlobalShortcuts portal"), "{text}");
    assert!(text.contains("cannot bind keys for the whole desktop itself"), "{text}");
}

#[tokio::test]
async fn an_old_portal_version_is_named() {
    let bus = PrivateBus::start();
    let fake = FakePortal::start(&bus, 0, Dialog::Accept).await;
    let error = bind(&bus, &[screenshot()]).await.0.err().unwrap();
    assert!(matches!(error, PortalError::OldVersion { found: 0 }), "{error:?}");
    assert!(error.to_string().contains("is version 0; Perch needs version 1"), "{error}");
    assert!(fake.state().sessions.is_empty(), "no session is opened on a portal too old");
}

#[tokio::test]
async fn an_accelerator_without_a_keysym_is_refused_before_the_desktop_is_asked() {
    let bus = PrivateBus::start();
    let fake = FakePortal::start(&bus, 1, Dialog::Accept).await;
    let odd = ShortcutRequest { accelerator: "Alt+Sparkle".into(), ..screenshot() };
    let error = bind(&bus, &[odd]).await.0.err().unwrap();
    assert!(matches!(error, PortalError::Trigger { .. }), "{error:?}");
    assert!(fake.state().sessions.is_empty());
}

#[tokio::test]
async fn dropping_the_binding_closes_its_session() {
    let bus = PrivateBus::start();
    let fake = FakePortal::start(&bus, 1, Dialog::Accept).await;
    let (binding, _rx) = bind(&bus, &[screenshot()]).await;
    let binding = binding.unwrap();
    let session = binding.session().to_string();
    assert!(!fake.is_closed(&session));
    drop(binding);
    poll::until("the session to be closed", WAIT, || async { fake.is_closed(&session).then_some(()) }).await;
}

fn screenshot_window() -> ShortcutRequest {
    ShortcutRequest {
        id: "screenshot_window".into(),
        description: "Capture the focused window".into(),
        accelerator: "Alt+Shift+Period".into(),
    }
}

/// KDE Plasma 5.27 answers BindShortcuts with success and an empty list, and binds nothing.
#[tokio::test]
async fn an_answer_assigning_nothing_is_not_bound_and_says_what_to_do() {
    let bus = PrivateBus::start();
    let fake = FakePortal::start(&bus, 1, Dialog::AssignNone).await;
    let (result, _rx) = bind(&bus, &[screenshot(), screenshot_window()]).await;
    let error = result.err().expect("an answer binding nothing was taken as bound");
    assert!(
        matches!(&error, PortalError::NotAssigned(ids) if ids == &["screenshot", "screenshot_window"]),
        "{error:?}"
    );
    let text = error.to_string();
    assert!(text.contains("did not assign a key to screenshot, screenshot window"), "{text}");
    assert!(text.contains("shortcut settings"), "{text}");
    the_one_session_closes(&fake).await;
}

#[tokio::test]
async fn a_partial_answer_reports_the_ids_left_unbound() {
    let bus = PrivateBus::start();
    let _fake = FakePortal::start(&bus, 1, Dialog::AssignOnly(&["screenshot"])).await;
    let (binding, _rx) = bind(&bus, &[screenshot(), screenshot_window()]).await;
    let binding = binding.unwrap();
    assert_eq!(binding.unassigned(), ["screenshot_window"]);
    assert_eq!(
        binding.assigned(),
        [Assigned { id: "screenshot".into(), trigger: Some("ALT+period".into()) }]
    );
}

/// The shell's flow without its window: the plan's one batch bound in one session, and the
/// desktop's answer (KDE Plasma 5.27's, empty or partial) settled back into it.
#[tokio::test]
async fn the_plan_binds_every_shortcut_in_one_session_and_falls_back_for_exactly_those_left_out() {
    let bus = PrivateBus::start();
    let fake = FakePortal::start(&bus, 1, Dialog::AssignOnly(&["screenshot"])).await;
    let mut plan = SessionPlan::default();
    plan.want(screenshot());
    plan.want(screenshot_window());
    let batch = plan.batch().unwrap();
    let (binding, _rx) = bind(&bus, &batch.shortcuts).await;
    let binding = binding.unwrap();
    assert_eq!(fake.state().sessions.len(), 1, "one session for all the shortcuts");
    let not_bound = plan.settle(batch.ticket, Ok(binding.unassigned())).unwrap();
    assert_eq!(not_bound.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), ["screenshot_window"]);
    assert_eq!(plan.standing("screenshot"), Some(&Standing::Bound));
    // Registered again unchanged (Settings saved): the session is kept.
    plan.want(screenshot());
    assert!(plan.batch().is_none());

    // Set again: asked again with the rest, and this time the desktop assigns nothing.
    fake.state().dialog = Dialog::AssignNone;
    plan.want(screenshot_window());
    let again = plan.batch().unwrap();
    assert_eq!(again.shortcuts.len(), 2);
    let error = bind(&bus, &again.shortcuts).await.0.err().unwrap();
    let not_bound = plan.settle(again.ticket, Err(&error)).unwrap();
    assert_eq!(not_bound.len(), 2);
    assert!(not_bound.iter().all(|(_, why)| why.contains("did not assign a key")), "{not_bound:?}");
}
