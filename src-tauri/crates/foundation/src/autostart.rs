//! Start at login: Perch's XDG autostart entry (`~/.config/autostart/dev.perch.app.desktop`),
//! which every desktop Perch supports (GNOME, KDE, sway with a session manager or
//! `dex -a`, Xfce) runs at the start of a session.
//!
//! The file is the one record of the choice: the switch in Settings reads it, so an entry the
//! user removed or turned off in the desktop's own settings (GNOME Tweaks writes
//! `X-GNOME-Autostart-enabled=false`, KDE and the XDG rules `Hidden=true`) shows as off. The
//! entry starts Perch with [`AUTOSTART_ARG`]: as its bubble, without taking the focus, and a
//! second start hands over to the first without showing anything. `TryExec` names the same
//! program, so an entry left behind by an uninstalled Perch is skipped by the desktop.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The argument the entry starts Perch with.
pub const AUTOSTART_ARG: &str = "--autostart";
/// The entry's file name: the app's identifier, as desktops expect.
pub const ENTRY_FILE: &str = "dev.perch.app.desktop";

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AutostartError {
    #[error("no configuration folder is known (HOME and XDG_CONFIG_HOME are unset)")]
    NoConfigDir,
    #[error(
        "Perch's program path {0} is not UTF-8 or holds a control character, which an autostart entry cannot name"
    )]
    UnnamablePath(PathBuf),
    #[error("could not write {path}: {source}. Check that the folder is yours and writable")]
    Write { path: PathBuf, source: io::Error },
    #[error("could not remove {path}: {source}")]
    Remove { path: PathBuf, source: io::Error },
}

/// Whether Perch starts at login, as the entry on disk says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum AutostartState {
    /// No entry.
    Off,
    /// An entry the desktop runs.
    On,
    /// An entry the desktop's own settings turned off (`Hidden=true` or
    /// `X-GNOME-Autostart-enabled=false`); turning it on writes Perch's entry again.
    TurnedOffByDesktop,
}

/// The autostart folder of one user.
#[derive(Debug, Clone)]
pub struct Autostart {
    dir: PathBuf,
}

impl Autostart {
    /// `$XDG_CONFIG_HOME/autostart`, else `$HOME/.config/autostart` (the XDG rules; a relative
    /// `XDG_CONFIG_HOME` is invalid and ignored).
    pub fn for_user() -> Result<Self, AutostartError> {
        let config = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| {
                std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".config"))
            })
            .ok_or(AutostartError::NoConfigDir)?;
        Ok(Self::in_dir(config.join("autostart")))
    }

    pub fn in_dir(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    pub fn entry_path(&self) -> PathBuf {
        self.dir.join(ENTRY_FILE)
    }

    pub fn state(&self) -> AutostartState {
        let Ok(text) = fs::read_to_string(self.entry_path()) else { return AutostartState::Off };
        let turned_off = entry_lines(&text).any(|(key, value)| {
            (key == "Hidden" && value == "true") || (key == "X-GNOME-Autostart-enabled" && value == "false")
        });
        if turned_off { AutostartState::TurnedOffByDesktop } else { AutostartState::On }
    }

    /// Writes the entry for `program` (replacing one turned off elsewhere), atomically: a
    /// session starting meanwhile reads the old file or the new one, never half of one.
    pub fn enable(&self, program: &Path) -> Result<(), AutostartError> {
        let text = entry_text(program)?;
        let path = self.entry_path();
        let write = |source| AutostartError::Write { path: path.clone(), source };
        fs::create_dir_all(&self.dir).map_err(write)?;
        let partial = self.dir.join(format!(".{ENTRY_FILE}.partial"));
        fs::write(&partial, text).map_err(write)?;
        fs::rename(&partial, &path).map_err(write)
    }

    /// Removes the entry; nothing to remove is not an error.
    pub fn disable(&self) -> Result<(), AutostartError> {
        let path = self.entry_path();
        match fs::remove_file(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(AutostartError::Remove { path, source: e }),
            _ => Ok(()),
        }
    }
}

/// The program an entry should start: the AppImage when Perch runs from one (the mounted
/// binary inside it is gone once it ends), else this executable.
pub fn program() -> io::Result<PathBuf> {
    if let Some(image) = std::env::var_os("APPIMAGE").map(PathBuf::from).filter(|p| p.is_absolute()) {
        return Ok(image);
    }
    std::env::current_exe()
}

/// The whole entry for `program`.
pub fn entry_text(program: &Path) -> Result<String, AutostartError> {
    // A desktop entry is UTF-8: a path that is not cannot be named in one (written lossily, it
    // would name another file).
    let Some(text) = program.to_str().filter(|t| !t.chars().any(char::is_control)) else {
        return Err(AutostartError::UnnamablePath(program.to_owned()));
    };
    let exec = exec_argument(text);
    Ok(format!(
        "[Desktop Entry]\n\
         Type=Application\n\
         Name=Perch\n\
         Comment=Starts Perch as its bubble when you log in\n\
         Exec={exec} {AUTOSTART_ARG}\n\
         TryExec={try_exec}\n\
         Icon=perch-desktop\n\
         Terminal=false\n\
         X-GNOME-Autostart-enabled=true\n",
        try_exec = escape_string(text),
    ))
}

