//! Typing into other applications on Wayland, where XTest reaches only XWayland windows.
//!
//! - [`PortalKeyboard`]: the desktop's RemoteDesktop portal
//!   (`org.freedesktop.portal.RemoteDesktop`, GNOME and KDE offer it). `CreateSession`, then
//!   `SelectDevices` asking for the keyboard only, to be remembered until revoked
//!   (`persist_mode` 2, with the restore token of the last session so the user is not asked
//!   again), then `Start` (where the desktop may ask the user), then one
//!   `NotifyKeyboardKeysym` press and release per character. Keysyms, not keycodes, so the
//!   desktop finds the key on the user's own layout, and any character has one (Unicode
//!   keysyms, see `keys::keysym_of`). The three calls answer through Request objects, awaited
//!   the way the GlobalShortcuts portal's are (`shortcut_portal::request`).
//! - [`type_with`]: `wtype` or `ydotool`, a child process given the text on its standard input
//!   (never in argv, which other processes can read in /proc).

use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use zbus::Connection;
use zbus::zvariant::{ObjectPath, OwnedObjectPath, OwnedValue, Value};

use super::TypingError;
use super::keys::keysym_of;
use perch_portals::shortcut_portal::{PortalError, request};

/// `AvailableDeviceTypes` / `types` / `devices` bit of the keyboard.
const KEYBOARD: u32 = 1;
/// `persist_mode`: permissions persist until explicitly revoked.
const PERSIST_UNTIL_REVOKED: u32 = 2;
const PRESSED: u32 = 1;
/// The left Control and Shift keys' keysyms.
const XK_CONTROL_L: i32 = 0xffe3;
const XK_SHIFT_L: i32 = 0xffe1;
const RELEASED: u32 = 0;
/// How long a new session waits after `Start` before its first key. The desktop may have shown
/// its dialog, and the focus is on its way back from it to the application the words are for:
/// GNOME 43 gave the first key (or several) to the closing dialog when typing began at once
/// (the GNOME lane, tests/e2e/desktops/gnome.test.js). Once per session, which Perch keeps
/// between dictations.
const FOCUS_RETURNS: Duration = Duration::from_millis(600);
/// How long [`portal_keyboard_available`] waits for the bus and the portal: it runs when
/// Settings or `perch doctor` look, and a hung portal must not hang them.
const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

#[zbus::proxy(
    interface = "org.freedesktop.portal.RemoteDesktop",
    default_service = "org.freedesktop.portal.Desktop",
    default_path = "/org/freedesktop/portal/desktop"
)]
trait RemoteDesktop {
    fn create_session(&self, options: HashMap<&str, Value<'_>>) -> zbus::Result<OwnedObjectPath>;

    fn select_devices(
        &self,
        session_handle: &ObjectPath<'_>,
        options: HashMap<&str, Value<'_>>,
    ) -> zbus::Result<OwnedObjectPath>;

    fn start(
        &self,
        session_handle: &ObjectPath<'_>,
        parent_window: &str,
        options: HashMap<&str, Value<'_>>,
    ) -> zbus::Result<OwnedObjectPath>;

    fn notify_keyboard_keysym(
        &self,
        session_handle: &ObjectPath<'_>,
        options: HashMap<&str, Value<'_>>,
        keysym: i32,
        state: u32,
    ) -> zbus::Result<()>;

    #[zbus(property, name = "AvailableDeviceTypes")]
    fn available_device_types(&self) -> zbus::Result<u32>;
}

/// Whether the session bus has a RemoteDesktop portal offering the keyboard (false on any
/// error, and after [`CHECK_TIMEOUT`]).
pub async fn portal_keyboard_available() -> bool {
    tokio::time::timeout(CHECK_TIMEOUT, async {
        match Connection::session().await {
            Ok(conn) => portal_keyboard_available_on(&conn).await,
            Err(_) => false,
        }
    })
    .await
    .unwrap_or(false)
}

/// [`portal_keyboard_available`] on `conn`.
pub async fn portal_keyboard_available_on(conn: &Connection) -> bool {
    tokio::time::timeout(CHECK_TIMEOUT, device_types(conn))
        .await
        .is_ok_and(|types| types.is_ok_and(|t| t & KEYBOARD != 0))
}

async fn device_types(conn: &Connection) -> zbus::Result<u32> {
    // Not cached: a cache would subscribe to PropertiesChanged, a round trip for one read.
    let portal =
        RemoteDesktopProxy::builder(conn).cache_properties(zbus::proxy::CacheProperties::No).build().await?;
    portal.available_device_types().await
}

/// A started RemoteDesktop session with keyboard access. Dropping it closes the session.
pub struct PortalKeyboard {
    conn: Connection,
    portal: RemoteDesktopProxy<'static>,
    session: OwnedObjectPath,
    closed: bool,
}

impl PortalKeyboard {
    /// [`open_on`](Self::open_on) the user's session bus.
    pub async fn open(restore_token: Option<&str>) -> Result<(Self, Option<String>), TypingError> {
        let conn = Connection::session().await.map_err(|e| {
            no_path(format!(
                "there is no D-Bus session bus, so the desktop's remote-desktop portal cannot be reached ({e})"
            ))
        })?;
        Self::open_on(&conn, restore_token).await
    }

