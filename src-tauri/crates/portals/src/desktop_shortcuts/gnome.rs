//! GNOME's own custom shortcuts, where Perch adds one for a shortcut the desktop did not bind
//! (GNOME before 48 has no GlobalShortcuts portal). GNOME keeps them in GSettings: the list key
//! `custom-keybindings` of `org.gnome.settings-daemon.plugins.media-keys` names a path for each,
//! and the relocatable schema `...media-keys.custom-keybinding` at that path holds its `name`,
//! `binding` ("<Alt>period") and `command`. gnome-settings-daemon's media-keys plugin watches
//! them and runs the command when GNOME Shell sees the keys.
//!
//! Perch's entry for an action has a fixed path (`.../custom-keybindings/perch-screenshot/`), so
//! adding it again updates it, and the other entries in the list are never touched. The values
//! go through the `gsettings` program, as a user would write them: no GLib in the engine, and a
//! missing schema is an error rather than the abort GLib's own API makes of it.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{command_for, readable};
use crate::shortcut_portal::{NoTrigger, portal_trigger};

pub const LIST_SCHEMA: &str = "org.gnome.settings-daemon.plugins.media-keys";
pub const LIST_KEY: &str = "custom-keybindings";
pub const ENTRY_SCHEMA: &str = "org.gnome.settings-daemon.plugins.media-keys.custom-keybinding";
const ENTRIES: &str = "/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/";
/// Where a user changes or removes a custom shortcut in GNOME's Settings.
pub const SETTINGS_PLACE: &str = "Settings → Keyboard → View and Customize Shortcuts → Custom Shortcuts";

#[derive(Debug, thiserror::Error)]
pub enum GnomeShortcutError {
    #[error(
        "gsettings is not installed, so Perch cannot add GNOME shortcuts (Debian and Ubuntu: install libglib2.0-bin); add it by hand in {SETTINGS_PLACE}"
    )]
    NoGsettings,
    #[error(
        "GNOME's keyboard shortcut settings ({LIST_SCHEMA}) are not installed here; add the shortcut in your desktop's keyboard settings"
    )]
    NoSchema,
    #[error("`gsettings {args}` failed: {reason}")]
    Failed { args: String, reason: String },
    #[error("gsettings answered {0:?}, which is not the list of strings Perch expected")]
    Unreadable(String),
    #[error(
        "the `perch` command is neither beside Perch nor on PATH, so a desktop shortcut would have nothing to run; reinstall Perch's package"
    )]
    NoCli,
    #[error("the {0} shortcut has no `perch` command a desktop shortcut could run")]
    NoCommand(String),
    #[error("{accelerator:?} cannot be written as a GNOME shortcut: {reason}")]
    Keys { accelerator: String, reason: NoTrigger },
    #[error(
        "GNOME's custom shortcut {name:?} already uses {keys} (it runs `{command}`); change it or pick other keys for Perch, in {SETTINGS_PLACE}"
    )]
    KeysTaken { name: String, keys: String, command: String },
}

type Result<T> = std::result::Result<T, GnomeShortcutError>;

/// A custom shortcut as GNOME keeps it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, specta::Type)]
pub struct GnomeShortcut {
    /// What GNOME's Settings lists it as.
    pub name: String,
    /// GNOME's spelling of the keys ("<Alt>period").
    pub binding: String,
    /// The command line GNOME runs.
    pub command: String,
}

/// The path of Perch's entry for the shortcut `action` ("dictate_anywhere" ->
/// ".../custom-keybindings/perch-dictate-anywhere/").
pub fn entry_path(action: &str) -> String {
    format!("{ENTRIES}perch-{}/", action.replace('_', "-"))
}

/// An accelerator ("Ctrl+Alt+D") as GNOME spells a binding ("<Control><Alt>d").
pub fn gnome_binding(accelerator: &str) -> std::result::Result<String, NoTrigger> {
    let trigger = portal_trigger(accelerator)?;
    let (modifiers, key) = trigger.rsplit_once('+').unwrap_or(("", &trigger));
    let mut out = String::new();
    for modifier in modifiers.split('+').filter(|m| !m.is_empty()) {
        out.push_str(match modifier {
            "CTRL" => "<Control>",
            "ALT" => "<Alt>",
            "SHIFT" => "<Shift>",
            "LOGO" => "<Super>",
            other => return Err(NoTrigger::DesktopLacks("GNOME", other.to_owned())),
        });
    }
    out.push_str(key);
    Ok(out)
}

