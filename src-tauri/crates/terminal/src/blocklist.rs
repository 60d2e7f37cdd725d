//! Layer 1, the blocklist: destructive commands, decided on the parsed command line (every
//! simple command, wrappers removed, paths normalised), never on the raw text. It overrides
//! every approval. Where a rule would need a value only known at run time (a recursive delete
//! of `$DIR`), the command is asked about instead, and never auto-approved. Besides the
//! system, it guards what the user's account holds as a whole: the home folder, the crontab,
//! the login session and its processes ([`account`]).
//! (Over 500 lines: one list of rules, each short, with the tests beside them.)

use std::path::{Path, PathBuf};

use super::parse::{Analysis, Command, Word};
use super::paths::{expand_braces, resolve};

/// What the blocklist found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    Blocked(String),
    /// A rule applies but its target is only known when the command runs.
    Unclear(String),
}

/// Folders whose removal, recursive change or replacement breaks the system.
const SYSTEM_ROOTS: &[&str] = &[
    "/bin",
    "/boot",
    "/dev",
    "/etc",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/opt",
    "/proc",
    "/root",
    "/run",
    "/sbin",
    "/srv",
    "/sys",
    "/usr",
    "/var",
    "/home",
    "/mnt",
    "/media",
    "/snap",
    "/Users",
    "/System",
    "/Library",
    "/Applications",
    "/private",
];
/// Folders whose every file belongs to the system (deleting or writing any of them is refused).
const SYSTEM_TREES: &[&str] = &[
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sbin", "/sys", "/usr",
    "/System",
];
/// Files the shell runs at start-up.
const STARTUP_FILES: &[&str] = &[
    "~/.bashrc",
    "~/.bash_profile",
    "~/.bash_login",
    "~/.bash_logout",
    "~/.profile",
    "~/.zshrc",
    "~/.zprofile",
    "~/.zshenv",
    "~/.zlogin",
    "~/.config/fish/config.fish",
    "~/.kshrc",
    "~/.cshrc",
    "~/.tcshrc",
    "~/.xinitrc",
    "~/.xprofile",
    "~/.pam_environment",
    "/etc/profile",
    "/etc/profile.d",
    "/etc/bash.bashrc",
    "/etc/bashrc",
    "/etc/environment",
    "/etc/zsh",
    "/etc/zshrc",
];
/// Programs that only read the files they are given.
const READERS: &[&str] = &[
    "cat",
    "less",
    "more",
    "head",
    "tail",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "wc",
    "diff",
    "cmp",
    "file",
    "stat",
    "ls",
    "bat",
    "md5sum",
    "sha256sum",
    "source",
    ".",
];
const DISK_TOOLS: &[&str] = &[
    "mkfs",
    "mke2fs",
    "mkswap",
    "mkntfs",
    "mkdosfs",
    "mkexfatfs",
    "wipefs",
    "fdisk",
    "sfdisk",
    "cfdisk",
    "gdisk",
    "sgdisk",
    "parted",
    "blkdiscard",
    "format",
    "diskpart",
    "zpool",
    "cryptsetup",
    "badblocks",
];
const POWER: &[&str] = &["shutdown", "reboot", "halt", "poweroff", "stop-computer", "restart-computer"];

pub fn check(a: &Analysis, home: &Path) -> Vec<Finding> {
    let mut found = Vec::new();
    for name in &a.recursive_functions {
        found.push(Finding::Blocked(format!("a fork bomb (the function {name} starts itself)")));
    }
    for write in &a.writes {
        for path in targets(&write.target, write.cwd.as_deref(), home, &mut found, "writes to") {
            if let Some(why) = protected_write(&path, home) {
                found.push(Finding::Blocked(why));
            }
        }
    }
    for c in &a.commands {
        command(c, home, &mut found);
        account(c, home, &mut found);
    }
    found
}

