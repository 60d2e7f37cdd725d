//! Typing on Wayland: the RemoteDesktop portal's keyboard against a fake portal speaking the
//! real interface on a real private D-Bus daemon (`support/remote_desktop.rs`), and the wtype
//! and ydotool typists against fake programs (real child processes) that record what they get.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use perch_typing::TypingError;
use perch_typing::wayland::{self, CommandTypist, PortalKeyboard};

use perch_test_support::poll;
use perch_test_support::portal;
use perch_test_support::remote_desktop;

use portal::{Dialog, PrivateBus};
use remote_desktop::{FakeRemoteDesktop, KEYBOARD, POINTER};

const WAIT: Duration = Duration::from_secs(10);

async fn open(
    bus: &PrivateBus,
    token: Option<&str>,
) -> Result<(PortalKeyboard, Option<String>), TypingError> {
    PortalKeyboard::open_on(&bus.connect().await, token).await
}

fn reason(e: TypingError) -> String {
    match e {
        TypingError::NoTypingPath(reason) => reason,
        other => panic!("expected NoTypingPath, got {other:?}"),
    }
}

#[tokio::test]
async fn each_character_is_a_keysym_pressed_and_released_in_order() {
    let bus = PrivateBus::start();
    let fake = FakeRemoteDesktop::start(&bus, KEYBOARD | POINTER, Dialog::Accept).await;
    let (keyboard, token) = open(&bus, None).await.unwrap();
    assert_eq!(token.as_deref(), Some("restore-1"));
    // Only the keyboard, remembered until revoked, and nothing to restore yet.
    let selected = fake.selected();
    assert_eq!(selected.len(), 1);
    assert_eq!(selected[0].types, Some(KEYBOARD));
    assert_eq!(selected[0].persist_mode, Some(2));
    assert_eq!(selected[0].restore_token, None);
    assert_eq!(fake.state().dialogs, 1);
    // A new session's keyboard is announced with a Shift press and release before any letter
    // (GNOME 43 lost the first letters without it).
    let opening = [(0xffe1, 1), (0xffe1, 0)];
    assert_eq!(fake.keys(), opening);

    let typed = keyboard.type_text("Hé, wörld ✓").await.unwrap();
    assert_eq!(typed, 11);
    // Latin-1 as itself, the rest as Unicode keysyms.
    let keysyms = [0x48, 0xe9, 0x2c, 0x20, 0x77, 0xf6, 0x72, 0x6c, 0x64, 0x20, 0x0100_2713];
    let expected: Vec<(i32, u32)> = keysyms.iter().flat_map(|&k| [(k, 1), (k, 0)]).collect();
    assert_eq!(fake.keys()[opening.len()..], expected);
    assert!(fake.state().keys.iter().all(|(session, _, _)| session == keyboard.session_handle()));

    // Control characters have no key, line breaks and tabs included: no Return or Tab is
    // ever pressed (text holding them is pasted).
    assert_eq!(keyboard.type_text("a\u{7}\t\nb\r").await.unwrap(), 2);
    assert_eq!(
        fake.keys()[opening.len() + expected.len()..].iter().step_by(2).map(|k| k.0).collect::<Vec<_>>(),
        [0x61, 0x62]
    );

    // Ctrl+V (a paste) and Ctrl+C (a copy): Control held around the letter.
    let before = fake.keys().len();
    keyboard.press_ctrl('v').await.unwrap();
    keyboard.press_ctrl('c').await.unwrap();
    assert_eq!(
        fake.keys()[before..],
        [(0xffe3, 1), (0x76, 1), (0x76, 0), (0xffe3, 0), (0xffe3, 1), (0x63, 1), (0x63, 0), (0xffe3, 0)]
    );
}

#[tokio::test]
async fn the_restore_token_reaches_the_next_session_and_spares_the_dialog() {
    let bus = PrivateBus::start();
    let fake = FakeRemoteDesktop::start(&bus, KEYBOARD, Dialog::Accept).await;
    let (first, token) = open(&bus, None).await.unwrap();
    let token = token.unwrap();
    let first_session = first.session_handle().to_owned();
    first.close().await;
    assert!(fake.is_closed(&first_session));

    let (second, next_token) = open(&bus, Some(&token)).await.unwrap();
    let state = fake.state();
    let selected = state.sessions[second.session_handle()].selected.clone().unwrap();
    assert_eq!(selected.restore_token.as_deref(), Some(token.as_str()));
    assert_eq!(selected.persist_mode, Some(2));
    assert_eq!(state.dialogs, 1, "a restored session asks the user nothing");
    // Each token works once: the next session needs the new one.
    assert_eq!(next_token.as_deref(), Some("restore-2"));
}

