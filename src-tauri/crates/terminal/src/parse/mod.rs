//! The command line as bash would run it: parsed with tree-sitter-bash (the grammar Codex CLI
//! uses) and walked in execution order into every simple command that would run, including
//! those in pipelines, lists, subshells, functions, `$(...)`, backticks and process
//! substitutions, with words resolved as far as they can be without running anything: quotes
//! and escapes removed, `~`, `$HOME`, `$PWD` and variables assigned earlier in the line
//! expanded, and the working folder followed through `cd`. What cannot be reduced to plain
//! words is recorded in [`Analysis::unclear`], so it is asked about and never auto-approved:
//! that includes code for other interpreters (`python -c`, `sh -c`, whose shell strings are
//! still followed for the blocklist) and variables set for the commands the line runs. The
//! line is also written back in a normalised form ([`Analysis::shape`]) that remembered
//! approvals are matched by.
//! (Over 500 lines: one walk over bash's grammar, which does not split well.)

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use tree_sitter::{Node, Parser};

use super::wrappers;

mod coverage;
mod words;

use coverage::skipped;
use words::{
    ansi_c, has_backquote, has_brace_expansion, home_of, is_name, literal, split_unescaped, unescape_double,
    unquoted,
};

/// Lines longer than this are not parsed: they are asked about as they are.
pub const MAX_PARSED_BYTES: usize = 64 * 1024;
/// How deep `sh -c '...'` strings inside each other are followed.
const MAX_DEPTH: u32 = 6;

/// One word after quote removal and expansion.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    /// Part of it is only known when the command runs (`$X`, `$(...)`, `$((...))`).
    pub dynamic: bool,
    /// The word has unquoted wildcards (`*`, `?`, `[`) that bash matches against file names:
    /// the word written back with its literal parts quoted and its wildcards bare (`*'.log'`
    /// for `*.log`), so the shape never mistakes it for the quoted `'*.log'`.
    pub pattern: Option<String>,
}

impl Word {
    pub fn new(text: impl Into<String>, dynamic: bool) -> Self {
        Self { text: text.into(), dynamic, pattern: None }
    }
    fn plain(text: impl Into<String>) -> Self {
        Self::new(text, false)
    }
}

/// Where a command reads its standard input from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stdin {
    Terminal,
    /// The previous command of a pipeline.
    Pipe,
    /// A here-document or here-string.
    Inline,
}

/// One simple command that would run, with wrappers (`sudo`, `env`, `xargs`...) removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The program and its arguments.
    pub words: Vec<Word>,
    /// The words as bash runs them, wrappers included (`sudo -u root rm x`): what bash passes
    /// to the program it starts, the words the differential test compares with bash's own.
    /// For a command found inside another program's arguments (`find -exec`, `sh -c`), its
    /// own words.
    pub argv: Vec<Word>,
    /// The wrappers it was found under, outermost first.
    pub wrappers: Vec<String>,
    /// The working folder it runs in, when known.
    pub cwd: Option<PathBuf>,
    pub stdin: Stdin,
    /// More arguments arrive when it runs (`xargs`, `find -exec`).
    pub more_arguments: bool,
}

impl Command {
    pub fn program(&self) -> &str {
        self.words.first().map_or("", |w| w.text.as_str())
    }
    /// The program's file name (`/usr/bin/rm` -> `rm`), lower-cased, without `.exe`.
    pub fn name(&self) -> String {
        program_name(self.program())
    }
    pub fn args(&self) -> &[Word] {
        self.words.get(1..).unwrap_or_default()
    }
}

pub fn program_name(program: &str) -> String {
    let base = program.rsplit(['/', '\\']).next().unwrap_or(program).to_ascii_lowercase();
    base.strip_suffix(".exe").map(str::to_owned).unwrap_or(base)
}

/// A file a redirection writes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write {
    pub target: Word,
    pub cwd: Option<PathBuf>,
}

/// Everything the blocklist and the PATH guard need to know about a command line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Analysis {
    pub commands: Vec<Command>,
    pub writes: Vec<Write>,
    /// The line as written back by Perch, in order: each simple command as one entry (its
    /// variable assignments, every word with quotes normalised, its redirections with their
    /// targets resolved), each assignment or declaration on its own, and the operators and
    /// keywords between them (`&&`, `|`, `if`, `(`; a newline is `;`). What runs inside a
    /// word (`$(...)`) or a shell string stays in that word's text. Two lines with the same
    /// shape in the same folder do the same thing.
    pub shape: Vec<String>,
    /// Variables the line sets, exports or unsets (the PATH guard checks them).
    pub assigned: Vec<String>,
    /// Why the line cannot be reduced to plain words (empty when it can).
    pub unclear: Vec<String>,
    /// Functions that call themselves (`:(){ :|:& };:`).
    pub recursive_functions: Vec<String>,
}

