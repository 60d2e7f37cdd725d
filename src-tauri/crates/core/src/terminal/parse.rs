//! The command line as bash would run it: parsed with tree-sitter-bash (the grammar Codex CLI
//! uses) and walked in execution order into every simple command that would run, including
//! those in pipelines, lists, subshells, functions, `$(...)`, backticks and process
//! substitutions, with words resolved as far as they can be without running anything: quotes
//! and escapes removed, `~`, `$HOME`, `$PWD` and variables assigned earlier in the line
//! expanded, and the working folder followed through `cd`. What cannot be reduced to plain
//! words is recorded in [`Analysis::unclear`], so it is asked about and never auto-approved.

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
    };
    check_characters(line, &mut walker.out.unclear);
    walker.script(line);
    walker.out.unclear.dedup();
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
}

impl Walker {
    fn unclear(&mut self, why: impl Into<String>) {
        let why = why.into();
        if !self.out.unclear.contains(&why) {
            self.out.unclear.push(why);
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
                self.each(node, src);
                (self.cwd, self.vars) = (cwd, vars);
            }
            "pipeline" => {
                let saved = self.stdin;
                let mut first = true;
                for child in Self::children(node) {
                    if !child.is_named() {
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
                self.assignment(node, src, true);
            }
            "declaration_command" => self.declaration(node, src),
            "unset_command" => {
                for child in Self::children(node).into_iter().skip(1) {
                    let name = self.word(child, src).text;
                    self.out.assigned.push(name);
                }
            }
            "function_definition" => {
                let name = node.child_by_field_name("name").map(|n| Self::text(n, src).to_owned());
                let outer = self.function.replace(name.clone().unwrap_or_default());
                if let Some(body) = node.child_by_field_name("body") {
                    self.statement(body, src);
                }
                self.function = outer;
            }
            "for_statement" => {
                if let Some(var) = node.child_by_field_name("variable") {
                    self.vars.insert(Self::text(var, src).to_owned(), None);
                }
                for value in node.children_by_field_name("value", &mut node.walk()) {
                    self.word(value, src);
                }
                if let Some(body) = node.child_by_field_name("body") {
                    self.statement(body, src);
                }
            }
            "ERROR" => {
                self.unclear("it is not valid shell syntax, so Perch cannot tell what it would run");
                self.each(node, src);
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
                self.word(node, src);
            }
            _ => self.each(node, src),
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
                    self.redirect(r, src);
                }
            }
        }
    }

    fn redirect(&mut self, node: Node<'_>, src: &[u8]) {
        match node.kind() {
            "file_redirect" => {
                let op = Self::children(node)
                    .into_iter()
                    .find(|c| !c.is_named())
                    .map(|c| Self::text(c, src))
                    .unwrap_or("");
                let writes = op.contains('>') && !op.starts_with(">&") && !op.starts_with("<&");
                for dest in node.children_by_field_name("destination", &mut node.walk()) {
                    let target = self.word(dest, src);
                    if writes {
                        self.out.writes.push(Write { target, cwd: self.cwd.clone() });
                    }
                }
            }
            // Unquoted here-documents expand substitutions; what follows the marker runs.
            _ => {
                for child in Self::children(node) {
                    if child.is_named() && child.kind() != "heredoc_start" && child.kind() != "heredoc_end" {
                        self.statement(child, src);
                    }
                }
            }
        }
    }

    fn assignment(&mut self, node: Node<'_>, src: &[u8], remember: bool) -> String {
        let name =
            node.child_by_field_name("name").map(|n| Self::text(n, src).to_owned()).unwrap_or_default();
        let value = node.child_by_field_name("value").map(|v| self.word(v, src));
        let bare = name.split('[').next().unwrap_or(&name).to_owned();
        self.out.assigned.push(bare.clone());
        if remember {
            let known = value.filter(|v| !v.dynamic).map(|v| v.text).or(Some(String::new()));
            self.vars.insert(bare.clone(), known.filter(|_| !name.contains('[')));
        }
        bare
    }

    fn declaration(&mut self, node: Node<'_>, src: &[u8]) {
        for child in Self::children(node).into_iter().skip(1) {
            match child.kind() {
                "variable_assignment" => {
                    self.assignment(child, src, true);
                }
                "variable_name" | "word" => {
                    let w = self.word(child, src);
                    if !w.text.starts_with('-') {
                        self.out.assigned.push(w.text);
                    }
                }
                _ => {
                    self.word(child, src);
                }
            }
        }
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
                _ => {}
            }
        }
        for r in &redirects {
            self.redirect(*r, src);
        }
        if words.is_empty() {
            return;
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
        self.effective(raw, prefix.is_empty());
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
        self.out.assigned.extend(unwrapped.assigned);
        for why in unwrapped.unclear {
            self.unclear(why);
        }
        let command = unwrapped.command;
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
            _ => {}
        }
        let script = unwrapped.script.clone();
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
}
