//! Where the desktop binds no keys for Perch (no GlobalShortcuts portal: sway, GNOME before 48;
//! or one that answers with nothing bound: KDE Plasma 5.27), each shortcut is bound in the
//! desktop's own keyboard settings to the `perch` command that does the same. This says, for the
//! desktop Perch runs on, which command that is and exactly how to bind it there, so the user is
//! told what to do instead of only that the key does not work.

pub mod gnome;

use crate::shortcut_portal::{NoTrigger, portal_trigger};

/// The desktops whose own shortcut settings Perch can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Desktop {
    Sway,
    Gnome,
    Kde,
    Other,
}

impl Desktop {
    /// This session's desktop, from `XDG_CURRENT_DESKTOP`.
    pub fn current() -> Self {
        Self::named(&std::env::var("XDG_CURRENT_DESKTOP").unwrap_or_default())
    }

    /// The desktop a `XDG_CURRENT_DESKTOP` value names: a colon-separated list, most specific
    /// first ("ubuntu:GNOME", "KDE", "sway").
    pub fn named(value: &str) -> Self {
        for part in value.split(':').map(str::to_ascii_lowercase) {
            match part.as_str() {
                "sway" => return Self::Sway,
                "gnome" | "gnome-classic" | "gnome-flashback" => return Self::Gnome,
                "kde" => return Self::Kde,
                _ => {}
            }
        }
        Self::Other
    }
}

/// The `perch` command that does what the shortcut `name` does, or None where no command can
/// (push to talk listens while a key is held, and a desktop's own shortcut only runs a command
/// when it is pressed).
pub fn command_for(name: &str) -> Option<&'static str> {
    Some(match name {
        "screenshot" => "perch screenshot",
        "screenshot_window" => "perch screenshot --mode window",
        "selection" => "perch selection",
        "dictate_anywhere" => "perch dictate --toggle",
        "toggle" => "perch toggle",
        _ => return None,
    })
}

/// An accelerator ("Alt+Period") as sway's `bindsym` names it ("Mod1+period").
pub fn sway_keys(accelerator: &str) -> Result<String, NoTrigger> {
    let trigger = portal_trigger(accelerator)?;
    Ok(trigger
        .split('+')
        .map(|part| match part {
            "CTRL" => "Ctrl",
            "ALT" => "Mod1",
            "SHIFT" => "Shift",
            "LOGO" => "Mod4",
            "NUM" => "Mod2",
            key => key,
        })
        .collect::<Vec<_>>()
        .join("+"))
}

/// An accelerator as a person reads it on a keyboard ("Alt+Period" -> "Alt+.", "Ctrl+KeyE" ->
/// "Ctrl+E"), for the desktops whose settings ask the user to press the keys.
pub fn readable(accelerator: &str) -> String {
    accelerator
        .split('+')
        .map(|part| {
            let part = part.trim();
            let bare = part.strip_prefix("Key").or_else(|| part.strip_prefix("Digit")).unwrap_or(part);
            match bare {
                "Period" => ".",
                "Comma" => ",",
                "Minus" => "-",
                "Equal" => "=",
                "Slash" => "/",
                "Backslash" => "\\",
                "Semicolon" => ";",
                "Quote" => "'",
                "Backquote" => "`",
                other => other,
            }
            .to_owned()
        })
        .collect::<Vec<_>>()
        .join("+")
}

/// What the user can do on `desktop` so that `accelerator` does what the shortcut `name` does.
pub fn how_to_bind(desktop: Desktop, name: &str, accelerator: &str) -> String {
    let Some(command) = command_for(name) else {
        return "Push to talk needs a key held down, which only a desktop with the GlobalShortcuts portal reports to Perch; bind `perch dictate --toggle` in your desktop's keyboard settings instead (press once to start, again to stop).".into();
    };
    let keys = readable(accelerator);
    match desktop {
        Desktop::Sway => match sway_keys(accelerator) {
            Ok(keys) => format!(
                "Add `bindsym {keys} exec {command}` to your sway config (~/.config/sway/config), then run `swaymsg reload`."
            ),
            Err(_) => format!(
                "Bind `{command}` to a key in your sway config (`bindsym`), then run `swaymsg reload`."
            ),
        },
        Desktop::Gnome => format!(
            "In Settings → Keyboard → View and Customize Shortcuts → Custom Shortcuts, add one for the keys {keys} with the command `{command}`."
        ),
        Desktop::Kde => format!(
            "In System Settings → Keyboard → Shortcuts, choose Add New → Command or Script, for the keys {keys} with the command `{command}`."
        ),
        Desktop::Other => format!("Bind {keys} to `{command}` in your desktop's keyboard settings."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_desktop_is_read_from_the_most_specific_name_it_knows() {
        assert_eq!(Desktop::named("sway"), Desktop::Sway);
        assert_eq!(Desktop::named("ubuntu:GNOME"), Desktop::Gnome);
        assert_eq!(Desktop::named("KDE"), Desktop::Kde);
        assert_eq!(Desktop::named("X-Cinnamon"), Desktop::Other);
        assert_eq!(Desktop::named(""), Desktop::Other);
    }

    #[test]
    fn sway_keys_use_its_modifier_names_and_xkb_keysyms() {
        assert_eq!(sway_keys("Alt+Period").unwrap(), "Mod1+period");
        assert_eq!(sway_keys("Ctrl+Alt+D").unwrap(), "Ctrl+Mod1+d");
        assert_eq!(sway_keys("Alt+Shift+Period").unwrap(), "Mod1+Shift+period");
        assert_eq!(sway_keys("Super+Space").unwrap(), "Mod4+space");
        assert!(sway_keys("Alt+Sparkle").is_err());
    }

    #[test]
    fn keys_are_named_as_a_keyboard_shows_them() {
        assert_eq!(readable("Alt+Period"), "Alt+.");
        assert_eq!(readable("Ctrl+Alt+KeyE"), "Ctrl+Alt+E");
        assert_eq!(readable("Ctrl+Alt+D"), "Ctrl+Alt+D");
        assert_eq!(readable("Alt+Shift+Period"), "Alt+Shift+.");
        assert_eq!(readable("Ctrl+Digit7"), "Ctrl+7");
    }

    #[test]
    fn each_desktop_is_told_the_command_and_where_to_bind_it() {
        let sway = how_to_bind(Desktop::Sway, "screenshot", "Alt+Period");
        assert_eq!(
            sway,
            "Add `bindsym Mod1+period exec perch screenshot` to your sway config (~/.config/sway/config), then run `swaymsg reload`."
        );
        let gnome = how_to_bind(Desktop::Gnome, "dictate_anywhere", "Ctrl+Alt+D");
        assert!(gnome.contains("Custom Shortcuts") && gnome.contains("`perch dictate --toggle`"), "{gnome}");
        // The keys never end the sentence: "Alt+.." would read as a typo.
        assert!(gnome.contains("for the keys Ctrl+Alt+D with"), "{gnome}");
        let kde = how_to_bind(Desktop::Kde, "selection", "Ctrl+Alt+E");
        assert!(kde.contains("System Settings") && kde.contains("`perch selection`"), "{kde}");
        let window = how_to_bind(Desktop::Other, "screenshot_window", "Alt+Shift+Period");
        assert!(window.contains("`perch screenshot --mode window`"), "{window}");
        let talk = how_to_bind(Desktop::Sway, "push_to_talk", "Ctrl+Alt+Space");
        assert!(talk.contains("held down") && talk.contains("perch dictate --toggle"), "{talk}");
    }
}
