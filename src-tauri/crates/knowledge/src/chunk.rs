//! Cutting a file into passages along its structure: Markdown at its headings, source code at
//! its top-level definitions, other text at its paragraphs, a PDF by its pages. Each passage
//! keeps its line range (what a citation points at; a PDF's page) and, for Markdown, the
//! headings above it (what it is about; a PDF's page number).

/// A passage of a file: lines `start..=end` (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub start: usize,
    pub end: usize,
    /// The headings above it, `Setup > Linux`; empty outside Markdown.
    pub heading: String,
    pub text: String,
}

/// How a file is cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Markdown,
    Code,
    Text,
    /// Its pages' text (`perch_files::pdf`), a passage's "lines" being its page.
    Pdf,
}

/// Extensions of source code: cut at top-level definitions.
const CODE: &[&str] = &[
    "rs", "py", "js", "jsx", "ts", "tsx", "mjs", "cjs", "go", "c", "h", "cc", "cpp", "hpp", "cxx", "java",
    "kt", "kts", "scala", "swift", "rb", "php", "cs", "fs", "lua", "sh", "bash", "zsh", "fish", "pl", "r",
    "jl", "dart", "ex", "exs", "erl", "hs", "ml", "clj", "sql", "vue", "svelte", "zig", "nim", "toml",
    "yaml", "yml", "json", "css", "scss", "html", "xml", "proto", "gradle", "cmake", "mk",
];
/// Extensions of Markdown and its kin: cut at headings.
const MARKDOWN: &[&str] = &["md", "markdown", "mdx", "rst", "adoc", "org"];
/// Extensions of plain text: cut at paragraphs.
const TEXT: &[&str] = &["txt", "text", "log", "csv", "tsv", "tex", "ini", "cfg", "conf"];
/// Names without an extension that are text.
const TEXT_NAMES: &[&str] =
    &["README", "LICENSE", "CHANGELOG", "AUTHORS", "CONTRIBUTING", "Makefile", "Dockerfile", "Justfile"];

/// How a file is cut, or `None` when it is not a kind that is indexed (by its name alone).
pub fn kind_of(path: &std::path::Path) -> Option<Kind> {
    let extension = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
    match extension.as_deref() {
        Some(e) if MARKDOWN.contains(&e) => Some(Kind::Markdown),
        Some(e) if CODE.contains(&e) => Some(Kind::Code),
        Some(e) if TEXT.contains(&e) => Some(Kind::Text),
        Some("pdf") => Some(Kind::Pdf),
        Some(_) => None,
        None => {
            let name = path.file_name()?.to_string_lossy();
            TEXT_NAMES.iter().any(|n| name.eq_ignore_ascii_case(n)).then_some(Kind::Text)
        }
    }
}

/// A passage aims at this many characters (about 250 tokens, what the embedding model reads)...
const TARGET_CHARS: usize = 1_000;
/// ...and is cut, at a blank line where there is one, once it passes this many.
const MAX_CHARS: usize = 2_000;
/// Code passages are at least this many lines before a new definition starts a new one.
const MIN_CODE_LINES: usize = 6;

pub fn chunks(text: &str, kind: Kind) -> Vec<Chunk> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = match kind {
        Kind::Markdown => markdown(&lines),
        Kind::Code => code(&lines),
        Kind::Text | Kind::Pdf => paragraphs(&lines, 0, lines.len(), ""),
    };
    out.retain(|c| !c.text.trim().is_empty());
    out
}

/// A PDF's pages (from page 1): each page by its paragraphs, every passage citing its page
/// (`start` and `end`) under the heading `page N`.
pub fn pdf_chunks(pages: &[String]) -> Vec<Chunk> {
    let mut out = Vec::new();
    for (i, page) in pages.iter().enumerate() {
        let number = i + 1;
        let heading = format!("page {number}");
        for mut chunk in chunks(page, Kind::Text) {
            chunk.start = number;
            chunk.end = number;
            chunk.heading = heading.clone();
            out.push(chunk);
        }
    }
    out
}

/// Markdown: a passage per section, the headings above it kept; long sections by paragraphs.
fn markdown(lines: &[&str]) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut trail: Vec<(usize, String)> = Vec::new();
    let mut start = 0;
    let mut fenced = false;
    let mut heading = String::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~") {
            fenced = !fenced;
        }
        let level = line.bytes().take_while(|&b| b == b'#').count();
        let is_heading = !fenced && (1..=6).contains(&level) && line[level..].starts_with(' ');
        if !is_heading {
            continue;
        }
        out.extend(paragraphs(lines, start, i, &heading));
        trail.retain(|(l, _)| *l < level);
        trail.push((level, line[level..].trim().to_owned()));
        heading = trail.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>().join(" > ");
        start = i;
    }
    out.extend(paragraphs(lines, start, lines.len(), &heading));
    out
}

/// Lines `from..to` as passages of about [`TARGET_CHARS`], cut at blank lines.
fn paragraphs(lines: &[&str], from: usize, to: usize, heading: &str) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut start = from;
    let mut size = 0;
    for i in from..to {
        size += lines[i].len() + 1;
        let blank_next = lines.get(i + 1).is_none_or(|l| l.trim().is_empty());
        if (size >= TARGET_CHARS && blank_next) || size >= MAX_CHARS {
            out.push(chunk(lines, start, i + 1, heading));
            start = i + 1;
            size = 0;
        }
    }
    if start < to {
        out.push(chunk(lines, start, to, heading));
    }
    out
}

