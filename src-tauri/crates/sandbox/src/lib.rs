//! Perch's sandbox for terminal commands, as a policy and a small launcher binary.
//!
//! The engine never restricts itself: it starts `perch-sandbox [POLICY] -- PROGRAM ARGS...`,
//! and the launcher applies the policy and runs the program, which inherits every restriction
//! (namespaces, Landlock domains and seccomp filters survive `fork` and `exec`). This keeps
//! `pre_exec` hooks, and with them `unsafe`, out of Perch, as Codex CLI does with its Linux
//! sandbox.
//!
//! On Linux the launcher works in two stages:
//! 1. The outer stage asks for `SIGKILL` when its parent (Perch) dies, enters new user, mount
//!    and PID namespaces (and a network namespace with no interfaces when the network is off),
//!    mapping the user to itself, and rebuilds what the command sees: a private `/tmp`,
//!    `/dev/shm` and `/dev/pts` (no other terminal of the user's), an empty `/run` (the
//!    system's sockets; the resolver's file kept), each hidden path masked (a folder by an
//!    empty tmpfs, a file by an empty one: the session's sockets, Perch's data, credential
//!    stores), the folders the policy names kept in place where a mask of `/tmp` or `/run`
//!    covers them (never beneath a hidden path), and every repository's metadata and file
//!    that runs code on opening a folder, at, above and beneath the writable folders
//!    ([`protect`]), bound read-only over itself. Then it starts itself again as the second
//!    stage and waits for it.
//! 2. The second stage is process 1 of the new PID namespace: when it ends, the kernel kills
//!    every process left in the namespace, so nothing a command starts (`setsid`, `nohup`, a
//!    double fork) outlives it. It mounts a `/proc` that shows only the namespace (no Perch,
//!    no `/proc/<perch>/environ`), asks for `SIGKILL` when the outer stage dies, restricts
//!    itself with Landlock (everything readable, writable only beneath the writable folders and
//!    a few devices; pathname sockets reachable only there from ABI 9; TCP bind and connect
//!    denied when the network is off; no abstract sockets or signals outside the sandbox) and
//!    a seccomp filter for what this kernel's Landlock cannot refuse (below ABI 9, every new
//!    Unix socket), then runs the command and reaps what it leaves.
//!
//! Elsewhere the launcher runs the program unrestricted and says so (`--probe`).

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::process::ExitCode;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
pub mod protect;
#[cfg(target_os = "linux")]
mod seccomp;

/// What a sandboxed command may do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// Folders (and everything beneath them) the command may change.
    pub writable: Vec<PathBuf>,
    /// Folders inside writable ones that stay read-only (a project's `.git`).
    pub read_only: Vec<PathBuf>,
    /// Paths the command must not see: a folder shows as an empty one, a file as an empty file.
    pub hidden: Vec<PathBuf>,
    /// The command gets its own empty `/tmp` and `/dev/shm` (writable folders there are kept)
    /// and its own `/dev/pts`, where the user's other terminals are not.
    pub private_tmp: bool,
    /// Whether the command may use the network.
    pub network: bool,
    /// Asks Landlock for at most this ABI, as an older kernel would offer (tests of the
    /// fallbacks); `None` asks for the newest this launcher knows.
    pub max_abi: Option<u32>,
}

/// What the launcher could enforce on this machine, as `--probe` reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Enforcement {
    /// The Landlock ABI in force (0: none).
    pub landlock_abi: u32,
    /// User and mount namespaces worked (read-only folders and the network switch depend on them).
    pub namespaces: bool,
    /// The network was cut (a network namespace, or at least Landlock's TCP rules).
    pub network_blocked: bool,
    /// The private `/tmp` and the hidden paths were masked.
    pub hidden: bool,
    /// The command ran as a child of process 1 of its own PID namespace.
    pub pid_namespace: bool,
    /// The seccomp filter for what this Landlock ABI cannot refuse is installed.
    pub seccomp: bool,
}

/// The Landlock ABI below which truncating a file outside the writable folders is not refused.
pub const MIN_LANDLOCK_ABI: u32 = 3;

/// The Landlock ABI from which connecting to a pathname Unix socket is refused outside the
/// writable folders (`LANDLOCK_ACCESS_FS_RESOLVE_UNIX`). Below it commands get no Unix
/// sockets at all (seccomp), only `socketpair`.
pub const SCOPED_UNIX_SOCKETS_ABI: u32 = 9;

