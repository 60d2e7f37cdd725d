//! The typing plan: which key presses type a text on the current keyboard map, and which spare
//! keycodes must first be given the characters the map lacks. Pure, so it is tested without an
//! X server.
//!
//! A character the map has at level 1 or 2 (Shift) is typed with its own key. Any other one is
//! put on a spare keycode (one with no symbols, as xdotool and enigo do) as `[ks, ks]`, so no
//! level or case rule of the server changes it. Every spare keycode of a batch is remapped in one
//! go, before any key of the batch is pressed: applications read a new map lazily, and a keycode
//! remapped while keys are in flight types the wrong character (measured with a GTK entry).

/// X's "no symbol".
const NO_SYMBOL: u32 = 0;
pub const XK_SHIFT_L: u32 = 0xffe1;
pub const XK_CONTROL_L: u32 = 0xffe3;

/// The keyboard map as `GetKeyboardMapping` returns it.
#[derive(Debug, Clone)]
pub struct Keymap {
    pub min_keycode: u8,
    pub keysyms_per_keycode: usize,
    /// `keysyms_per_keycode` symbols per keycode from `min_keycode` on.
    pub keysyms: Vec<u32>,
}

impl Keymap {
    fn keycodes(&self) -> impl Iterator<Item = (u8, &[u32])> {
        let per = self.keysyms_per_keycode.max(1);
        self.keysyms.chunks(per).enumerate().filter_map(move |(i, syms)| {
            let code = usize::from(self.min_keycode) + i;
            u8::try_from(code).ok().map(|code| (code, syms))
        })
    }

    /// The keycode and level (false: plain, true: Shift) that type `keysym`, if any.
    fn find(&self, keysym: u32) -> Option<(u8, bool)> {
        self.keycodes().find_map(|(code, syms)| {
            if syms.first() == Some(&keysym) {
                Some((code, false))
            } else if syms.get(1) == Some(&keysym) && syms.first() != Some(&keysym) {
                Some((code, true))
            } else {
                None
            }
        })
    }

    /// Keycodes with no symbol at all, which a plan may borrow. Keycode 8 is never used: evdev
    /// numbers keys from 8, so it would be key 0.
    pub fn spare_keycodes(&self) -> Vec<u8> {
        self.keycodes()
            .filter(|(code, syms)| *code > 8 && syms.iter().all(|s| *s == NO_SYMBOL))
            .map(|(code, _)| code)
            .collect()
    }

    pub fn shift_keycode(&self) -> Option<u8> {
        self.find(XK_SHIFT_L).map(|(code, _)| code)
    }

    /// The keycode typing `keysym` without Shift ("v" for Ctrl+V), if the map has one.
    pub fn plain_keycode(&self, keysym: u32) -> Option<u8> {
        self.find(keysym).and_then(|(code, shifted)| (!shifted).then_some(code))
    }
}

/// The X keysym for a character: Latin-1 as itself, the rest as Unicode keysyms
/// (`0x1000000 + code point`), which every toolkit reads. Control characters have none, line
/// breaks and tabs included: no way of typing presses Return (it sends a message, submits a
/// form, runs a line in a terminal) or Tab (it moves the focus, perhaps to a button). Text
/// holding them is pasted instead (`delivery::may_type`).
pub fn keysym_of(c: char) -> Option<u32> {
    let code = u32::from(c);
    match c {
        c if c.is_control() => None,
        _ if (0x20..=0x7e).contains(&code) || (0xa0..=0xff).contains(&code) => Some(code),
        _ => Some(0x0100_0000 | code),
    }
}

/// One key press and release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stroke {
    pub keycode: u8,
    pub shift: bool,
}

/// Keys typed after `remaps` (keycode, keysym) are in place.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Batch {
    pub remaps: Vec<(u8, u32)>,
    pub strokes: Vec<Stroke>,
}

/// What typing a text takes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    pub batches: Vec<Batch>,
    /// Characters with no keysym (control characters), left out.
    pub skipped: usize,
}

