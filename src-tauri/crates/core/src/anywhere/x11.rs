//! Typing into the focused X11 window through XTest (the server's own fake-input extension:
//! the keys arrive as if typed, in whatever window has the focus), and asking which window that
//! is. One connection per dictation.

use std::time::{Duration, Instant};

use xcb::x::{self, Window};
use xcb::xtest;

use super::AnywhereError;
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

fn x11(e: impl std::fmt::Display) -> AnywhereError {
    AnywhereError::X11(e.to_string())
}

struct Display {
    conn: xcb::Connection,
    root: Window,
}

fn open() -> Result<Display, AnywhereError> {
    let (conn, screen) = xcb::Connection::connect_with_extensions(None, &[xcb::Extension::Test], &[])
        .map_err(|e| {
            AnywhereError::X11(format!("the X server at DISPLAY did not answer, or has no XTest: {e}"))
        })?;
    let root = conn
        .get_setup()
        .roots()
        .nth(usize::try_from(screen).unwrap_or(0))
        .map(|s| s.root())
        .ok_or_else(|| AnywhereError::X11("the X server has no screen".into()))?;
    Ok(Display { conn, root })
}

impl Display {
    fn atom(&self, name: &str) -> Result<x::Atom, AnywhereError> {
        let reply = self
            .conn
            .wait_for_reply(
                self.conn.send_request(&x::InternAtom { only_if_exists: true, name: name.as_bytes() }),
            )
            .map_err(x11)?;
        Ok(reply.atom())
    }

    fn cardinal(&self, window: Window, property: x::Atom, r#type: x::Atom) -> Option<u32> {
        let reply = self
            .conn
            .wait_for_reply(self.conn.send_request(&x::GetProperty {
                delete: false,
                window,
                property,
                r#type,
                long_offset: 0,
                long_length: 1,
            }))
            .ok()?;
        reply.value::<u32>().first().copied()
    }

    /// The window the desktop says is active (`_NET_ACTIVE_WINDOW`), with its process id.
    fn active_window(&self) -> Result<Option<(Window, Option<u32>)>, AnywhereError> {
        let active = self.atom("_NET_ACTIVE_WINDOW")?;
        let pid = self.atom("_NET_WM_PID")?;
        let Some(id) = self.cardinal(self.root, active, x::ATOM_WINDOW).filter(|id| *id != 0) else {
            return Ok(None);
        };
        // A stale id only makes the requests below fail.
        let window = xcb::XidNew::new(id);
        Ok(Some((window, self.cardinal(window, pid, x::ATOM_CARDINAL))))
    }

    fn keymap(&self) -> Result<Keymap, AnywhereError> {
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
    fn pressed(&self) -> Result<Vec<u8>, AnywhereError> {
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

    fn caps_lock(&self) -> Result<bool, AnywhereError> {
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
    fn sync(&self) -> Result<(), AnywhereError> {
        self.conn.wait_for_reply(self.conn.send_request(&x::GetInputFocus {})).map(|_| ()).map_err(x11)
    }
}

/// Whether the X server answers and offers XTest.
pub fn check() -> Result<(), AnywhereError> {
    open().map(|_| ())
}

/// Whose window has the focus: `None` when no window does, else its process id (when it says).
pub fn focused_process() -> Result<Option<Option<u32>>, AnywhereError> {
    Ok(open()?.active_window()?.map(|(_, pid)| pid))
}

/// Types `text` into the focused window; returns how many characters were typed.
pub fn type_text(text: &str) -> Result<usize, AnywhereError> {
    let d = open()?;
    // The shortcut that ended the dictation may still be held: keys typed now would become
    // Ctrl+Alt+letter. Wait for it to be let go, then let go of anything still down.
    let deadline = Instant::now() + RELEASE_WAIT;
    let mut held = d.pressed()?;
    while !held.is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        held = d.pressed()?;
    }
    for code in held {
        d.key(code, false);
    }
    let keymap = d.keymap()?;
    let plan = keys::plan(text, &keymap, d.caps_lock()?).ok_or(AnywhereError::NoSpareKeys)?;
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