/// The paths a word names (braces expanded); unknown ones are reported as unclear.
fn targets(
    word: &Word,
    cwd: Option<&Path>,
    home: &Path,
    found: &mut Vec<Finding>,
    what: &str,
) -> Vec<PathBuf> {
    if word.dynamic {
        return Vec::new();
    }
    let mut out = Vec::new();
    for text in expand_braces(&word.text) {
        if windows_system(Path::new(&text)) {
            out.push(PathBuf::from(text));
            continue;
        }
        match resolve(&text, cwd, home) {
            Some(p) => out.push(p),
            None => {
                found.push(Finding::Unclear(format!("it {what} {text} in a folder only known when it runs")))
            }
        }
    }
    out
}

fn inside(path: &Path, root: &Path) -> bool {
    path.starts_with(root)
}

fn expand_home(entry: &str, home: &Path) -> PathBuf {
    entry.strip_prefix("~/").map_or_else(|| PathBuf::from(entry), |rest| home.join(rest))
}

pub(crate) fn credential(path: &Path, home: &Path) -> Option<String> {
    perch_foundation::secrets::credential_store(path, home)
        .map(|c| format!("it touches a credential store ({c})"))
}

fn startup_file(path: &Path, home: &Path) -> Option<String> {
    STARTUP_FILES
        .iter()
        .find(|f| inside(path, &expand_home(f, home)))
        .map(|f| format!("it changes a shell start-up file ({f})"))
}

/// A disk device (`/dev/sda`, `/dev/nvme0n1`), not `/dev/null` and friends.
fn disk_device(path: &Path) -> bool {
    let Ok(rest) = path.strip_prefix("/dev") else { return false };
    let name = rest.to_string_lossy();
    ["sd", "hd", "vd", "xvd", "nvme", "mmcblk", "disk", "md", "dm-", "mapper", "loop", "sr", "rdisk", "mtd"]
        .iter()
        .any(|p| name.starts_with(p))
}

/// A folder whose loss breaks the system or the user's account: `/`, a system root, the home
/// folder or the folder that holds homes, and Windows' drive roots and system folders.
fn root_like(path: &Path, home: &Path) -> bool {
    path == Path::new("/")
        || path == home
        || SYSTEM_ROOTS.iter().any(|r| path == Path::new(r))
        || windows_system(path)
}

fn windows_system(path: &Path) -> bool {
    let text = path.to_string_lossy().replace('\\', "/").to_ascii_lowercase();
    let drive = text.len() >= 2 && text.as_bytes()[1] == b':' && text.as_bytes()[0].is_ascii_alphabetic();
    if text.contains("%systemroot%") || text.contains("%windir%") || text.contains("$env:windir") {
        return true;
    }
    if !drive {
        return false;
    }
    let rest = text[2..].trim_start_matches('/');
    rest.is_empty()
        || ["windows", "program files", "program files (x86)", "programdata", "users", "boot", "recovery"]
            .iter()
            .any(|d| rest == *d || rest.starts_with(&format!("{d}/")))
}

/// Where a glob such as `/*` or `~/.*` starts: the folder before the first wildcard.
fn glob_base(path: &Path) -> Option<PathBuf> {
    let text = path.to_string_lossy();
    let first = text.find(['*', '?', '['])?;
    let base = text[..first].rsplit_once('/').map_or("/", |(b, _)| if b.is_empty() { "/" } else { b });
    Some(PathBuf::from(base))
}

/// Why deleting `path` (recursively or not) is refused.
fn protected_delete(path: &Path, home: &Path, recursive: bool) -> Option<String> {
    let shown = path.display();
    if root_like(path, home) || (recursive && home.starts_with(path)) {
        return Some(format!("it deletes {shown}, a system or home folder"));
    }
    if let Some(base) = glob_base(path)
        && (root_like(&base, home) || (recursive && SYSTEM_TREES.iter().any(|t| inside(&base, Path::new(t)))))
    {
        return Some(format!("it deletes everything in {}", base.display()));
    }
    if SYSTEM_TREES.iter().any(|t| inside(path, Path::new(t))) {
        return Some(format!("it deletes system files ({shown})"));
    }
    credential(path, home).or_else(|| startup_file(path, home))
}

