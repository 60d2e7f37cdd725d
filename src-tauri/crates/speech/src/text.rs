//! What of an answer is spoken, and where its sentences end. Answers are Markdown: prose is read;
//! a code block or a table is announced in a short phrase, not spelled out; a link is read by its
//! text; emphasis, headings' and lists' marks are dropped. `Sentences` takes the answer as it
//! streams and hands out each sentence as soon as its end has arrived, so the voice can start
//! while the rest is still being written.

/// The phrases spoken in place of what is not read out, in the voice's language (the app passes
/// the UI's translations; English by default).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize, specta::Type)]
#[serde(default)]
pub struct Phrases {
    /// A code block; `{language}` is replaced by its language when the fence names one.
    pub code: String,
    /// A code block whose fence names no language.
    pub code_plain: String,
    /// A table; `{rows}` is replaced by its row count (the header not counted).
    pub table: String,
    /// A bare web address.
    pub link: String,
    /// An image with no description.
    pub image: String,
}

impl Default for Phrases {
    fn default() -> Self {
        Self {
            code: "Here is some {language} code.".into(),
            code_plain: "Here is some code.".into(),
            table: "Here is a table of {rows} rows.".into(),
            link: "a link".into(),
            image: "an image".into(),
        }
    }
}

/// Sentences longer than this are split at a comma, semicolon or colon, so the first audio of a
/// long sentence does not wait for all of it.
const LONGEST_SENTENCE: usize = 220;

/// An answer's speakable sentences, taken as it streams.
#[derive(Debug, Default)]
pub struct Sentences {
    phrases: Phrases,
    /// The current line, not yet ended by a newline.
    line: String,
    /// How much of `line` was already taken as prose (its sentences ended mid-line).
    line_taken: usize,
    /// Clean prose not yet handed out (the start of a sentence whose end has not arrived).
    prose: String,
    fence: Option<Fence>,
    /// Rows of the table being read (a table is announced when it ends).
    table_rows: Option<usize>,
}

#[derive(Debug)]
struct Fence {
    marker: String,
    language: String,
}

impl Sentences {
    pub fn new(phrases: Phrases) -> Self {
        Self { phrases, ..Self::default() }
    }

    /// The whole of a finished text, at once.
    pub fn all(text: &str, phrases: Phrases) -> Vec<String> {
        let mut sentences = Self::new(phrases);
        let mut out = sentences.push(text);
        out.extend(sentences.finish());
        out
    }

    /// Adds streamed text; returns the sentences it finished.
    pub fn push(&mut self, delta: &str) -> Vec<String> {
        let mut out = Vec::new();
        for piece in delta.split_inclusive('\n') {
            if let Some(line) = piece.strip_suffix('\n') {
                self.line.push_str(line);
                let line = std::mem::take(&mut self.line);
                let taken = std::mem::take(&mut self.line_taken);
                self.complete_line(&line, taken, &mut out);
            } else {
                self.line.push_str(piece);
            }
        }
        self.take_partial_line(&mut out);
        out
    }

