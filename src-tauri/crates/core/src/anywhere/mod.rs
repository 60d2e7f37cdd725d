//! Perch in every app: text typed into whichever application has the focus (dictation ended
//! with the dictate-anywhere shortcut). On X11 the keys go through XTest (`x11.rs`), planned so
//! any character arrives, accents and symbols included (`keys.rs`).

pub mod keys;
#[cfg(target_os = "linux")]
mod x11;

/// Why text could not be typed into the focused application.
#[derive(Debug, thiserror::Error)]
pub enum AnywhereError {
    #[error("no window has the focus, so there is nowhere to type")]
    NoFocus,
    #[error("this desktop has no way for Perch to type into other applications ({0})")]
    NoTypingPath(String),
    #[error("the keyboard map has no spare key to type this text with")]
    NoSpareKeys,
    #[error("the X server refused: {0}")]
    X11(String),
}

/// Where the focus is, as far as typing is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// Another application's window: text is typed into it.
    Other,
    /// One of Perch's own windows: text belongs in Perch's own box.
    Perch,
    /// No window.
    Nothing,
}

/// How text reaches other applications in this session, or why it cannot.
pub fn typing_path() -> Result<&'static str, AnywhereError> {
    if std::env::var_os("DISPLAY").is_some()
        && std::env::var("XDG_SESSION_TYPE").map_or(true, |t| t != "wayland")
    {
        Ok("X11 (XTest)")
    } else {
        Err(AnywhereError::NoTypingPath(
            "a Wayland session: typing through the desktop's remote-desktop portal is not built yet".into(),
        ))
    }
}

/// Where the focus is now. `own_pid` is Perch's process id (its windows say it in `_NET_WM_PID`).
pub fn focus(own_pid: u32) -> Result<Focus, AnywhereError> {
    typing_path()?;
    #[cfg(target_os = "linux")]
    {
        Ok(match x11::focused_process()? {
            None => Focus::Nothing,
            Some(Some(pid)) if pid == own_pid => Focus::Perch,
            Some(_) => Focus::Other,
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = own_pid;
        Err(AnywhereError::NoTypingPath("only Linux is supported".into()))
    }
}

/// Types `text` into the focused window (blocking: call from a blocking thread); returns how
/// many characters were typed.
pub fn type_text(text: &str) -> Result<usize, AnywhereError> {
    typing_path()?;
    #[cfg(target_os = "linux")]
    {
        x11::type_text(text)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = text;
        Err(AnywhereError::NoTypingPath("only Linux is supported".into()))
    }
}

/// How dictate-anywhere reaches other applications here, for `perch doctor` and Settings.
pub fn probe() -> crate::probes::Probe {
    let name = "typing into other apps".to_owned();
    let checked = typing_path().and_then(|path| {
        #[cfg(target_os = "linux")]
        x11::check()?;
        Ok(path)
    });
    match checked {
        Ok(path) => crate::probes::Probe {
            name,
            available: true,
            detail: format!("{path}: dictate-anywhere types at the cursor of the focused application"),
        },
        Err(e) => crate::probes::Probe {
            name,
            available: false,
            detail: format!("{e}; dictated words go to the clipboard instead"),
        },
    }
}
