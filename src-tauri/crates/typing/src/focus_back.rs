//! A dictation is typed only once the keyboard focus is back in the application it is for, and
//! counted as typed only if it stayed there. On Wayland the desktop names no focused window, so
//! keys are sent blind: when Perch's own dictation indicator held the focus (every compositor
//! gave it to a new window, whatever the window asked), the first words, or all of them, went to
//! the indicator and were lost while the log said "typed". What Perch does know is whether one
//! of its own windows has the focus; that is what this waits on and checks.

use std::time::{Duration, Instant};

use super::{Delivered, TypingError};

/// Which of Perch's own windows has the keyboard focus, as the shell sees them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerchFocus {
    /// None of them: the focus is in another application (or nowhere).
    Elsewhere,
    /// Perch's main window: the words belong in its own box.
    Window,
    /// The dictation indicator, which only shows progress: keys sent now are lost.
    Indicator,
}

/// How long typing waits for the indicator to give the focus back (it closes as the dictation
/// ends, and the desktop then focuses the window that had it before).
pub const FOCUS_BACK: Duration = Duration::from_secs(3);
const POLL: Duration = Duration::from_millis(20);

/// Types a finished dictation into the focused application once the indicator has let go of the
/// focus (at most `FOCUS_BACK`), into Perch's box when its window has the focus, and reports it
/// typed only if none of Perch's windows took the focus while the keys went out.
pub fn type_dictation(
    text: &str,
    own_pid: u32,
    never: &[String],
    perch_focus: impl Fn() -> PerchFocus,
) -> Result<Delivered, TypingError> {
    type_when_focus_is_back(perch_focus, FOCUS_BACK, || super::type_into_focused(text, own_pid, never))
}

fn type_when_focus_is_back(
    perch_focus: impl Fn() -> PerchFocus,
    within: Duration,
    type_keys: impl FnOnce() -> Result<Delivered, TypingError>,
) -> Result<Delivered, TypingError> {
    let deadline = Instant::now() + within;
    let focus = loop {
        match perch_focus() {
            PerchFocus::Indicator if Instant::now() >= deadline => return Err(TypingError::FocusNotBack),
            PerchFocus::Indicator => std::thread::sleep(POLL),
            settled => break settled,
        }
    };
    if focus == PerchFocus::Window {
        return Ok(Delivered::Perch);
    }
    let delivered = type_keys()?;
    if matches!(delivered, Delivered::Typed { .. }) && perch_focus() != PerchFocus::Elsewhere {
        return Err(TypingError::FocusTakenWhileTyping);
    }
    Ok(delivered)
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    fn typed() -> Result<Delivered, TypingError> {
        Ok(Delivered::Typed { app: "Editor".into(), chars: 5 })
    }

    /// A focus that is on the indicator for the first `polls` questions, then `after`.
    fn focus_after(polls: usize, after: PerchFocus) -> impl Fn() -> PerchFocus {
        let asked = Cell::new(0);
        move || {
            asked.set(asked.get() + 1);
            if asked.get() <= polls { PerchFocus::Indicator } else { after }
        }
    }

    #[test]
    fn keys_go_out_only_once_the_indicator_has_let_go_of_the_focus() {
        let asked = Cell::new(0);
        let focus = || {
            asked.set(asked.get() + 1);
            if asked.get() <= 5 { PerchFocus::Indicator } else { PerchFocus::Elsewhere }
        };
        let asked_before_typing = Cell::new(0);
        let delivered = type_when_focus_is_back(focus, Duration::from_secs(5), || {
            asked_before_typing.set(asked.get());
            typed()
        });
        assert_eq!(delivered.unwrap(), Delivered::Typed { app: "Editor".into(), chars: 5 });
        // Five answers "the indicator", then the one "elsewhere" that ends the wait.
        assert_eq!(asked_before_typing.get(), 6);
    }

    #[test]
    fn an_indicator_that_keeps_the_focus_gets_no_keys() {
        let called = Cell::new(false);
        let refused = type_when_focus_is_back(
            || PerchFocus::Indicator,
            Duration::from_millis(100),
            || {
                called.set(true);
                typed()
            },
        );
        assert!(matches!(refused, Err(TypingError::FocusNotBack)), "{refused:?}");
        assert!(!called.get(), "nothing is typed while the indicator has the focus");
        assert_eq!(
            TypingError::FocusNotBack.to_string(),
            "the keyboard focus did not come back from Perch's dictation indicator to the application"
        );
    }

    #[test]
    fn the_focus_coming_back_to_perchs_window_puts_the_words_in_its_box() {
        let called = Cell::new(false);
        let delivered =
            type_when_focus_is_back(focus_after(2, PerchFocus::Window), Duration::from_secs(5), || {
                called.set(true);
                typed()
            });
        assert_eq!(delivered.unwrap(), Delivered::Perch);
        assert!(!called.get());
    }

    #[test]
    fn keys_sent_while_a_perch_window_took_the_focus_do_not_count_as_typed() {
        for taken in [PerchFocus::Indicator, PerchFocus::Window] {
            // Elsewhere while waiting; Perch's by the time the keys are out.
            let asked = Cell::new(0);
            let focus = || {
                asked.set(asked.get() + 1);
                if asked.get() <= 1 { PerchFocus::Elsewhere } else { taken }
            };
            let refused = type_when_focus_is_back(focus, Duration::from_secs(5), typed);
            assert!(matches!(refused, Err(TypingError::FocusTakenWhileTyping)), "{taken:?}: {refused:?}");
        }
        // The control: the focus stays in the application.
        let delivered = type_when_focus_is_back(|| PerchFocus::Elsewhere, Duration::from_secs(5), typed);
        assert!(matches!(delivered, Ok(Delivered::Typed { .. })));
    }

    #[test]
    fn a_refusal_from_typing_itself_is_passed_on() {
        let refused = type_when_focus_is_back(
            || PerchFocus::Elsewhere,
            Duration::from_secs(5),
            || Err(TypingError::NoFocus),
        );
        assert!(matches!(refused, Err(TypingError::NoFocus)), "{refused:?}");
    }
}