    /// Opens and starts a session with the keyboard. The desktop may ask the user first, so
    /// this waits as long as its dialog is open. `restore_token` is the token the last session
    /// gave (the desktop then need not ask again); the one returned is to be kept for the next
    /// (each token works once).
    pub async fn open_on(
        conn: &Connection,
        restore_token: Option<&str>,
    ) -> Result<(Self, Option<String>), TypingError> {
        let types = device_types(conn).await.map_err(|e| {
            no_path(format!("this desktop offers no remote-desktop portal ({})", first_line(&e)))
        })?;
        if types & KEYBOARD == 0 {
            return Err(no_path(
                "the desktop's remote-desktop portal offers no keyboard, only a pointer or touch".into(),
            ));
        }
        let portal = RemoteDesktopProxy::new(conn).await.map_err(bus_error)?;

        let session_token = request::token();
        let created = request::call(conn, WHAT, |handle_token| {
            let options = HashMap::from([
                ("handle_token", Value::from(handle_token)),
                ("session_handle_token", Value::from(session_token.clone())),
            ]);
            let portal = portal.clone();
            async move { portal.create_session(options).await }
        })
        .await
        .map_err(portal_error)?;
        let session = session_handle(&created)?;
        // From here on, dropping `this` on an error closes the session.
        let this =
            Self { conn: conn.clone(), portal: portal.clone(), session: session.clone(), closed: false };

        request::call(conn, WHAT, |handle_token| {
            let mut options = HashMap::from([
                ("handle_token", Value::from(handle_token)),
                ("types", Value::from(KEYBOARD)),
                // Portals before version 2 do not know these options; xdg-desktop-portal drops
                // options it does not know, so they are sent anyway.
                ("persist_mode", Value::from(PERSIST_UNTIL_REVOKED)),
            ]);
            if let Some(token) = restore_token {
                options.insert("restore_token", Value::from(token.to_owned()));
            }
            let (portal, session) = (portal.clone(), session.clone());
            async move { portal.select_devices(&session, options).await }
        })
        .await
        .map_err(portal_error)?;

        let started = request::call(conn, WHAT, |handle_token| {
            let options = HashMap::from([("handle_token", Value::from(handle_token))]);
            let (portal, session) = (portal.clone(), session.clone());
            // No parent window: Perch's window is not the one the user is dictating into.
            async move { portal.start(&session, "", options).await }
        })
        .await
        .map_err(portal_error)?;
        // The user may untick the keyboard in the dialog.
        let devices = started.get("devices").and_then(|v| u32::try_from(&**v).ok());
        if devices.is_some_and(|d| d & KEYBOARD == 0) {
            return Err(no_path(
                "the keyboard was not allowed in the desktop's remote-desktop dialog".into(),
            ));
        }
        let token = started.get("restore_token").and_then(|v| <&str>::try_from(&**v).ok()).map(str::to_owned);
        // A Shift press and release first (harmless in any field): the desktop's new virtual
        // keyboard reaches the application with it, not with the first letters.
        for state in [PRESSED, RELEASED] {
            let _ =
                this.portal.notify_keyboard_keysym(&this.session, HashMap::new(), XK_SHIFT_L, state).await;
        }
        tokio::time::sleep(FOCUS_RETURNS).await;
        Ok((this, token))
    }

