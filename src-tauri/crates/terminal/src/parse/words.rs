//! How bash reads one word, without running anything: quote removal and escapes, `$'...'`,
//! wildcards (kept as a pattern), brace expansion (recognised, not done), `~name` from the
//! user database, and the pieces an assignment's value is split into.

use super::{Word, shown};

/// A shell variable name.
pub(super) fn is_name(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `text` split at each `sep` that no backslash escapes.
pub(super) fn split_unescaped(text: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut escaped) = (0, false);
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            c if c == sep => {
                parts.push(&text[start..i]);
                start = i + c.len_utf8();
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// The home folder of `user` in the system's user database.
pub(super) fn home_of(user: &str) -> Option<String> {
    #[cfg(unix)]
    {
        nix::unistd::User::from_name(user).ok().flatten().map(|u| u.dir.display().to_string())
    }
    #[cfg(not(unix))]
    {
        let _ = user;
        None
    }
}

/// An unquoted part of a word: escapes removed, and its unescaped wildcards kept as a pattern
/// (see [`Word::pattern`]).
pub(super) fn unquoted(written: &str) -> Word {
    let text = unescape_word(written);
    if windows_path(written) {
        return Word::plain(text);
    }
    let (mut pattern, mut run, mut wild) = (String::new(), String::new(), false);
    let mut chars = written.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => run.extend(chars.next().filter(|n| *n != '\n')),
            '*' | '?' | '[' => {
                pattern.push_str(&literal(&std::mem::take(&mut run)));
                pattern.push(c);
                wild = true;
            }
            c => run.push(c),
        }
    }
    pattern.push_str(&literal(&run));
    Word { text, dynamic: false, pattern: wild.then_some(pattern) }
}

/// A literal part of a pattern as the shape writes a word (nothing for empty text).
pub(super) fn literal(text: &str) -> String {
    if text.is_empty() { String::new() } else { shown(&Word::plain(text)) }
}

/// Whether bash would brace-expand a word written `written` (unquoted parts as written, quoted
/// ones as an inert character): an unescaped `{` closed by an unescaped `}`, with an unescaped
/// comma between them at its own level or a `..` sequence. `${` is a variable, not a brace.
pub(super) fn has_brace_expansion(written: &str) -> bool {
    let chars: Vec<char> = written.chars().collect();
    let mut open: Vec<(usize, bool)> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 1,
            '{' if i == 0 || chars[i - 1] != '$' => open.push((i, false)),
            ',' => {
                if let Some(last) = open.last_mut() {
                    last.1 = true;
                }
            }
            '}' => {
                if let Some((start, comma)) = open.pop() {
                    let inner: String = chars[start + 1..i].iter().collect();
                    if comma || is_sequence(&inner) {
                        return true;
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    false
}

/// `1..3`, `a..e`, `1..10..2`: a brace sequence.
pub(super) fn is_sequence(inner: &str) -> bool {
    let parts: Vec<&str> = inner.split("..").collect();
    let number = |p: &str| {
        let digits = p.strip_prefix(['-', '+']).unwrap_or(p);
        !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
    };
    let letter = |p: &str| p.len() == 1 && p.chars().all(|c| c.is_ascii_alphabetic());
    match parts.as_slice() {
        [a, b] => (number(a) && number(b)) || (letter(a) && letter(b)),
        [a, b, step] => ((number(a) && number(b)) || (letter(a) && letter(b))) && number(step),
        _ => false,
    }
}

/// Backslashes outside quotes escape the next character (`r\m` is `rm`).
pub(super) fn unescape_word(text: &str) -> String {
    if windows_path(text) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(next) => out.push(next),
            },
            c => out.push(c),
        }
    }
    out
}

/// `C:\Windows` is a Windows path, not escapes, where the shell is not bash (on Linux bash
/// runs every command and reads it as `C:Windows`, so it is read as bash reads it).
pub(super) fn windows_path(text: &str) -> bool {
    let b = text.as_bytes();
    cfg!(windows) && b.len() > 2 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'\\'
}

/// Inside double quotes a backslash escapes only `$`, `` ` ``, `"`, `\` and a newline.
pub(super) fn unescape_double(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && matches!(chars.peek(), Some('$' | '`' | '"' | '\\' | '\n')) {
            if let Some(next) = chars.next().filter(|n| *n != '\n') {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `$'...'` strings: C escapes, so `$'\x72\x6d'` is `rm`.
pub(super) fn ansi_c(body: &str) -> String {
    let mut out = String::new();
    let mut chars = body.chars().peekable();
    let number = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, radix: u32, max: usize| {
        let mut digits = String::new();
        while digits.len() < max && chars.peek().is_some_and(|c| c.is_digit(radix)) {
            digits.extend(chars.next());
        }
        u32::from_str_radix(&digits, radix).ok().and_then(char::from_u32)
    };
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let decoded = match chars.next() {
            Some('n') => Some('\n'),
            Some('t') => Some('\t'),
            Some('r') => Some('\r'),
            Some('e' | 'E') => Some('\u{1b}'),
            Some('a') => Some('\u{7}'),
            Some('0') => number(&mut chars, 8, 3).or(Some('\0')),
            Some(d @ '1'..='7') => {
                let mut s = d.to_string();
                while s.len() < 3 && chars.peek().is_some_and(|c| c.is_digit(8)) {
                    s.extend(chars.next());
                }
                u32::from_str_radix(&s, 8).ok().and_then(char::from_u32)
            }
            Some('x') => number(&mut chars, 16, 2),
            Some('u') => number(&mut chars, 16, 4),
            Some('U') => number(&mut chars, 16, 8),
            Some(other) => Some(other),
            None => None,
        };
        out.extend(decoded);
    }
    out
}

/// Whether `text` holds a backquote no backslash escapes.
pub(super) fn has_backquote(text: &str) -> bool {
    let mut escaped = false;
    for c in text.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '`' => return true,
            _ => {}
        }
    }
    false
}