fn protected_write(path: &Path, home: &Path) -> Option<String> {
    if disk_device(path) {
        return Some(format!("it writes raw data to a disk ({})", path.display()));
    }
    if path.starts_with("/dev") {
        return None;
    }
    if SYSTEM_TREES.iter().any(|t| inside(path, Path::new(t))) || windows_system(path) {
        return Some(format!("it writes system files ({})", path.display()));
    }
    credential(path, home).or_else(|| startup_file(path, home))
}

fn flag(args: &[Word], short: char, long: &str) -> bool {
    args.iter().any(|a| {
        let t = a.text.as_str();
        t == long || (t.starts_with('-') && !t.starts_with("--") && t[1..].contains(short))
    })
}

/// Arguments that are not options (everything after `--`).
fn operands(args: &[Word]) -> Vec<&Word> {
    let mut out = Vec::new();
    let mut options = true;
    for a in args {
        if options && a.text == "--" {
            options = false;
        } else if !(options && a.text.starts_with('-') && a.text.len() > 1) {
            out.push(a);
        }
    }
    out
}

fn command(c: &Command, home: &Path, found: &mut Vec<Finding>) {
    let name = c.name();
    let args = c.args();
    let cwd = c.cwd.as_deref();
    let lower: Vec<String> = args.iter().map(|a| a.text.to_ascii_lowercase()).collect();
    let has = |s: &str| lower.iter().any(|a| a == s);
    let block = |found: &mut Vec<Finding>, why: String| found.push(Finding::Blocked(why));

    // Credential stores and start-up files, whatever the program (readers may read start-up files).
    for word in args {
        let text = word
            .text
            .split_once('=')
            .filter(|(k, _)| k.starts_with("of") || k.starts_with("--"))
            .map_or(word.text.as_str(), |(_, v)| v);
        let word = Word::new(text, word.dynamic);
        if !(word.text.contains('/') || word.text.starts_with('~') || word.text.starts_with('.')) {
            continue;
        }
        for path in targets(&word, cwd, home, &mut Vec::new(), "uses") {
            if let Some(why) = credential(&path, home) {
                block(found, why);
            } else if !READERS.contains(&name.as_str())
                && let Some(why) = startup_file(&path, home)
            {
                block(found, why);
            }
        }
    }

    match name.as_str() {
        "rm" | "rmdir" | "unlink" | "shred" | "srm" | "trash" | "trash-put" | "gio" => {
            let recursive =
                flag(args, 'r', "--recursive") || flag(args, 'R', "--recursive") || name == "rmdir";
            if has("--no-preserve-root") {
                block(found, "it deletes with --no-preserve-root".into());
            }
            if c.more_arguments {
                found.push(Finding::Unclear("it deletes whatever arrives on its input".into()));
            }
            for op in operands(args) {
                if op.dynamic {
                    if recursive {
                        found.push(Finding::Unclear(format!(
                            "it deletes recursively {}, which is only known when it runs",
                            op.text
                        )));
                    }
                    continue;
                }
                for path in targets(op, cwd, home, found, "deletes") {
                    if let Some(why) = protected_delete(&path, home, recursive) {
                        block(found, why);
                    }
                }
            }
        }
        "rd" | "del" | "erase" | "remove-item" | "ri" | "rmdir.exe" => {
            for op in operands(args).into_iter().filter(|w| !w.text.starts_with('/') || w.text.len() > 2) {
                let path = PathBuf::from(&op.text);
                if windows_system(&path) || root_like(&path, home) {
                    block(found, format!("it deletes {}, a system folder", op.text));
                }
            }
        }
        n if DISK_TOOLS.contains(&n) || n.starts_with("mkfs") || n.starts_with("mkfs.") => {
            let listing = has("-l") || has("--list") || has("-h") || has("--help");
            if !listing {
                block(found, format!("it formats or partitions disks ({n})"));
            }
        }
        "dd" => {
            for a in args {
                if let Some(out) = a.text.strip_prefix("of=") {
                    let word = Word::new(out, a.dynamic);
                    for path in targets(&word, cwd, home, found, "writes to") {
                        if let Some(why) = protected_write(&path, home) {
                            block(found, why);
                        }
                    }
                }
            }
        }
        "cp" | "mv" | "install" | "ln" | "rsync" | "tee" | "truncate" | "sed" | "perl" | "shred.exe"
        | "cat" => {
            let ops = operands(args);
            let written: Vec<&Word> = match name.as_str() {
                "tee" | "truncate" => ops.clone(),
                "sed" | "perl" if flag(args, 'i', "--in-place") => ops.iter().skip(1).copied().collect(),
                "cp" | "mv" | "install" | "ln" | "rsync" => ops.last().copied().into_iter().collect(),
                _ => Vec::new(),
            };
            for w in written {
                for path in targets(w, cwd, home, found, "writes to") {
                    if let Some(why) = protected_write(&path, home) {
                        block(found, why);
                    }
                }
            }
            if name == "mv" {
                for w in ops.iter().take(ops.len().saturating_sub(1)) {
                    for path in targets(w, cwd, home, found, "moves") {
                        if root_like(&path, home) || SYSTEM_TREES.iter().any(|t| inside(&path, Path::new(t)))
                        {
                            block(found, format!("it moves {}, a system or home folder", path.display()));
                        }
                    }
                }
            }
        }
        "chmod" | "chown" | "chgrp" | "chattr" | "setfacl" | "icacls" | "takeown" => {
            let recursive = flag(args, 'R', "--recursive") || has("/t") || has("/r");
            for op in operands(args)
                .into_iter()
                .skip(usize::from(!matches!(name.as_str(), "chattr" | "icacls" | "takeown")))
            {
                for path in targets(op, cwd, home, found, "changes") {
                    let system = SYSTEM_TREES.iter().any(|t| inside(&path, Path::new(t)));
                    if root_like(&path, home)
                        || (recursive && (system || glob_base(&path).is_some_and(|b| root_like(&b, home))))
                    {
                        block(found, format!("it changes the permissions of {}", path.display()));
                    }
                }
            }
        }
        "find" if has("-delete") || has("-exec") || has("-execdir") => {
            for op in args.iter().take_while(|a| !a.text.starts_with('-')) {
                for path in targets(op, cwd, home, found, "deletes in") {
                    let exec_rm = lower.iter().any(|a| a == "rm" || a.ends_with("/rm")) || has("-delete");
                    let sweeping = root_like(&path, home) || home.starts_with(&path);
                    if exec_rm && (sweeping || SYSTEM_TREES.iter().any(|t| inside(&path, Path::new(t)))) {
                        block(found, format!("it deletes everything find finds in {}", path.display()));
                    }
                }
            }
        }
        n if POWER.contains(&n) && !(has("--help") || has("-c") && n == "shutdown") => {
            block(found, format!("it shuts down or restarts the computer ({n})"));
        }
        "init" | "telinit" if lower.first().is_some_and(|a| a == "0" || a == "6") => {
            block(found, "it shuts down or restarts the computer".into());
        }
        "systemctl" | "loginctl"
            if lower.iter().any(|a| {
                matches!(
                    a.as_str(),
                    "poweroff"
                        | "reboot"
                        | "halt"
                        | "kexec"
                        | "suspend"
                        | "hibernate"
                        | "emergency"
                        | "rescue"
                )
            }) =>
        {
            block(found, format!("it shuts down or restarts the computer ({name})"));
        }
        "kill" | "pkill" | "killall" => {
            let ops = operands(args);
            if ops.iter().any(|w| w.text == "-1" || w.text == "1")
                || lower.iter().any(|a| a == "-1") && name == "kill"
            {
                block(found, "it kills every process (or init)".into());
            }
        }
        "reg" if lower.first().is_some_and(|a| a == "delete") => {
            block(found, "it deletes Windows registry keys".into());
        }
        "bcdedit" | "vssadmin" | "cipher" => {
            block(found, format!("it changes how Windows boots or recovers ({name})"))
        }
        "secret-tool" | "security"
            if lower.iter().any(|a| a.contains("lookup") || a.contains("find-") || a.contains("dump")) =>
        {
            block(found, "it reads passwords from the keyring".into());
        }
        "enable" if has("-f") => block(found, "it loads a shared library into the shell".into()),
        "hash" if has("-p") => block(found, "it changes where the shell finds programs".into()),
        "source" | "." if args.first().is_some_and(|a| a.dynamic) => {
            found.push(Finding::Unclear("it runs a script that is only known when it runs".into()));
        }
        n if super::wrappers::is_shell(n) && operands(args).first().is_some_and(|a| a.dynamic) => {
            found.push(Finding::Unclear("it gives a shell a script that is only known when it runs".into()));
        }
        _ => {}
    }
}