/// Parses and walks `line`, run in `cwd` by a user whose home is `home`.
pub fn analyse(line: &str, cwd: &Path, home: &Path) -> Analysis {
    let mut walker = Walker {
        out: Analysis::default(),
        vars: HashMap::from([("HOME".to_owned(), Some(home.display().to_string()))]),
        cwd: Some(cwd.to_path_buf()),
        stdin: Stdin::Terminal,
        function: None,
        depth: 0,
        quiet: 0,
        quoted: 0,
        exported: Vec::new(),
        allexport: false,
    };
    check_characters(line, &mut walker.out.unclear);
    walker.script(line);
    walker.out.unclear.dedup();
    // `ls;` and `ls` followed by a newline are `ls`.
    while walker.out.shape.last().is_some_and(|p| p == ";") {
        walker.out.shape.pop();
    }
    walker.out
}

/// Control and invisible characters hide what a line does from the person approving it, and
/// a carriage return is a blank to the parser but part of a word to bash.
fn check_characters(line: &str, unclear: &mut Vec<String>) {
    if line.contains('\0') {
        unclear.push("it contains a NUL byte".into());
    }
    if line.chars().any(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\0')) {
        unclear.push("it contains control characters (a carriage return, an escape...)".into());
    }
    let invisible = |c: char| matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2069}' | '\u{FEFF}' | '\u{00AD}');
    if line.chars().any(invisible) {
        unclear.push("it contains invisible Unicode characters".into());
    }
}

struct Walker {
    out: Analysis,
    /// Variables assigned so far in the line; `None` when the value is not known.
    vars: HashMap<String, Option<String>>,
    cwd: Option<PathBuf>,
    stdin: Stdin,
    function: Option<String>,
    depth: u32,
    /// Above 0 inside a word: what runs there is part of the word's text in the shape.
    quiet: u32,
    /// Above 0 inside double quotes, where bash neither splits nor matches wildcards.
    quoted: u32,
    /// Variables the line exported so far: the commands after them get them.
    exported: Vec<String>,
    /// `set -a` is on: every assignment from here on is exported.
    allexport: bool,
}