/// The custom shortcut Perch adds for its shortcut `action` on `accelerator`, running the `perch`
/// CLI at `cli`.
pub fn perch_shortcut(action: &str, accelerator: &str, cli: &Path) -> Result<GnomeShortcut> {
    let command =
        command_for(action).ok_or_else(|| GnomeShortcutError::NoCommand(action.replace('_', " ")))?;
    let binding = gnome_binding(accelerator)
        .map_err(|reason| GnomeShortcutError::Keys { accelerator: accelerator.to_owned(), reason })?;
    let args = command.strip_prefix("perch").unwrap_or(command);
    Ok(GnomeShortcut {
        name: format!("Perch: {}", action.replace('_', " ")),
        binding,
        command: format!("{}{args}", shell_word(&cli.to_string_lossy())),
    })
}

/// The `perch` CLI as installed: the link the package puts beside the app (in a build, the
/// CLI built beside it), else the first on PATH.
pub fn installed_cli() -> Result<PathBuf> {
    perch_foundation::paths::bundled_program("perch")
        .or_else(|| which::which("perch").ok())
        .ok_or(GnomeShortcutError::NoCli)
}

/// `list` with `path` added at its end, unless it is there already.
pub fn with_entry(list: &[String], path: &str) -> Vec<String> {
    let mut out = list.to_vec();
    if !out.iter().any(|p| p == path) {
        out.push(path.to_owned());
    }
    out
}

/// `list` without `path`, the others in their order.
pub fn without_entry(list: &[String], path: &str) -> Vec<String> {
    list.iter().filter(|p| *p != path).cloned().collect()
}

/// A word for a command line as GLib splits it (g_shell_parse_argv, which GNOME uses): quoted
/// only when it needs to be.
fn shell_word(word: &str) -> String {
    if !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+,:@%".contains(c)) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A string in GVariant's text form, as gsettings reads a value.
pub fn string_text(s: &str) -> String {
    format!("'{}'", s.replace('\\', r"\\").replace('\'', r"\'"))
}

/// A list of strings in GVariant's text form.
pub fn strings_text(list: &[String]) -> String {
    format!("[{}]", list.iter().map(|s| string_text(s)).collect::<Vec<_>>().join(", "))
}

/// The list of strings gsettings prints (`@as []`, `['/a/', "/it's/"]`).
pub fn parse_strings(text: &str) -> Result<Vec<String>> {
    let unreadable = || GnomeShortcutError::Unreadable(text.to_owned());
    let inner = text.trim().trim_start_matches("@as").trim();
    let mut rest = inner.strip_prefix('[').and_then(|r| r.strip_suffix(']')).ok_or_else(unreadable)?.trim();
    let mut out = Vec::new();
    while !rest.is_empty() {
        let (item, after) = parse_string_prefix(rest).ok_or_else(unreadable)?;
        out.push(item);
        rest = after.trim_start();
        rest = match rest.strip_prefix(',') {
            Some(r) => r.trim_start(),
            None if rest.is_empty() => rest,
            None => return Err(unreadable()),
        };
    }
    Ok(out)
}

/// The one string gsettings prints (`'text'`).
pub fn parse_string(text: &str) -> Result<String> {
    match parse_string_prefix(text.trim()) {
        Some((s, rest)) if rest.trim().is_empty() => Ok(s),
        _ => Err(GnomeShortcutError::Unreadable(text.to_owned())),
    }
}

/// A quoted string at the start of `text` and what follows it.
fn parse_string_prefix(text: &str) -> Option<(String, &str)> {
    let quote = text.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let mut out = String::new();
    let mut chars = text[1..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\\' => out.push(match chars.next()?.1 {
                'n' => '\n',
                't' => '\t',
                other => other,
            }),
            c if c == quote => return Some((out, &text[1 + i + 1..])),
            c => out.push(c),
        }
    }
    None
}

