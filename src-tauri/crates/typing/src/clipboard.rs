//! Paste and copy through the clipboard, giving the user's clipboard back afterwards: the way
//! text reaches an application when its keys cannot be typed (no spare keycode on X11, ydotool
//! and a character it cannot type), and the way a selection is read from an application that
//! does not publish one as X11's PRIMARY. The rules are pure over a [`Board`], so they are
//! tested without a desktop; [`SystemBoard`] is the real clipboard.
//!
//! Only text can be given back: when the clipboard holds something else (an image, files),
//! nothing is pasted or copied through it, rather than lose what the user had there.

use std::time::{Duration, Instant};

use super::TypingError;

/// How long an application gets to take the pasted text before the clipboard is given back.
/// It asks for the clipboard's content after the keys arrive, at its own pace: given back too
/// early, it pastes what the user had (Handy's issue #502).
pub const PASTE_SETTLE: Duration = Duration::from_millis(400);
/// How long a copy may take to reach the clipboard.
pub const COPY_WAIT: Duration = Duration::from_millis(600);

/// What a clipboard could not do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BoardError {
    /// It holds something other than text, named ("an image", "copied files").
    #[error("{0}")]
    NotText(&'static str),
    /// The clipboard could not be read or written (the system's message).
    #[error("{0}")]
    Unavailable(String),
}

/// A clipboard, as far as text goes.
pub trait Board {
    /// The clipboard's text; `Ok(None)` when it is empty, `Err` when it holds something that
    /// is not text (or cannot be read).
    fn text(&mut self) -> Result<Option<String>, BoardError>;
    /// Puts `text` on the clipboard; `None` empties it.
    fn set(&mut self, text: Option<&str>) -> Result<(), BoardError>;
}

/// What the clipboard held before Perch used it.
enum Saved {
    Empty,
    Text(String),
}

fn save(board: &mut impl Board) -> Result<Saved, TypingError> {
    match board.text() {
        Ok(Some(text)) => Ok(Saved::Text(text)),
        Ok(None) => Ok(Saved::Empty),
        Err(why) => Err(TypingError::Clipboard(format!(
            "it holds something other than text, which Perch could not give back ({why})"
        ))),
    }
}

/// Gives the user's clipboard back, unless something else has been put there meanwhile (the
/// user copied again): that is theirs now.
fn give_back(board: &mut impl Board, saved: Saved, ours: Option<&str>) {
    let now = board.text().ok().flatten();
    if now.as_deref() != ours {
        return;
    }
    let back = match &saved {
        Saved::Empty => None,
        Saved::Text(text) => Some(text.as_str()),
    };
    if let Err(e) = board.set(back) {
        tracing::warn!(error = %e, "could not give the clipboard back");
    }
}

/// Pastes `text` into the focused application: puts it on the clipboard, presses the paste
/// keys (`paste`), waits `settle`, and gives the clipboard back. Returns the characters pasted.
pub fn paste_with_restore(
    board: &mut impl Board,
    text: &str,
    paste: impl FnOnce() -> Result<(), TypingError>,
    settle: Duration,
) -> Result<usize, TypingError> {
    let saved = save(board)?;
    board.set(Some(text)).map_err(|e| TypingError::Clipboard(e.to_string()))?;
    let pasted = paste();
    if pasted.is_ok() {
        std::thread::sleep(settle);
    }
    give_back(board, saved, Some(text));
    pasted.map(|()| text.chars().count())
}

