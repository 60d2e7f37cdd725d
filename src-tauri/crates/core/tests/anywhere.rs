#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! Typing into another application through XTest, and taking and replacing its selected text,
//! on a real X server: Xvfb with openbox and a GTK text field (tests/support/text_field.py) that
//! has the focus. The typing code reads
//! `DISPLAY` from the environment, which a test cannot change for its own process safely, so
//! the outer test starts the display and the field, and runs the checks in a child process of
//! this same test binary.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{ChildStdout, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use perch_core::anywhere::{self, Focus};

#[path = "support/xvfb.rs"]
mod xvfb;
use xvfb::output as run;

const INNER: &str = "PERCH_ANYWHERE_TEST_INNER";
/// Accents, a dash, a check mark and Shift-level characters: typed through the map's own keys,
/// borrowed keycodes and Shift.
const SENTENCE: &str = "Héllo wörld — ✓ naïve, 100% OK!";

/// The field's lines, read on a thread.
fn lines(stdout: ChildStdout) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Runs the ignored test `name` of this binary on `display`, where the field (`field_pid`) is.
fn run_inner(name: &str, display: &str, field_pid: u32) {
    let status = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--ignored", "--nocapture", "--test-threads=1"])
        .env("DISPLAY", display)
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("XDG_SESSION_TYPE")
        .env(INNER, field_pid.to_string())
        .status()
        .unwrap();
    assert!(status.success(), "{name} on {display} failed (see the output above)");
}

/// Spare keycodes (no symbol at all), as `xmodmap -pke` lists them.
fn spare_keycodes(display: &str) -> usize {
    run(display, "xmodmap", &["-pke"]).unwrap().lines().filter(|l| l.trim_end().ends_with('=')).count()
}

#[test]
fn types_into_a_focused_gtk_field_on_a_real_x_server() {
    if std::env::var_os(INNER).is_some() {
        return; // the child runs the checks below
    }
    for tool in ["Xvfb", "openbox", "xdotool", "xmodmap"] {
        assert!(
            which::which(tool).is_ok(),
            "{tool} is missing: run `make deps` (scripts/setup-system.sh --test)"
        );
    }
    let (display, mut children) = xvfb::start(1280, 800);

    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../tests/support/text_field.py");
    let mut field = Command::new("/usr/bin/python3")
        .arg(&script)
        .arg("Perch test field")
        .env("DISPLAY", &display)
        .env("GDK_BACKEND", "x11")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the GTK text field (python3-gi: run `make deps`)");
    let said = lines(field.stdout.take().unwrap());
    let mut field_input = field.stdin.take().unwrap();
    let ready = said.recv_timeout(Duration::from_secs(20)).expect("the text field to show");
    let field_pid: u32 = ready.strip_prefix("ready ").unwrap().trim().parse().unwrap();
    children.0.push(field);
    let window = run(&display, "xdotool", &["search", "--sync", "--name", "^Perch test field$"]).unwrap();
    let window = window.lines().next().unwrap().to_owned();
    run(&display, "xdotool", &["windowactivate", "--sync", &window]).unwrap();
    let spare_before = spare_keycodes(&display);

    run_inner("inner_checks", &display, field_pid);

    // The field holds exactly the sentence, and every borrowed keycode was given back.
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut text = String::new();
    while Instant::now() < deadline && text != SENTENCE {
        if let Ok(line) = said.recv_timeout(Duration::from_millis(200)) {
            text = serde_json::from_str(line.strip_prefix("text ").unwrap_or("\"\"")).unwrap();
        }
    }
    assert_eq!(text, SENTENCE);
    assert_eq!(spare_keycodes(&display), spare_before, "borrowed keycodes are given back");

    // Act on the selection: the field's text selected, taken, and replaced by an answer.
    use std::io::Write;
    field_input.write_all(b"select-all\n").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    run_inner("inner_selection_checks", &display, field_pid);
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline && text != REPLACEMENT {
        if let Ok(line) = said.recv_timeout(Duration::from_millis(200)) {
            text = serde_json::from_str(line.strip_prefix("text ").unwrap_or("\"\"")).unwrap();
        }
    }
    assert_eq!(text, REPLACEMENT, "the answer took the selection's place");

    // Pasting (what typing falls back to) and copying (for applications without PRIMARY)
    // through the real clipboard, which is then given back.
    run_inner("inner_paste_checks", &display, field_pid);
    let pasted = format!("{REPLACEMENT}{PASTED}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline && text != pasted {
        if let Ok(line) = said.recv_timeout(Duration::from_millis(200)) {
            text = serde_json::from_str(line.strip_prefix("text ").unwrap_or("\"\"")).unwrap();
        }
    }
    assert_eq!(text, pasted, "the pasted text is in the field after the answer");
    field_input.write_all(b"select-all\n").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    run_inner("inner_copy_checks", &display, field_pid);
}

