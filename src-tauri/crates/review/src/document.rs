//! Applying a pushed review to the current one: replace, append, or update one section.

use perch_ipc::Mode;

/// The new text of the review after applying `content` with `mode`.
pub fn apply(current: &str, content: &str, mode: Mode, section: Option<&str>) -> String {
    match (mode, section) {
        (Mode::Replace, _) => content.to_owned(),
        (Mode::UpdateSection, Some(name)) => update_section(current, name, content),
        (Mode::Append | Mode::UpdateSection, _) => join(current, content),
    }
}

fn join(a: &str, b: &str) -> String {
    if a.trim().is_empty() {
        return b.to_owned();
    }
    format!("{}\n\n{}", a.trim_end(), b.trim_start_matches('\n'))
}

/// A markdown ATX heading: its level and text. Closing `#`s and surrounding spaces are dropped.
fn heading(line: &str) -> Option<(usize, &str)> {
    let trimmed = line
        .strip_prefix("   ")
        .or_else(|| line.strip_prefix("  "))
        .or_else(|| line.strip_prefix(' '))
        .unwrap_or(line);
    let level = trimmed.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = &trimmed[level..];
    if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
        return None;
    }
    Some((level, rest.trim().trim_end_matches('#').trim_end()))
}

/// Lines with their heading (if any), ignoring headings inside fenced code blocks.
fn scan(text: &str) -> Vec<(&str, Option<(usize, &str)>)> {
    let mut fence: Option<&str> = None;
    text.split('\n')
        .map(|line| {
            let trimmed = line.trim_start();
            let marker = ["```", "~~~"].into_iter().find(|m| trimmed.starts_with(m));
            match (fence, marker) {
                (None, Some(m)) => {
                    fence = Some(m);
                    (line, None)
                }
                (Some(open), Some(m)) if open == m => {
                    fence = None;
                    (line, None)
                }
                (Some(_), _) => (line, None),
                (None, None) => (line, heading(line)),
            }
        })
        .collect()
}

/// The text with every line inside a fenced code block blanked, so nothing in code is mistaken
/// for markup. Line count and line order are kept.
pub fn without_fenced_code(text: &str) -> String {
    let mut fence: Option<&str> = None;
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let marker = ["```", "~~~"].into_iter().find(|m| line.trim_start().starts_with(m));
        match (fence, marker) {
            (None, Some(m)) => fence = Some(m),
            (Some(open), Some(m)) if open == m => fence = None,
            (Some(_), _) => {}
            (None, None) => out.push_str(line),
        }
    }
    out
}

fn same_name(a: &str, b: &str) -> bool {
    a.trim().to_lowercase() == b.trim().to_lowercase()
}

/// Replaces the section whose heading matches `name` (any level) up to the next heading of the
/// same or a higher level. If the new content starts with its own heading it replaces the old
/// heading too; otherwise the old heading stays. A missing section is appended.
fn update_section(current: &str, name: &str, content: &str) -> String {
    let lines = scan(current);
    let Some(start) = lines.iter().position(|(_, h)| h.is_some_and(|(_, text)| same_name(text, name))) else {
        let has_heading =
            scan(content).iter().find(|(l, _)| !l.trim().is_empty()).is_some_and(|(_, h)| h.is_some());
        let block = if has_heading {
            content.to_owned()
        } else {
            format!("## {}\n\n{}", name.trim(), content.trim_start())
        };
        return join(current, &block);
    };
    let level = lines[start].1.map(|(level, _)| level).unwrap_or(1);
    let end = lines[start + 1..]
        .iter()
        .position(|(_, h)| h.is_some_and(|(l, _)| l <= level))
        .map_or(lines.len(), |offset| start + 1 + offset);

    let new_starts_with_heading =
        scan(content).iter().find(|(l, _)| !l.trim().is_empty()).is_some_and(|(_, h)| h.is_some());
    let mut out: Vec<&str> = lines[..start].iter().map(|(l, _)| *l).collect();
    if !new_starts_with_heading {
        out.push(lines[start].0);
    }
    let replacement = content.trim_matches('\n');
    let mut text = out.join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(replacement);
    let rest: Vec<&str> = lines[end..].iter().map(|(l, _)| *l).collect();
    if !rest.is_empty() {
        text.push_str("\n\n");
        text.push_str(rest.join("\n").trim_start_matches('\n'));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str =
        "# Review\n\nSummary line.\n\n## Changes\n\n- one\n\n### Detail\n\nmore\n\n## Tests\n\nall pass\n";

    #[test]
    fn replace_and_append() {
        assert_eq!(apply(DOC, "# New", Mode::Replace, None), "# New");
        assert_eq!(apply("", "first", Mode::Append, None), "first");
        assert_eq!(apply("a\n\n", "\nb", Mode::Append, None), "a\n\nb");
    }

    #[test]
    fn update_section_replaces_up_to_the_next_heading_of_the_same_or_higher_level() {
        let out = apply(DOC, "- two\n- three", Mode::UpdateSection, Some("changes"));
        assert_eq!(out, "# Review\n\nSummary line.\n\n## Changes\n- two\n- three\n\n## Tests\n\nall pass\n");
        // The subsection "### Detail" belonged to "Changes" and went with it.
        assert!(!out.contains("Detail"));
    }

    #[test]
    fn update_section_takes_the_new_heading_when_the_content_has_one() {
        let out = apply(DOC, "## Changes (v2)\n\nrewritten", Mode::UpdateSection, Some("Changes"));
        assert!(out.contains("## Changes (v2)\n\nrewritten\n\n## Tests"), "{out}");
        assert!(!out.contains("## Changes\n"));
    }

    #[test]
    fn update_section_matches_any_level_and_ignores_code_blocks() {
        let doc = "# A\n\n```md\n## Detail\n```\n\n### Detail\n\nold\n\n## B\n";
        let out = apply(doc, "new", Mode::UpdateSection, Some("Detail"));
        assert_eq!(out, "# A\n\n```md\n## Detail\n```\n\n### Detail\nnew\n\n## B\n");
    }

    #[test]
    fn a_missing_section_is_appended_with_a_heading() {
        let out = apply("# Review\n\ntext", "found a bug", Mode::UpdateSection, Some("Security"));
        assert_eq!(out, "# Review\n\ntext\n\n## Security\n\nfound a bug");
        let out = apply("# Review", "## Perf\n\nfast", Mode::UpdateSection, Some("Perf"));
        assert_eq!(out, "# Review\n\n## Perf\n\nfast");
    }

    #[test]
    fn the_last_section_runs_to_the_end() {
        let out = apply(DOC, "none yet", Mode::UpdateSection, Some("Tests"));
        assert!(out.ends_with("## Tests\nnone yet"), "{out}");
    }

    #[test]
    fn fenced_code_is_blanked_line_for_line() {
        let text = "a\n```rs\ncode [x]\n```\nb\n~~~\n```\n~~~\nc";
        assert_eq!(without_fenced_code(text), "a\n\n\n\nb\n\n\n\nc");
    }

    #[test]
    fn headings_need_a_space_and_closing_hashes_are_ignored() {
        assert_eq!(heading("## Title ##"), Some((2, "Title")));
        assert_eq!(heading("#hashtag"), None);
        assert_eq!(heading("####### seven"), None);
        assert_eq!(heading("   # indented"), Some((1, "indented")));
    }
}