/// Plans `text` on `keymap`. `caps_lock`: letters the map has are borrowed keycodes too, since
/// Caps Lock would change their case. `None` when the map has no spare keycode for a character
/// it lacks (or no Shift for one on level 2).
pub fn plan(text: &str, keymap: &Keymap, caps_lock: bool) -> Option<Plan> {
    let spare = keymap.spare_keycodes();
    let shift = keymap.shift_keycode();
    let mut plan = Plan::default();
    let mut batch = Batch::default();
    for c in text.chars() {
        let Some(keysym) = keysym_of(c) else {
            plan.skipped += 1;
            continue;
        };
        let own = keymap.find(keysym).filter(|_| !(caps_lock && c.is_alphabetic()));
        let stroke = match own {
            Some((keycode, true)) if shift.is_some() => Stroke { keycode, shift: true },
            Some((keycode, false)) => Stroke { keycode, shift: false },
            _ => {
                if let Some((code, _)) = batch.remaps.iter().find(|(_, ks)| *ks == keysym) {
                    Stroke { keycode: *code, shift: false }
                } else {
                    if batch.remaps.len() == spare.len() {
                        if spare.is_empty() {
                            return None;
                        }
                        plan.batches.push(std::mem::take(&mut batch));
                    }
                    let code = spare[batch.remaps.len()];
                    batch.remaps.push((code, keysym));
                    Stroke { keycode: code, shift: false }
                }
            }
        };
        batch.strokes.push(stroke);
    }
    if !batch.strokes.is_empty() {
        plan.batches.push(batch);
    }
    Some(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Return and Tab, as the map has them.
    const XK_RETURN: u32 = 0xff0d;
    const XK_TAB: u32 = 0xff09;

    /// A small US map: a (38) with A, 1 (10) with !, Return (36), Tab (23), Shift_L (50), space
    /// (65), and spare keycodes 8, 93, 97, 120.
    fn us() -> Keymap {
        let per = 2;
        let mut keysyms = vec![0; (255 - 8 + 1) * per];
        let mut set = |code: usize, a: u32, b: u32| {
            keysyms[(code - 8) * per] = a;
            keysyms[(code - 8) * per + 1] = b;
        };
        for code in 9..=255 {
            if ![8, 93, 97, 120].contains(&code) {
                set(code, 0xfe00 + code as u32, 0); // something, so the code is not spare
            }
        }
        set(38, 'a' as u32, 'A' as u32);
        set(10, '1' as u32, '!' as u32);
        set(36, XK_RETURN, 0);
        set(23, XK_TAB, 0);
        set(50, XK_SHIFT_L, 0);
        set(65, ' ' as u32, 0);
        Keymap { min_keycode: 8, keysyms_per_keycode: per, keysyms }
    }

    #[test]
    fn types_what_the_map_has_with_its_own_keys_and_shift() {
        let plan = plan("aA 1!", &us(), false).unwrap();
        assert_eq!(plan.batches.len(), 1);
        let b = &plan.batches[0];
        assert!(b.remaps.is_empty());
        let strokes: Vec<(u8, bool)> = b.strokes.iter().map(|s| (s.keycode, s.shift)).collect();
        assert_eq!(strokes, [(38, false), (38, true), (65, false), (10, false), (10, true)]);
    }

    #[test]
    fn never_presses_return_or_tab_though_the_map_has_them() {
        // A line break would send a message or run a line in a terminal; a tab would move the
        // focus. Neither is typed, nor is a carriage return, an escape or a form feed.
        let plan = plan("a\nA\r\n\t1\u{1b}\u{c}!", &us(), false).unwrap();
        let strokes: Vec<(u8, bool)> =
            plan.batches.iter().flat_map(|b| b.strokes.iter().map(|s| (s.keycode, s.shift))).collect();
        assert_eq!(strokes, [(38, false), (38, true), (10, false), (10, true)]);
        assert!(plan.batches.iter().all(|b| b.remaps.is_empty()), "nothing borrowed for them either");
        assert_eq!(plan.skipped, 6);
    }

    #[test]
    fn borrows_spare_keycodes_never_8_and_reuses_them_within_a_batch() {
        let plan = plan("é✓é", &us(), false).unwrap();
        let b = &plan.batches[0];
        assert_eq!(b.remaps, [(93, 0xe9), (97, 0x0100_2713)]);
        assert_eq!(b.strokes.iter().map(|s| s.keycode).collect::<Vec<_>>(), [93, 97, 93]);
    }

    #[test]
    fn starts_a_new_batch_when_spare_keycodes_run_out() {
        // Three spare keycodes (93, 97, 120): the fourth new character needs a second batch.
        let plan = plan("αβγδα", &us(), false).unwrap();
        assert_eq!(plan.batches.len(), 2);
        assert_eq!(plan.batches[0].remaps.len(), 3);
        assert_eq!(plan.batches[1].remaps, [(93, 0x0100_03b4), (97, 0x0100_03b1)]);
        let typed: usize = plan.batches.iter().map(|b| b.strokes.len()).sum();
        assert_eq!(typed, 5);
    }

    #[test]
    fn caps_lock_sends_letters_through_borrowed_keycodes() {
        let plan = plan("aA1", &us(), true).unwrap();
        let b = &plan.batches[0];
        assert_eq!(b.remaps, [(93, 'a' as u32), (97, 'A' as u32)]);
        assert_eq!(b.strokes.last(), Some(&Stroke { keycode: 10, shift: false }));
    }

    #[test]
    fn control_characters_are_left_out_and_a_map_without_spares_cannot_type_new_ones() {
        let plan = plan("a\u{7}\rb", &us(), false);
        assert_eq!(plan.as_ref().map(|p| p.skipped), Some(2));
        let mut full = us();
        for s in full.keysyms.iter_mut().filter(|s| **s == 0) {
            *s = 0xfe00;
        }
        assert_eq!(super::plan("é", &full, false), None);
        assert!(super::plan("aa", &full, false).is_some());
    }
}
