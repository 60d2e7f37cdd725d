//! Programs that run other programs: `sudo rm -rf /` is `rm -rf /` for the blocklist, and
//! `bash -c 'rm -rf /'` is a script of its own. Each wrapper's options are skipped as its
//! manual describes them, so their values are not mistaken for the program. And programs that
//! run code given on their command line or input (`python -c`, `node -e`, awk and sed
//! programs that start commands), which Perch cannot check ([`inline_code`]).
//! (Over 500 lines: every wrapper and interpreter has its options read as its manual says.)

use super::parse::{Command, Stdin, Word};

/// A command with its wrappers taken off.
#[derive(Debug, Default)]
pub struct Unwrapped {
    pub command: Command,
    /// Variables set on the way (`env PATH=/x cmd`, `sudo X=1 cmd`).
    pub assigned: Vec<String>,
    pub unclear: Vec<String>,
    /// The string a shell was given to run (`sh -c STRING`, `su -c`, `watch`).
    pub script: Option<Word>,
    /// A shell with no script reading commands from a pipe or here-document.
    pub shell_reads_stdin: bool,
}

impl Default for Command {
    fn default() -> Self {
        Self {
            words: Vec::new(),
            argv: Vec::new(),
            wrappers: Vec::new(),
            cwd: None,
            stdin: Stdin::Terminal,
            more_arguments: false,
        }
    }
}

const SHELLS: &[&str] = &["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh", "rbash"];

pub fn is_shell(name: &str) -> bool {
    SHELLS.contains(&name)
}

/// Options that take a value, per wrapper (short forms; `--long=value` needs no entry).
fn valued(wrapper: &str) -> &'static [&'static str] {
    match wrapper {
        "sudo" => {
            &["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-T", "-U", "--user", "--group", "--chdir"]
        }
        "doas" => &["-u", "-C"],
        "env" => &["-u", "-C", "--unset", "--chdir"],
        "nice" => &["-n", "--adjustment"],
        "timeout" => &["-s", "-k", "--signal", "--kill-after"],
        "stdbuf" => &["-i", "-o", "-e"],
        "ionice" => &["-c", "-n", "-p", "-P", "-u"],
        "xargs" => {
            &["-I", "-L", "-n", "-P", "-s", "-d", "-E", "-a", "--arg-file", "--delimiter", "--max-args"]
        }
        "exec" => &["-a"],
        "flock" => &["-w", "-E", "--timeout"],
        "taskset" => &[],
        "chrt" => &[],
        "watch" => &["-n", "-d", "--interval"],
        _ => &[],
    }
}

/// Skips a wrapper's options; returns the index of the first word after them.
fn skip_options(words: &[Word], start: usize, wrapper: &str) -> usize {
    let takes_value = valued(wrapper);
    let mut i = start;
    while let Some(w) = words.get(i) {
        let t = w.text.as_str();
        if t == "--" {
            return i + 1;
        }
        if !t.starts_with('-') || t == "-" {
            break;
        }
        i += 1;
        if takes_value.contains(&t) {
            i += 1;
        }
    }
    i
}