impl Enforcement {
    /// One line: `landlock=7 namespaces=1 network_blocked=1 hidden=1 pid_namespace=1 seccomp=1`.
    pub fn to_line(&self) -> String {
        format!(
            "landlock={} namespaces={} network_blocked={} hidden={} pid_namespace={} seccomp={}",
            self.landlock_abi,
            u8::from(self.namespaces),
            u8::from(self.network_blocked),
            u8::from(self.hidden),
            u8::from(self.pid_namespace),
            u8::from(self.seccomp),
        )
    }

    pub fn from_line(line: &str) -> Option<Self> {
        let mut out = Self::default();
        let mut seen = 0;
        for part in line.split_whitespace() {
            let (key, value) = part.split_once('=')?;
            let on = value == "1";
            match key {
                "landlock" => out.landlock_abi = value.parse().ok()?,
                "namespaces" => out.namespaces = on,
                "network_blocked" => out.network_blocked = on,
                "hidden" => out.hidden = on,
                "pid_namespace" => out.pid_namespace = on,
                "seccomp" => out.seccomp = on,
                _ => continue,
            }
            seen += 1;
        }
        (seen == 6).then_some(out)
    }

    /// What a command may do with Unix sockets here, for the card.
    pub fn unix_sockets(&self) -> &'static str {
        if self.landlock_abi >= SCOPED_UNIX_SOCKETS_ABI {
            "Unix sockets only in the writable folders"
        } else {
            "no Unix sockets (this kernel cannot limit them to the writable folders)"
        }
    }

    /// What of the full sandbox is not in force here, each as a few words for the card; empty
    /// when a command is contained as Perch promises.
    pub fn missing(&self) -> Vec<String> {
        let mut missing = Vec::new();
        if self.landlock_abi < MIN_LANDLOCK_ABI {
            missing.push(match self.landlock_abi {
                0 => "Landlock".to_owned(),
                abi => format!("Landlock ABI {MIN_LANDLOCK_ABI} (this kernel has {abi}: Linux 6.2 or newer)"),
            });
        }
        if !self.namespaces {
            missing.push("user namespaces".into());
        }
        if !self.hidden {
            missing.push("hiding your sessions and credentials".into());
        }
        if !self.pid_namespace {
            missing.push("a PID namespace".into());
        }
        if !self.seccomp {
            missing.push("the seccomp filter".into());
        }
        missing
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    #[error(
        "usage: perch-sandbox [--write DIR]... [--read-only DIR]... [--hide PATH]... [--private-tmp] \
         [--no-network] [--landlock-abi N] (--probe | -- PROGRAM [ARGS]...): {0}"
    )]
    Usage(String),
    #[error("Landlock is not available on this kernel, so the command was not run")]
    NoLandlock,
    #[error("the sandbox could not be set up: {0}")]
    Setup(String),
    #[error("could not run {program}: {source}")]
    Exec { program: String, source: std::io::Error },
}

impl SandboxError {
    /// The launcher's exit status for this error: 127 for a program not found, else 126.
    pub fn exit_code(&self) -> u8 {
        let not_found =
            matches!(self, Self::Exec { source, .. } if source.kind() == std::io::ErrorKind::NotFound);
        if not_found { 127 } else { 126 }
    }
}

/// The launcher's command line: the policy, then `--probe` or `-- PROGRAM ARGS...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    Probe(Policy),
    Run(Policy, Vec<OsString>),
}

impl Policy {
    /// The launcher arguments for this policy (put `--` and the command after them).
    pub fn to_args(&self) -> Vec<OsString> {
        let mut args = Vec::new();
        for (flag, dirs) in
            [("--write", &self.writable), ("--read-only", &self.read_only), ("--hide", &self.hidden)]
        {
            for dir in dirs {
                args.push(flag.into());
                args.push(dir.clone().into_os_string());
            }
        }
        if self.private_tmp {
            args.push("--private-tmp".into());
        }
        if !self.network {
            args.push("--no-network".into());
        }
        if let Some(abi) = self.max_abi {
            args.push("--landlock-abi".into());
            args.push(abi.to_string().into());
        }
        args
    }
}

