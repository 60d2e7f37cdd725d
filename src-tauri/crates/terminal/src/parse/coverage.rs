//! Which bytes of a line the parser's tree accounts for: what it skips, bash may not.

use tree_sitter::Node;

/// The first character of `text` that no token of its tree accounts for, other than the blanks
/// bash also reads as blanks between words (space, tab, newline, and a backslash before a
/// newline), written `U+000D`. tree-sitter skips every Unicode blank, a carriage return and a
/// backslash before one; bash reads them as part of a word, so what follows them (a `#`, a
/// newline) means one thing to each: `git status<CR>#; curl … | sh` was one harmless command
/// to the parser and two to bash. The text inside quotes and here-documents is the command's,
/// accounted for by its node.
pub(super) fn skipped(root: Node<'_>, text: &str) -> Option<String> {
    let src = text.as_bytes();
    let mut covered = vec![false; src.len()];
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        let (start, end) = (node.start_byte().min(src.len()), node.end_byte().min(src.len()));
        if children.is_empty() {
            covered[start..end].fill(true);
        } else if matches!(node.kind(), "string" | "translated_string" | "heredoc_body") {
            // Between its children a quoted string or a here-document's body is its text.
            covered[start..end].fill(true);
            for child in &children {
                covered[child.start_byte().min(end)..child.end_byte().min(end)].fill(false);
            }
        }
        stack.extend(children);
    }
    let mut i = 0;
    while i < src.len() {
        match (covered[i], src[i], src.get(i + 1)) {
            (true, ..) | (false, b' ' | b'\t' | b'\n', _) => i += 1,
            (false, b'\\', Some(b'\n')) => i += 2,
            (false, ..) => {
                let c = text.get(i..).and_then(|t| t.chars().next()).unwrap_or('\u{FFFD}');
                return Some(format!("U+{:04X}", u32::from(c)));
            }
        }
    }
    None
}