    /// The end of the answer: whatever is left, spoken.
    pub fn finish(mut self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            let taken = self.line_taken;
            self.complete_line(&line, taken, &mut out);
        }
        if let Some(fence) = self.fence.take() {
            // An unclosed fence at the end is still code, announced as such.
            self.flush(&mut out);
            out.push(self.code_phrase(&fence.language));
        }
        self.end_table(&mut out);
        self.flush(&mut out);
        out
    }

    fn complete_line(&mut self, line: &str, taken: usize, out: &mut Vec<String>) {
        let rest = &line[taken.min(line.len())..];
        if taken > 0 {
            // The line's start was prose already; the rest is too.
            self.add_prose(rest, out);
            self.add_prose("\n", out);
            return;
        }
        let trimmed = line.trim_start();
        if let Some(fence) = &self.fence {
            if trimmed.starts_with(fence.marker.as_str())
                && trimmed.trim_start_matches(&fence.marker[..1]).trim().is_empty()
            {
                let fence = self.fence.take().map(|f| f.language).unwrap_or_default();
                out.push(self.code_phrase(&fence));
            }
            return;
        }
        if let Some(marker) = fence_marker(trimmed) {
            self.end_table(out);
            self.flush(out);
            let language = trimmed[marker.len()..].split_whitespace().next().unwrap_or("").to_owned();
            self.fence = Some(Fence { marker, language });
            return;
        }
        if trimmed.starts_with('|') {
            self.flush(out);
            let is_rule = trimmed.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'));
            let rows = self.table_rows.get_or_insert(0);
            if !is_rule {
                *rows += 1;
            }
            return;
        }
        self.end_table(out);
        if trimmed.is_empty() {
            // A paragraph ends: what is left of it is a sentence even without a full stop.
            self.flush(out);
            return;
        }
        if trimmed.chars().all(|c| matches!(c, '-' | '*' | '_' | ' ')) && trimmed.len() >= 3 {
            return; // a horizontal rule
        }
        let (body, is_block) = block_body(trimmed);
        if is_block {
            // A heading or a list item is a unit of its own: spoken as one sentence.
            self.flush(out);
            self.add_prose(body, out);
            self.flush(out);
        } else {
            self.add_prose(body, out);
            self.add_prose("\n", out);
        }
    }

    /// Hands out the sentences the unfinished line has ended, when the line is plain prose and
    /// nothing in what is taken is cut open (a link, code or a tag whose end has not arrived).
    fn take_partial_line(&mut self, out: &mut Vec<String>) {
        if self.fence.is_some() || self.line.len() <= self.line_taken {
            return;
        }
        if self.line_taken == 0 {
            let trimmed = self.line.trim_start();
            if trimmed.len() < 4 || fence_marker(trimmed).is_some() || trimmed.starts_with('|') {
                return;
            }
            let (_, is_block) = block_body(trimmed);
            if is_block || trimmed.starts_with('`') || trimmed.starts_with('~') {
                return; // spoken as a unit when the line ends
            }
        }
        let pending = &self.line[self.line_taken..];
        let Some(end) = last_sentence_end(pending) else { return };
        let piece = pending[..end].to_owned();
        if !balanced(&piece) {
            return;
        }
        self.line_taken += end;
        self.end_table(out);
        // The white space that showed the sentence ended is part of it.
        self.add_prose(&format!("{piece} "), out);
    }

    fn add_prose(&mut self, raw: &str, out: &mut Vec<String>) {
        let clean = clean_inline(raw, &self.phrases);
        if clean == "\n" {
            if !self.prose.ends_with(' ') && !self.prose.is_empty() {
                self.prose.push(' ');
            }
        } else {
            self.prose.push_str(&clean);
        }
        self.split_finished(out);
    }

    /// Moves every finished sentence of `prose` to `out`.
    fn split_finished(&mut self, out: &mut Vec<String>) {
        while let Some(end) = first_sentence_end(&self.prose) {
            let sentence: String = self.prose[..end].to_owned();
            self.prose.replace_range(..end, "");
            push_sentence(out, &sentence);
        }
        while self.prose.len() > LONGEST_SENTENCE {
            let Some(cut) = clause_cut(&self.prose) else { break };
            let clause: String = self.prose[..cut].to_owned();
            self.prose.replace_range(..cut, "");
            push_sentence(out, &clause);
        }
    }

    fn flush(&mut self, out: &mut Vec<String>) {
        let rest = std::mem::take(&mut self.prose);
        push_sentence(out, &rest);
    }

    fn end_table(&mut self, out: &mut Vec<String>) {
        if let Some(rows) = self.table_rows.take() {
            // The first row is the header.
            let rows = rows.saturating_sub(1);
            out.push(self.phrases.table.replace("{rows}", &rows.to_string()));
        }
    }

    fn code_phrase(&self, language: &str) -> String {
        if language.is_empty() {
            self.phrases.code_plain.clone()
        } else {
            self.phrases.code.replace("{language}", &display_language(language))
        }
    }
}

/// A sentence long enough that its first clause is worth speaking on its own (the first of an
/// answer): the clause up to its comma, semicolon or colon, and the rest. Neither part is left
/// shorter than a few words.
pub fn opening(sentence: &str) -> Option<(String, String)> {
    const LONG: usize = 60;
    const SHORTEST: usize = 16;
    if sentence.len() < LONG {
        return None;
    }
    let cut = sentence
        .match_indices([',', ';', ':'])
        .map(|(i, _)| i + 1)
        .find(|&i| i >= SHORTEST && sentence.len() - i >= SHORTEST && sentence[i..].starts_with(' '))?;
    Some((sentence[..cut].to_owned(), sentence[cut..].trim_start().to_owned()))
}

fn push_sentence(out: &mut Vec<String>, sentence: &str) {
    let sentence = sentence.split_whitespace().collect::<Vec<_>>().join(" ");
    if sentence.chars().any(char::is_alphanumeric) {
        out.push(sentence);
    }
}

/// "```" or "~~~" (three or more) at a line's start.
fn fence_marker(line: &str) -> Option<String> {
    let first = line.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let run: String = line.chars().take_while(|c| *c == first).collect();
    (run.len() >= 3).then_some(run)
}

