//! Typing into the focused X11 window through XTest (the server's own fake-input extension:
//! the keys arrive as if typed, in whatever window has the focus), and asking which window that
//! is. One connection per dictation.

use std::time::{Duration, Instant};

use xcb::Xid;
use xcb::x::{self, Window};
use xcb::xtest;

use super::TypingError;
use super::keys::{self, Keymap, Stroke};

/// The core protocol's event codes, which XTest's FakeInput takes as its type.
const KEY_PRESS: u8 = 2;
const KEY_RELEASE: u8 = 3;

/// Long enough for applications to read a changed keyboard map before its keys arrive.
const MAP_SETTLE: Duration = Duration::from_millis(40);
/// Long enough for the last keys to be read before their keycodes lose their symbols again.
const KEYS_SETTLE: Duration = Duration::from_millis(60);
/// How long to wait for the shortcut's keys to be let go before typing over them.
const RELEASE_WAIT: Duration = Duration::from_millis(1500);

fn x11(e: impl std::fmt::Display) -> TypingError {
    TypingError::X11(e.to_string())
}

struct Display {
    conn: xcb::Connection,
    root: Window,
}

fn open() -> Result<Display, TypingError> {
    let (conn, screen) = xcb::Connection::connect_with_extensions(None, &[xcb::Extension::Test], &[])
        .map_err(|e| {
            TypingError::X11(format!("the X server at DISPLAY did not answer, or has no XTest: {e}"))
        })?;
    let root = conn
        .get_setup()
        .roots()
        .nth(usize::try_from(screen).unwrap_or(0))
        .map(|s| s.root())
        .ok_or_else(|| TypingError::X11("the X server has no screen".into()))?;
    Ok(Display { conn, root })
}

impl Display {
    fn atom(&self, name: &str) -> Result<x::Atom, TypingError> {
        self.intern(name, true)
    }

    /// An atom, made if the server does not know it yet.
    fn atom_made(&self, name: &str) -> Result<x::Atom, TypingError> {
        self.intern(name, false)
    }

    fn intern(&self, name: &str, only_if_exists: bool) -> Result<x::Atom, TypingError> {
        let request = x::InternAtom { only_if_exists, name: name.as_bytes() };
        Ok(self.conn.wait_for_reply(self.conn.send_request(&request)).map_err(x11)?.atom())
    }

    /// Whether the client that made `window` owns PRIMARY (has text selected): one client's
    /// windows share the id bits outside the resource mask.
    fn owns_primary(&self, window: u32) -> Result<bool, TypingError> {
        let owner = self.primary_owner()?;
        let mask = self.conn.get_setup().resource_id_mask();
        Ok(owner != 0 && owner & !mask == window & !mask)
    }

    /// The window owning PRIMARY, 0 for none.
    fn primary_owner(&self) -> Result<u32, TypingError> {
        let request = x::GetSelectionOwner { selection: x::ATOM_PRIMARY };
        Ok(self.conn.wait_for_reply(self.conn.send_request(&request)).map_err(x11)?.owner().resource_id())
    }

