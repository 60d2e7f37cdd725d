//! Programs that run other programs: `sudo rm -rf /` is `rm -rf /` for the blocklist, and
//! `bash -c 'rm -rf /'` is a script of its own. Each wrapper's options are skipped as its
//! manual describes them, so their values are not mistaken for the program.

use super::parse::{Command, Stdin, Word};

/// A command with its wrappers taken off.
#[derive(Debug, Default)]
pub struct Unwrapped {
    pub command: Command,
    /// Variables set on the way (`env PATH=/x cmd`).
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
            "sudo" | "doas" | "run0" | "pkexec" | "nice" | "nohup" | "time" | "stdbuf" | "ionice"
            | "setsid" | "unbuffer" | "caffeinate" | "builtin" | "exec" | "chronic" | "firejail"
            | "proxychains" | "torsocks" | "strace" | "ltrace" | "catchsegv" => {
                Some(skip_options(words, 1, &name))
            }
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
            out.script = Some(
                words.get(i + 1).cloned().unwrap_or_else(|| Word { text: String::new(), dynamic: false }),
            );
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

/// Words a wrapper hands to `sh -c` as one string.
fn join(words: &[Word]) -> Option<Word> {
    if words.is_empty() {
        return None;
    }
    Some(Word {
        text: words.iter().map(|w| w.text.as_str()).collect::<Vec<_>>().join(" "),
        dynamic: words.iter().any(|w| w.dynamic),
    })
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