/// Takes wrappers off `command` until the program that really runs is found.
pub fn unwrap(mut command: Command) -> Unwrapped {
    let mut out = Unwrapped::default();
    for _ in 0..16 {
        let name = command.name();
        let words = &command.words;
        let next = match name.as_str() {
            // sudo takes `NAME=value` words before the program and sets them for it.
            "sudo" => {
                let mut i = skip_options(words, 1, "sudo");
                while let Some(w) = words.get(i).filter(|w| is_assignment(&w.text)) {
                    out.assigned.push(w.text.split('=').next().unwrap_or_default().to_owned());
                    i += 1;
                }
                Some(i)
            }
            "doas" | "run0" | "pkexec" | "nice" | "nohup" | "time" | "stdbuf" | "ionice" | "setsid"
            | "unbuffer" | "caffeinate" | "builtin" | "exec" | "chronic" | "firejail" | "proxychains"
            | "torsocks" | "strace" | "ltrace" | "catchsegv" => Some(skip_options(words, 1, &name)),
            "command" => {
                // `command -v x` only looks x up.
                if words.get(1).is_some_and(|w| w.text.starts_with("-v") || w.text.starts_with("-V")) {
                    None
                } else {
                    Some(skip_options(words, 1, "command"))
                }
            }
            "busybox" => Some(1),
            "env" => {
                let mut i = 1;
                loop {
                    i = skip_options(words, i, "env");
                    match words.get(i) {
                        Some(w) if w.text.contains('=') && !w.text.starts_with('=') => {
                            out.assigned.push(w.text.split('=').next().unwrap_or_default().to_owned());
                            i += 1;
                        }
                        _ => break,
                    }
                }
                if words.iter().any(|w| w.text == "-S" || w.text.starts_with("--split-string")) {
                    out.unclear.push("it uses env -S, which splits a string into a command".into());
                }
                Some(i)
            }
            "timeout" => Some(skip_options(words, 1, "timeout") + 1),
            "taskset" | "chrt" => {
                let i = skip_options(words, 1, &name);
                Some(i + 1)
            }
            "flock" => {
                if let Some(pos) = words.iter().position(|w| w.text == "-c" || w.text == "--command") {
                    out.script = words.get(pos + 1).cloned();
                    None
                } else {
                    Some(skip_options(words, 1, "flock") + 1)
                }
            }
            "xargs" => {
                command.more_arguments = true;
                let i = skip_options(words, 1, "xargs");
                if i >= words.len() {
                    // xargs runs echo by default.
                    None
                } else {
                    Some(i)
                }
            }
            "watch" => {
                let i = skip_options(words, 1, "watch");
                out.script = join(&words[i.min(words.len())..]);
                None
            }
            "su" => {
                let pos = words.iter().position(|w| w.text == "-c" || w.text == "--command");
                out.script = pos.and_then(|p| words.get(p + 1).cloned());
                None
            }
            "script" => {
                let pos = words.iter().position(|w| w.text == "-c" || w.text == "--command");
                out.script = pos.and_then(|p| words.get(p + 1).cloned());
                None
            }
            "cmd" => {
                let pos = words
                    .iter()
                    .position(|w| w.text.eq_ignore_ascii_case("/c") || w.text.eq_ignore_ascii_case("/k"));
                out.script = pos.and_then(|p| join(&words[p + 1..]));
                None
            }
            "powershell" | "pwsh" => {
                if words.len() > 1 {
                    out.unclear.push("it runs PowerShell code, which the parser cannot check".into());
                }
                None
            }
            n if is_shell(n) => {
                shell(&command, &mut out);
                None
            }
            _ => None,
        };
        let Some(start) = next else { break };
        if start >= command.words.len() {
            break;
        }
        command.wrappers.push(name);
        command.words.drain(..start);
    }
    out.command = command;
    out
}

/// `sh -c STRING`, `bash -lc STRING`, `sh script.sh`, or a shell reading its input.
fn shell(command: &Command, out: &mut Unwrapped) {
    let words = &command.words;
    let mut i = 1;
    let mut reads_stdin = false;
    while let Some(w) = words.get(i) {
        let t = w.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if !(t.starts_with('-') || t.starts_with('+')) || t == "-" {
            break;
        }
        if t.starts_with("--") {
            i += 1;
            continue;
        }
        if t.contains('c') {
            out.script = Some(words.get(i + 1).cloned().unwrap_or_default());
            return;
        }
        reads_stdin |= t.contains('s');
        // `-o option` takes a value.
        i += if t == "-o" || t == "+o" || t == "-O" || t == "+O" { 2 } else { 1 };
    }
    let no_file = i >= words.len() || words[i].text == "-";
    // Here-strings are followed by the parser itself; pipes and here-documents cannot be.
    if (no_file || reads_stdin) && command.stdin == Stdin::Pipe {
        out.shell_reads_stdin = true;
    }
}