#[tokio::test]
async fn a_cancelled_dialog_says_so_types_nothing_and_closes_the_session() {
    let bus = PrivateBus::start();
    let fake = FakeRemoteDesktop::start(&bus, KEYBOARD, Dialog::Cancel).await;
    let error = reason(open(&bus, None).await.err().unwrap());
    assert!(error.contains("remote-desktop dialog was cancelled"), "{error}");
    assert!(error.contains("to be asked again"), "{error}");
    assert!(fake.keys().is_empty());
    let sessions: Vec<String> = fake.state().sessions.keys().cloned().collect();
    assert_eq!(sessions.len(), 1);
    poll::until("the session to be closed", WAIT, || async { fake.is_closed(&sessions[0]).then_some(()) })
        .await;
}

#[tokio::test]
async fn a_refusal_is_told_apart_from_a_cancel() {
    let bus = PrivateBus::start();
    let _fake = FakeRemoteDesktop::start(&bus, KEYBOARD, Dialog::Fail).await;
    let error = reason(open(&bus, None).await.err().unwrap());
    assert!(error.contains("the desktop refused"), "{error}");
}

#[tokio::test]
async fn without_a_portal_or_its_keyboard_the_reason_is_named() {
    let bus = PrivateBus::start();
    let conn = bus.connect().await;
    assert!(!wayland::portal_keyboard_available_on(&conn).await);
    let error = reason(open(&bus, None).await.err().unwrap());
    assert!(error.starts_with("this desktop offers no remote-desktop portal"), "{error}");
    let shown = TypingError::NoTypingPath(error).to_string();
    assert!(shown.starts_with("this desktop has no way for Perch to type"), "{shown}");

    let fake = FakeRemoteDesktop::start(&bus, POINTER, Dialog::Accept).await;
    assert!(!wayland::portal_keyboard_available_on(&conn).await);
    let error = reason(open(&bus, None).await.err().unwrap());
    assert!(error.contains("offers no keyboard"), "{error}");
    assert!(fake.state().sessions.is_empty(), "no session is opened without a keyboard");

    fake.state().available = KEYBOARD | POINTER;
    assert!(wayland::portal_keyboard_available_on(&conn).await);
}

#[tokio::test]
async fn dropping_the_keyboard_closes_its_session() {
    let bus = PrivateBus::start();
    let fake = FakeRemoteDesktop::start(&bus, KEYBOARD, Dialog::Accept).await;
    let (keyboard, _) = open(&bus, None).await.unwrap();
    let session = keyboard.session_handle().to_owned();
    assert!(!fake.is_closed(&session));
    drop(keyboard);
    poll::until("the session to be closed", WAIT, || async { fake.is_closed(&session).then_some(()) }).await;
}

#[tokio::test]
async fn a_session_the_desktop_ended_gives_a_clear_error() {
    let bus = PrivateBus::start();
    let fake = FakeRemoteDesktop::start(&bus, KEYBOARD, Dialog::Accept).await;
    let (keyboard, _) = open(&bus, None).await.unwrap();
    assert_eq!(keyboard.type_text("ok").await.unwrap(), 2);
    fake.end(keyboard.session_handle()).await;
    // Ended before the first key: nothing typed, so the caller may open a new session and type
    // it all (after some keys it must not, or the start would be typed twice).
    let error = keyboard.type_text("more").await.err().unwrap();
    assert!(matches!(error, TypingError::SessionEnded { typed: 0 }), "{error:?}");
    assert!(error.to_string().contains("stopped taking keys after 0 characters"), "{error}");
    assert_eq!(fake.keys().len(), 2 + 4, "the opening Shift and \"ok\"");
}

/// A fake `name` in a directory of its own: records its arguments (one a line) in `argv` and
/// its stdin in `stdin` beside itself, then runs `then` (shell).
fn fake_program(name: &str, then: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    let script = format!(
        "#!/bin/sh\nhere=$(dirname \"$0\")\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > \"$here/argv\"\ncat > \"$here/stdin\"\n{then}\n"
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, path)
}

/// Runs the typist. Another test thread forking while the script was open for writing can make
/// exec fail with ETXTBSY for a moment (a known race of writing then running a file in a
/// threaded process), so that one error is retried.
fn run(typist: CommandTypist, program: &Path, text: &str) -> Result<usize, TypingError> {
    for _ in 0..20 {
        match wayland::type_with_program(typist, program, text) {
            Err(TypingError::NoTypingPath(r)) if r.contains("Text file busy") => {
                std::thread::sleep(Duration::from_millis(50));
            }
            other => return other,
        }
    }
    panic!("{} stayed busy", program.display());
}

fn recorded(dir: &tempfile::TempDir, what: &str) -> Option<String> {
    std::fs::read_to_string(dir.path().join(what)).ok()
}