/// A line's text without its block mark, and whether the mark makes it a unit of its own
/// (a heading or a list item); a quote's `>` is dropped and the line read as prose.
fn block_body(line: &str) -> (&str, bool) {
    let hashes = line.chars().take_while(|c| *c == '#').count();
    if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
        return (line[hashes..].trim(), true);
    }
    for bullet in ["- ", "* ", "+ "] {
        if let Some(rest) = line.strip_prefix(bullet) {
            let rest = rest.trim_start();
            // A task list's box.
            let rest = rest.strip_prefix("[ ] ").or_else(|| rest.strip_prefix("[x] ")).unwrap_or(rest);
            return (rest, true);
        }
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 && digits < 4 && (line[digits..].starts_with(". ") || line[digits..].starts_with(") ")) {
        return (line[digits + 2..].trim_start(), true);
    }
    if let Some(rest) = line.strip_prefix('>') {
        return (rest.trim_start_matches('>').trim_start(), false);
    }
    (line, false)
}

/// A code fence's language as said aloud ("rs" is Rust, "ts" TypeScript).
fn display_language(tag: &str) -> String {
    let known = [
        ("rs", "Rust"),
        ("rust", "Rust"),
        ("py", "Python"),
        ("python", "Python"),
        ("js", "JavaScript"),
        ("javascript", "JavaScript"),
        ("ts", "TypeScript"),
        ("typescript", "TypeScript"),
        ("tsx", "TypeScript"),
        ("jsx", "JavaScript"),
        ("sh", "shell"),
        ("bash", "shell"),
        ("zsh", "shell"),
        ("shell", "shell"),
        ("console", "shell"),
        ("c", "C"),
        ("cpp", "C++"),
        ("c++", "C++"),
        ("cs", "C#"),
        ("csharp", "C#"),
        ("go", "Go"),
        ("java", "Java"),
        ("kt", "Kotlin"),
        ("kotlin", "Kotlin"),
        ("rb", "Ruby"),
        ("ruby", "Ruby"),
        ("sql", "SQL"),
        ("json", "JSON"),
        ("yaml", "YAML"),
        ("yml", "YAML"),
        ("toml", "TOML"),
        ("html", "HTML"),
        ("css", "CSS"),
        ("md", "Markdown"),
        ("markdown", "Markdown"),
        ("diff", "diff"),
    ];
    let lower = tag.to_lowercase();
    known.iter().find(|(k, _)| *k == lower).map_or_else(|| tag.to_owned(), |(_, name)| (*name).to_owned())
}

/// Markdown's inline marks turned into what is said: `[text](url)` is its text, `![alt](url)`
/// its description, `` `code` `` its content, a bare address "a link"; emphasis marks and HTML
/// tags go.
pub fn clean_inline(raw: &str, phrases: &Phrases) -> String {
    let mut out = String::with_capacity(raw.len());
    let chars: Vec<char> = raw.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '!' if chars.get(i + 1) == Some(&'[') => {
                if let Some((text, next)) = link_at(&chars, i + 1) {
                    out.push_str(if text.trim().is_empty() { &phrases.image } else { &text });
                    i = next;
                    continue;
                }
                out.push(c);
            }
            '[' => {
                if let Some((text, next)) = link_at(&chars, i) {
                    out.push_str(&text);
                    i = next;
                    continue;
                }
                out.push(c);
            }
            '`' => {
                // Inline code is read as its content; its backticks are not.
            }
            '*' | '_' if is_emphasis(&chars, i) => {}
            '~' if chars.get(i + 1) == Some(&'~') => {
                i += 2;
                continue;
            }
            '<' => {
                if let Some(close) = chars[i..].iter().position(|c| *c == '>') {
                    let tag: String = chars[i + 1..i + close].iter().collect();
                    if tag.starts_with("http://") || tag.starts_with("https://") {
                        out.push_str(&phrases.link);
                    }
                    if tag.starts_with('/') || tag.chars().next().is_some_and(|c| c.is_ascii_alphabetic()) {
                        i += close + 1;
                        continue;
                    }
                }
                out.push(c);
            }
            'h' if starts_url(&chars, i) => {
                out.push_str(&phrases.link);
                while i < chars.len() && !chars[i].is_whitespace() && chars[i] != ')' {
                    i += 1;
                }
                // Punctuation that ended the sentence after the address stays.
                if matches!(chars[i - 1], '.' | ',' | '!' | '?') {
                    out.push(chars[i - 1]);
                }
                continue;
            }
            _ => out.push(c),
        }
        i += 1;
    }
    out
}

