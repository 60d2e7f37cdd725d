//! Builds the RFC 5322 message Gmail sends: CRLF line ends, `MIME-Version: 1.0`, a text/plain
//! UTF-8 body (7bit when it is short-lined ASCII, else base64), non-ASCII header text as RFC 2047
//! encoded words no longer than 75 characters, long headers folded, and a Date and Message-ID.
//! Every field that reaches a header is checked: a CR or LF in one is refused, never stripped, so
//! no argument can add a header (`Bcc:`) of its own. Gmail fills From from the account.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use jiff::Zoned;

use super::address::Mailbox;
use crate::error::GoogleError;

/// A plain-text message to send or save as a draft.
#[derive(Debug, Clone, Default)]
pub struct Outgoing {
    pub to: Vec<Mailbox>,
    pub cc: Vec<Mailbox>,
    pub bcc: Vec<Mailbox>,
    pub subject: String,
    pub body: String,
    /// The Message-ID answered (`<…>`), and the chain of ids before it, for threading.
    pub in_reply_to: Option<String>,
    pub references: Vec<String>,
}

/// RFC 5322's recommended line length; encoded words keep to RFC 2047's 76.
const LINE: usize = 78;
const ENCODED_LINE: usize = 76;
/// `=?UTF-8?B?` and `?=` around each encoded word's base64.
const ENCODED_WORD_OVERHEAD: usize = 12;

/// The message's bytes (all ASCII), with `date` and `message_id` (`<…>`) as given so that a test
/// can expect exact bytes.
pub fn build(message: &Outgoing, date: &Zoned, message_id: &str) -> Result<String, GoogleError> {
    no_line_breaks("subject", &message.subject)?;
    let mut out = String::new();
    for (name, list) in [("To", &message.to), ("Cc", &message.cc), ("Bcc", &message.bcc)] {
        if !list.is_empty() {
            let rendered: Vec<String> = list.iter().map(Mailbox::render).collect();
            out.push_str(&fold_list(name, &rendered));
        }
    }
    out.push_str(&unstructured("Subject", &message.subject));
    let date = jiff::fmt::rfc2822::to_string(date).map_err(|e| GoogleError::invalid(e.to_string()))?;
    out.push_str(&format!("Date: {date}\r\n"));
    out.push_str(&format!("Message-ID: {}\r\n", msg_id(message_id)?));
    if let Some(parent) = &message.in_reply_to {
        out.push_str(&format!("In-Reply-To: {}\r\n", msg_id(parent)?));
    }
    if !message.references.is_empty() {
        // The thread's own ids come from mail Perch did not write: one that is not a Message-ID
        // is left out rather than failing the reply.
        let ids: Vec<String> = message.references.iter().filter_map(|id| msg_id(id).ok()).collect();
        out.push_str(&fold_words("References", &ids));
    }
    out.push_str("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=UTF-8\r\n");
    let body = crlf(&message.body);
    if body.is_ascii() && body.split("\r\n").all(|line| line.len() <= 998) {
        out.push_str("Content-Transfer-Encoding: 7bit\r\n\r\n");
        out.push_str(&body);
    } else {
        out.push_str("Content-Transfer-Encoding: base64\r\n\r\n");
        let encoded = STANDARD.encode(body.as_bytes());
        for line in encoded.as_bytes().chunks(76) {
            out.push_str(std::str::from_utf8(line).unwrap_or_default());
            out.push_str("\r\n");
        }
    }
    Ok(out)
}

/// Refuses CR and LF (and NUL) in a header field's text.
pub fn no_line_breaks(what: &str, text: &str) -> Result<(), GoogleError> {
    if text.contains(['\r', '\n', '\0']) {
        return Err(GoogleError::invalid(format!(
            "the {what} contains a line break, which a mail header cannot hold; write it on one line"
        )));
    }
    Ok(())
}