/// A word as the shape shows it: plain when it is plain, else in single quotes (or `$'...'`
/// for control characters); a word only known when it runs keeps its source text in double
/// quotes, which no known word is written with; a word with wildcards is its pattern, whose
/// wildcards are bare, as no other word's are.
fn shown(word: &Word) -> String {
    let escaped = |text: &str, quote: char| {
        let mut out = String::new();
        for c in text.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\t' => out.push_str("\\t"),
                '\r' => out.push_str("\\r"),
                c if c == quote => {
                    out.push('\\');
                    out.push(c);
                }
                c if c.is_control() => out.push_str(&format!("\\x{:02x}", u32::from(c))),
                c => out.push(c),
            }
        }
        out
    };
    let text = word.text.as_str();
    if word.dynamic {
        return format!("\"{}\"", escaped(text, '"'));
    }
    if let Some(pattern) = &word.pattern {
        return pattern.clone();
    }
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:=@%+,~^".contains(c);
    if !text.is_empty() && text.chars().all(plain) && !text.starts_with('~') {
        text.to_owned()
    } else if text.chars().any(char::is_control) {
        format!("$'{}'", escaped(text, '\''))
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

impl Walker {
    fn unclear(&mut self, why: impl Into<String>) {
        let why = why.into();
        if !self.out.unclear.contains(&why) {
            self.out.unclear.push(why);
        }
    }

    /// Adds to the shape, unless inside a word or a nested script (already in a word there).
    fn emit(&mut self, part: String) {
        if self.quiet == 0 && self.depth == 0 && !part.is_empty() {
            self.out.shape.push(part);
        }
    }

    /// Operators, keywords and named leaves between statements, into the shape; statements
    /// walked. A newline between statements is `;`, as it is to bash.
    fn structure(&mut self, node: Node<'_>, src: &[u8]) {
        if node.child_count() == 0 {
            self.emit(Self::text(node, src).to_owned());
            return;
        }
        let mut previous: Option<Node<'_>> = None;
        let children = Self::children(node);
        for (i, child) in children.iter().copied().enumerate() {
            let on_a_new_line =
                previous.is_some_and(|p| p.is_named() && p.end_position().row < child.start_position().row);
            previous = Some(child);
            if child.is_named() {
                if on_a_new_line {
                    self.emit(";".to_owned());
                }
                // A statement sent to the background runs in a subshell of its own; one after
                // `&&` or `||` may not run at all.
                let background = children.get(i + 1).is_some_and(|n| Self::text(*n, src) == "&");
                let conditional = i > 0 && matches!(Self::text(children[i - 1], src), "&&" | "||");
                let saved = background.then(|| (self.cwd.clone(), self.vars.clone()));
                if conditional {
                    self.perhaps(|w| w.statement(child, src));
                } else {
                    self.statement(child, src);
                }
                if let Some(saved) = saved {
                    (self.cwd, self.vars) = saved;
                }
            } else {
                let token = Self::text(child, src).trim();
                self.emit(if token.is_empty() { ";".to_owned() } else { token.to_owned() });
            }
        }
    }

    /// Parses a whole script (the line, or the string of `sh -c`) and walks it.
    fn script(&mut self, text: &str) {
        if text.len() > MAX_PARSED_BYTES {
            self.unclear(format!("it is longer than {} KB, too long to check", MAX_PARSED_BYTES / 1024));
            return;
        }
        let mut parser = Parser::new();
        if parser.set_language(&tree_sitter_bash::LANGUAGE.into()).is_err() {
            self.unclear("the shell parser could not start");
            return;
        }
        let Some(tree) = parser.parse(text, None) else {
            self.unclear("it could not be parsed");
            return;
        };
        let root = tree.root_node();
        if root.has_error() {
            self.unclear("it is not valid shell syntax, so Perch cannot tell what it would run");
        }
        if let Some(c) = skipped(root, text) {
            self.unclear(format!(
                "it has a character ({c}) between its words that bash may read as part of a word or a command"
            ));
        }
        self.statement(root, text.as_bytes());
    }

    fn text<'s>(node: Node<'_>, src: &'s [u8]) -> &'s str {
        node.utf8_text(src).unwrap_or("")
    }

    fn children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
        let mut cursor = node.walk();
        node.children(&mut cursor).collect()
    }

    /// Walks what may run or not, or run more than once (a branch, a loop, a function's body):
    /// the variables it assigns and the folder it moves to are unknown after it.
    fn perhaps(&mut self, walk: impl FnOnce(&mut Self)) {
        let (cwd, vars) = (self.cwd.clone(), self.vars.clone());
        walk(self);
        for (name, value) in self.vars.iter_mut() {
            if vars.get(name) != Some(value) {
                *value = None;
            }
        }
        if self.cwd != cwd {
            self.cwd = None;
        }
    }

    fn statement(&mut self, node: Node<'_>, src: &[u8]) {
        if matches!(
            node.kind(),
            "if_statement"
                | "while_statement"
                | "until_statement"
                | "for_statement"
                | "c_style_for_statement"
                | "case_statement"
                | "function_definition"
        ) {
            self.perhaps(|w| w.statement_once(node, src));
        } else {
            self.statement_once(node, src);
        }
    }

    fn statement_once(&mut self, node: Node<'_>, src: &[u8]) {
        match node.kind() {
            "comment" | "heredoc_start" | "heredoc_end" | "file_descriptor" => {}
            "command" => self.command(node, src, &[]),
            // `[ ... ]` is a command bash runs like any other (its words are split and matched);
            // `[[ ... ]]` is syntax, walked for what runs inside it.
            "test_command" if Self::children(node).first().is_some_and(|c| Self::text(*c, src) == "[") => {
                let mut words = Vec::new();
                self.test_words(node, src, &mut words);
                self.emit(words.iter().map(shown).collect::<Vec<_>>().join(" "));
                self.out.commands.push(Command {
                    argv: words.clone(),
                    words,
                    cwd: self.cwd.clone(),
                    stdin: self.stdin,
                    ..Command::default()
                });
            }
            "subshell" => {
                let (cwd, vars) = (self.cwd.clone(), self.vars.clone());
                self.structure(node, src);
                (self.cwd, self.vars) = (cwd, vars);
            }
            // Each command of a pipeline runs in a subshell of its own: what it assigns or where it
            // `cd`s stays there.
            "pipeline" => {
                let saved = self.stdin;
                let (cwd, vars) = (self.cwd.clone(), self.vars.clone());
                let mut first = true;
                for child in Self::children(node) {
                    if !child.is_named() {
                        self.emit(Self::text(child, src).to_owned());
                        continue;
                    }
                    self.stdin = if first { saved } else { Stdin::Pipe };
                    first = false;
                    (self.cwd, self.vars) = (cwd.clone(), vars.clone());
                    self.statement(child, src);
                }
                (self.cwd, self.vars) = (cwd, vars);
                self.stdin = saved;
            }
            "redirected_statement" => self.redirected(node, src),
            "variable_assignment" => {
                let (_, shown) = self.assignment(node, src, true);
                self.emit(shown);
            }
            "declaration_command" => self.declaration(node, src),
            "unset_command" => {
                let mut parts = vec!["unset".to_owned()];
                for child in Self::children(node).into_iter().skip(1) {
                    let name = self.word(child, src);
                    parts.push(shown(&name));
                    self.out.assigned.push(name.text);
                }
                self.emit(parts.join(" "));
            }
            "function_definition" => {
                let name = node.child_by_field_name("name").map(|n| Self::text(n, src).to_owned());
                self.emit(format!("function {}", name.clone().unwrap_or_default()));
                let outer = self.function.replace(name.clone().unwrap_or_default());
                if let Some(body) = node.child_by_field_name("body") {
                    self.statement(body, src);
                }
                self.function = outer;
            }
            "for_statement" => {
                let mut head = vec!["for".to_owned()];
                if let Some(var) = node.child_by_field_name("variable") {
                    head.push(Self::text(var, src).to_owned());
                    self.vars.insert(Self::text(var, src).to_owned(), None);
                }
                head.push("in".to_owned());
                for value in node.children_by_field_name("value", &mut node.walk()) {
                    let w = self.word(value, src);
                    head.push(shown(&w));
                }
                self.emit(head.join(" "));
                if let Some(body) = node.child_by_field_name("body") {
                    self.statement(body, src);
                }
            }
            "ERROR" => {
                self.unclear("it is not valid shell syntax, so Perch cannot tell what it would run");
                self.structure(node, src);
            }
            // Words in statement position (test expressions, case values, arithmetic) run
            // nothing themselves, but substitutions inside them do.
            "word"
            | "string"
            | "raw_string"
            | "concatenation"
            | "simple_expansion"
            | "expansion"
            | "command_substitution"
            | "process_substitution"
            | "arithmetic_expansion"
            | "number"
            | "ansi_c_string"
            | "translated_string" => {
                let w = self.word(node, src);
                self.emit(shown(&w));
            }
            _ => self.structure(node, src),
        }
    }

    /// The words of `[ ... ]` in order: operands and operators alike. Two written together are
    /// one word to bash (`[ f[ab]` is `[` and `f[ab]`, with no `]` of its own).
    fn test_words(&mut self, node: Node<'_>, src: &[u8], out: &mut Vec<Word>) {
        let mut last_end = None;
        for child in Self::children(node) {
            let nested = matches!(
                child.kind(),
                "unary_expression" | "binary_expression" | "parenthesized_expression" | "ternary_expression"
            );
            if !nested {
                if last_end == Some(child.start_byte()) {
                    self.unclear("two of its words are written together, which bash reads as one word");
                }
                last_end = Some(child.end_byte());
            } else if last_end == Some(child.start_byte()) {
                self.unclear("two of its words are written together, which bash reads as one word");
            }
            match child.kind() {
                "unary_expression"
                | "binary_expression"
                | "parenthesized_expression"
                | "ternary_expression" => {
                    self.test_words(child, src, out);
                }
                _ if child.is_named() => out.push(self.word(child, src)),
                _ => out.push(Word::plain(Self::text(child, src))),
            }
        }
    }

    fn each(&mut self, node: Node<'_>, src: &[u8]) {
        for child in Self::children(node) {
            if child.is_named() {
                self.statement(child, src);
            }
        }
    }

    /// `body > file`, `body <<EOF`, `body <<< word`: a simple command takes its redirections
    /// itself; other bodies are walked, then their redirections.
    fn redirected(&mut self, node: Node<'_>, src: &[u8]) {
        let redirects: Vec<Node<'_>> = node.children_by_field_name("redirect", &mut node.walk()).collect();
        match node.child_by_field_name("body") {
            Some(body) if body.kind() == "command" => self.command(body, src, &redirects),
            body => {
                if let Some(body) = body {
                    self.statement(body, src);
                }
                for r in redirects {
                    let shown = self.redirect(r, src);
                    self.emit(shown);
                }
            }
        }
    }

    /// Walks one redirection, recording the files it writes, and returns it as the shape shows
    /// it: `2> /work/log` (the target resolved), `2>& 1`, `<<< word`, a here-document whole.
    fn redirect(&mut self, node: Node<'_>, src: &[u8]) -> String {
        let descriptor = node.child_by_field_name("descriptor").map_or("", |d| Self::text(d, src));
        let op = Self::children(node).into_iter().find(|c| !c.is_named()).map_or("", |c| Self::text(c, src));
        match node.kind() {
            "file_redirect" => {
                let mut targets = Vec::new();
                for dest in node.children_by_field_name("destination", &mut node.walk()) {
                    let target = self.word(dest, src);
                    // `>&2` duplicates a descriptor, but `>&file` writes the file, as `&>` does.
                    let duplicate = matches!(op, ">&" | "<&")
                        && !target.dynamic
                        && target.text.trim_end_matches('-').chars().all(|c| c.is_ascii_digit());
                    let resolved = (!target.dynamic && !duplicate)
                        .then(|| super::paths::resolve(&target.text, self.cwd.as_deref(), &self.home()))
                        .flatten();
                    targets.push(
                        resolved
                            .map_or_else(|| shown(&target), |p| shown(&Word::plain(p.display().to_string()))),
                    );
                    if op.contains('>') && !duplicate {
                        self.out.writes.push(Write { target, cwd: self.cwd.clone() });
                    }
                }
                format!("{descriptor}{op} {}", targets.join(" "))
            }
            "herestring_redirect" => {
                let word = Self::children(node)
                    .into_iter()
                    .rfind(|c| c.is_named() && c.kind() != "file_descriptor")
                    .map(|w| self.word(w, src));
                format!("{descriptor}<<< {}", word.as_ref().map(shown).unwrap_or_default())
            }
            // Unquoted here-documents expand substitutions; what follows the marker runs. The
            // text goes to the command, so the shape holds it whole.
            _ => {
                self.quiet += 1;
                let quoted = Self::children(node)
                    .iter()
                    .find(|c| c.kind() == "heredoc_start")
                    .is_some_and(|m| Self::text(*m, src).contains(['\'', '"', '\\']));
                for child in Self::children(node) {
                    match child.kind() {
                        // tree-sitter reads no backquotes in a here-document's body; bash runs them.
                        "heredoc_body" if !quoted && has_backquote(Self::text(child, src)) => {
                            self.unclear(
                                "it has a backquoted command in a here-document, which Perch cannot read",
                            );
                            self.statement(child, src);
                        }
                        "file_redirect" | "herestring_redirect" => {
                            self.redirect(child, src);
                        }
                        "heredoc_start" | "heredoc_end" | "file_descriptor" => {}
                        _ if child.is_named() => self.statement(child, src),
                        _ => {}
                    }
                }
                self.quiet -= 1;
                shown(&Word::plain(Self::text(node, src)))
            }
        }
    }

    /// `NAME=value` (or `+=`), recorded as assigned; `remember` keeps the value for the words
    /// after it. Returns the bare name and the assignment as the shape shows it.
    fn assignment(&mut self, node: Node<'_>, src: &[u8], remember: bool) -> (String, String) {
        let name =
            node.child_by_field_name("name").map(|n| Self::text(n, src).to_owned()).unwrap_or_default();
        let op = Self::children(node).into_iter().find(|c| !c.is_named()).map_or("=", |c| Self::text(c, src));
        let value = node.child_by_field_name("value").map(|v| self.value(v, src));
        let text = format!("{name}{op}{}", value.as_ref().map(shown).unwrap_or_default());
        let bare = name.split('[').next().unwrap_or(&name).to_owned();
        self.out.assigned.push(bare.clone());
        if remember {
            let known = value.filter(|v| !v.dynamic).map(|v| v.text).or(Some(String::new()));
            self.vars.insert(bare.clone(), known.filter(|_| !name.contains('[')));
            if self.allexport {
                self.exported.push(bare.clone());
            }
        }
        (bare, text)
    }

    /// An assignment's value: bash neither splits it, nor matches wildcards or expands braces
    /// in it, but expands `~` after the `=` and each `:`.
    fn value(&mut self, node: Node<'_>, src: &[u8]) -> Word {
        self.quoted += 1;
        let value = if node.kind() == "word" {
            let text = Self::text(node, src);
            if !text.is_ascii() {
                self.unclear("it has non-ASCII (look-alike) characters outside quotes");
            }
            self.tilde_list(text)
        } else {
            self.word(node, src)
        };
        self.quoted -= 1;
        Word { pattern: None, ..value }
    }

    /// `export`, `declare`, `typeset`, `local`, `readonly`.
    fn declaration(&mut self, node: Node<'_>, src: &[u8]) {
        let children = Self::children(node);
        let keyword = children.first().map_or("", |k| Self::text(*k, src)).to_owned();
        let mut parts = vec![keyword.clone()];
        let mut names = Vec::new();
        let mut export = keyword == "export";
        for child in children.into_iter().skip(1) {
            match child.kind() {
                "variable_assignment" => {
                    let (bare, text) = self.assignment(child, src, true);
                    names.push(bare);
                    parts.push(text);
                }
                "variable_name" | "word" => {
                    let w = self.word(child, src);
                    match w.text.strip_prefix('-') {
                        // `declare -x` exports; `export -n` takes the export back.
                        Some(flags) if keyword == "export" => export = !flags.contains('n'),
                        Some(flags) => export |= flags.contains('x'),
                        None => {
                            self.out.assigned.push(w.text.clone());
                            names.push(w.text.clone());
                        }
                    }
                    parts.push(shown(&w));
                }
                _ => {
                    let w = self.word(child, src);
                    parts.push(shown(&w));
                }
            }
        }
        if export {
            self.exported.extend(names);
        }
        self.emit(parts.join(" "));
    }

    /// One simple command: prefix assignments, name, arguments and its redirections.
    fn command(&mut self, node: Node<'_>, src: &[u8], outer_redirects: &[Node<'_>]) {
        let mut words = Vec::new();
        let mut prefix = Vec::new();
        let mut redirects: Vec<Node<'_>> = outer_redirects.to_vec();
        // Where the last word ended: bash never splits a word without a blank or an operator,
        // so two words the grammar read apart with nothing between them are one to bash
        // (`[ab]\#x`, `$"text"`).
        let mut last_end = None;
        for child in Self::children(node) {
            let is_word = !matches!(
                child.kind(),
                "variable_assignment" | "file_redirect" | "heredoc_redirect" | "herestring_redirect"
            ) && !Self::text(child, src).trim().is_empty();
            if is_word {
                if last_end == Some(child.start_byte()) {
                    self.unclear("two of its words are written together, which bash reads as one word");
                }
                last_end = Some(child.end_byte());
            }
            match child.kind() {
                "variable_assignment" => prefix.push(self.assignment(child, src, false)),
                "command_name" => {
                    let inner = child.named_child(0).unwrap_or(child);
                    let w = self.word(inner, src);
                    if w.dynamic {
                        self.unclear(
                            "the program to run is only known when it runs (a variable or substitution)",
                        );
                    }
                    if !w.text.is_ascii() {
                        self.unclear("the program's name has non-ASCII (look-alike) characters");
                    }
                    words.push(w);
                }
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => redirects.push(child),
                _ if child.is_named() => words.push(self.word(child, src)),
                // `==`, `=~` and a bare `$` after the name are arguments too.
                _ if !words.is_empty() && !Self::text(child, src).trim().is_empty() => {
                    words.push(Word::plain(Self::text(child, src)));
                }
                _ => {}
            }
        }
        let mut parts: Vec<String> = prefix.iter().map(|(_, text)| text.clone()).collect();
        parts.extend(words.iter().map(shown));
        for r in &redirects {
            let shown = self.redirect(*r, src);
            parts.push(shown);
        }
        self.emit(parts.join(" "));
        if words.is_empty() {
            return;
        }
        let no_prefix = prefix.is_empty();
        if !no_prefix {
            let names: Vec<String> = prefix.into_iter().map(|(name, _)| name).collect();
            self.unclear(sets_variables(&names));
        }
        let heredoc = redirects.iter().any(|r| r.kind() == "heredoc_redirect");
        let herestring = redirects
            .iter()
            .find(|r| r.kind() == "herestring_redirect")
            .and_then(|r| Self::children(*r).into_iter().rfind(|c| c.is_named()))
            .map(|h| self.word(h, src));
        let inline = heredoc || herestring.is_some();
        let raw = Command {
            argv: words.clone(),
            words,
            wrappers: Vec::new(),
            cwd: self.cwd.clone(),
            stdin: if inline { Stdin::Inline } else { self.stdin },
            more_arguments: false,
        };
        if let Some(f) = &self.function
            && raw.program() == f
            && !self.out.recursive_functions.contains(f)
        {
            self.out.recursive_functions.push(f.clone());
        }
        let before = self.out.commands.len();
        self.effective(raw, no_prefix);
        // A shell reading a here-string runs it: walk it as a script when it is plain.
        let fed_shell = self
            .out
            .commands
            .get(before)
            .is_some_and(|c| wrappers::is_shell(&c.name()) && c.args().is_empty());
        if fed_shell {
            match herestring {
                Some(w) if !w.dynamic => self.nested(&w.text),
                Some(_) => self.unclear("it feeds a shell a string that is only known when it runs"),
                None if heredoc => self.unclear("it feeds a shell a here-document"),
                None => {}
            }
        }
    }

    /// Removes wrappers, follows `sh -c` strings, and applies `cd`.
    fn effective(&mut self, raw: Command, no_prefix: bool) {
        let unwrapped = wrappers::unwrap(raw);
        if !unwrapped.assigned.is_empty() {
            self.unclear(sets_variables(&unwrapped.assigned));
        }
        self.out.assigned.extend(unwrapped.assigned);
        for why in unwrapped.unclear {
            self.unclear(why);
        }
        let command = unwrapped.command;
        if !self.exported.is_empty() {
            let names = self.exported.join(", ");
            self.unclear(format!(
                "it exports {names} to the commands after it, which can change what they do"
            ));
        }
        if let Some(why) = wrappers::inline_code(&command) {
            self.unclear(why);
        }
        match command.name().as_str() {
            // eval of plain words is a script like `sh -c`; of anything else, unknowable.
            "eval" if command.args().iter().all(|a| !a.dynamic) => {
                let text = command.args().iter().map(|a| a.text.as_str()).collect::<Vec<_>>().join(" ");
                self.nested(&text);
            }
            "eval" => self.unclear("it uses eval on text that is only known when it runs"),
            "cd" | "pushd" | "chdir" if no_prefix => {
                self.cwd = match command.args().iter().find(|a| !a.text.starts_with('-')) {
                    None => self.var("HOME").map(PathBuf::from),
                    Some(a) if a.dynamic => None,
                    Some(a) => super::paths::resolve(&a.text, self.cwd.as_deref(), &self.home()),
                };
            }
            "set"
                if command.args().iter().any(|a| {
                    a.text == "allexport"
                        || (a.text.starts_with('-') && !a.text.starts_with("--") && a.text.contains('a'))
                }) =>
            {
                self.allexport = true;
            }
            "read" | "printf" | "mapfile" | "readarray" | "getopts" => {
                self.out.assigned.extend(set_by_builtin(&command));
            }
            _ => {}
        }
        let script = unwrapped.script.clone();
        if script.is_some() {
            // Still followed below for the blocklist, but a shell other than the one the
            // parser reads (zsh, fish) may read it differently, and no approval is kept for it.
            self.unclear(format!("it runs inline code for {}", command.name()));
        }
        let executed = wrappers::find_exec(&command);
        self.out.commands.push(command);
        for inner in executed {
            self.effective(inner, false);
        }
        match script {
            Some(s) if s.dynamic => {
                self.unclear("it passes a shell a command that is only known when it runs")
            }
            Some(s) => self.nested(&s.text),
            None => {}
        }
        if unwrapped.shell_reads_stdin {
            self.unclear("it pipes text into a shell, which runs whatever arrives");
        }
    }

    /// The string of `sh -c '...'`: a script of its own, in the same folder.
    fn nested(&mut self, text: &str) {
        if self.depth >= MAX_DEPTH {
            self.unclear("it nests shells too deeply to check");
            return;
        }
        self.depth += 1;
        let (cwd, vars) = (self.cwd.clone(), self.vars.clone());
        self.script(text);
        (self.cwd, self.vars) = (cwd, vars);
        self.depth -= 1;
    }

    fn var(&self, name: &str) -> Option<String> {
        match name {
            "PWD" => self.cwd.as_ref().map(|p| p.display().to_string()),
            _ => self.vars.get(name).cloned().flatten(),
        }
    }

    fn home(&self) -> PathBuf {
        PathBuf::from(self.var("HOME").unwrap_or_default())
    }

    /// A word as bash would see it before running: quotes removed, escapes resolved, what can
    /// be known expanded. Substitutions inside it are walked as commands (they run too).
    fn word(&mut self, node: Node<'_>, src: &[u8]) -> Word {
        self.quiet += 1;
        let word = self.word_inner(node, src);
        self.quiet -= 1;
        word
    }

    fn word_inner(&mut self, node: Node<'_>, src: &[u8]) -> Word {
        let text = Self::text(node, src);
        match node.kind() {
            "word" => {
                if !text.is_ascii() {
                    self.unclear("it has non-ASCII (look-alike) characters outside quotes");
                }
                self.bare(text);
                self.expand_word(text)
            }
            "number" | "variable_name" | "extglob_pattern" | "regex" | "test_operator" => Word::plain(text),
            "raw_string" => Word::plain(text.trim_start_matches('\'').trim_end_matches('\'')),
            "ansi_c_string" => Word::plain(ansi_c(text.get(2..text.len().saturating_sub(1)).unwrap_or(""))),
            "string" | "translated_string" => {
                let mut out = Word::plain("");
                self.quoted += 1;
                // The string's own text, as written: its content nodes and what lies between its
                // parts (a newline inside the quotes), unescaped together (a backslash before a
                // newline may end one node).
                let mut raw = String::new();
                let mut end = node.start_byte();
                for child in Self::children(node) {
                    raw.push_str(&String::from_utf8_lossy(
                        src.get(end..child.start_byte()).unwrap_or_default(),
                    ));
                    end = child.end_byte();
                    match child.kind() {
                        "\"" | "$\"" => {}
                        "string_content" => raw.push_str(Self::text(child, src)),
                        _ if child.is_named() => {
                            out.text.push_str(&unescape_double(&std::mem::take(&mut raw)));
                            let w = self.word(child, src);
                            out.text.push_str(&w.text);
                            out.dynamic |= w.dynamic;
                        }
                        _ => raw.push_str(Self::text(child, src)),
                    }
                }
                out.text.push_str(&unescape_double(&raw));
                self.quoted -= 1;
                out
            }
            "concatenation" => {
                let mut out = Word::plain("");
                // The word as bash reads it for brace expansion: its unquoted parts as written,
                // anything quoted or expanded as one inert character.
                let mut bare = String::new();
                let mut pattern = String::new();
                for (i, child) in Self::children(node).into_iter().enumerate() {
                    let w = if child.kind() == "word" {
                        let raw = Self::text(child, src);
                        bare.push_str(raw);
                        if !raw.is_ascii() {
                            self.unclear("it has non-ASCII (look-alike) characters outside quotes");
                        }
                        // `~` expands only at the start of a word, and not where a quoted part
                        // follows it before a slash (`~"/x"`).
                        if i == 0 && (raw.contains('/') || !raw.starts_with('~')) {
                            self.expand_word(raw)
                        } else {
                            unquoted(raw)
                        }
                    } else {
                        bare.push('_');
                        let w = self.word(child, src);
                        Word { pattern: None, ..w }
                    };
                    match &w.pattern {
                        Some(p) => pattern.push_str(p),
                        None => pattern.push_str(&literal(&w.text)),
                    }
                    out.pattern = out.pattern.or(w.pattern.as_ref().map(|_| String::new()));
                    out.text.push_str(&w.text);
                    out.dynamic |= w.dynamic;
                }
                self.bare(&bare);
                if out.pattern.is_some() {
                    out.pattern = Some(pattern);
                }
                out
            }
            "simple_expansion" | "expansion" => {
                let name = text.trim_start_matches('$').trim_start_matches('{').trim_end_matches('}');
                let simple = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                // Unquoted, bash splits the value into words and matches wildcards in it, and an
                // empty value is no word at all: only a value that none of that changes is known.
                let unchanged = |v: &String| {
                    self.quoted > 0 || !(v.is_empty() || v.contains([' ', '\t', '\n', '*', '?', '[']))
                };
                match self.var(name).filter(|v| simple && unchanged(v)) {
                    Some(value) => Word::plain(value),
                    None => {
                        self.each(node, src);
                        Word::new(text, true)
                    }
                }
            }
            "command_substitution" | "process_substitution" => {
                let saved = (self.stdin, self.quoted);
                (self.stdin, self.quoted) = (Stdin::Terminal, 0);
                let (cwd, vars) = (self.cwd.clone(), self.vars.clone());
                self.each(node, src);
                (self.cwd, self.vars) = (cwd, vars);
                (self.stdin, self.quoted) = saved;
                Word::new(text, true)
            }
            "arithmetic_expansion" => {
                self.each(node, src);
                Word::new(text, true)
            }
            "brace_expression" => {
                if self.quoted == 0 {
                    self.unclear(BRACES);
                }
                Word::plain(text)
            }
            _ => {
                self.each(node, src);
                Word::new(text, true)
            }
        }
    }

    /// An unquoted part of a word as written: brace expansion (`{a,b}`, `{1..3}`) makes bash
    /// run other words than the ones written, which Perch does not expand itself.
    fn bare(&mut self, written: &str) {
        if self.quoted == 0 && has_brace_expansion(written) {
            self.unclear(BRACES);
        }
    }

    /// An unquoted word as bash reads it: escapes removed, wildcards noted, `~` expanded at its
    /// start, and in a word written like an assignment (`a=~/x`, bash's own habit outside POSIX
    /// mode) after the `=` and each `:`.
    fn expand_word(&self, written: &str) -> Word {
        match written.split_once('=') {
            Some((name, value)) if is_name(name) => {
                let value = self.tilde_list(value);
                Word {
                    text: format!("{name}={}", value.text),
                    dynamic: value.dynamic,
                    pattern: value.pattern.map(|p| format!("{name}={p}")),
                }
            }
            _ => self.tilde(written),
        }
    }

    /// An assignment's value: `~` expanded at its start and after each unquoted `:`
    /// (`PATH=~/bin:~/.local/bin`).
    fn tilde_list(&self, written: &str) -> Word {
        let mut out = Word::plain("");
        let mut pattern = String::new();
        for (i, part) in split_unescaped(written, ':').into_iter().enumerate() {
            let w = self.tilde(part);
            if i > 0 {
                out.text.push(':');
                pattern.push(':');
            }
            pattern.push_str(&w.pattern.clone().unwrap_or_else(|| literal(&w.text)));
            out.text.push_str(&w.text);
            out.dynamic |= w.dynamic;
            out.pattern = out.pattern.or(w.pattern.map(|_| String::new()));
        }
        if out.pattern.is_some() {
            out.pattern = Some(pattern);
        }
        out
    }

    /// An unquoted word with a leading `~` expanded: `~` and `~/x` to the home folder, `~+` to
    /// the folder it runs in, `~name` to that user's home folder as the system's user database
    /// says (bash asks it too; a name it does not know stays as written).
    fn tilde(&self, written: &str) -> Word {
        let Some(rest) = written.strip_prefix('~') else { return unquoted(written) };
        let prefix = rest.split('/').next().unwrap_or(rest);
        // A quoted, escaped or special character in the prefix turns the expansion off.
        if prefix.contains(['\\', '\'', '"', '$', '`', '*', '?', '[', '{', '}', ':', '=']) {
            return unquoted(written);
        }
        let base = match prefix {
            "" => self.home().display().to_string(),
            "+" => match &self.cwd {
                Some(p) => p.display().to_string(),
                None => return Word::new(written, true),
            },
            // `~-` is the previous folder, `~N` and `~+N` the directory stack.
            p if p.starts_with(['-', '+']) || p.starts_with(|c: char| c.is_ascii_digit()) => {
                return Word::new(written, true);
            }
            user => match home_of(user) {
                Some(home) => home,
                None => return unquoted(written),
            },
        };
        let after = unquoted(&rest[prefix.len()..]);
        Word {
            pattern: after.pattern.map(|p| format!("{}{p}", literal(&base))),
            text: format!("{base}{}", after.text),
            dynamic: false,
        }
    }
}

