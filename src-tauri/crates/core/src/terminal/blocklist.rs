//! Layer 1, the blocklist: destructive commands, decided on the parsed command line (every
//! simple command, wrappers removed, paths normalised), never on the raw text. It overrides
//! every approval. Where a rule would need a value only known at run time (a recursive delete
//! of `$DIR`), the command is asked about instead, and never auto-approved.

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
/// Credential stores, relative to the home folder or absolute.
const CREDENTIALS: &[&str] = &[
    "~/.ssh",
    "~/.gnupg",
    "~/.aws",
    "~/.azure",
    "~/.kube/config",
    "~/.docker/config.json",
    "~/.netrc",
    "~/.git-credentials",
    "~/.password-store",
    "~/.pgpass",
    "~/.local/share/keyrings",
    "~/Library/Keychains",
    "~/.config/gcloud",
    "~/.config/gh/hosts.yml",
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/ssh",
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
const POWER: &[&str] =
    &["shutdown", "reboot", "halt", "poweroff", "killall5", "stop-computer", "restart-computer"];

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

fn credential(path: &Path, home: &Path) -> Option<String> {
    CREDENTIALS
        .iter()
        .find(|c| inside(path, &expand_home(c, home)))
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
        let word = Word { text: text.to_owned(), dynamic: word.dynamic };
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
                    let word = Word { text: out.to_owned(), dynamic: a.dynamic };
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