    /// Presses Ctrl+`letter` (Ctrl+V pastes, Ctrl+C copies): Control held around the letter.
    pub async fn press_ctrl(&self, letter: char) -> Result<(), TypingError> {
        let letter = keysym_of(letter).and_then(|k| i32::try_from(k).ok()).unwrap_or_default();
        let steps =
            [(XK_CONTROL_L, PRESSED), (letter, PRESSED), (letter, RELEASED), (XK_CONTROL_L, RELEASED)];
        for (keysym, state) in steps {
            self.portal.notify_keyboard_keysym(&self.session, HashMap::new(), keysym, state).await.map_err(
                |e| {
                    tracing::info!(error = %first_line(&e), "the portal refused a key");
                    TypingError::SessionEnded { typed: 0 }
                },
            )?;
        }
        Ok(())
    }

    /// Types `text` at the focused application's cursor; returns how many characters were
    /// typed (control characters have no key and are left out, line breaks and tabs included).
    pub async fn type_text(&self, text: &str) -> Result<usize, TypingError> {
        let mut typed = 0;
        for c in text.chars() {
            let Some(keysym) = keysym_of(c).and_then(|k| i32::try_from(k).ok()) else { continue };
            for state in [PRESSED, RELEASED] {
                self.portal
                    .notify_keyboard_keysym(&self.session, HashMap::new(), keysym, state)
                    .await
                    .map_err(|e| {
                        tracing::info!(error = %first_line(&e), typed, "the portal refused a key");
                        TypingError::SessionEnded { typed }
                    })?;
            }
            typed += 1;
        }
        Ok(typed)
    }

    /// The session's object path on the bus.
    pub fn session_handle(&self) -> &str {
        self.session.as_str()
    }

    /// Closes the session now and waits for the desktop to hear it.
    pub async fn close(mut self) {
        self.closed = true;
        if let Err(e) = request::close_session(&self.conn, self.session.clone()).await {
            tracing::debug!(error = %e, "closing the remote-desktop portal session");
        }
    }
}

impl Drop for PortalKeyboard {
    fn drop(&mut self) {
        if std::mem::replace(&mut self.closed, true) {
            return;
        }
        request::close_session_soon(&self.conn, self.session.clone());
    }
}

/// What the Request messages name (`request::call` puts it in its Cancelled and Refused errors,
/// which are mapped to this module's own words by [`portal_error`]).
const WHAT: &str = "typing into other applications";

fn no_path(reason: String) -> TypingError {
    TypingError::NoTypingPath(reason)
}

fn bus_error(e: zbus::Error) -> TypingError {
    no_path(format!("the desktop's remote-desktop portal failed ({})", first_line(&e)))
}

fn portal_error(e: PortalError) -> TypingError {
    no_path(match e {
        PortalError::NoBus(m) => {
            format!("there is no D-Bus session bus, so the desktop's remote-desktop portal cannot be reached ({m})")
        }
        PortalError::NoPortal(m) => format!("this desktop offers no remote-desktop portal ({m})"),
        PortalError::Cancelled(_) => {
            "the desktop's remote-desktop dialog was cancelled, so Perch may not type into other applications; dictate anywhere again to be asked again".into()
        }
        PortalError::Refused(_) => {
            "the desktop refused Perch's request to type into other applications through its remote-desktop portal".into()
        }
        PortalError::Bus(e) => format!("the desktop's remote-desktop portal failed ({})", first_line(&e)),
        other => format!("the desktop's remote-desktop portal failed ({other})"),
    })
}

/// CreateSession's `session_handle`: documented as an object path, a string holding one in
/// older portals.
fn session_handle(results: &HashMap<String, OwnedValue>) -> Result<OwnedObjectPath, TypingError> {
    let bad = |what: String| no_path(format!("the desktop's remote-desktop portal gave {what}"));
    let value = results.get("session_handle").ok_or_else(|| bad("no session handle".into()))?;
    match &**value {
        Value::ObjectPath(p) => Ok(p.to_owned().into()),
        Value::Str(s) => OwnedObjectPath::try_from(s.as_str().to_owned())
            .map_err(|e| bad(format!("a session handle that is not an object path ({e})"))),
        other => Err(bad(format!("a session handle of type {}", other.value_signature()))),
    }
}

/// A D-Bus error's name and text, without zbus's wrapping.
fn first_line(e: &zbus::Error) -> String {
    match e {
        zbus::Error::MethodError(name, Some(text), _) => format!("{}: {text}", name.as_str()),
        e => e.to_string(),
    }
}

/// A program that types text on Wayland.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandTypist {
    /// Types any character (it builds a keymap holding them) through the virtual-keyboard
    /// protocol of wlroots compositors; reads the text from stdin when given `-`.
    Wtype,
    /// Writes key codes to /dev/uinput through its daemon: works on any compositor, but only
    /// for ASCII, and as on a US layout (its table maps characters to US key positions).
    Ydotool,
}

