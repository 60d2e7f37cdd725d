//! Blocks of the user's material inside a model's message (`<file>`, `<selection>`): each
//! is closed by its own tag, so the text inside must not contain that tag.

/// A block's own closing tag in its text (`</file` in an HTML page, a prompt, this very source)
/// would end the block early, and what follows would read as the user's words: it is written
/// `<\/file`, in any letter case. `tag` is lower case (`</file`).
pub fn without_closing_tag<'a>(body: &'a str, tag: &str) -> std::borrow::Cow<'a, str> {
    // ASCII lowercasing keeps every byte offset, so matches index the original text.
    let lower = body.to_ascii_lowercase();
    if !lower.contains(tag) {
        return body.into();
    }
    let mut out = String::with_capacity(body.len() + 8);
    let mut from = 0;
    for (at, _) in lower.match_indices(tag) {
        out.push_str(&body[from..at]);
        out.push_str("<\\/");
        from = at + 2;
    }
    out.push_str(&body[from..]);
    out.into()
}