/// Rules for what the user's account holds as a whole: its crontab, its processes and login
/// session, its user services, and its home folder swept by `git clean` or `rsync --delete`.
fn account(c: &Command, home: &Path, found: &mut Vec<Finding>) {
    let name = c.name();
    let args = c.args();
    let lower: Vec<String> = args.iter().map(|a| a.text.to_ascii_lowercase()).collect();
    let has = |s: &str| lower.iter().any(|a| a == s);
    let cluster = |letter: char| {
        args.iter()
            .any(|a| a.text.starts_with('-') && !a.text.starts_with("--") && a.text[1..].contains(letter))
    };
    let why = match name.as_str() {
        // Only listing is left: cron runs what the table holds outside the terminal.
        "crontab" if cluster('r') => Some("it deletes the user's crontab".to_owned()),
        "crontab" if !cluster('l') => {
            Some("it changes the user's crontab, whose commands cron runs outside the terminal".to_owned())
        }
        "killall5" => Some("it kills every process (killall5)".to_owned()),
        "pkill" | "killall" if kills_all_of_a_user(&name, args) => {
            Some(format!("it kills all of a user's processes ({name})"))
        }
        "loginctl"
            if lower.iter().any(|a| {
                matches!(
                    a.as_str(),
                    "terminate-user" | "kill-user" | "terminate-session" | "kill-session" | "terminate-seat"
                )
            }) =>
        {
            Some("it ends the user's login session or kills its processes".to_owned())
        }
        "systemctl" if has("--user") => user_manager(&lower),
        "systemd-run" if has("--user") => {
            Some("it starts a program outside the terminal, through the user's systemd".to_owned())
        }
        "git" => git_clean(args, c.cwd.as_deref(), home, found),
        "rsync" => rsync_sweep(args, c.cwd.as_deref(), home, found),
        _ => None,
    };
    if let Some(why) = why {
        found.push(Finding::Blocked(why));
    }
}