impl CommandTypist {
    /// The program's name on PATH.
    pub fn program(self) -> &'static str {
        match self {
            Self::Wtype => "wtype",
            Self::Ydotool => "ydotool",
        }
    }

    /// The first character of `text` this program cannot type, if any (characters with no key
    /// at all, such as control characters, are left out rather than refused).
    pub fn cannot_type(self, text: &str) -> Option<char> {
        match self {
            Self::Wtype => None,
            // ydotool indexes a 128-entry table with each byte, so a non-ASCII byte types
            // nothing or garbage.
            Self::Ydotool => text.chars().find(|c| !c.is_ascii() && keysym_of(*c).is_some()),
        }
    }
}

/// Types `text` with `typist`, found on PATH (blocking: as long as the program takes, about
/// 40 ms a character for ydotool); returns how many characters were typed.
pub fn type_with(typist: CommandTypist, text: &str) -> Result<usize, TypingError> {
    let program = which::which(typist.program())
        .map_err(|_| no_path(format!("{} is not installed (it is not on PATH)", typist.program())))?;
    type_with_program(typist, &program, text)
}

/// [`type_with`] running the program at `program`.
pub fn type_with_program(typist: CommandTypist, program: &Path, text: &str) -> Result<usize, TypingError> {
    let name = typist.program();
    if let Some(c) = typist.cannot_type(text) {
        return Err(no_path(format!("{name} types only ASCII characters, and the text holds {c:?}")));
    }
    let sent: String = text.chars().filter(|c| keysym_of(*c).is_some()).collect();
    if sent.is_empty() {
        return Ok(0);
    }
    let mut command = Command::new(program);
    match typist {
        // `-` alone: the text comes from stdin, typed as it is (no option parsing of it).
        CommandTypist::Wtype => {
            command.arg("-");
            // wtype decodes its input with the locale's multibyte rules; under the C locale
            // any non-ASCII character stops it.
            if !utf8_locale() {
                command.env("LC_ALL", "C.UTF-8");
            }
        }
        // `--file=-`: stdin, with ydotool 1.x's backslash escapes off (they are off for files)
        // and understood by 0.1.x too; `=` keeps `-` from being read as an option.
        CommandTypist::Ydotool => {
            command.args(["type", "--file=-"]);
            if let Some(socket) = super::path::ydotool_socket() {
                command.env("YDOTOOL_SOCKET", socket);
            }
        }
    }
    run(name, command, sent)?;
    Ok(text.chars().filter(|c| keysym_of(*c).is_some()).count())
}