/// `NAME=value` with a valid variable name.
fn is_assignment(text: &str) -> bool {
    text.split_once('=').is_some_and(|(name, _)| {
        name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// Words a wrapper hands to `sh -c` as one string.
fn join(words: &[Word]) -> Option<Word> {
    if words.is_empty() {
        return None;
    }
    Some(Word::new(
        words.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" "),
        words.iter().any(|w| w.dynamic),
    ))
}

/// The programs `find -exec`/`-execdir`/`-ok` runs, with more arguments at run time.
pub fn find_exec(command: &Command) -> Vec<Command> {
    if command.name() != "find" {
        return Vec::new();
    }
    let mut found = Vec::new();
    let words = &command.words;
    let mut i = 0;
    while i < words.len() {
        if matches!(words[i].text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let end = words[i + 1..]
                .iter()
                .position(|w| w.text == ";" || w.text == "+")
                .map_or(words.len(), |p| p + i + 1);
            if end > i + 1 {
                found.push(Command {
                    words: words[i + 1..end].to_vec(),
                    argv: words[i + 1..end].to_vec(),
                    wrappers: vec!["find".into()],
                    cwd: command.cwd.clone(),
                    stdin: Stdin::Terminal,
                    more_arguments: true,
                });
            }
            i = end;
        }
        i += 1;
    }
    found
}

/// How an interpreter reads its options: the letters that take code, the letters that run a
/// module named by their value (then no script file follows), the letters whose value is the
/// rest of their word or, when nothing is attached, the next word (`valued`), the letters whose
/// value can only be attached (`attached`), and the long options that take code or a value.
struct Options {
    code: &'static str,
    module: &'static str,
    valued: &'static str,
    attached: &'static str,
    long_code: &'static [&'static str],
    long_valued: &'static [&'static str],
}

const PYTHON: Options =
    Options { code: "c", module: "m", valued: "WXQ", attached: "", long_code: &[], long_valued: &[] };
const NODE: Options = Options {
    code: "ep",
    module: "",
    valued: "rC",
    attached: "",
    long_code: &["--eval", "--print"],
    long_valued: &["--require", "--import", "--loader", "--experimental-loader", "--conditions"],
};
// perl: `-i.bak`, `-MList::Util=sum`, `-I/dir`, `-F:`, `-x/dir` keep their value attached.
const PERL: Options =
    Options { code: "eE", module: "", valued: "", attached: "iIMmxdDCF", long_code: &[], long_valued: &[] };
// ruby: `-E` is an encoding, not code.
const RUBY: Options =
    Options { code: "e", module: "", valued: "rICE", attached: "xKTWF0i", long_code: &[], long_valued: &[] };
const PHP: Options = Options {
    code: "rRBE",
    module: "",
    valued: "cdftzS",
    attached: "",
    long_code: &["--run", "--process-code", "--process-begin", "--process-end"],
    long_valued: &["--php-ini", "--define", "--file", "--docroot", "--zend-extension"],
};
const EXPRESSION: Options = Options {
    code: "eE",
    module: "",
    valued: "lsJ",
    attached: "",
    long_code: &["--eval", "--print"],
    long_valued: &[],
};

enum Scan {
    Code,
    Module,
    /// A script file (or a subcommand) is named: the argument at this index.
    Operand(usize),
    /// No script is named: the program reads one from its input (or is interactive).
    NoOperand,
}

fn scan(args: &[Word], o: &Options) -> Scan {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        i += 1;
        if t == "--" {
            return if i < args.len() { Scan::Operand(i) } else { Scan::NoOperand };
        }
        if t == "-" {
            return Scan::NoOperand;
        }
        if let Some(long) = t.strip_prefix("--").map(|l| format!("--{}", l.split('=').next().unwrap_or(l))) {
            if o.long_code.contains(&long.as_str()) {
                return Scan::Code;
            }
            if o.long_valued.contains(&long.as_str()) && !t.contains('=') {
                i += 1;
            }
            continue;
        }
        let Some(cluster) = t.strip_prefix('-') else { return Scan::Operand(i - 1) };
        for (at, c) in cluster.char_indices() {
            if o.code.contains(c) {
                return Scan::Code;
            }
            if o.module.contains(c) {
                return Scan::Module;
            }
            if o.valued.contains(c) {
                if cluster[at + c.len_utf8()..].is_empty() {
                    i += 1;
                }
                break;
            }
            if o.attached.contains(c) {
                break;
            }
        }
    }
    Scan::NoOperand
}

fn is_python(name: &str) -> bool {
    let version = |rest: &str| rest.chars().all(|c| c.is_ascii_digit() || c == '.');
    matches!(name, "py" | "pypy" | "pypy3")
        || name.strip_prefix("python").is_some_and(version)
        || name.strip_prefix("pypy").is_some_and(version)
}