/// Code: a new passage where a top-level definition starts (a line at column 0 after a blank
/// line or a closing line), once the current one has [`MIN_CODE_LINES`]; long ones cut at
/// blank lines.
fn code(lines: &[&str]) -> Vec<Chunk> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut size = 0;
    for i in 0..lines.len() {
        let line = lines[i];
        let top_level = i > start
            && !line.is_empty()
            && !line.starts_with(char::is_whitespace)
            && !line.starts_with(['}', ')', ']'])
            && !line.starts_with("end")
            && lines[i - 1].trim().is_empty_or_closing();
        if top_level && i - start >= MIN_CODE_LINES {
            out.extend(paragraphs(lines, start, i, ""));
            start = i;
            size = 0;
        }
        size += line.len() + 1;
        if size >= MAX_CHARS * 2 {
            // One long definition: by paragraphs, so it is not one giant passage.
            out.extend(paragraphs(lines, start, i + 1, ""));
            start = i + 1;
            size = 0;
        }
    }
    if start < lines.len() {
        out.extend(paragraphs(lines, start, lines.len(), ""));
    }
    out
}

trait LineEnd {
    fn is_empty_or_closing(&self) -> bool;
}

impl LineEnd for str {
    /// A blank line, or one that closes a block (`}`, `};`, `)`, `end`).
    fn is_empty_or_closing(&self) -> bool {
        let t = self.trim();
        t.is_empty() || matches!(t, "}" | "};" | ")" | ");" | "]" | "end" | "})" | "});")
    }
}

fn chunk(lines: &[&str], from: usize, to: usize, heading: &str) -> Chunk {
    // Leading and trailing blank lines are not part of the cited range.
    let mut from = from;
    let mut to = to;
    while from < to && lines[from].trim().is_empty() {
        from += 1;
    }
    while to > from && lines[to - 1].trim().is_empty() {
        to -= 1;
    }
    Chunk {
        start: from + 1,
        end: to.max(from + 1),
        heading: heading.to_owned(),
        text: lines[from..to].join("\n"),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    #[test]
    fn kinds_by_name() {
        assert_eq!(kind_of(Path::new("docs/setup.md")), Some(Kind::Markdown));
        assert_eq!(kind_of(Path::new("src/auth.RS")), Some(Kind::Code));
        assert_eq!(kind_of(Path::new("notes.txt")), Some(Kind::Text));
        assert_eq!(kind_of(Path::new("README")), Some(Kind::Text));
        assert_eq!(kind_of(Path::new("papers/Raft.PDF")), Some(Kind::Pdf));
        assert_eq!(kind_of(Path::new("photo.jpg")), None);
        assert_eq!(kind_of(Path::new("a.out")), None);
    }

    #[test]
    fn markdown_is_cut_at_headings_and_keeps_them() {
        let text = "# Guide\nintro\n\n## Setup\nrun make\n\n```\n# not a heading\n```\n### Linux\napt install\n## Retry policy\nthree times\n";
        let chunks = chunks(text, Kind::Markdown);
        let summary: Vec<(usize, usize, &str)> =
            chunks.iter().map(|c| (c.start, c.end, c.heading.as_str())).collect();
        assert_eq!(
            summary,
            vec![
                (1, 2, "Guide"),
                (4, 9, "Guide > Setup"),
                (10, 11, "Guide > Setup > Linux"),
                (12, 13, "Guide > Retry policy")
            ]
        );
        assert_eq!(chunks[3].text, "## Retry policy\nthree times");
    }

    #[test]
    fn code_is_cut_at_top_level_definitions() {
        let mut text = String::from("use std::io;\n\n");
        for name in ["refresh_token", "parse", "retry"] {
            text.push_str(&format!("/// {name}\nfn {name}() {{\n"));
            for i in 0..8 {
                text.push_str(&format!("    let x{i} = {i};\n"));
            }
            text.push_str("}\n\n");
        }
        let chunks = chunks(&text, Kind::Code);
        assert_eq!(chunks.len(), 3, "{chunks:#?}");
        assert!(chunks[0].text.contains("fn refresh_token"));
        assert!(chunks[1].text.starts_with("/// parse\nfn parse()"));
        assert_eq!((chunks[1].start, chunks[1].end), (15, 25));
        assert!(chunks[2].text.ends_with('}'));
    }

    #[test]
    fn long_text_is_cut_at_paragraphs_with_true_line_ranges() {
        let paragraph = "word ".repeat(60);
        let text = (0..10).map(|_| paragraph.trim()).collect::<Vec<_>>().join("\n\n");
        let chunks = chunks(&text, Kind::Text);
        assert!(chunks.len() >= 3, "{}", chunks.len());
        for c in &chunks {
            assert!(c.text.len() <= MAX_CHARS);
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(c.text, lines[c.start - 1..c.end].join("\n"));
        }
        assert_eq!(chunks.last().map(|c| c.end), Some(19));
    }

    #[test]
    fn one_enormous_line_is_still_one_passage_and_nothing_is_lost() {
        let text = "x".repeat(10_000);
        let chunks = chunks(&text, Kind::Code);
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].text.len(), 10_000);
    }
}