/// `pkill -u bob` (no pattern), `pkill -v x` (everything else), `pkill .`, `killall -u bob`.
fn kills_all_of_a_user(name: &str, args: &[Word]) -> bool {
    let valued: &[&str] = if name == "pkill" {
        &[
            "-u",
            "-U",
            "-g",
            "-G",
            "-P",
            "-s",
            "-t",
            "-F",
            "-r",
            "-q",
            "--signal",
            "--euid",
            "--uid",
            "--pgroup",
            "--group",
            "--parent",
            "--session",
            "--terminal",
            "--pidfile",
            "--runstates",
            "--ns",
            "--nslist",
            "--queue",
        ]
    } else {
        &["-u", "-s", "-o", "-y", "-Z", "--user", "--signal", "--older-than", "--younger-than", "--context"]
    };
    let (mut by_user, mut inverse, mut patterns) = (false, false, Vec::new());
    let mut i = 0;
    while let Some(t) = args.get(i).map(|w| w.text.as_str()) {
        i += 1;
        let long = t.split('=').next().unwrap_or(t);
        by_user |= matches!(long, "-u" | "-U" | "--uid" | "--euid" | "--user")
            || (t.len() > 2 && (t.starts_with("-u") || t.starts_with("-U")));
        inverse |= matches!(t, "-v" | "--inverse");
        if valued.contains(&t) {
            i += 1;
        } else if !(t.starts_with('-') && t.len() > 1) {
            patterns.push(t);
        }
    }
    let everything = |p: &&str| matches!(*p, "" | "." | ".*" | ".+" | "^" | "$" | "^.*" | "^.*$");
    (by_user && patterns.is_empty()) || inverse || patterns.iter().any(everything)
}