/// Why Perch cannot check what `command` runs, when it runs code given on its command line
/// or fed to its input: the parser reads shell, not Python, JavaScript, Perl or awk. Shell
/// strings (`sh -c`) are found by [`unwrap`] and reported by the parser.
pub fn inline_code(command: &Command) -> Option<String> {
    let name = command.name();
    let args = command.args();
    let options = match name.as_str() {
        n if is_python(n) => &PYTHON,
        "node" | "nodejs" | "bun" => &NODE,
        "perl" => &PERL,
        "ruby" => &RUBY,
        "php" => &PHP,
        "osascript" | "lua" | "luajit" | "rscript" | "r" | "julia" | "groovy" => &EXPRESSION,
        "deno" => {
            let eval = args.first().is_some_and(|a| a.text == "eval")
                || args.iter().any(|a| a.text == "--eval" || a.text.starts_with("--eval="));
            return eval.then(|| "it runs inline code for deno".to_owned());
        }
        "awk" | "gawk" | "mawk" | "nawk" => return awk(args),
        "sed" | "gsed" => return sed(args),
        "git" => return git(args),
        _ => return None,
    };
    match scan(args, options) {
        Scan::Code => Some(format!("it runs inline code for {name}")),
        Scan::NoOperand if command.stdin != Stdin::Terminal => {
            Some(format!("it feeds {name} code on its input"))
        }
        // `python3 <(curl ...)`, `node $SCRIPT`: a script only known when it runs.
        Scan::Operand(at) if args[at].dynamic => {
            Some(format!("it runs a {name} script that is only known when it runs"))
        }
        _ => None,
    }
}

/// awk programs are code; the ones that start commands (`system()`, pipes) or write files
/// (`print > "file"`) are not something the shell parser can check.
fn awk(args: &[Word]) -> Option<String> {
    let mut programs = Vec::new();
    let mut from_file = false;
    let mut operands = Vec::new();
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        i += 1;
        match t {
            "--" => {
                operands.extend(args[i..].iter());
                break;
            }
            "-f" | "--file" => {
                from_file = true;
                i += 1;
            }
            "-e" | "--source" => {
                programs.extend(args.get(i));
                i += 1;
            }
            "-v" | "-F" | "-i" | "-l" | "--assign" | "--field-separator" | "--include" | "--load" => i += 1,
            _ if t.starts_with("-f") || t.starts_with("--file=") => from_file = true,
            _ if t.starts_with("--source=") => programs.push(w),
            _ if t.starts_with('-') && t.len() > 1 => {}
            _ => operands.push(w),
        }
    }
    if !from_file && programs.is_empty() {
        programs.extend(operands.first());
    }
    let runs = |p: &str| {
        let squeezed: String = p.chars().filter(|c| !c.is_whitespace()).collect();
        squeezed.contains("system(")
            || squeezed.replace("||", "").contains('|')
            || squeezed.contains(">\"")
            || squeezed.contains(">>")
    };
    programs
        .iter()
        .any(|p| p.dynamic || runs(&p.text))
        .then(|| "it runs an awk program that starts commands or writes files".to_owned())
}

/// GNU sed's `e` command and the `e` flag of `s` run the shell; `w`, `W` and the `w` flag
/// write files.
fn sed(args: &[Word]) -> Option<String> {
    let mut scripts = Vec::new();
    let mut given = false;
    let mut operands = Vec::new();
    let mut i = 0;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        i += 1;
        if t == "--" {
            operands.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (name, value) = long.split_once('=').map_or((long, None), |(n, v)| (n, Some(v)));
            match name {
                "expression" | "file" => {
                    given = true;
                    let value = value.map(|v| Word::new(v, w.dynamic));
                    let value = value.or_else(|| args.get(i).cloned());
                    if value.is_some() && !t.contains('=') {
                        i += 1;
                    }
                    if name == "expression" {
                        scripts.extend(value);
                    }
                }
                "line-length" if value.is_none() => i += 1,
                _ => {}
            }
            continue;
        }
        let Some(cluster) = t.strip_prefix('-').filter(|c| !c.is_empty()) else {
            operands.push(w.clone());
            continue;
        };
        for (at, c) in cluster.char_indices() {
            let rest = &cluster[at + 1..];
            match c {
                'e' | 'f' => {
                    given = true;
                    let value = if rest.is_empty() {
                        i += 1;
                        args.get(i - 1).cloned()
                    } else {
                        Some(Word::new(rest, w.dynamic))
                    };
                    if c == 'e' {
                        scripts.extend(value);
                    }
                    break;
                }
                'l' => {
                    if rest.is_empty() {
                        i += 1;
                    }
                    break;
                }
                'i' => break,
                _ => {}
            }
        }
    }
    if !given {
        scripts.extend(operands.into_iter().next());
    }
    scripts
        .iter()
        .any(|s| s.dynamic || sed_runs(&s.text))
        .then(|| "it runs a sed script that starts commands or writes files".to_owned())
}