    /// A window's property of `type`, at most `longs` 32-bit units of it; `None` on an error.
    fn property(
        &self,
        window: Window,
        property: x::Atom,
        r#type: x::Atom,
        longs: u32,
    ) -> Option<x::GetPropertyReply> {
        let request =
            x::GetProperty { delete: false, window, property, r#type, long_offset: 0, long_length: longs };
        self.conn.wait_for_reply(self.conn.send_request(&request)).ok()
    }

    fn cardinal(&self, window: Window, property: x::Atom, r#type: x::Atom) -> Option<u32> {
        self.property(window, property, r#type, 1)?.value::<u32>().first().copied()
    }

    /// A window's title (`_NET_WM_NAME`, else `WM_NAME`), empty when it has none.
    fn title(&self, window: Window) -> String {
        let read = |property: x::Atom, r#type: x::Atom| {
            let reply = self.property(window, property, r#type, 256)?;
            let text = String::from_utf8_lossy(reply.value::<u8>()).into_owned();
            (!text.is_empty()).then_some(text)
        };
        let utf8 = self.atom("UTF8_STRING").ok();
        let net = self.atom("_NET_WM_NAME").ok();
        net.zip(utf8)
            .and_then(|(n, u)| read(n, u))
            .or_else(|| read(x::ATOM_WM_NAME, x::ATOM_STRING))
            .unwrap_or_default()
    }

    /// A window's `WM_CLASS`: its instance and class names ("keepassxc", "KeePassXC").
    fn class(&self, window: Window) -> Vec<String> {
        let Some(reply) = self.property(window, x::ATOM_WM_CLASS, x::ATOM_STRING, 64) else {
            return Vec::new();
        };
        reply
            .value::<u8>()
            .split(|b| *b == 0)
            .filter(|name| !name.is_empty())
            .map(|name| String::from_utf8_lossy(name).into_owned())
            .collect()
    }

    fn application(&self, window: Window) -> super::Application {
        super::Application {
            class: self.class(window),
            title: self.title(window),
            window: window.resource_id(),
        }
    }

    /// Whether `meant` (when given) is the active window: keys go to whichever window is.
    fn focus_is(&self, meant: Option<u32>) -> Result<(), TypingError> {
        match meant {
            Some(meant) if self.active_window()?.is_none_or(|(w, _)| w.resource_id() != meant) => {
                Err(TypingError::FocusMoved)
            }
            _ => Ok(()),
        }
    }

    /// The window the desktop says is active (`_NET_ACTIVE_WINDOW`), with its process id.
    fn active_window(&self) -> Result<Option<(Window, Option<u32>)>, TypingError> {
        let active = self.atom("_NET_ACTIVE_WINDOW")?;
        let pid = self.atom("_NET_WM_PID")?;
        let Some(id) = self.cardinal(self.root, active, x::ATOM_WINDOW).filter(|id| *id != 0) else {
            return Ok(None);
        };
        // A stale id only makes the requests below fail.
        let window = xcb::XidNew::new(id);
        Ok(Some((window, self.cardinal(window, pid, x::ATOM_CARDINAL))))
    }

    fn keymap(&self) -> Result<Keymap, TypingError> {
        let setup = self.conn.get_setup();
        let (min, max) = (setup.min_keycode(), setup.max_keycode());
        let reply = self
            .conn
            .wait_for_reply(
                self.conn.send_request(&x::GetKeyboardMapping { first_keycode: min, count: max - min + 1 }),
            )
            .map_err(x11)?;
        Ok(Keymap {
            min_keycode: min,
            keysyms_per_keycode: usize::from(reply.keysyms_per_keycode()),
            keysyms: reply.keysyms().to_vec(),
        })
    }

    /// Keycodes held down now.
    fn pressed(&self) -> Result<Vec<u8>, TypingError> {
        let reply = self.conn.wait_for_reply(self.conn.send_request(&x::QueryKeymap {})).map_err(x11)?;
        Ok(reply
            .keys()
            .iter()
            .enumerate()
            .flat_map(|(byte, bits)| {
                (0..8).filter(move |bit| bits & (1 << bit) != 0).map(move |bit| byte * 8 + bit)
            })
            .filter_map(|code| u8::try_from(code).ok())
            .collect())
    }

    fn caps_lock(&self) -> Result<bool, TypingError> {
        let reply = self
            .conn
            .wait_for_reply(self.conn.send_request(&x::QueryPointer { window: self.root }))
            .map_err(x11)?;
        Ok(reply.mask().contains(x::KeyButMask::LOCK))
    }

    fn key(&self, keycode: u8, down: bool) {
        self.conn.send_request(&xtest::FakeInput {
            r#type: if down { KEY_PRESS } else { KEY_RELEASE },
            detail: keycode,
            time: x::CURRENT_TIME,
            root: self.root,
            root_x: 0,
            root_y: 0,
            deviceid: 0,
        });
    }

    fn set_keysym(&self, keycode: u8, keysym: u32, per: u8) {
        let mut syms = vec![0u32; usize::from(per.max(2))];
        syms[0] = keysym;
        syms[1] = keysym;
        self.conn.send_request(&x::ChangeKeyboardMapping {
            keycode_count: 1,
            first_keycode: keycode,
            keysyms_per_keycode: per.max(2),
            keysyms: &syms,
        });
    }

    /// Waits until every request so far has been handled.
    fn sync(&self) -> Result<(), TypingError> {
        self.conn.wait_for_reply(self.conn.send_request(&x::GetInputFocus {})).map(|_| ()).map_err(x11)
    }
}

/// What `primary_selection` found: the text and the window (of the focused application) it
/// was selected in.
pub struct Primary {
    pub text: String,
    pub window: u32,
    pub title: String,
}

/// The text selected in the focused application: X11's PRIMARY selection, taken only when the
/// focused application owns it (a selection left in another window is stale), as UTF-8, at most
/// `limit` bytes.
pub fn primary_selection(limit: usize) -> Result<Primary, TypingError> {
    let d = open()?;
    let Some((focused, _)) = d.active_window()? else { return Err(TypingError::NoFocus) };
    if !d.owns_primary(focused.resource_id())? {
        return Err(TypingError::NothingSelected);
    }
    let requestor: Window = d.conn.generate_id();
    d.conn
        .send_and_check_request(&x::CreateWindow {
            depth: x::COPY_FROM_PARENT as u8,
            wid: requestor,
            parent: d.root,
            x: 0,
            y: 0,
            width: 1,
            height: 1,
            border_width: 0,
            class: x::WindowClass::InputOnly,
            visual: x::COPY_FROM_PARENT,
            value_list: &[],
        })
        .map_err(x11)?;
    let result = read_selection(&d, requestor, limit);
    d.conn.send_request(&x::DestroyWindow { window: requestor });
    let _ = d.conn.flush();
    Ok(Primary { text: result?, window: focused.resource_id(), title: d.title(focused) })
}

fn read_selection(d: &Display, requestor: Window, limit: usize) -> Result<String, TypingError> {
    let (utf8, property, incr) = (d.atom("UTF8_STRING")?, d.atom_made("PERCH_SELECTION")?, d.atom("INCR")?);
    d.conn.send_request(&x::ConvertSelection {
        requestor,
        selection: x::ATOM_PRIMARY,
        target: utf8,
        property,
        time: x::CURRENT_TIME,
    });
    d.conn.flush().map_err(x11)?;
    let deadline = Instant::now() + Duration::from_secs(2);
    let answered = loop {
        match d.conn.poll_for_event().map_err(x11)? {
            Some(xcb::Event::X(x::Event::SelectionNotify(e))) if e.requestor() == requestor => {
                break e.property();
            }
            Some(_) => continue,
            None if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            None => {
                return Err(TypingError::X11("the application with the selection did not answer".into()));
            }
        }
    };
    if answered == x::ATOM_NONE {
        return Err(TypingError::NotText);
    }
    let longs = u32::try_from(limit / 4 + 1).unwrap_or(u32::MAX);
    let reply = d
        .conn
        .wait_for_reply(d.conn.send_request(&x::GetProperty {
            delete: true,
            window: requestor,
            property,
            r#type: x::ATOM_ANY,
            long_offset: 0,
            long_length: longs,
        }))
        .map_err(x11)?;
    // A large selection comes in pieces (INCR), its size announced first: more than Perch takes.
    if reply.r#type() == incr {
        let bytes = reply.value::<u32>().first().copied().map_or(0, u64::from);
        return Err(TypingError::SelectionTooLarge { bytes, limit: limit as u64 });
    }
    let value = reply.value::<u8>();
    if value.len() > limit || reply.bytes_after() > 0 {
        let bytes = (value.len() as u64) + u64::from(reply.bytes_after());
        return Err(TypingError::SelectionTooLarge { bytes, limit: limit as u64 });
    }
    String::from_utf8(value.to_vec()).map_err(|_| TypingError::NotText)
}

/// Asks the window manager to activate `window` and waits (up to 2 s) until it has.
pub fn activate(window: u32) -> Result<(), TypingError> {
    let d = open()?;
    let target: Window = xcb::XidNew::new(window);
    let active = d.atom("_NET_ACTIVE_WINDOW")?;
    // Source 2: a pager or a tool acting for the user, which window managers obey.
    let event = x::ClientMessageEvent::new(
        target,
        active,
        x::ClientMessageData::Data32([2, x::CURRENT_TIME, 0, 0, 0]),
    );
    d.conn
        .send_and_check_request(&x::SendEvent {
            propagate: false,
            destination: x::SendEventDest::Window(d.root),
            event_mask: x::EventMask::SUBSTRUCTURE_REDIRECT | x::EventMask::SUBSTRUCTURE_NOTIFY,
            event: &event,
        })
        .map_err(x11)?;
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        if d.active_window()?.is_some_and(|(w, _)| w.resource_id() == window) {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(TypingError::X11("the window manager did not bring the application back".into()));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether the focused application still owns PRIMARY (its selection is still there).
pub fn still_selected(window: u32) -> Result<bool, TypingError> {
    open()?.owns_primary(window)
}

/// Whether the X server answers and offers XTest.
pub fn check() -> Result<(), TypingError> {
    open().map(|_| ())
}

/// The focused window's application and process id: `None` when no window has the focus.
pub fn focused_window() -> Result<Option<(super::Application, Option<u32>)>, TypingError> {
    let d = open()?;
    Ok(d.active_window()?.map(|(window, pid)| (d.application(window), pid)))
}

/// The application of `window` (an X id), as its properties name it now.
pub fn application(window: u32) -> Result<super::Application, TypingError> {
    let d = open()?;
    Ok(d.application(xcb::XidNew::new(window)))
}

/// Whether any client owns PRIMARY: with none, the focused application may be one that never
/// publishes its selection there (rather than one with nothing selected).
pub fn primary_has_owner() -> Result<bool, TypingError> {
    Ok(open()?.primary_owner()? != 0)
}

/// The shortcut that ended the dictation may still be held: keys typed now would become
/// Ctrl+Alt+letter. Waits for it to be let go, then lets go of anything still down.
fn let_go(d: &Display) -> Result<(), TypingError> {
    let deadline = Instant::now() + RELEASE_WAIT;
    let mut held = d.pressed()?;
    while !held.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        held = d.pressed()?;
    }
    for code in held {
        d.key(code, false);
    }
    Ok(())
}

/// Presses Ctrl+`letter` in the focused window (Ctrl+V pastes, Ctrl+C copies), if it is
/// `into` (when given).
pub fn press_ctrl(letter: char, into: Option<u32>) -> Result<(), TypingError> {
    let d = open()?;
    let_go(&d)?;
    d.focus_is(into)?;
    let keymap = d.keymap()?;
    let control = keymap.plain_keycode(keys::XK_CONTROL_L);
    let key = keys::keysym_of(letter).and_then(|k| keymap.plain_keycode(k));
    let (Some(control), Some(key)) = (control, key) else {
        return Err(TypingError::X11(format!("the keyboard map has no Ctrl or {letter} key")));
    };
    d.key(control, true);
    d.key(key, true);
    d.key(key, false);
    d.key(control, false);
    d.sync()
}

/// Types `text` into the focused window; returns how many characters were typed. `into`: the
/// window the keys are meant for (checked once the shortcut's keys are let go, which may take a
/// moment: the focus may have moved meanwhile, to a window that must not get them).
pub fn type_text(text: &str, into: Option<u32>) -> Result<usize, TypingError> {
    let d = open()?;
    let_go(&d)?;
    d.focus_is(into)?;
    let keymap = d.keymap()?;
    let plan = keys::plan(text, &keymap, d.caps_lock()?).ok_or(TypingError::NoSpareKeys)?;
    let shift = keymap.shift_keycode();
    let per = u8::try_from(keymap.keysyms_per_keycode).unwrap_or(2);
    let mut typed = 0;
    for batch in &plan.batches {
        // Whatever happens below, borrowed keycodes are given back.
        let restore = Restore { display: &d, keycodes: batch.remaps.iter().map(|(c, _)| *c).collect(), per };
        for (code, keysym) in &batch.remaps {
            d.set_keysym(*code, *keysym, per);
        }
        if !batch.remaps.is_empty() {
            d.sync()?;
            std::thread::sleep(MAP_SETTLE);
        }
        for Stroke { keycode, shift: shifted } in &batch.strokes {
            let shift = shift.filter(|_| *shifted);
            if let Some(s) = shift {
                d.key(s, true);
            }
            d.key(*keycode, true);
            d.key(*keycode, false);
            if let Some(s) = shift {
                d.key(s, false);
            }
            typed += 1;
        }
        d.sync()?;
        if !batch.remaps.is_empty() {
            std::thread::sleep(KEYS_SETTLE);
        }
        drop(restore);
    }
    Ok(typed)
}

struct Restore<'a> {
    display: &'a Display,
    keycodes: Vec<u8>,
    per: u8,
}

impl Drop for Restore<'_> {
    fn drop(&mut self) {
        for code in &self.keycodes {
            self.display.set_keysym(*code, 0, self.per);
        }
        if let Err(e) = self.display.sync() {
            tracing::warn!(error = %e, "could not give back the borrowed keycodes");
        }
    }
}