/// Parses the launcher's arguments (without the program name).
pub fn parse_args(args: impl IntoIterator<Item = OsString>) -> Result<Invocation, SandboxError> {
    let mut policy = Policy { network: true, ..Policy::default() };
    let mut args = args.into_iter();
    let path = |value: Option<OsString>, flag: &str| {
        value.map(PathBuf::from).ok_or_else(|| SandboxError::Usage(format!("{flag} needs a path")))
    };
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--write") => policy.writable.push(path(args.next(), "--write")?),
            Some("--read-only") => policy.read_only.push(path(args.next(), "--read-only")?),
            Some("--hide") => policy.hidden.push(path(args.next(), "--hide")?),
            Some("--private-tmp") => policy.private_tmp = true,
            Some("--no-network") => policy.network = false,
            Some("--landlock-abi") => {
                let abi = args.next().and_then(|v| v.to_str().and_then(|v| v.parse().ok()));
                policy.max_abi =
                    Some(abi.ok_or_else(|| SandboxError::Usage("--landlock-abi needs a number".into()))?);
            }
            Some("--probe") => return Ok(Invocation::Probe(policy)),
            Some("--") => {
                let command: Vec<OsString> = args.collect();
                if command.is_empty() {
                    return Err(SandboxError::Usage("no program after --".into()));
                }
                return Ok(Invocation::Run(policy, command));
            }
            _ => return Err(SandboxError::Usage(format!("unexpected {:?}", arg))),
        }
    }
    Err(SandboxError::Usage("nothing to run".into()))
}

/// The launcher: applies the policy and runs the command (or, probing, prints what it could
/// enforce). `args` are the launcher's arguments without its own name.
pub fn main(args: Vec<OsString>) -> Result<ExitCode, SandboxError> {
    #[cfg(target_os = "linux")]
    {
        linux::main(args)
    }
    #[cfg(not(target_os = "linux"))]
    match parse_args(args)? {
        Invocation::Probe(_) => {
            println!("{}", Enforcement::default().to_line());
            Ok(ExitCode::SUCCESS)
        }
        Invocation::Run(_, command) => {
            let program = command.first().map_or(OsStr::new(""), |p| p.as_os_str());
            std::process::Command::new(program)
                .args(&command[1..])
                .status()
                .map(|s| ExitCode::from(u8::try_from(s.code().unwrap_or(1)).unwrap_or(1)))
                .map_err(|source| SandboxError::Exec {
                    program: program.to_string_lossy().into_owned(),
                    source,
                })
        }
    }
}

/// The exit status a shell would give for `status`: its code, or 128 + the signal that ended it.
pub fn shell_status(status: std::process::ExitStatus) -> u8 {
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return u8::try_from(128 + signal).unwrap_or(255);
    }
    status.code().map_or(255, |c| u8::try_from(c & 0xff).unwrap_or(255))
}

#[allow(dead_code)] // used on Linux only
fn program_of(command: &[OsString]) -> &OsStr {
    command.first().map_or(OsStr::new(""), |p| p.as_os_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_round_trip() {
        let policy = Policy {
            writable: vec!["/w".into(), "/t".into()],
            read_only: vec!["/w/.git".into()],
            hidden: vec!["/run/user/1000".into(), "/home/u/.netrc".into()],
            private_tmp: true,
            network: false,
            max_abi: Some(2),
        };
        let mut args = policy.to_args();
        args.extend(["--".into(), "bash".into(), "-c".into(), "ls".into()]);
        assert_eq!(
            parse_args(args).unwrap(),
            Invocation::Run(policy, vec!["bash".into(), "-c".into(), "ls".into()])
        );
        assert!(parse_args(["--write".into()]).is_err());
        assert!(parse_args(["--".into()]).is_err());
        assert!(matches!(parse_args(["--probe".into()]).unwrap(), Invocation::Probe(p) if p.network));
    }

    #[test]
    fn probe_lines_round_trip() {
        let e = Enforcement {
            landlock_abi: 7,
            namespaces: true,
            network_blocked: false,
            hidden: true,
            pid_namespace: true,
            seccomp: true,
        };
        assert_eq!(Enforcement::from_line(&e.to_line()), Some(e.clone()));
        assert!(e.missing().is_empty());
        assert_eq!(Enforcement::from_line("landlock=x"), None);
        // An older launcher's line lacks the new keys: not trusted as a full sandbox.
        assert_eq!(Enforcement::from_line("landlock=7 namespaces=1 network_blocked=0"), None);
        let old_kernel = Enforcement { landlock_abi: 2, pid_namespace: false, ..e };
        let missing = old_kernel.missing();
        assert_eq!(missing.len(), 2, "{missing:?}");
        assert!(missing[0].contains("ABI 3"), "{missing:?}");
    }
}