fn starts_url(chars: &[char], i: usize) -> bool {
    let rest: String = chars[i..chars.len().min(i + 8)].iter().collect();
    (rest.starts_with("https://") || rest.starts_with("http://"))
        && (i == 0 || chars[i - 1].is_whitespace() || chars[i - 1] == '(')
}

/// `*` or `_` as emphasis: next to a word on one side only, or doubled. One between two word
/// characters (`snake_case`, `2*3`) and a lone star between spaces (`2 * 3`) are kept.
fn is_emphasis(chars: &[char], i: usize) -> bool {
    let before = i.checked_sub(1).map(|j| chars[j]);
    let after = chars.get(i + 1).copied();
    let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    if word(before) && word(after) {
        return false;
    }
    let space = |c: Option<char>| c.is_none_or(char::is_whitespace);
    !(space(before) && space(after))
}

/// `[text](target)` starting at `i` (the `[`): its text and the index after the `)`.
fn link_at(chars: &[char], i: usize) -> Option<(String, usize)> {
    let close = i + chars[i..].iter().position(|c| *c == ']')?;
    if chars.get(close + 1) != Some(&'(') {
        return None;
    }
    let end = close + 1 + chars[close + 1..].iter().position(|c| *c == ')')?;
    Some((chars[i + 1..close].iter().collect(), end + 1))
}

/// Whether a piece of a line closes everything it opens (links, inline code, tags), so that it
/// can be cleaned and spoken before the rest of the line arrives. Only a `<` that starts a tag
/// (a letter or `/` after it) waits for its `>`: `x < 3` and `a -> b` are prose.
fn balanced(piece: &str) -> bool {
    let count = |c: char| piece.chars().filter(|x| *x == c).count();
    let tags_closed = piece.match_indices('<').all(|(i, _)| {
        let opens_tag = piece[i + 1..].chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '/');
        !opens_tag || piece[i..].contains('>')
    });
    count('`') % 2 == 0 && count('[') == count(']') && count('(') <= count(')') && tags_closed
}

const ABBREVIATIONS: &[&str] =
    &["e.g.", "i.e.", "etc.", "vs.", "mr.", "mrs.", "ms.", "dr.", "cf.", "no.", "approx."];

fn is_terminator(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '…')
}

fn is_wide_terminator(c: char) -> bool {
    matches!(c, '。' | '！' | '？')
}

/// The byte index just past the first finished sentence of `text`: a terminator followed by
/// white space (or a CJK full stop, which needs none), not an abbreviation's dot or a number's.
fn first_sentence_end(text: &str) -> Option<usize> {
    sentence_ends(text).next()
}

fn last_sentence_end(text: &str) -> Option<usize> {
    sentence_ends(text).last()
}

fn sentence_ends(text: &str) -> impl Iterator<Item = usize> + '_ {
    let indices: Vec<(usize, char)> = text.char_indices().collect();
    (0..indices.len()).filter_map(move |k| {
        let (at, c) = indices[k];
        let after = at + c.len_utf8();
        if is_wide_terminator(c) {
            return Some(after);
        }
        if !is_terminator(c) {
            return None;
        }
        // Closing quotes and brackets belong to the sentence.
        let mut j = k + 1;
        while j < indices.len() && matches!(indices[j].1, '"' | '\'' | ')' | '”' | '’' | '.' | '!' | '?')
        {
            j += 1;
        }
        if j >= indices.len() || !indices[j].1.is_whitespace() {
            return None;
        }
        if c == '.' {
            let word_start = text[..at].rfind(char::is_whitespace).map_or(0, |w| w + 1);
            let word = text[word_start..after].to_lowercase();
            if ABBREVIATIONS.contains(&word.as_str()) {
                return None;
            }
            // "1. " inside a sentence is a number, and "U.S. " an abbreviation.
            if word.len() == 2 && word.starts_with(|c: char| c.is_alphabetic() && c.is_uppercase()) {
                return None;
            }
        }
        Some(indices.get(j).map_or(text.len(), |(i, _)| *i))
    })
}