/// A Message-ID as `<left@right>`, without spaces or line breaks.
fn msg_id(id: &str) -> Result<String, GoogleError> {
    let id = id.trim();
    let inner = id.strip_prefix('<').and_then(|i| i.strip_suffix('>')).unwrap_or(id);
    let valid = inner.contains('@')
        && inner.bytes().all(|b| b.is_ascii_graphic() && !matches!(b, b'<' | b'>' | b'"' | b'\\' | b','));
    if valid {
        Ok(format!("<{inner}>"))
    } else {
        Err(GoogleError::invalid(format!("{id:?} is not a Message-ID")))
    }
}

/// Body text with every line ending CRLF, ending with one.
fn crlf(text: &str) -> String {
    let mut out = text.replace("\r\n", "\n").replace('\r', "\n").replace('\n', "\r\n");
    if !out.ends_with("\r\n") {
        out.push_str("\r\n");
    }
    out
}

/// An unstructured header (Subject): ASCII folded at spaces, anything else as encoded words.
fn unstructured(name: &str, text: &str) -> String {
    let plain =
        text.is_ascii() && !text.contains("=?") && text.split(' ').all(|w| w.len() < LINE - name.len() - 2);
    if plain {
        let words: Vec<String> = text.split(' ').map(str::to_owned).collect();
        return fold_words(name, &words);
    }
    format!("{name}: {}\r\n", encoded_words(text, name.len() + 2).join("\r\n "))
}

/// `text` as RFC 2047 B-encoded words: each whole characters of UTF-8, the first fitting after
/// `first_used` characters of its line and the rest after the folding space, all within 76.
pub fn encoded_words(text: &str, first_used: usize) -> Vec<String> {
    let room = |used: usize| (ENCODED_LINE.saturating_sub(used + ENCODED_WORD_OVERHEAD) / 4 * 3).max(3);
    let mut words = Vec::new();
    let mut chunk = String::new();
    let mut budget = room(first_used);
    for c in text.chars() {
        if chunk.len() + c.len_utf8() > budget {
            words.push(format!("=?UTF-8?B?{}?=", STANDARD.encode(chunk.as_bytes())));
            chunk.clear();
            budget = room(1);
        }
        chunk.push(c);
    }
    if !chunk.is_empty() || words.is_empty() {
        words.push(format!("=?UTF-8?B?{}?=", STANDARD.encode(chunk.as_bytes())));
    }
    words
}

/// `Name: w1 w2 …`, folded before a word that would pass 78 characters.
fn fold_words(name: &str, words: &[String]) -> String {
    let mut out = format!("{name}:");
    let mut line = out.len();
    for word in words {
        if line + 1 + word.len() > LINE && line > name.len() + 1 {
            out.push_str("\r\n");
            line = 0;
        }
        out.push(' ');
        out.push_str(word);
        line += 1 + word.len();
    }
    out.push_str("\r\n");
    out
}