/// `systemctl --user` verbs that end, stop or rewire the whole user session.
fn user_manager(lower: &[String]) -> Option<String> {
    let verb = lower.iter().position(|a| !a.starts_with('-'))?;
    let units = &lower[verb + 1..];
    let whole =
        units.iter().any(|u| u.contains('*') || u.ends_with(".target")) || lower.iter().any(|a| a == "--all");
    match lower[verb].as_str() {
        "exit" | "isolate" | "daemon-reexec" | "set-environment" | "import-environment" => {
            Some("it ends or rewires the user's whole systemd session".to_owned())
        }
        "kill" | "stop" | "mask" | "disable" | "freeze" if whole => {
            Some("it stops every service of the user's session".to_owned())
        }
        _ => None,
    }
}

/// True for `/`, a system root, the home folder and every folder that holds it.
fn holds_home(path: &Path, home: &Path) -> bool {
    root_like(path, home) || home.starts_with(path)
}

/// `git clean -fdx` whose work tree (its folder, `-C`, `--work-tree`) or pathspec is the home
/// folder or holds it: with a home under git (dotfiles), that deletes everything untracked.
fn git_clean(args: &[Word], cwd: Option<&Path>, home: &Path, found: &mut Vec<Finding>) -> Option<String> {
    let mut folder = cwd.map(Path::to_path_buf);
    let mut i = 0;
    let value = |i: &mut usize| {
        *i += 1;
        args.get(*i - 1)
    };
    while let Some(w) = args.get(i) {
        i += 1;
        let t = w.text.as_str();
        match t {
            "-C" | "--work-tree" => {
                let dir = value(&mut i)?;
                folder = if dir.dynamic { None } else { resolve(&dir.text, folder.as_deref(), home) };
            }
            "-c" | "--git-dir" | "--namespace" | "--config-env" => i += 1,
            _ if t.starts_with("--work-tree=") => {
                folder = resolve(&t["--work-tree=".len()..], folder.as_deref(), home).filter(|_| !w.dynamic);
            }
            _ if t.starts_with('-') => {}
            "clean" => break,
            _ => return None,
        }
    }
    // Only `clean` ends the loop with `i` just past it (an option's value may run past the end).
    if i == 0 || args.get(i - 1).is_none_or(|w| w.text != "clean") {
        return None;
    }
    let rest = args.get(i..).unwrap_or_default();
    let has = |letter: char, long: &str| flag(rest, letter, long);
    let sweeping = has('f', "--force") || has('d', "-d") || has('x', "-x") || has('X', "-X");
    if !sweeping || has('n', "--dry-run") {
        return None;
    }
    let Some(folder) = folder else {
        found.push(Finding::Unclear("it runs git clean in a folder only known when it runs".into()));
        return None;
    };
    let mut swept = vec![folder.clone()];
    for op in operands(rest) {
        swept.extend(targets(op, Some(folder.as_path()), home, found, "cleans"));
    }
    swept
        .iter()
        .find(|p| holds_home(p, home))
        .map(|p| format!("it deletes every untracked file in {}, a home or system folder", p.display()))
}