#[test]
fn wtype_gets_the_text_exactly_on_stdin_never_in_its_arguments() {
    let (dir, wtype) = fake_program("wtype", "exit 0");
    let text = "-n \"Hé\" 'wörld' ✓ $HOME `id` -- end";
    assert_eq!(run(CommandTypist::Wtype, &wtype, text).unwrap(), text.chars().count());
    assert_eq!(recorded(&dir, "argv").unwrap(), "-\n");
    assert_eq!(recorded(&dir, "stdin").unwrap(), text);

    // Control characters have no key and are left out: a line break (wtype would press
    // Return), a tab, a carriage return, a bell.
    assert_eq!(run(CommandTypist::Wtype, &wtype, "a\r\n\tb\u{7}").unwrap(), 2);
    assert_eq!(recorded(&dir, "stdin").unwrap(), "ab");
}

#[test]
fn ydotool_gets_ascii_text_from_stdin_and_refuses_what_it_cannot_type() {
    let (dir, ydotool) = fake_program("ydotool", "exit 0");
    let text = "-v --help \"quoted\" 'single' \\n $HOME done";
    assert_eq!(run(CommandTypist::Ydotool, &ydotool, text).unwrap(), text.chars().count());
    assert_eq!(recorded(&dir, "argv").unwrap(), "type\n--file=-\n");
    assert_eq!(recorded(&dir, "stdin").unwrap(), text);

    let (dir, ydotool) = fake_program("ydotool", "exit 0");
    let error = reason(run(CommandTypist::Ydotool, &ydotool, "Hé").err().unwrap());
    assert!(error.contains("ydotool types only ASCII characters, and the text holds 'é'"), "{error}");
    assert_eq!(recorded(&dir, "argv"), None, "ydotool was not run");
}

#[test]
fn ctrl_v_and_ctrl_c_are_pressed_in_each_programs_own_terms() {
    for (typist, name, letter, argv) in [
        (CommandTypist::Ydotool, "ydotool", 'v', "key\n29:1\n47:1\n47:0\n29:0\n"),
        (CommandTypist::Ydotool, "ydotool", 'c', "key\n29:1\n46:1\n46:0\n29:0\n"),
        (CommandTypist::Wtype, "wtype", 'v', "-M\nctrl\nv\n-m\nctrl\n"),
        (CommandTypist::Wtype, "wtype", 'c', "-M\nctrl\nc\n-m\nctrl\n"),
    ] {
        let (dir, program) = fake_program(name, "exit 0");
        let mut pressed = wayland::press_ctrl_with(typist, &program, letter);
        for _ in 0..20 {
            match &pressed {
                Err(TypingError::NoTypingPath(r)) if r.contains("Text file busy") => {
                    std::thread::sleep(Duration::from_millis(50));
                    pressed = wayland::press_ctrl_with(typist, &program, letter);
                }
                _ => break,
            }
        }
        pressed.unwrap();
        assert_eq!(recorded(&dir, "argv").unwrap(), argv, "{name} Ctrl+{letter}");
        assert_eq!(recorded(&dir, "stdin").unwrap(), "", "{name} is given no text");
    }
}

#[test]
fn a_failing_program_says_why_in_the_error() {
    let (_dir, wtype) =
        fake_program("wtype", "echo 'Compositor does not support the virtual keyboard protocol' >&2; exit 1");
    let error = reason(run(CommandTypist::Wtype, &wtype, "hello").err().unwrap());
    assert!(error.starts_with("wtype failed (exit status: 1)"), "{error}");
    assert!(error.contains("Compositor does not support the virtual keyboard protocol"), "{error}");

    // ydotool 1.x prints its socket errors on stdout.
    let (_dir, ydotool) = fake_program(
        "ydotool",
        "echo \"failed to connect socket '/tmp/.ydotool_socket': No such file or directory\"; exit 2",
    );
    let error = reason(run(CommandTypist::Ydotool, &ydotool, "hello").err().unwrap());
    assert!(error.contains("ydotool failed (exit status: 2)"), "{error}");
    assert!(error.contains("failed to connect socket"), "{error}");

    // A program that exits without reading its input is an error, not a hang.
    let big = "x".repeat(1 << 20);
    let quits = tempfile::tempdir().unwrap();
    let path = quits.path().join("wtype");
    std::fs::write(&path, "#!/bin/sh\necho 'gave up' >&2\nexit 3\n").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    let error = reason(run(CommandTypist::Wtype, &path, &big).err().unwrap());
    assert!(error.contains("gave up"), "{error}");

    let missing = Path::new("/nonexistent/wtype");
    let error = reason(run(CommandTypist::Wtype, missing, "hi").err().unwrap());
    assert!(error.starts_with("wtype could not be started"), "{error}");
}