/// Copies the focused application's selection: empties the clipboard (so an unchanged one
/// means nothing was copied), presses the copy keys (`copy`), waits up to `wait` for text, and
/// gives the clipboard back. `Ok(None)` when nothing was selected.
pub fn copy_with_restore(
    board: &mut impl Board,
    copy: impl FnOnce() -> Result<(), TypingError>,
    wait: Duration,
) -> Result<Option<String>, TypingError> {
    let saved = save(board)?;
    board.set(None).map_err(|e| TypingError::Clipboard(e.to_string()))?;
    let copied = copy().map(|()| {
        let deadline = Instant::now() + wait;
        loop {
            match board.text() {
                // Read once more: the application may have taken the clipboard while that read
                // walked the text formats, and arboard then falls back to plain `text/plain`,
                // which GTK answers in ASCII with `\u` escapes. The next read starts from
                // UTF-8 with the owner settled.
                Ok(Some(text)) if !text.is_empty() => {
                    return Some(
                        board.text().ok().flatten().filter(|again| !again.is_empty()).unwrap_or(text),
                    );
                }
                _ if Instant::now() >= deadline => return None,
                _ => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    });
    let ours = copied.as_ref().ok().and_then(|c| c.clone());
    give_back(board, saved, ours.as_deref());
    copied
}

/// The desktop's clipboard (X11's CLIPBOARD, or Wayland's where the compositor shares it).
#[cfg(target_os = "linux")]
pub struct SystemBoard(arboard::Clipboard);

#[cfg(target_os = "linux")]
impl SystemBoard {
    pub fn open() -> Result<Self, TypingError> {
        arboard::Clipboard::new().map(Self).map_err(|e| TypingError::Clipboard(e.to_string()))
    }
}

/// Runs `work` with the process's one handle on the desktop's clipboard. Kept for the life of
/// the process: on X11 what Perch puts there (words to paste, the user's text given back) is
/// served by this process only while a handle lives.
#[cfg(target_os = "linux")]
pub fn with_system_board<T>(work: impl FnOnce(&mut SystemBoard) -> T) -> Result<T, TypingError> {
    static BOARD: std::sync::Mutex<Option<SystemBoard>> = std::sync::Mutex::new(None);
    let mut held = BOARD.lock().unwrap_or_else(|p| p.into_inner());
    let board = match &mut *held {
        Some(board) => board,
        empty @ None => empty.insert(SystemBoard::open()?),
    };
    Ok(work(board))
}

/// Puts `text` on the clipboard for the user to paste, kept out of clipboard managers'
/// history (words that could not be typed, perhaps into a password manager).
#[cfg(target_os = "linux")]
pub fn put_private(text: &str) -> Result<(), TypingError> {
    with_system_board(|board| board.set(Some(text)))?.map_err(|e| TypingError::Clipboard(e.to_string()))
}

/// Puts a picture on the clipboard (`rgba`: its rows of RGBA pixels), a screenshot's Copy:
/// through the process's one handle, which keeps serving it on X11.
#[cfg(target_os = "linux")]
pub fn put_image(width: u32, height: u32, rgba: Vec<u8>) -> Result<(), TypingError> {
    let image = arboard::ImageData { width: width as usize, height: height as usize, bytes: rgba.into() };
    with_system_board(|board| board.0.set_image(image))?.map_err(|e| TypingError::Clipboard(e.to_string()))
}

#[cfg(target_os = "linux")]
impl SystemBoard {
    /// The picture on the clipboard, if there is one: its width, height and RGBA pixels.
    pub fn image(&mut self) -> Option<(usize, usize, Vec<u8>)> {
        let image = self.0.get_image().ok()?;
        Some((image.width, image.height, image.bytes.into_owned()))
    }

    /// The primary selection's text (what is selected, on Wayland where the compositor shares
    /// it through its data-control protocol), if any.
    pub fn primary_text(&mut self) -> Option<String> {
        use arboard::{GetExtLinux, LinuxClipboardKind};
        self.0.get().clipboard(LinuxClipboardKind::Primary).text().ok()
    }
}

#[cfg(target_os = "linux")]
impl Board for SystemBoard {
    fn text(&mut self) -> Result<Option<String>, BoardError> {
        match self.0.get_text() {
            Ok(text) => Ok(Some(text)),
            Err(arboard::Error::ContentNotAvailable) => {
                // Empty, or not text: an image or copied files are there when they can be read.
                if self.0.get_image().is_ok() {
                    Err(BoardError::NotText("an image"))
                } else if self.0.get().file_list().is_ok_and(|files| !files.is_empty()) {
                    Err(BoardError::NotText("copied files"))
                } else {
                    Ok(None)
                }
            }
            Err(e) => Err(BoardError::Unavailable(e.to_string())),
        }
    }

    /// Marked for clipboard managers to leave out of their history: dictated words may be
    /// private, and what is given back is there already.
    fn set(&mut self, text: Option<&str>) -> Result<(), BoardError> {
        use arboard::SetExtLinux;
        match text {
            Some(text) => self.0.set().exclude_from_history().text(text),
            None => self.0.clear(),
        }
        .map_err(|e| BoardError::Unavailable(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clipboard in memory, with every change Perch made to it.
    #[derive(Default)]
    struct Memory {
        content: Option<Result<String, BoardError>>,
        log: Vec<String>,
    }

    impl Board for Memory {
        fn text(&mut self) -> Result<Option<String>, BoardError> {
            match &self.content {
                None => Ok(None),
                Some(Ok(text)) => Ok(Some(text.clone())),
                Some(Err(what)) => Err(what.clone()),
            }
        }
        fn set(&mut self, text: Option<&str>) -> Result<(), BoardError> {
            self.log.push(format!("set {text:?}"));
            self.content = text.map(|t| Ok(t.to_owned()));
            Ok(())
        }
    }

    fn holding(text: &str) -> Memory {
        Memory { content: Some(Ok(text.into())), log: Vec::new() }
    }

    #[test]
    fn a_paste_puts_the_text_there_for_the_keys_then_gives_the_clipboard_back() {
        let memory = std::rc::Rc::new(std::cell::RefCell::new(holding("what the user copied")));
        let mut board = Shared(memory.clone());
        let app = memory.clone();
        let mut pasted_by_app = None;
        let pasted = paste_with_restore(
            &mut board,
            "Héllo ✓",
            || {
                // The application, told Ctrl+V, reads the clipboard.
                pasted_by_app = app.borrow_mut().text().unwrap();
                Ok(())
            },
            Duration::ZERO,
        );
        assert_eq!(pasted.unwrap(), 7);
        assert_eq!(pasted_by_app.as_deref(), Some("Héllo ✓"));
        assert_eq!(memory.borrow_mut().text().unwrap().as_deref(), Some("what the user copied"));
        assert_eq!(memory.borrow().log, ["set Some(\"Héllo ✓\")", "set Some(\"what the user copied\")"]);
    }

    /// A board whose reads give these answers in turn (the last one again after that).
    struct Reads(Vec<Option<&'static str>>);
    impl Board for Reads {
        fn text(&mut self) -> Result<Option<String>, BoardError> {
            let next = if self.0.len() > 1 { self.0.remove(0) } else { self.0[0] };
            Ok(next.map(str::to_owned))
        }
        fn set(&mut self, _: Option<&str>) -> Result<(), BoardError> {
            Ok(())
        }
    }

    #[test]
    fn a_copy_is_read_again_from_the_settled_owner() {
        // Saved, then nothing yet, then a read that raced the application taking the clipboard
        // (its ASCII fallback), then the real text.
        let mut board = Reads(vec![None, None, Some("na\\u00efve"), Some("naïve")]);
        let copied = copy_with_restore(&mut board, || Ok(()), Duration::from_secs(1)).unwrap();
        assert_eq!(copied.as_deref(), Some("naïve"));
        // A second read that finds nothing keeps the first.
        let mut board = Reads(vec![None, Some("words"), None]);
        assert_eq!(
            copy_with_restore(&mut board, || Ok(()), Duration::from_secs(1)).unwrap().as_deref(),
            Some("words")
        );
    }

    #[test]
    fn an_empty_clipboard_is_left_empty_after_a_paste() {
        let mut board = Memory::default();
        paste_with_restore(&mut board, "words", || Ok(()), Duration::ZERO).unwrap();
        assert_eq!(board.text().unwrap(), None);
        assert_eq!(board.log, ["set Some(\"words\")", "set None"]);
    }

    #[test]
    fn a_clipboard_holding_an_image_is_not_used_at_all() {
        let mut board = Memory { content: Some(Err(BoardError::NotText("an image"))), log: Vec::new() };
        let mut pressed = false;
        let e = paste_with_restore(
            &mut board,
            "words",
            || {
                pressed = true;
                Ok(())
            },
            Duration::ZERO,
        )
        .unwrap_err();
        assert!(e.to_string().contains("holds something other than text"), "{e}");
        assert!(!pressed, "no keys pressed");
        assert!(board.log.is_empty(), "the image was left alone");
        let e = copy_with_restore(&mut board, || Ok(()), Duration::ZERO).unwrap_err();
        assert!(matches!(e, TypingError::Clipboard(_)));
        assert!(board.log.is_empty());
    }

    #[test]
    fn failed_keys_still_give_the_clipboard_back_and_say_why() {
        let mut board = holding("mine");
        let e = paste_with_restore(&mut board, "words", || Err(TypingError::NoFocus), Duration::ZERO)
            .unwrap_err();
        assert!(matches!(e, TypingError::NoFocus));
        assert_eq!(board.text().unwrap().as_deref(), Some("mine"));
    }

    /// A board whose content another application changes when the keys are pressed.
    struct Shared(std::rc::Rc<std::cell::RefCell<Memory>>);

    impl Board for Shared {
        fn text(&mut self) -> Result<Option<String>, BoardError> {
            self.0.borrow_mut().text()
        }
        fn set(&mut self, text: Option<&str>) -> Result<(), BoardError> {
            self.0.borrow_mut().set(text)
        }
    }

    #[test]
    fn a_copy_takes_what_the_application_put_there_and_gives_the_clipboard_back() {
        let memory = std::rc::Rc::new(std::cell::RefCell::new(holding("mine")));
        let mut board = Shared(memory.clone());
        let app = memory.clone();
        let copied = copy_with_restore(
            &mut board,
            || {
                // The application, told Ctrl+C, puts its selection there.
                app.borrow_mut().content = Some(Ok("the selected words".into()));
                Ok(())
            },
            Duration::from_millis(100),
        )
        .unwrap();
        assert_eq!(copied.as_deref(), Some("the selected words"));
        assert_eq!(memory.borrow_mut().text().unwrap().as_deref(), Some("mine"));
    }

    #[test]
    fn a_copy_with_nothing_selected_finds_nothing_even_when_the_clipboard_held_text() {
        let mut board = holding("mine");
        let copied = copy_with_restore(&mut board, || Ok(()), Duration::from_millis(60)).unwrap();
        assert_eq!(copied, None, "the old text is not taken for a selection");
        assert_eq!(board.text().unwrap().as_deref(), Some("mine"));
    }

    #[test]
    fn what_the_user_copies_meanwhile_is_kept() {
        let memory = std::rc::Rc::new(std::cell::RefCell::new(holding("old")));
        let mut board = Shared(memory.clone());
        let user = memory.clone();
        paste_with_restore(
            &mut board,
            "words",
            || {
                // The user copies something else before the clipboard is given back.
                user.borrow_mut().content = Some(Ok("newer".into()));
                Ok(())
            },
            Duration::ZERO,
        )
        .unwrap();
        assert_eq!(memory.borrow_mut().text().unwrap().as_deref(), Some("newer"));
    }
}