/// Why a line with brace expansion is asked about.
const BRACES: &str =
    "it uses brace expansion ({a,b} or {1..3}), which runs other words than the ones written";

/// Why a line that sets variables for the command it runs is asked about.
fn sets_variables(names: &[String]) -> String {
    format!("it sets {} for the command it runs, which can change what the command does", names.join(", "))
}

/// Variables `read`, `printf -v`, `mapfile` and `getopts` set (the PATH guard checks them).
fn set_by_builtin(command: &Command) -> Vec<String> {
    let name = command.name();
    let args = command.args();
    let valued = match name.as_str() {
        "read" => "adinNptu",
        "printf" => "v",
        "mapfile" | "readarray" => "dnOsuCc",
        _ => "",
    };
    let (mut set, mut operands) = (Vec::new(), Vec::new());
    let mut i = 0;
    while let Some(w) = args.get(i) {
        i += 1;
        if w.text == "--" {
            operands.extend(args[i..].iter().map(|w| w.text.clone()));
            break;
        }
        let Some(flags) = w.text.strip_prefix('-').filter(|f| !f.is_empty() && name != "getopts") else {
            operands.push(w.text.clone());
            continue;
        };
        if let Some((at, c)) = flags.char_indices().find(|(_, c)| valued.contains(*c)) {
            let attached = &flags[at + 1..];
            let value = if attached.is_empty() {
                i += 1;
                args.get(i - 1).map(|w| w.text.clone())
            } else {
                Some(attached.to_owned())
            };
            // `read -a NAME` and `printf -v NAME` name the variable they set.
            if (name == "read" && c == 'a') || (name == "printf" && c == 'v') {
                set.extend(value);
            }
        }
    }
    match name.as_str() {
        "read" => set.extend(operands),
        "mapfile" | "readarray" => set.extend(operands.pop()),
        "getopts" => set.extend(operands.get(1).cloned()),
        _ => {}
    }
    set
}

#[cfg(test)]
mod tests;
