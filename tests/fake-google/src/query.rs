//! A useful subset of Gmail's search syntax: `from:`, `to:`, `cc:`, `subject:`, `label:`,
//! `is:`, `in:`, `has:attachment`, `category:`, `filename:`, `newer_than:`, `older_than:`,
//! `after:`, `before:`, `rfc822msgid:`, plain words and "quoted phrases", `-` for not, `OR`.

use jiff::civil::Date;
use jiff::tz::TimeZone;

use crate::mailbox::{Mailbox, Message};
use crate::mime;

struct Term {
    negated: bool,
    key: Option<String>,
    value: String,
}

/// A conjunction of disjunctions.
pub(crate) struct Query {
    clauses: Vec<Vec<Term>>,
}

fn tokens(q: &str) -> Vec<String> {
    let mut out = Vec::new();
    let (mut current, mut quoted) = (String::new(), false);
    for c in q.chars() {
        match c {
            '"' => quoted = !quoted,
            c if c.is_whitespace() && !quoted => {
                if !current.is_empty() {
                    out.push(std::mem::take(&mut current));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

impl Query {
    pub fn parse(q: &str) -> Query {
        let mut clauses: Vec<Vec<Term>> = Vec::new();
        let mut join_next = false;
        for token in tokens(q) {
            if token == "OR" {
                join_next = !clauses.is_empty();
                continue;
            }
            let (negated, token) = match token.strip_prefix('-') {
                Some(rest) if !rest.is_empty() => (true, rest.to_owned()),
                _ => (false, token),
            };
            let term = match token.split_once(':') {
                Some((key, value))
                    if !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') =>
                {
                    Term { negated, key: Some(key.to_ascii_lowercase()), value: value.to_lowercase() }
                }
                _ => Term { negated, key: None, value: token.to_lowercase() },
            };
            match clauses.last_mut() {
                Some(last) if join_next => last.push(term),
                _ => clauses.push(vec![term]),
            }
            join_next = false;
        }
        Query { clauses }
    }

    /// Whether the query names trash or spam itself (then those are searched too).
    pub fn names_spam_or_trash(&self) -> bool {
        self.clauses.iter().flatten().any(|t| {
            matches!(t.key.as_deref(), Some("in" | "label"))
                && matches!(t.value.as_str(), "trash" | "spam" | "anywhere")
        })
    }

    pub fn matches(&self, mailbox: &Mailbox, message: &Message, now_ms: i64) -> bool {
        self.clauses
            .iter()
            .all(|clause| clause.iter().any(|t| t.matches(mailbox, message, now_ms) != t.negated))
    }
}

fn header_has(message: &Message, names: &[&str], needle: &str) -> bool {
    names.iter().any(|n| message.parsed.header(n).is_some_and(|v| v.to_lowercase().contains(needle)))
}

fn label_matches(mailbox: &Mailbox, message: &Message, value: &str) -> bool {
    let normalize = |s: &str| s.to_lowercase().replace([' ', '/'], "-");
    let wanted = normalize(value);
    message.labels.iter().any(|id| {
        normalize(id) == wanted || mailbox.labels.iter().any(|l| l.id == id && normalize(l.name) == wanted)
    })
}

/// `after:` and `before:` dates are midnight Pacific time, as Gmail documents.
fn date_ms(value: &str) -> Option<i64> {
    if let Ok(seconds) = value.parse::<i64>() {
        return Some(seconds * 1000);
    }
    let mut parts = value.split(['/', '-']).map(|p| p.parse::<i16>().ok());
    let (year, month, day) = (parts.next()??, parts.next()??, parts.next()??);
    let date = Date::new(year, i8::try_from(month).ok()?, i8::try_from(day).ok()?).ok()?;
    let zone = TimeZone::get("America/Los_Angeles").ok()?;
    Some(date.to_zoned(zone).ok()?.timestamp().as_millisecond())
}

fn age_ms(value: &str) -> Option<i64> {
    let (number, unit) = value.split_at(value.len().checked_sub(1)?);
    let days: i64 = match unit {
        "d" => 1,
        "m" => 30,
        "y" => 365,
        _ => return None,
    };
    Some(number.parse::<i64>().ok()? * days * 86_400_000)
}

fn body_text(message: &Message) -> String {
    let part = &message.parsed;
    let mut text = part.text("text/plain").or_else(|| part.text("text/html")).unwrap_or_default();
    for (_, p) in part.walk() {
        text.push(' ');
        text.push_str(&p.filename);
    }
    text.to_lowercase()
}

impl Term {
    fn matches(&self, mailbox: &Mailbox, message: &Message, now_ms: i64) -> bool {
        let v = self.value.as_str();
        let has_label = |id: &str| message.labels.iter().any(|l| l == id);
        match self.key.as_deref() {
            None => {
                header_has(message, &["Subject", "From", "To", "Cc"], v) || body_text(message).contains(v)
            }
            Some("from") => header_has(message, &["From"], v),
            Some("to") => header_has(message, &["To", "Cc", "Bcc"], v),
            Some("cc") => header_has(message, &["Cc"], v),
            Some("bcc") => header_has(message, &["Bcc"], v),
            Some("subject") => header_has(message, &["Subject"], v),
            Some("rfc822msgid") => header_has(message, &["Message-ID"], v),
            Some("label") => label_matches(mailbox, message, v),
            Some("in") => match v {
                "anywhere" => true,
                "drafts" => has_label("DRAFT"),
                other => label_matches(mailbox, message, other),
            },
            Some("is") => match v {
                "unread" => has_label("UNREAD"),
                "read" => !has_label("UNREAD"),
                "starred" => has_label("STARRED"),
                "important" => has_label("IMPORTANT"),
                other => label_matches(mailbox, message, other),
            },
            Some("category") => has_label(&format!("CATEGORY_{}", v.to_uppercase())),
            Some("has") => match v {
                "attachment" => message.parsed.walk().iter().any(|(_, p)| p.is_attachment()),
                "userlabels" => message.labels.iter().any(|l| l.starts_with("Label_")),
                "nouserlabels" => !message.labels.iter().any(|l| l.starts_with("Label_")),
                _ => false,
            },
            Some("filename") => {
                message.parsed.walk().iter().any(|(_, p)| p.filename.to_lowercase().contains(v))
            }
            Some("newer_than") => age_ms(v).is_some_and(|age| message.internal_date > now_ms - age),
            Some("older_than") => age_ms(v).is_some_and(|age| message.internal_date < now_ms - age),
            Some("after") => date_ms(v).is_some_and(|at| message.internal_date >= at),
            Some("before") => date_ms(v).is_some_and(|at| message.internal_date < at),
            // An unknown operator is searched as words, as Gmail does.
            Some(key) => {
                let words = format!("{key}:{v}");
                header_has(message, &["Subject"], &words) || body_text(message).contains(&words)
            }
        }
    }
}

/// Whether the message names this address in To, Cc or Bcc.
pub(crate) fn addressed_to(message: &mime::Part, email: &str) -> bool {
    ["To", "Cc", "Bcc"]
        .iter()
        .filter_map(|h| message.header(h))
        .flat_map(mime::addresses)
        .any(|a| a.eq_ignore_ascii_case(email))
}