/// `Name: a, b, …`, folded after a comma when the next address would pass 78 characters.
fn fold_list(name: &str, items: &[String]) -> String {
    let with_commas: Vec<String> = items
        .iter()
        .enumerate()
        .map(|(i, item)| if i + 1 < items.len() { format!("{item},") } else { item.clone() })
        .collect();
    fold_words(name, &with_commas)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date() -> Zoned {
        "2026-03-09T14:05:00+01:00[Europe/Paris]".parse().unwrap()
    }

    fn to(s: &str) -> Vec<Mailbox> {
        vec![Mailbox::parse(s).unwrap()]
    }

    #[test]
    fn a_reply_with_threading_headers_and_a_non_ascii_subject() {
        let message = Outgoing {
            to: to("Zoë Martin <zoe@example.org>"),
            subject: "Re: Café menu — déjà vu".into(),
            body: "Merci!\nSee you at 12.".into(),
            in_reply_to: Some("<orig-2@mail.example.org>".into()),
            references: vec!["<orig-1@mail.example.org>".into(), "<orig-2@mail.example.org>".into()],
            ..Outgoing::default()
        };
        let raw = build(&message, &date(), "<perch-1@example.com>").unwrap();
        assert_eq!(
            raw,
            "To: =?UTF-8?B?Wm/DqyBNYXJ0aW4=?= <zoe@example.org>\r\n\
             Subject: =?UTF-8?B?UmU6IENhZsOpIG1lbnUg4oCUIGTDqWrDoCB2dQ==?=\r\n\
             Date: Mon, 9 Mar 2026 14:05:00 +0100\r\n\
             Message-ID: <perch-1@example.com>\r\n\
             In-Reply-To: <orig-2@mail.example.org>\r\n\
             References: <orig-1@mail.example.org> <orig-2@mail.example.org>\r\n\
             MIME-Version: 1.0\r\n\
             Content-Type: text/plain; charset=UTF-8\r\n\
             Content-Transfer-Encoding: 7bit\r\n\
             \r\n\
             Merci!\r\nSee you at 12.\r\n"
        );
    }

    #[test]
    fn a_draft_may_wait_for_recipients() {
        let draft = Outgoing { subject: "Ideas".into(), body: "- one".into(), ..Outgoing::default() };
        let raw = build(&draft, &date(), "<a@b.c>").unwrap();
        assert!(raw.starts_with("Subject: Ideas\r\nDate: "), "{raw}");
    }

    #[test]
    fn line_breaks_in_any_field_are_refused() {
        let base = Outgoing { to: to("ann@example.org"), subject: "Hi".into(), ..Outgoing::default() };
        let injected = Outgoing { subject: "Hi\r\nBcc: eve@example.net".into(), ..base.clone() };
        assert!(build(&injected, &date(), "<a@b>").unwrap_err().to_string().contains("line break"));
        let bare_lf = Outgoing { subject: "Hi\nX-Evil: 1".into(), ..base.clone() };
        assert!(build(&bare_lf, &date(), "<a@b>").is_err());
        assert!(Mailbox::parse("Ann\r\nBcc: eve@example.net <ann@example.org>").is_err());
        assert!(Mailbox::parse("ann@example.org\r\nBcc: eve@example.net").is_err());
        let bad_reply = Outgoing { in_reply_to: Some("<a@b>\r\nBcc: eve@x.net".into()), ..base };
        assert!(build(&bad_reply, &date(), "<a@b>").is_err());
    }

    #[test]
    fn long_subjects_fold_and_encoded_words_stay_short() {
        let long =
            "Quarterly planning notes for the hardware team, with the budget figures and open questions";
        let message = Outgoing { to: to("ann@example.org"), subject: long.into(), ..Outgoing::default() };
        let raw = build(&message, &date(), "<a@b.c>").unwrap();
        let subject: Vec<&str> =
            raw.split("\r\n").skip_while(|l| !l.starts_with("Subject:")).take(2).collect();
        assert!(subject[0].len() <= 78 && subject[1].starts_with(' '), "{subject:?}");
        assert_eq!(format!("{}{}", subject[0], subject[1]), format!("Subject: {long}"));

        let accented = "Réunion ".repeat(20);
        let words = encoded_words(&accented, "Subject: ".len());
        assert!(words.len() > 2);
        assert!(words.iter().all(|w| w.len() <= 75), "{words:?}");
        assert!(words[0].len() + "Subject: ".len() <= 76);
        // Each word holds whole characters, so each decodes alone.
        for w in &words {
            let b64 = w.trim_start_matches("=?UTF-8?B?").trim_end_matches("?=");
            assert!(String::from_utf8(STANDARD.decode(b64).unwrap()).is_ok());
        }
    }

    #[test]
    fn non_ascii_bodies_are_base64_in_short_lines() {
        let message = Outgoing {
            to: to("ann@example.org"),
            subject: "x".into(),
            body: "Grüße\n".repeat(40),
            ..Outgoing::default()
        };
        let raw = build(&message, &date(), "<a@b.c>").unwrap();
        let (head, body) = raw.split_once("\r\n\r\n").unwrap();
        assert!(head.ends_with("Content-Transfer-Encoding: base64"));
        assert!(body.split("\r\n").all(|l| l.len() <= 76));
        let decoded = STANDARD.decode(body.replace("\r\n", "")).unwrap();
        assert_eq!(String::from_utf8(decoded).unwrap(), "Grüße\r\n".repeat(40));
    }
}