/// GNOME's custom shortcuts, read and written through `gsettings`.
pub struct Gsettings {
    program: PathBuf,
    /// Added to its environment (the tests' private settings store).
    env: Vec<(String, PathBuf)>,
}

impl Gsettings {
    /// The `gsettings` on PATH, once GNOME's schemas are known to be there.
    pub fn find() -> Result<Self> {
        let program = which::which("gsettings").map_err(|_| GnomeShortcutError::NoGsettings)?;
        let this = Self { program, env: Vec::new() };
        this.run(&["list-keys", LIST_SCHEMA]).map_err(|_| GnomeShortcutError::NoSchema)?;
        Ok(this)
    }

    fn run(&self, args: &[&str]) -> Result<String> {
        let failed = |reason: String| GnomeShortcutError::Failed { args: args.join(" "), reason };
        let out = Command::new(&self.program)
            .args(args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .output()
            .map_err(|e| failed(e.to_string()))?;
        if !out.status.success() {
            return Err(failed(String::from_utf8_lossy(&out.stderr).trim().to_owned()));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn list(&self) -> Result<Vec<String>> {
        parse_strings(&self.run(&["get", LIST_SCHEMA, LIST_KEY])?)
    }

    fn set_list(&self, list: &[String]) -> Result<()> {
        self.run(&["set", LIST_SCHEMA, LIST_KEY, &strings_text(list)]).map(drop)
    }

    fn entry(&self, path: &str) -> Result<GnomeShortcut> {
        let schema = format!("{ENTRY_SCHEMA}:{path}");
        let get = |key| self.run(&["get", &schema, key]).and_then(|t| parse_string(&t));
        Ok(GnomeShortcut { name: get("name")?, binding: get("binding")?, command: get("command")? })
    }

    /// Perch's custom shortcut for `action`, when GNOME's list has it.
    pub fn read(&self, action: &str) -> Result<Option<GnomeShortcut>> {
        let path = entry_path(action);
        if !self.list()?.contains(&path) {
            return Ok(None);
        }
        self.entry(&path).map(Some)
    }

    /// Adds Perch's custom shortcut for `action`, or updates it when it is there; no other
    /// entry is changed, and none that uses the same keys is overridden.
    pub fn write(&self, action: &str, shortcut: &GnomeShortcut) -> Result<()> {
        let path = entry_path(action);
        let list = self.list()?;
        for other in list.iter().filter(|p| **p != path) {
            let theirs = self.entry(other)?;
            if same_keys(&theirs.binding, &shortcut.binding) {
                return Err(GnomeShortcutError::KeysTaken {
                    name: theirs.name,
                    keys: readable_binding(&theirs.binding),
                    command: theirs.command,
                });
            }
        }
        let schema = format!("{ENTRY_SCHEMA}:{path}");
        for (key, value) in
            [("name", &shortcut.name), ("binding", &shortcut.binding), ("command", &shortcut.command)]
        {
            self.run(&["set", &schema, key, &string_text(value)])?;
        }
        // Listed last, so the settings daemon never sees an entry half written.
        self.set_list(&with_entry(&list, &path))
    }

    /// Removes Perch's custom shortcut for `action` (nothing when there is none).
    pub fn remove(&self, action: &str) -> Result<()> {
        let path = entry_path(action);
        let list = self.list()?;
        if list.contains(&path) {
            self.set_list(&without_entry(&list, &path))?;
        }
        let schema = format!("{ENTRY_SCHEMA}:{path}");
        for key in ["name", "binding", "command"] {
            self.run(&["reset", &schema, key])?;
        }
        Ok(())
    }
}

/// Whether two GNOME bindings are the same keys ("<Ctrl><Alt>d" and "<Alt><Control>D" are).
fn same_keys(a: &str, b: &str) -> bool {
    let keys = |binding: &str| {
        let mut parts: Vec<String> = binding
            .to_ascii_lowercase()
            .replace("<ctrl>", "<control>")
            .replace("<primary>", "<control>")
            .split_inclusive('>')
            .map(str::to_owned)
            .collect();
        parts.sort();
        parts
    };
    !a.is_empty() && keys(a) == keys(b)
}

/// A GNOME binding as a person reads it ("<Control><Alt>d" -> "Ctrl+Alt+D").
pub fn readable_binding(binding: &str) -> String {
    let accelerator = binding
        .split_inclusive('>')
        .map(|part| match part.to_ascii_lowercase().as_str() {
            "<control>" | "<ctrl>" | "<primary>" => "Ctrl".to_owned(),
            "<alt>" => "Alt".to_owned(),
            "<shift>" => "Shift".to_owned(),
            "<super>" => "Super".to_owned(),
            "period" => "Period".to_owned(),
            "comma" => "Comma".to_owned(),
            "slash" => "Slash".to_owned(),
            "space" => "Space".to_owned(),
            key if key.chars().count() == 1 => part.to_ascii_uppercase(),
            _ => part.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("+");
    readable(&accelerator)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bindings_use_gnome_modifier_names_and_keysyms() {
        assert_eq!(gnome_binding("Alt+Period").unwrap(), "<Alt>period");
        assert_eq!(gnome_binding("Ctrl+Alt+D").unwrap(), "<Control><Alt>d");
        assert_eq!(gnome_binding("Alt+Shift+Period").unwrap(), "<Alt><Shift>period");
        assert_eq!(gnome_binding("Super+Space").unwrap(), "<Super>space");
        assert_eq!(gnome_binding("F9").unwrap(), "F9");
        assert!(gnome_binding("Alt+Sparkle").is_err());
        assert_eq!(readable_binding("<Control><Alt>d"), "Ctrl+Alt+D");
        assert_eq!(readable_binding("<Alt>period"), "Alt+.");
    }

    #[test]
    fn the_entry_runs_the_installed_cli_and_only_for_actions_it_has() {
        let s = perch_shortcut("dictate_anywhere", "Ctrl+Alt+D", Path::new("/usr/bin/perch")).unwrap();
        assert_eq!(s.command, "/usr/bin/perch dictate --toggle");
        assert_eq!(s.binding, "<Control><Alt>d");
        assert_eq!(s.name, "Perch: dictate anywhere");
        let spaced = perch_shortcut("screenshot", "Alt+Period", Path::new("/opt/my apps/perch")).unwrap();
        assert_eq!(spaced.command, "'/opt/my apps/perch' screenshot");
        assert!(matches!(
            perch_shortcut("push_to_talk", "Ctrl+Alt+Space", Path::new("/usr/bin/perch")),
            Err(GnomeShortcutError::NoCommand(_))
        ));
        assert_eq!(entry_path("dictate_anywhere"), format!("{ENTRIES}perch-dictate-anywhere/"));
    }

    #[test]
    fn adding_keeps_the_users_other_shortcuts_and_never_duplicates() {
        let theirs = vec![format!("{ENTRIES}custom0/"), format!("{ENTRIES}custom1/")];
        let ours = entry_path("screenshot");
        let added = with_entry(&theirs, &ours);
        assert_eq!(added, [theirs[0].clone(), theirs[1].clone(), ours.clone()]);
        // A second add (an update) leaves the list as it was.
        assert_eq!(with_entry(&added, &ours), added);
        assert_eq!(with_entry(&[], &ours), std::slice::from_ref(&ours));
        // Removing takes only Perch's own.
        assert_eq!(without_entry(&added, &ours), theirs);
        assert_eq!(without_entry(&theirs, &ours), theirs);
    }

    #[test]
    fn lists_are_read_and_written_as_gsettings_prints_and_parses_them() {
        assert_eq!(parse_strings("@as []\n").unwrap(), Vec::<String>::new());
        assert_eq!(parse_strings("['/a/', '/b/']\n").unwrap(), ["/a/", "/b/"]);
        assert_eq!(parse_strings(r#"["/it's/", 'x\\y']"#).unwrap(), ["/it's/", r"x\y"]);
        assert!(parse_strings("['/a/' '/b/']").is_err());
        assert!(parse_strings("['/a/").is_err());
        let odd = vec!["/it's/".to_owned(), r"x\y".to_owned()];
        assert_eq!(parse_strings(&strings_text(&odd)).unwrap(), odd);
        assert_eq!(parse_string("'/usr/bin/perch screenshot'\n").unwrap(), "/usr/bin/perch screenshot");
        assert_eq!(parse_string(&string_text("'/opt/my apps/perch' x")).unwrap(), "'/opt/my apps/perch' x");
    }

    /// The real gsettings and GNOME's schemas, with a settings store of its own (GLib's keyfile
    /// backend in a temporary folder) instead of the session's dconf.
    fn private_gsettings() -> (Gsettings, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let program = which::which("gsettings").expect("gsettings (libglib2.0-bin): run make deps");
        let env = vec![
            ("GSETTINGS_BACKEND".into(), "keyfile".into()),
            ("XDG_CONFIG_HOME".into(), dir.path().into()),
        ];
        let gsettings = Gsettings { program, env };
        gsettings.run(&["list-keys", LIST_SCHEMA]).expect("gnome-settings-daemon's schemas: run make deps");
        (gsettings, dir)
    }

    #[test]
    fn gsettings_gets_perchs_entry_beside_the_users_own_updated_in_place_and_removed() {
        let (gsettings, _dir) = private_gsettings();
        // The user's own custom shortcut, as GNOME's Settings writes it.
        let theirs = format!("{ENTRIES}custom0/");
        let their_schema = format!("{ENTRY_SCHEMA}:{theirs}");
        gsettings.run(&["set", &their_schema, "name", "'Terminal'"]).unwrap();
        gsettings.run(&["set", &their_schema, "binding", "'<Super>t'"]).unwrap();
        gsettings.run(&["set", &their_schema, "command", "'gnome-terminal'"]).unwrap();
        gsettings.set_list(std::slice::from_ref(&theirs)).unwrap();

        assert_eq!(gsettings.read("screenshot").unwrap(), None);
        let cli = Path::new("/opt/my apps/perch");
        let shot = perch_shortcut("screenshot", "Alt+Period", cli).unwrap();
        gsettings.write("screenshot", &shot).unwrap();
        assert_eq!(gsettings.read("screenshot").unwrap().as_ref(), Some(&shot));
        assert_eq!(gsettings.list().unwrap(), [theirs.clone(), entry_path("screenshot")]);

        // A second add with other keys updates the one entry.
        let moved = perch_shortcut("screenshot", "Ctrl+Alt+S", cli).unwrap();
        gsettings.write("screenshot", &moved).unwrap();
        assert_eq!(gsettings.read("screenshot").unwrap(), Some(moved));
        assert_eq!(gsettings.list().unwrap(), [theirs.clone(), entry_path("screenshot")]);

        // Keys the user's own shortcut has are not taken from it.
        let clash = perch_shortcut("dictate_anywhere", "Super+T", cli).unwrap();
        let err = gsettings.write("dictate_anywhere", &clash).unwrap_err();
        assert!(matches!(&err, GnomeShortcutError::KeysTaken { name, .. } if name == "Terminal"), "{err}");
        assert_eq!(gsettings.read("dictate_anywhere").unwrap(), None);

        gsettings.remove("screenshot").unwrap();
        assert_eq!(gsettings.read("screenshot").unwrap(), None);
        assert_eq!(gsettings.list().unwrap(), std::slice::from_ref(&theirs));
        assert_eq!(gsettings.entry(&theirs).unwrap().command, "gnome-terminal");
        // Removing what is not there changes nothing.
        gsettings.remove("screenshot").unwrap();
        assert_eq!(gsettings.list().unwrap(), [theirs]);
    }

    #[test]
    fn equal_keys_are_seen_however_gnome_spells_them() {
        assert!(same_keys("<Ctrl><Alt>d", "<Alt><Control>D"));
        assert!(same_keys("<Primary>period", "<Control>period"));
        assert!(!same_keys("<Alt>period", "<Alt><Shift>period"));
        assert!(!same_keys("", ""));
    }
}