/// Presses Ctrl+`letter` with `typist` (Ctrl+V pastes what it cannot type, Ctrl+C copies a
/// selection), finding it on PATH.
pub fn press_ctrl(typist: CommandTypist, letter: char) -> Result<(), TypingError> {
    let program = which::which(typist.program())
        .map_err(|_| no_path(format!("{} is not installed (it is not on PATH)", typist.program())))?;
    press_ctrl_with(typist, &program, letter)
}

/// [`press_ctrl`] running the program at `program`.
pub fn press_ctrl_with(typist: CommandTypist, program: &Path, letter: char) -> Result<(), TypingError> {
    let mut command = Command::new(program);
    match typist {
        // Hold Ctrl (`-M`), type the letter, let go (`-m`).
        CommandTypist::Wtype => command.args(["-M", "ctrl", &letter.to_string(), "-m", "ctrl"]),
        // Linux input key codes: 29 is the left Ctrl; `:1` down, `:0` up.
        CommandTypist::Ydotool => {
            let Some(code) = linux_key_code(letter) else {
                return Err(no_path(format!("Perch does not know ydotool's key for {letter:?}")));
            };
            if let Some(socket) = super::path::ydotool_socket() {
                command.env("YDOTOOL_SOCKET", socket);
            }
            command.args(["key", "29:1", &format!("{code}:1"), &format!("{code}:0"), "29:0"])
        }
    };
    run(typist.program(), command, String::new())
}

/// The Linux input key code (`KEY_C`, `KEY_V` of linux/input-event-codes.h) of the letters
/// Perch presses with Ctrl.
fn linux_key_code(letter: char) -> Option<u16> {
    match letter.to_ascii_lowercase() {
        'c' => Some(46),
        'v' => Some(47),
        _ => None,
    }
}

/// Runs `command` with `input` on its stdin; its error output is the error when it fails.
fn run(name: &str, mut command: Command, input: String) -> Result<(), TypingError> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| no_path(format!("{name} could not be started ({e})")))?;
    let stdin = child.stdin.take();
    // Written on a thread while the output is read here, so neither pipe can fill and stall
    // the other; a program that exits without reading (an error) is reported below.
    let writer = std::thread::spawn(move || {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(input.as_bytes());
        }
    });
    let output = child.wait_with_output().map_err(|e| no_path(format!("{name} did not finish ({e})")))?;
    let _ = writer.join();
    if !output.status.success() {
        // ydotool 1.x prints its socket errors on stdout.
        let said = [&output.stderr, &output.stdout]
            .into_iter()
            .map(|bytes| String::from_utf8_lossy(bytes).trim().to_owned())
            .find(|s| !s.is_empty())
            .unwrap_or_else(|| "it said nothing".into());
        return Err(no_path(format!("{name} failed ({}): {}", output.status, clip(&said, 600))));
    }
    Ok(())
}

/// Whether the locale the child inherits decodes UTF-8 (the first set of LC_ALL, LC_CTYPE,
/// LANG, as the C library reads them).
fn utf8_locale() -> bool {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
        .is_some_and(|v| {
            let v = v.to_ascii_lowercase();
            v.contains("utf-8") || v.contains("utf8")
        })
}

fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ydotool_refuses_what_it_cannot_type_and_wtype_takes_anything() {
        assert_eq!(CommandTypist::Ydotool.cannot_type("plain \"ASCII\"\n\t-x"), None);
        assert_eq!(CommandTypist::Ydotool.cannot_type("Hé ✓"), Some('é'));
        assert_eq!(CommandTypist::Wtype.cannot_type("Hé ✓"), None);
    }

    #[test]
    fn a_long_message_is_clipped_on_a_character_boundary() {
        assert_eq!(clip("ééé", 2), "éé…");
        assert_eq!(clip("ok", 5), "ok");
    }
}