/// Reads a sed script far enough to find the commands and flags that run or write.
fn sed_runs(script: &str) -> bool {
    let b: Vec<char> = script.chars().collect();
    let mut i = 0;
    // Up to an unescaped `delim`, from just after the opening one.
    let delimited = |i: &mut usize, delim: char| {
        while *i < b.len() && b[*i] != delim {
            *i += if b[*i] == '\\' { 2 } else { 1 };
        }
        *i += 1;
    };
    let to_line_end = |i: &mut usize| {
        while *i < b.len() && b[*i] != '\n' {
            *i += if b[*i] == '\\' { 2 } else { 1 };
        }
    };
    while i < b.len() {
        while i < b.len() && (b[i].is_whitespace() || b[i] == ';') {
            i += 1;
        }
        // Addresses: `3`, `$`, `/re/I`, `\%re%`, `first~step`, `a,b`, `a,+n`, then `!`.
        for _ in 0..2 {
            match b.get(i) {
                Some(c) if c.is_ascii_digit() || *c == '$' || *c == '+' || *c == '~' => {
                    i += 1;
                    while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == '~') {
                        i += 1;
                    }
                }
                Some('/') => {
                    i += 1;
                    delimited(&mut i, '/');
                }
                Some('\\') => {
                    let delim = b.get(i + 1).copied().unwrap_or('\\');
                    i += 2;
                    delimited(&mut i, delim);
                }
                _ => {}
            }
            while b.get(i).is_some_and(|c| matches!(c, 'I' | 'M')) {
                i += 1;
            }
            if b.get(i) == Some(&',') {
                i += 1;
            } else {
                break;
            }
        }
        while b.get(i).is_some_and(|c| c.is_whitespace() || *c == '!') {
            i += 1;
        }
        let Some(&c) = b.get(i) else { break };
        i += 1;
        match c {
            'e' | 'w' | 'W' => return true,
            's' => {
                let delim = b.get(i).copied().unwrap_or('/');
                i += 1;
                delimited(&mut i, delim);
                delimited(&mut i, delim);
                while let Some(&f) = b.get(i) {
                    match f {
                        'e' | 'w' => return true,
                        'g' | 'p' | 'i' | 'I' | 'm' | 'M' => i += 1,
                        d if d.is_ascii_digit() => i += 1,
                        _ => break,
                    }
                }
            }
            'y' => {
                let delim = b.get(i).copied().unwrap_or('/');
                i += 1;
                delimited(&mut i, delim);
                delimited(&mut i, delim);
            }
            // Text, file names, labels and comments run to the end of the line (labels also
            // to a `;` in GNU sed, which only ends them sooner).
            'a' | 'i' | 'c' | 'r' | 'R' | ':' | 'b' | 't' | 'T' | '#' => to_line_end(&mut i),
            _ => {}
        }
    }
    false
}