/// Where an over-long sentence is best cut: after the last comma, semicolon or colon before the
/// limit.
fn clause_cut(text: &str) -> Option<usize> {
    let limit = text.char_indices().take_while(|(i, _)| *i < LONGEST_SENTENCE).last()?.0;
    text[..limit].rfind([',', ';', ':']).map(|i| i + 1).filter(|i| *i > 20)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<String> {
        Sentences::all(text, Phrases::default())
    }

    #[test]
    fn sentences_split_at_their_ends_only() {
        assert_eq!(
            all("It works. Does it? Yes! The value is 3.5 today, e.g. on Mondays."),
            ["It works.", "Does it?", "Yes!", "The value is 3.5 today, e.g. on Mondays."]
        );
    }

    #[test]
    fn code_tables_and_links_are_announced_not_spelled() {
        let answer = "Use [the docs](https://docs.rs/x) and **bold** `map()` here.\n\n```rust\nfn main() {\n    println!(\"hi. there. \");\n}\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\nSee https://example.com/a.b for more.";
        assert_eq!(
            all(answer),
            [
                "Use the docs and bold map() here.",
                "Here is some Rust code.",
                "Here is a table of 2 rows.",
                "See a link for more."
            ]
        );
    }

    #[test]
    fn headings_and_list_items_are_sentences_of_their_own() {
        assert_eq!(
            all("## Steps\n1. Open the file\n2. Save it\n- snake_case stays\n"),
            ["Steps", "Open the file", "Save it", "snake_case stays"]
        );
    }

    #[test]
    fn streamed_text_gives_each_sentence_when_it_ends() {
        let mut sentences = Sentences::new(Phrases::default());
        assert!(sentences.push("The first sent").is_empty());
        assert_eq!(sentences.push("ence ends here. The sec"), ["The first sentence ends here."]);
        // A link cut open is not spoken until it closes.
        assert!(sentences.push("ond has [a li").is_empty());
        assert_eq!(sentences.push("nk](http://x.y). Then"), ["The second has a link."]);
        // The code's dots end no sentence; the fence ends the paragraph before it.
        assert_eq!(sentences.push("\n```py\nprint('a. b. c. ')\n"), ["Then"]);
        assert_eq!(sentences.push("```\n"), ["Here is some Python code."]);
        assert_eq!(sentences.push("Last one"), Vec::<String>::new());
        assert_eq!(sentences.finish(), ["Last one"]);
    }

    #[test]
    fn streamed_and_whole_text_say_the_same() {
        let answer = "# Title\nA *short* intro. Then more: see [here](http://a.b/c).\n\n- one\n- two. Really.\n\n```\ncode\n```\nDone! 終わりです。次へ。";
        let whole = all(answer);
        for step in [1, 2, 3, 7, 13] {
            let mut sentences = Sentences::new(Phrases::default());
            let chars: Vec<char> = answer.chars().collect();
            let mut streamed = Vec::new();
            for chunk in chars.chunks(step) {
                streamed.extend(sentences.push(&chunk.iter().collect::<String>()));
            }
            streamed.extend(sentences.finish());
            assert_eq!(streamed, whole, "in chunks of {step}");
        }
        assert_eq!(whole.last().map(String::as_str), Some("次へ。"));
    }

    #[test]
    fn a_long_sentence_is_cut_at_a_clause() {
        let long = format!("{}, and then it goes on {}.", "word ".repeat(40), "and on ".repeat(20));
        let out = all(&long);
        assert!(out.len() >= 2, "{out:?}");
        assert!(out.iter().all(|s| s.len() <= LONGEST_SENTENCE + 10), "{out:?}");
    }

    #[test]
    fn a_long_first_sentence_opens_with_its_first_clause() {
        assert_eq!(
            opening("When the build fails on line twelve, add the missing semicolon and run it again."),
            Some((
                "When the build fails on line twelve,".to_owned(),
                "add the missing semicolon and run it again.".to_owned()
            ))
        );
        // Short sentences, and clauses that would leave a scrap, stay whole.
        assert_eq!(opening("Yes, it works."), None);
        assert_eq!(opening("Well, this sentence is long enough but its comma comes too early."), None);
        assert_eq!(opening("3,5 is how some countries write the number three and a half, really"), None);
    }

    #[test]
    fn arithmetic_and_comparisons_are_read_not_dropped() {
        assert_eq!(all("It is 2*3 or 2 * 3 in snake_case."), ["It is 2*3 or 2 * 3 in snake_case."]);
        // A comparison or an arrow does not hold back the sentences of a line still streaming.
        let mut sentences = Sentences::new(Phrases::default());
        assert_eq!(sentences.push("When x < 3 it stops. Then a -> b fol"), ["When x < 3 it stops."]);
        assert_eq!(sentences.push("lows. And <b>bold</b"), ["Then a -> b follows."]);
        // A tag cut open waits for its end.
        assert_eq!(sentences.push("> too. End"), ["And bold too."]);
    }

    #[test]
    fn an_unclosed_fence_is_still_announced() {
        assert_eq!(all("Look:\n```sh\nrm -rf x"), ["Look:", "Here is some shell code."]);
    }
}
