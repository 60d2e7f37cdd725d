//! Perch's accelerators ("Alt+Period", the form tauri's global-shortcut plugin parses) in the
//! form of the XDG shortcuts specification the portal takes as `preferred_trigger`: the
//! modifiers CTRL, ALT, SHIFT, NUM and LOGO and one xkbcommon keysym name, joined by '+'
//! ("ALT+period").

/// Why an accelerator cannot be named to a desktop.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoTrigger {
    #[error("it is empty")]
    Empty,
    #[error("{0:?} is not a modifier")]
    Modifier(String),
    #[error("{0:?} is not a key Perch can name to the desktop")]
    Key(String),
    /// A modifier the portal knows that this desktop's own settings do not ("GNOME", "NUM").
    #[error("{0} has no modifier {1}")]
    DesktopLacks(&'static str, String),
}

/// The portal's trigger for `accelerator`, or why it has none.
pub fn portal_trigger(accelerator: &str) -> Result<String, NoTrigger> {
    let parts: Vec<&str> = accelerator.split('+').map(str::trim).collect();
    let Some((key, modifiers)) = parts.split_last() else { return Err(NoTrigger::Empty) };
    let mut out: Vec<&str> = Vec::new();
    for m in modifiers {
        let name = modifier(m).ok_or_else(|| NoTrigger::Modifier((*m).to_owned()))?;
        if !out.contains(&name) {
            out.push(name);
        }
    }
    // The specification's order, so equal shortcuts compare equal.
    out.sort_by_key(|m| ["CTRL", "ALT", "SHIFT", "NUM", "LOGO"].iter().position(|o| o == m));
    let key = keysym(key).ok_or_else(|| NoTrigger::Key((*key).to_owned()))?;
    let mut trigger = out.join("+");
    if !trigger.is_empty() {
        trigger.push('+');
    }
    trigger.push_str(&key);
    Ok(trigger)
}

fn modifier(name: &str) -> Option<&'static str> {
    Some(match name.to_ascii_uppercase().as_str() {
        "CTRL" | "CONTROL" | "CMDORCTRL" | "CMDORCONTROL" | "COMMANDORCTRL" | "COMMANDORCONTROL" => "CTRL",
        "ALT" | "OPTION" => "ALT",
        "SHIFT" => "SHIFT",
        "SUPER" | "META" | "CMD" | "COMMAND" => "LOGO",
        _ => return None,
    })
}

/// The xkbcommon keysym name (XKB_KEY_* without the prefix) of a key as the accelerator names
/// it: letters and digits ("A", "KeyA", "7", "Digit7"), F-keys, and the named keys below.
fn keysym(key: &str) -> Option<String> {
    let upper = key.to_ascii_uppercase();
    let bare = upper.strip_prefix("KEY").or_else(|| upper.strip_prefix("DIGIT")).unwrap_or(&upper);
    if bare.len() == 1 && bare.chars().all(|c| c.is_ascii_alphanumeric()) {
        return Some(bare.to_ascii_lowercase());
    }
    if let Some(n) =
        upper.strip_prefix('F').and_then(|n| n.parse::<u8>().ok()).filter(|n| (1..=35).contains(n))
    {
        return Some(format!("F{n}"));
    }
    if let Some(n) = upper.strip_prefix("NUMPAD").and_then(|n| n.parse::<u8>().ok()).filter(|n| *n <= 9) {
        return Some(format!("KP_{n}"));
    }
    let name = match upper.as_str() {
        "PERIOD" | "." => "period",
        "COMMA" | "," => "comma",
        "MINUS" | "-" => "minus",
        "EQUAL" | "=" => "equal",
        "SEMICOLON" | ";" => "semicolon",
        "QUOTE" | "'" => "apostrophe",
        "BACKQUOTE" | "`" => "grave",
        "SLASH" | "/" => "slash",
        "BACKSLASH" | "\\" => "backslash",
        "BRACKETLEFT" | "[" => "bracketleft",
        "BRACKETRIGHT" | "]" => "bracketright",
        "SPACE" => "space",
        "ENTER" | "RETURN" => "Return",
        "TAB" => "Tab",
        "BACKSPACE" => "BackSpace",
        "ESCAPE" | "ESC" => "Escape",
        "DELETE" => "Delete",
        "INSERT" => "Insert",
        "HOME" => "Home",
        "END" => "End",
        "PAGEUP" => "Page_Up",
        "PAGEDOWN" => "Page_Down",
        "ARROWUP" | "UP" => "Up",
        "ARROWDOWN" | "DOWN" => "Down",
        "ARROWLEFT" | "LEFT" => "Left",
        "ARROWRIGHT" | "RIGHT" => "Right",
        "PRINTSCREEN" => "Print",
        "PAUSE" => "Pause",
        _ => return None,
    };
    Some(name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::portal_trigger;

    #[test]
    fn accelerators_become_shortcut_spec_triggers() {
        assert_eq!(portal_trigger("Alt+Period").unwrap(), "ALT+period");
        assert_eq!(portal_trigger("Alt+Shift+Period").unwrap(), "ALT+SHIFT+period");
        assert_eq!(portal_trigger("shift+ctrl+KeyS").unwrap(), "CTRL+SHIFT+s");
        assert_eq!(portal_trigger("CmdOrCtrl+Alt+Enter").unwrap(), "CTRL+ALT+Return");
        assert_eq!(portal_trigger("Super+Space").unwrap(), "LOGO+space");
        assert_eq!(portal_trigger("F12").unwrap(), "F12");
        assert_eq!(portal_trigger("Ctrl+Digit7").unwrap(), "CTRL+7");
        assert_eq!(portal_trigger("Alt+PageDown").unwrap(), "ALT+Page_Down");
    }

    #[test]
    fn what_has_no_keysym_is_refused_with_the_reason() {
        assert!(
            portal_trigger("Alt+Hyper+A").unwrap_err().to_string().contains("\"Hyper\" is not a modifier")
        );
        assert!(portal_trigger("Alt+Sparkle").unwrap_err().to_string().contains("\"Sparkle\" is not a key"));
        assert!(portal_trigger("Alt+").is_err());
        assert!(portal_trigger("F99").is_err());
    }
}