/// `git -c name=value`, `--config-env` and `--exec-path=` set configuration or helpers on
/// the command line, and git configuration can run programs (`core.pager`, `core.sshCommand`,
/// `alias.x=!cmd`, `core.fsmonitor`, `diff.external`).
fn git(args: &[Word]) -> Option<String> {
    let mut i = 0;
    while let Some(t) = args.get(i).map(|w| w.text.as_str()) {
        i += 1;
        match t {
            "-c" | "--config-env" => {
                return Some("it sets git configuration on its command line, which can run programs".into());
            }
            _ if t.starts_with("--config-env=") || t.starts_with("--exec-path=") => {
                return Some("it sets git configuration on its command line, which can run programs".into());
            }
            "-C" | "--git-dir" | "--work-tree" | "--namespace" | "--super-prefix" => i += 1,
            _ if t.starts_with('-') => {}
            _ => break,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(line: &str, stdin: Stdin) -> Command {
        let words = line.split(' ').map(|w| Word::new(w.replace('_', " "), false)).collect();
        Command { words, stdin, ..Command::default() }
    }

    fn inline(line: &str) -> Option<String> {
        inline_code(&command(line, Stdin::Terminal))
    }

    #[test]
    fn interpreters_given_code_are_found() {
        for line in [
            "python -c print(1)",
            "python3 -c import_os",
            "python3.12 -Ic x",
            "/usr/bin/python3 -u -c x",
            "python3 -W ignore -c x",
            "node -e x",
            "node --eval x",
            "node --eval=x",
            "node -p 1+1",
            "node -r dotenv/config -pe x",
            "bun -e x",
            "deno eval x",
            "perl -e x",
            "perl -E say",
            "perl -lne print",
            "perl -pi -e s/a/b/ f",
            "ruby -e x",
            "ruby -rjson -e x",
            "ruby -r json -ne x",
            "php -r echo_1;",
            "osascript -e x",
            "lua -e x",
            "awk BEGIN{system(\"id\")}",
            "gawk -e BEGIN{print|\"sh\"}",
            "awk {print_>_\"/home/u/.bashrc\"} f",
            "sed 1e_id f",
            "sed -n s/x/id/e f",
            "sed -e s/a/b/w_/tmp/out f",
            "sed --expression=1e_id",
            "git -c core.pager=sh log",
            "git -C src --config-env=core.pager=X log",
        ] {
            assert!(inline(line).is_some(), "{line} was not found");
        }
    }

    #[test]
    fn scripts_modules_and_ordinary_programs_are_not_inline_code() {
        for line in [
            "python script.py -c x",
            "python3 -m pytest -q",
            "python3 -m http.server -c",
            "python3 -W error script.py",
            "python3",
            "node server.js -e",
            "node -r ts-node/register app.ts",
            "perl -i.bak script.pl",
            "perl -MList::Util=sum script.pl",
            "ruby -E utf-8 app.rb",
            "php -f index.php",
            "deno run main.ts",
            "awk {print_$1} f",
            "awk -F: $3_>_1000_{print_$1} /etc/passwd",
            "awk -f prog.awk f",
            "sed -i s/foo/bar/g f",
            "sed -n /start/,/end/p f",
            "sed -e s/a/b/ -e y/abc/xyz/ f",
            "sed -E s/(a|b)+/x/g f",
            "sed 1i\\hello f",
            "sed -n $p f",
            "git -C src log --oneline",
            "git commit -m x -c",
            "ls -e",
        ] {
            assert_eq!(inline(line), None, "{line}");
        }
    }

    #[test]
    fn a_script_only_known_when_it_runs_is_inline_code() {
        let mut c = command("python3 -u x -v", Stdin::Terminal);
        assert!(inline_code(&c).is_none());
        c.words[2].dynamic = true;
        assert!(inline_code(&c).is_some(), "python3 <(curl ...)");
        c.words[3].dynamic = true;
        c.words[2].dynamic = false;
        assert!(inline_code(&c).is_none(), "only the script counts");
    }

    #[test]
    fn code_fed_on_the_input_is_inline_code() {
        assert!(inline_code(&command("python3", Stdin::Inline)).is_some());
        assert!(inline_code(&command("python3 -", Stdin::Terminal)).is_none(), "interactive");
        assert!(inline_code(&command("node", Stdin::Pipe)).is_some());
        assert!(inline_code(&command("python3 -m json.tool", Stdin::Pipe)).is_none());
        assert!(inline_code(&command("perl script.pl", Stdin::Pipe)).is_none());
    }

    #[test]
    fn sudo_sets_variables_for_its_program() {
        let u = unwrap(command("sudo -u root PAGER=x PATH=/tmp git log", Stdin::Terminal));
        assert_eq!(u.command.program(), "git");
        assert_eq!(u.assigned, ["PAGER", "PATH"]);
        let u = unwrap(command("env -i A=1 ls", Stdin::Terminal));
        assert_eq!((u.command.program(), u.assigned.as_slice()), ("ls", ["A".to_owned()].as_slice()));
    }
}
