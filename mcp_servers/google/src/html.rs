//! HTML mail reduced to readable text: scripts, styles and the head dropped, blocks on their own
//! lines, list items marked, and links kept as `text (url)` so the reader still sees where they go.

use dom_query::{Document, NodeRef};

/// Elements whose content is never text for a reader.
const SKIPPED: &[&str] =
    &["script", "style", "head", "title", "noscript", "template", "svg", "iframe", "object"];
/// Elements that begin and end on their own lines.
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "table",
    "tr",
    "ul",
    "ol",
    "li",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "pre",
    "section",
    "article",
    "header",
    "footer",
    "hr",
    "dl",
    "dt",
    "dd",
    "center",
    "form",
    "address",
];
/// Blocks set apart by a blank line rather than a line break.
const PARAGRAPHS: &[&str] =
    &["p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre", "table", "ul", "ol"];

pub fn to_text(html: &str) -> String {
    let document = Document::from(html);
    let mut out = Writer::default();
    walk(&document.root(), &mut out, false);
    out.finish()
}

#[derive(Default)]
struct Writer {
    text: String,
    /// Line breaks owed before the next text (1 or 2), so that blocks never stack blank lines.
    breaks: usize,
    space: bool,
}

impl Writer {
    fn words(&mut self, text: &str, preformatted: bool) {
        if preformatted {
            self.flush();
            self.text.push_str(text);
            return;
        }
        if text.starts_with(char::is_whitespace) {
            self.space = true;
        }
        for word in text.split_whitespace() {
            self.flush();
            if self.space && !self.text.is_empty() && !self.text.ends_with(['\n', ' ']) {
                self.text.push(' ');
            }
            self.text.push_str(word);
            self.space = true;
        }
        self.space = text.ends_with(char::is_whitespace);
    }

    fn flush(&mut self) {
        if self.breaks > 0 && !self.text.is_empty() {
            let trimmed = self.text.trim_end_matches(' ').len();
            self.text.truncate(trimmed);
            let have = self.text.len() - self.text.trim_end_matches('\n').len();
            for _ in have..self.breaks {
                self.text.push('\n');
            }
            self.space = false;
        }
        self.breaks = 0;
    }

    fn block(&mut self, blank_line: bool) {
        self.breaks = self.breaks.max(if blank_line { 2 } else { 1 });
    }

    fn finish(self) -> String {
        let lines: Vec<&str> = self.text.lines().map(str::trim_end).collect();
        lines.join("\n").trim().to_owned()
    }
}

fn walk(node: &NodeRef<'_>, out: &mut Writer, preformatted: bool) {
    for child in node.children_it(false) {
        if child.is_text() {
            out.words(&child.text(), preformatted);
            continue;
        }
        if !child.is_element() {
            continue;
        }
        let name = child.node_name().map(|n| n.to_ascii_lowercase()).unwrap_or_default();
        if SKIPPED.contains(&name.as_str()) {
            continue;
        }
        match name.as_str() {
            "br" => {
                out.block(false);
                out.flush();
            }
            "img" => {
                if let Some(alt) = child.attr("alt").filter(|a| !a.trim().is_empty()) {
                    out.words(&format!("[{}]", alt.trim()), false);
                }
            }
            "a" => link(&child, out),
            _ if BLOCKS.contains(&name.as_str()) => {
                let blank = PARAGRAPHS.contains(&name.as_str());
                out.block(blank);
                if name == "li" {
                    out.flush();
                    out.words("- ", false);
                }
                walk(&child, out, preformatted || name == "pre");
                out.block(blank);
            }
            "td" | "th" => {
                walk(&child, out, preformatted);
                out.words(" ", false);
            }
            _ => walk(&child, out, preformatted),
        }
    }
}

/// A link as its text and then its address in brackets (once, if the text is the address).
fn link(node: &NodeRef<'_>, out: &mut Writer) {
    let href = node.attr("href").map(|h| h.trim().to_owned()).unwrap_or_default();
    let shown = node.text().split_whitespace().collect::<Vec<_>>().join(" ");
    let followable =
        ["http://", "https://", "mailto:"].iter().any(|s| href.to_ascii_lowercase().starts_with(s));
    walk(node, out, false);
    if followable {
        let bare = href.trim_start_matches("mailto:");
        if shown.is_empty() {
            out.words(&href, false);
        } else if shown != href && shown != bare {
            out.words(&format!(" ({href})"), false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_structure_and_links_and_drops_scripts() {
        let html = r#"<html><head><title>T</title><style>.x{}</style></head><body>
            <script>alert('x')</script>
            <h1>Order   shipped</h1>
            <p>Hi Ann,<br>your order is on its way.</p>
            <ul><li>Boots</li><li>Socks <a href="https://shop.example/track?id=7">Track it</a></li></ul>
            <p><a href="https://shop.example/">https://shop.example/</a> <img src="x.png" alt="logo"></p>
            <table><tr><td>Total</td><td>€40</td></tr></table>
            </body></html>"#;
        assert_eq!(
            to_text(html),
            "Order shipped\n\nHi Ann,\nyour order is on its way.\n\n- Boots\n- Socks Track it \
             (https://shop.example/track?id=7)\n\nhttps://shop.example/ [logo]\n\nTotal €40"
        );
    }
}