/// Pasted at the field's cursor, after the replacement.
const PASTED: &str = " — pasted ✓ naïvely";

#[test]
#[ignore = "run by types_into_a_focused_gtk_field_on_a_real_x_server on its own display"]
fn inner_paste_checks() {
    use anywhere::clipboard::{Board, SystemBoard};
    let mut board = SystemBoard::open().unwrap();
    board.set(Some("what the user had")).unwrap();
    assert_eq!(anywhere::paste_text(PASTED).unwrap(), PASTED.chars().count());
    assert_eq!(board.text().unwrap().as_deref(), Some("what the user had"), "the clipboard given back");
}

#[test]
#[ignore = "run by types_into_a_focused_gtk_field_on_a_real_x_server on its own display"]
fn inner_copy_checks() {
    use anywhere::clipboard::{Board, SystemBoard};
    let mut board = SystemBoard::open().unwrap();
    board.set(Some("copied before")).unwrap();
    let all = format!("{REPLACEMENT}{PASTED}");
    let copied = anywhere::copy_selection().unwrap();
    assert_eq!(copied.as_deref(), Some(all.as_str()));
    assert_eq!(board.text().unwrap().as_deref(), Some("copied before"), "the clipboard given back");

    // No client owns PRIMARY (taken away from the field): the selection shortcut asks the
    // focused application to copy, unless it is one Perch never types into, where it presses
    // nothing. (GTK deselects a field that loses PRIMARY, so here the copy finds nothing; the
    // copy itself is the one checked above.)
    let (conn, _) = xcb::Connection::connect(None).unwrap();
    let nobody = xcb::x::SetSelectionOwner {
        owner: xcb::x::WINDOW_NONE,
        selection: xcb::x::ATOM_PRIMARY,
        time: xcb::x::CURRENT_TIME,
    };
    conn.send_and_check_request(&nobody).unwrap();
    let refused = anywhere::take_selection(&["Perch-Test-Field".to_owned()]).unwrap_err();
    assert!(
        matches!(refused, anywhere::AnywhereError::NotCopiedFrom(ref app) if app == "Perch test field"),
        "{refused:?}"
    );
    assert_eq!(board.text().unwrap().as_deref(), Some("copied before"), "no copy was made");
    let nothing = anywhere::take_selection(&[]).unwrap_err();
    assert!(matches!(nothing, anywhere::AnywhereError::NothingSelected), "{nothing:?}");
    assert_eq!(board.text().unwrap().as_deref(), Some("copied before"), "the clipboard given back");
}

const REPLACEMENT: &str = "Hello world: a naïve fix.";

#[test]
#[ignore = "run by types_into_a_focused_gtk_field_on_a_real_x_server on its own display"]
fn inner_selection_checks() {
    let selection = anywhere::take_selection(&[]).unwrap();
    assert_eq!(selection.text, SENTENCE);
    assert_eq!(selection.app, "Perch test field");
    anywhere::replace_selection(&selection, REPLACEMENT).unwrap();
    // Once replaced, nothing is selected: a second replace refuses instead of typing at the cursor.
    assert!(matches!(anywhere::take_selection(&[]), Err(anywhere::AnywhereError::NothingSelected)));
    assert!(matches!(
        anywhere::replace_selection(&selection, "again"),
        Err(anywhere::AnywhereError::SelectionGone(_))
    ));
}

#[test]
#[ignore = "run by types_into_a_focused_gtk_field_on_a_real_x_server on its own display"]
fn inner_checks() {
    let field_pid: u32 = std::env::var(INNER).unwrap().parse().unwrap();
    assert_eq!(anywhere::typing_path().unwrap(), anywhere::TypingPath::XTest);
    // The field has the focus: for Perch it is another application, and for the field itself
    // (as if it were Perch) its own window.
    let Focus::Other(app) = anywhere::focus(std::process::id()).unwrap() else {
        panic!("the field has the focus")
    };
    assert_eq!(app.title, "Perch test field");
    assert!(app.class.iter().any(|c| c == "perch-test-field"), "{:?}", app.class);
    assert_eq!(anywhere::focus(field_pid).unwrap(), Focus::Perch);
    // On the never-type list (by its class, any case), nothing is typed: the outer test finds
    // the field holding exactly the sentence typed next.
    let never = ["Perch-Test-Field".to_owned()];
    assert!(matches!(
        anywhere::type_into_focused("a password", std::process::id(), &never),
        Err(anywhere::AnywhereError::NeverTypeInto(entry)) if entry == "Perch-Test-Field"
    ));
    assert_eq!(anywhere::type_into_focused("x", field_pid, &never).unwrap(), anywhere::Delivered::Perch);
    let typed = anywhere::type_into_focused(SENTENCE, std::process::id(), &["keepassxc".to_owned()]).unwrap();
    assert_eq!(
        typed,
        anywhere::Delivered::Typed { app: "Perch test field".into(), chars: SENTENCE.chars().count() }
    );
}