/// One argument of `Exec` as the Desktop Entry Specification quotes it: in double quotes when
/// it holds a reserved character, with `"`, `` ` ``, `$` and `\` escaped inside, then escaped
/// again as a string value (`\` doubled), and `%` doubled so it is no field code.
fn exec_argument(arg: &str) -> String {
    const RESERVED: &[char] =
        &[' ', '\t', '"', '\'', '\\', '>', '<', '~', '|', '&', ';', '$', '*', '?', '#', '(', ')', '`'];
    let quoted = if arg.contains(RESERVED) {
        let mut out = String::from("\"");
        for c in arg.chars() {
            if matches!(c, '"' | '`' | '$' | '\\') {
                out.push('\\');
            }
            out.push(c);
        }
        out.push('"');
        out
    } else {
        arg.to_owned()
    };
    escape_string(&quoted).replace('%', "%%")
}

/// A string value's own escapes (only the backslash can occur here: no control characters).
fn escape_string(value: &str) -> String {
    value.replace('\\', "\\\\")
}

/// `key=value` lines of the `[Desktop Entry]` group.
fn entry_lines(text: &str) -> impl Iterator<Item = (&str, &str)> {
    let mut in_entry = false;
    text.lines().filter_map(move |line| {
        let line = line.trim();
        if line.starts_with('[') {
            in_entry = line == "[Desktop Entry]";
            return None;
        }
        if !in_entry || line.starts_with('#') {
            return None;
        }
        let (key, value) = line.split_once('=')?;
        Some((key.trim(), value.trim()))
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_switch_writes_and_removes_the_entry() {
        let dir = tempfile::tempdir().unwrap();
        let autostart = Autostart::in_dir(dir.path().join("autostart"));
        assert_eq!(autostart.state(), AutostartState::Off);
        autostart.disable().unwrap();
        autostart.enable(Path::new("/usr/bin/perch-desktop")).unwrap();
        assert_eq!(autostart.state(), AutostartState::On);
        let text = fs::read_to_string(autostart.entry_path()).unwrap();
        assert!(text.contains("\nExec=/usr/bin/perch-desktop --autostart\n"), "{text}");
        assert!(text.contains("\nTryExec=/usr/bin/perch-desktop\n"), "{text}");
        let names: Vec<_> =
            fs::read_dir(dir.path().join("autostart")).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, [ENTRY_FILE], "no partial file left");
        autostart.disable().unwrap();
        assert_eq!(autostart.state(), AutostartState::Off);
    }

    #[test]
    fn an_entry_turned_off_by_the_desktop_reads_as_off_and_is_replaced_when_turned_on() {
        let dir = tempfile::tempdir().unwrap();
        let autostart = Autostart::in_dir(dir.path());
        for off in ["X-GNOME-Autostart-enabled=false", "Hidden=true", "Hidden = true"] {
            let text =
                entry_text(Path::new("/opt/perch")).unwrap().replace("X-GNOME-Autostart-enabled=true", off);
            fs::write(autostart.entry_path(), text).unwrap();
            assert_eq!(autostart.state(), AutostartState::TurnedOffByDesktop, "{off}");
        }
        // The same key in another group is not the entry's.
        fs::write(autostart.entry_path(), "[Desktop Entry]\nExec=x\n[Desktop Action new]\nHidden=true\n")
            .unwrap();
        assert_eq!(autostart.state(), AutostartState::On);
        autostart.enable(Path::new("/opt/perch")).unwrap();
        assert_eq!(autostart.state(), AutostartState::On);
    }

    #[test]
    fn exec_quotes_what_the_specification_reserves() {
        assert_eq!(exec_argument("/usr/bin/perch-desktop"), "/usr/bin/perch-desktop");
        assert_eq!(exec_argument("/home/a b/Perch.AppImage"), "\"/home/a b/Perch.AppImage\"");
        // `$` escaped inside the quotes, then the backslash doubled as a string value.
        assert_eq!(exec_argument("/home/$x/perch"), "\"/home/\\\\$x/perch\"");
        assert_eq!(exec_argument("/home/a\\b"), "\"/home/a\\\\\\\\b\"");
        assert_eq!(exec_argument("/opt/100%/perch"), "/opt/100%%/perch");
        assert!(matches!(entry_text(Path::new("/tmp/a\nb")), Err(AutostartError::UnnamablePath(_))));
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let not_utf8 = std::ffi::OsStr::from_bytes(b"/opt/\xff/perch");
            assert!(matches!(entry_text(Path::new(not_utf8)), Err(AutostartError::UnnamablePath(_))));
        }
    }

    /// The entries pass the freedesktop validator, with the paths a user may really have.
    #[test]
    fn entries_pass_desktop_file_validate() {
        let dir = tempfile::tempdir().unwrap();
        for program in
            ["/usr/bin/perch-desktop", "/home/a b/Apps/Perch (1).AppImage", "/opt/$HOME/100%/perch"]
        {
            let path = dir.path().join(ENTRY_FILE);
            fs::write(&path, entry_text(Path::new(program)).unwrap()).unwrap();
            let out = std::process::Command::new("desktop-file-validate").arg(&path).output().expect(
                "desktop-file-validate runs (apt install desktop-file-utils; make deps-test installs it)",
            );
            let said =
                format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
            assert!(out.status.success() && said.trim().is_empty(), "{program}: {said}");
        }
    }
}