/// `rsync --delete SRC DEST` empties DEST of what SRC lacks (`/var/empty/ ~/` deletes home);
/// `--remove-source-files` deletes the sources.
fn rsync_sweep(args: &[Word], cwd: Option<&Path>, home: &Path, found: &mut Vec<Finding>) -> Option<String> {
    let deletes = args.iter().any(|a| a.text.starts_with("--del"));
    let removes_sources = args.iter().any(|a| a.text == "--remove-source-files");
    if !deletes && !removes_sources {
        return None;
    }
    const VALUED: &[&str] = &[
        "-e",
        "-f",
        "-T",
        "-B",
        "-M",
        "-@",
        "--rsh",
        "--filter",
        "--exclude",
        "--include",
        "--exclude-from",
        "--include-from",
        "--files-from",
        "--temp-dir",
        "--backup-dir",
        "--suffix",
        "--chmod",
        "--chown",
        "--log-file",
        "--password-file",
        "--rsync-path",
        "--partial-dir",
        "--link-dest",
        "--compare-dest",
        "--copy-dest",
        "--max-size",
        "--min-size",
        "--timeout",
        "--port",
        "--bwlimit",
        "--out-format",
        "--usermap",
        "--groupmap",
        "--info",
        "--debug",
        "--modify-window",
        "--block-size",
    ];
    let mut ops = Vec::new();
    let mut i = 0;
    while let Some(w) = args.get(i) {
        i += 1;
        match w.text.as_str() {
            "--" => {
                ops.extend(&args[i..]);
                break;
            }
            t if VALUED.contains(&t) => i += 1,
            t if t.starts_with('-') && t.len() > 1 => {}
            _ => ops.push(w),
        }
    }
    // `host:path` and `rsync://` are another computer's folders.
    let local =
        |w: &&Word| !w.text.contains("://") && w.text.split('/').next().is_none_or(|h| !h.contains(':'));
    let (dest, sources) = ops.split_last()?;
    let mut hit = None;
    if deletes && local(dest) {
        hit = targets(dest, cwd, home, found, "deletes in").into_iter().find(|p| holds_home(p, home));
    }
    if removes_sources {
        for source in sources.iter().copied().filter(|w| local(w)) {
            hit = hit.or_else(|| {
                targets(source, cwd, home, found, "moves").into_iter().find(|p| holds_home(p, home))
            });
        }
    }
    hit.map(|p| format!("it deletes files in {}, a home or system folder, with rsync", p.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::analyse;

    fn blocked(line: &str) -> Option<String> {
        let a = analyse(line, Path::new("/home/u/src/app"), Path::new("/home/u"));
        check(&a, Path::new("/home/u")).into_iter().find_map(|f| match f {
            Finding::Blocked(why) => Some(why),
            Finding::Unclear(_) => None,
        })
    }

    #[test]
    fn what_the_account_holds_as_a_whole_is_refused() {
        for line in [
            "crontab -r",
            "crontab -ir",
            "crontab -u u -r",
            "crontab /tmp/jobs",
            "echo '* * * * * x' | crontab -",
            "crontab < jobs.txt",
            "kill -1",
            "kill -9 -1",
            "kill -s KILL -1",
            "kill -- -1",
            "killall5 -9",
            "pkill -u u",
            "pkill -9 -U 1000",
            "pkill --euid=u",
            "pkill -v bash",
            "pkill -f .",
            "killall -u u",
            "killall --user u",
            "loginctl terminate-user u",
            "loginctl kill-user u",
            "loginctl terminate-session 2",
            "systemctl --user exit",
            "systemctl --user isolate default.target",
            "systemctl --user stop '*'",
            "systemctl --user mask graphical-session.target",
            "systemctl --user set-environment LD_PRELOAD=/tmp/x.so",
            "systemd-run --user sh -c x",
            "cd ~ && git clean -fdx",
            "git -C ~ clean -fd",
            "git -C /home clean -x -f",
            "git --work-tree=/home/u clean -f",
            "git clean -fdx ~",
            "rsync -a --delete /var/empty/ ~/",
            "rsync -a --delete-after /var/empty/ /home/u",
            "rsync -av --del --exclude .git src/ /",
            "rsync -a --remove-source-files ~/ /tmp/away/",
        ] {
            assert!(blocked(line).is_some(), "{line} was not blocked");
        }
    }

    #[test]
    fn ordinary_uses_of_the_same_tools_are_not() {
        for line in [
            "crontab -l",
            "crontab -u u -l",
            "kill 12345",
            "kill -9 12345",
            "pkill -u u node",
            "pkill -f 'cargo test'",
            "killall -u u firefox",
            "killall node",
            "loginctl list-sessions",
            "systemctl --user status pipewire",
            "systemctl --user restart pipewire",
            "systemctl --user stop app.service",
            "git clean -fdx",
            "git clean -n -d",
            "cd ~ && git clean -n",
            "git -C ~/src/app clean -fdx",
            "git log --stat",
            "git -c",
            "git -C",
            "rsync -a --delete dist/ /var/www/site/",
            "rsync -a --delete src/ ~/backup/src/",
            "rsync -a --delete --exclude ~ src/ build/",
            "rsync -a --delete ./ host:/home/u/",
            "rsync -a ~/ /tmp/copy/",
        ] {
            assert_eq!(blocked(line), None, "{line}");
        }
    }
}
