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

/// Lines longer than this are not parsed: they are asked about as they are.
pub const MAX_PARSED_BYTES: usize = 64 * 1024;
/// How deep `sh -c '...'` strings inside each other are followed.
const MAX_DEPTH: u32 = 6;

/// One word after quote removal and expansion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    /// Part of it is only known when the command runs (`$X`, `$(...)`, `$((...))`).
    pub dynamic: bool,
}

impl Word {
    fn plain(text: impl Into<String>) -> Self {
        Self { text: text.into(), dynamic: false }
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

/// Control and invisible characters hide what a line does from the person approving it.
fn check_characters(line: &str, unclear: &mut Vec<String>) {
    if line.contains('\0') {
        unclear.push("it contains a NUL byte".into());
    }
    if line.chars().any(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r' | '\0')) {
        unclear.push("it contains control characters".into());
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
    /// Variables the line exported so far: the commands after them get them.
    exported: Vec<String>,
    /// `set -a` is on: every assignment from here on is exported.
    allexport: bool,
}

/// A word as the shape shows it: plain when it is plain, else in single quotes (or `$'...'`
/// for control characters); a word only known when it runs keeps its source text in double
/// quotes, which no known word is written with.
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
        for child in Self::children(node) {
            let on_a_new_line =
                previous.is_some_and(|p| p.is_named() && p.end_position().row < child.start_position().row);
            previous = Some(child);
            if child.is_named() {
                if on_a_new_line {
                    self.emit(";".to_owned());
                }
                self.statement(child, src);
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
        self.statement(root, text.as_bytes());
    }

    fn text<'s>(node: Node<'_>, src: &'s [u8]) -> &'s str {
        node.utf8_text(src).unwrap_or("")
    }

    fn children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
        let mut cursor = node.walk();
        node.children(&mut cursor).collect()
    }

    fn statement(&mut self, node: Node<'_>, src: &[u8]) {
        match node.kind() {
            "comment" | "heredoc_start" | "heredoc_end" | "file_descriptor" => {}
            "command" => self.command(node, src, &[]),
            "subshell" => {
                let (cwd, vars) = (self.cwd.clone(), self.vars.clone());
                self.structure(node, src);
                (self.cwd, self.vars) = (cwd, vars);
            }
            "pipeline" => {
                let saved = self.stdin;
                let mut first = true;
                for child in Self::children(node) {
                    if !child.is_named() {
                        self.emit(Self::text(child, src).to_owned());
                        continue;
                    }
                    self.stdin = if first { saved } else { Stdin::Pipe };
                    first = false;
                    self.statement(child, src);
                }
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
                for child in Self::children(node) {
                    match child.kind() {
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
        let value = node.child_by_field_name("value").map(|v| self.word(v, src));
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
        for child in Self::children(node) {
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
                let unescaped = unescape_word(text);
                Word::plain(self.tilde(unescaped))
            }
            "number" | "variable_name" | "extglob_pattern" | "regex" | "test_operator" => Word::plain(text),
            "raw_string" => Word::plain(text.trim_start_matches('\'').trim_end_matches('\'')),
            "ansi_c_string" => Word::plain(ansi_c(text.get(2..text.len().saturating_sub(1)).unwrap_or(""))),
            "string" | "translated_string" => {
                let mut out = Word::plain("");
                for child in Self::children(node) {
                    match child.kind() {
                        "\"" | "$\"" => {}
                        "string_content" => out.text.push_str(&unescape_double(Self::text(child, src))),
                        _ if child.is_named() => {
                            let w = self.word(child, src);
                            out.text.push_str(&w.text);
                            out.dynamic |= w.dynamic;
                        }
                        _ => out.text.push_str(Self::text(child, src)),
                    }
                }
                out
            }
            "concatenation" => {
                let mut out = Word::plain("");
                for (i, child) in Self::children(node).into_iter().enumerate() {
                    let w = self.word(child, src);
                    let w = if i > 0 && child.kind() == "word" {
                        // `~` expands only at the start of a word.
                        Word { text: unescape_word(Self::text(child, src)), dynamic: w.dynamic }
                    } else {
                        w
                    };
                    out.text.push_str(&w.text);
                    out.dynamic |= w.dynamic;
                }
                out
            }
            "simple_expansion" | "expansion" => {
                let name = text.trim_start_matches('$').trim_start_matches('{').trim_end_matches('}');
                let simple = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                match self.var(name).filter(|_| simple) {
                    Some(value) => Word::plain(value),
                    None => {
                        self.each(node, src);
                        Word { text: text.to_owned(), dynamic: true }
                    }
                }
            }
            "command_substitution" | "process_substitution" => {
                let saved = self.stdin;
                self.stdin = Stdin::Terminal;
                let (cwd, vars) = (self.cwd.clone(), self.vars.clone());
                self.each(node, src);
                (self.cwd, self.vars) = (cwd, vars);
                self.stdin = saved;
                Word { text: text.to_owned(), dynamic: true }
            }
            "arithmetic_expansion" | "brace_expression" => {
                self.each(node, src);
                Word { text: text.to_owned(), dynamic: node.kind() == "arithmetic_expansion" }
            }
            _ => {
                self.each(node, src);
                Word { text: text.to_owned(), dynamic: true }
            }
        }
    }

    /// `~` and `~/x` are the home folder; `~name` is that user's.
    fn tilde(&self, word: String) -> String {
        let Some(rest) = word.strip_prefix('~') else { return word };
        let (user, tail) = rest.split_once('/').map_or((rest, ""), |(u, t)| (u, t));
        let base = match user {
            "" => self.home().display().to_string(),
            "root" => "/root".to_owned(),
            "+" => self.cwd.as_ref().map_or_else(|| word.clone(), |p| p.display().to_string()),
            u if u.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)) => format!("/home/{u}"),
            _ => return word,
        };
        if rest.contains('/') { format!("{base}/{tail}") } else { base }
    }
}

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

/// Backslashes outside quotes escape the next character (`r\m` is `rm`).
fn unescape_word(text: &str) -> String {
    // `C:\Windows` is a Windows path, not escapes.
    let b = text.as_bytes();
    if b.len() > 2 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'\\' {
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

/// Inside double quotes a backslash escapes only `$`, `` ` ``, `"`, `\` and a newline.
fn unescape_double(text: &str) -> String {
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
fn ansi_c(body: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<Vec<String>> {
        analyse(line, Path::new("/work"), Path::new("/home/u"))
            .commands
            .iter()
            .map(|c| c.words.iter().map(|w| w.text.clone()).collect())
            .collect()
    }

    #[test]
    fn every_simple_command_is_found_in_execution_order() {
        assert_eq!(
            words("a 1 | b 2 && (c; d) || $(e) `f` <(g)"),
            [
                vec!["a", "1"],
                vec!["b", "2"],
                vec!["c"],
                vec!["d"],
                vec!["e"],
                vec!["f"],
                vec!["g"],
                vec!["$(e)", "`f`", "<(g)"]
            ]
        );
    }

    #[test]
    fn quotes_escapes_and_known_variables_are_resolved() {
        assert_eq!(
            words(r#"r\m -"r"'f' ~/x "$HOME"/y ${HOME}"#),
            [vec!["rm", "-rf", "/home/u/x", "/home/u/y", "/home/u"]]
        );
        assert_eq!(words("D=/etc; rm -r $D/x"), [vec!["rm", "-r", "/etc/x"]]);
        assert_eq!(words(r"$'\x72\x6d' -f"), [vec!["rm", "-f"]]);
        let a = analyse("rm -rf $X", Path::new("/"), Path::new("/h"));
        assert!(a.commands[0].words[2].dynamic);
    }

    #[test]
    fn cd_is_followed_and_subshells_keep_their_own_folder() {
        let a = analyse("cd /etc && (cd ssh) && ls; cd ..; pwd", Path::new("/w"), Path::new("/h"));
        let cwds: Vec<_> = a.commands.iter().map(|c| c.cwd.clone().unwrap()).collect();
        assert_eq!(cwds, ["/w", "/etc", "/etc", "/etc", "/"].map(PathBuf::from));
    }

    #[test]
    fn shell_strings_and_wrappers_are_followed() {
        assert_eq!(
            words("sudo -u root bash -c 'rm -rf /'"),
            [vec!["bash", "-c", "rm -rf /"], vec!["rm", "-rf", "/"]]
        );
        let a = analyse("env -i PATH=/tmp nice -n 5 ls", Path::new("/"), Path::new("/h"));
        assert_eq!(a.commands[0].program(), "ls");
        assert_eq!(a.commands[0].wrappers, ["env", "nice"]);
        assert!(a.assigned.contains(&"PATH".to_owned()));
    }

    #[test]
    fn what_cannot_be_reduced_is_said() {
        let unclear = |l: &str| analyse(l, Path::new("/"), Path::new("/h")).unclear;
        assert!(unclear("ls -la && git status").is_empty());
        assert!(!unclear("$CMD -rf /").is_empty());
        assert!(!unclear("eval \"$(cat x)\"").is_empty());
        assert!(unclear("eval \"ls -la\"").is_empty(), "eval of plain words is followed");
        assert!(!unclear("echo cm0gLXJmIC8K | base64 -d | sh").is_empty());
        assert!(!unclear("bash <<EOF\nrm -rf /\nEOF").is_empty());
        assert!(!unclear("ｒｍ -rf /").is_empty());
        assert!(!unclear("ls \u{202E}txt.sh").is_empty());
        assert!(!unclear("echo 'unterminated").is_empty());
        assert!(unclear("echo \"héllo\"").is_empty(), "quoted text may be any language");
    }

    fn shape(line: &str) -> Vec<String> {
        analyse(line, Path::new("/w"), Path::new("/h")).shape
    }

    #[test]
    fn the_shape_is_the_whole_line_normalised() {
        assert_eq!(
            shape("git   diff --stat > 'out file.txt' 2>&1"),
            ["git diff --stat > '/w/out file.txt' 2>& 1"]
        );
        // tree-sitter-bash puts a trailing redirection on the whole list, after its `cd`.
        assert_eq!(shape("cd src &&  git diff > out"), ["cd src", "&&", "git diff", "> /w/src/out"]);
        assert_eq!(shape("echo \"a b\" 'c' \\d"), shape("echo 'a b' c d"));
        assert_ne!(shape("echo 'a b' c"), shape("echo a b c"));
        assert_eq!(shape("a; b;"), shape("a\nb\n"));
        assert_eq!(shape("a | b"), ["a", "|", "b"]);
        assert_ne!(shape("a && b"), shape("a || b"));
        assert_ne!(shape("(a; b)"), shape("a; b"));
        assert_eq!(shape("cat notes.txt > ./x/../out"), ["cat notes.txt > /w/out"]);
        assert_eq!(shape("X=1 Y=\"a b\" make"), ["X=1 Y='a b' make"]);
        assert_eq!(shape("export A=1 && make"), ["export A=1", "&&", "make"]);
        assert_eq!(shape("echo $HOME \"$X\" '$X'"), ["echo /h \"$X\" '$X'"]);
        assert_eq!(shape("echo $(rm -rf x)"), ["echo \"$(rm -rf x)\""], "what runs in a word stays in it");
        assert_ne!(shape("[ -f x ] && a"), shape("[ -d x ] && a"));
        assert_ne!(shape("cat <<EOF\nhi\nEOF"), shape("cat <<EOF\nbye\nEOF"));
        assert_eq!(shape("# just a comment"), Vec::<String>::new());
    }

    #[test]
    fn inline_code_and_variables_for_a_command_are_unclear() {
        let a = |l: &str| analyse(l, Path::new("/w"), Path::new("/h"));
        let has = |l: &str, part: &str| a(l).unclear.iter().any(|u| u.contains(part));
        let sh = a("sh -c 'rm -rf /etc'");
        assert!(sh.unclear.iter().any(|u| u.contains("inline code for sh")), "{:?}", sh.unclear);
        assert!(sh.commands.iter().any(|c| c.name() == "rm"), "the string is still followed");
        assert!(has("sudo bash -lc 'make'", "inline code for bash"));
        assert!(has("find . -exec sh -c 'x' \\;", "inline code for sh"));
        assert!(has("python3 -c 'print(1)'", "inline code for python3"));
        assert!(has("python3 - <<EOF\nprint(1)\nEOF", "code on its input"));
        assert!(has("echo 'print(1)' | python3", "code on its input"));
        assert!(has("GIT_DIR=x git log", "sets GIT_DIR"));
        assert!(has("env FOO=1 make", "sets FOO"));
        assert!(has("sudo FOO=1 make", "sets FOO"));
        assert!(has("export FOO=1; make", "exports FOO"));
        assert!(has("declare -x FOO=1\nmake", "exports FOO"));
        assert!(has("set -a; FOO=1; make", "exports FOO"));
        assert!(a("export RUST_LOG=debug").unclear.is_empty(), "nothing runs with it");
        assert!(a("FOO=1; make").unclear.is_empty(), "a shell variable is not exported");
        assert!(a("make; export FOO=1").unclear.is_empty());
        assert!(a("python3 -m pytest && node build.js && awk '{print $1}' f").unclear.is_empty());
    }

    #[test]
    fn every_write_and_variable_is_found() {
        let a = |l: &str| analyse(l, Path::new("/w"), Path::new("/h"));
        let written = |l: &str| a(l).writes.into_iter().map(|w| w.target.text).collect::<Vec<_>>();
        assert_eq!(written("echo x >& out 2>&1"), ["out"]);
        assert_eq!(written("cat <<EOF > f\nhi\nEOF"), ["f"]);
        assert_eq!(written("ls > a >> b &> c 2> d < e"), ["a", "b", "c", "d"]);
        assert!(a("read -r PATH <<< /tmp").assigned.contains(&"PATH".to_owned()));
        assert!(a("printf -v LD_PRELOAD %s x").assigned.contains(&"LD_PRELOAD".to_owned()));
        assert!(a("read -rp 'name? ' -a GIT_DIR x").assigned.contains(&"GIT_DIR".to_owned()));
        assert!(!a("read -rp 'name? ' x").assigned.contains(&"name? ".to_owned()));
    }
}
