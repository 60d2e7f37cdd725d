//! Perch's sandbox for terminal commands, as a policy and a small launcher binary.
//!
//! The engine never restricts itself: it starts `perch-sandbox [POLICY] -- PROGRAM ARGS...`,
//! and the launcher applies the policy to itself and then `exec`s the program, which inherits
//! every restriction (Landlock domains and namespaces survive `exec`). This keeps `pre_exec`
//! hooks, and with them `unsafe`, out of Perch, as Codex CLI does with its Linux sandbox.
//!
//! On Linux the launcher:
//! 1. enters new user and mount namespaces (and a network namespace with no interfaces but a
//!    downed loopback when the network is off), mapping the user to itself, and bind-mounts
//!    each read-only folder (a project's `.git`) read-only over itself;
//! 2. restricts itself with Landlock: everything readable, writable only beneath the writable
//!    folders and a few devices (`/dev/null`, the terminal); TCP bind and connect denied when
//!    the network is off; no signals to processes outside the sandbox (ABI 6);
//! 3. executes the program.
//!
//! Elsewhere the launcher runs the program unrestricted and says so (`--probe`).

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

#[cfg(target_os = "linux")]
mod linux;

/// What a sandboxed command may do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// Folders (and everything beneath them) the command may change.
    pub writable: Vec<PathBuf>,
    /// Folders inside writable ones that stay read-only (a project's `.git`).
    pub read_only: Vec<PathBuf>,
    /// Whether the command may use the network.
    pub network: bool,
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
}

impl Enforcement {
    /// One line: `landlock=7 namespaces=1 network_blocked=1`.
    pub fn to_line(&self) -> String {
        format!(
            "landlock={} namespaces={} network_blocked={}",
            self.landlock_abi,
            u8::from(self.namespaces),
            u8::from(self.network_blocked)
        )
    }

    pub fn from_line(line: &str) -> Option<Self> {
        let mut out = Self::default();
        let mut seen = 0;
        for part in line.split_whitespace() {
            let (key, value) = part.split_once('=')?;
            match key {
                "landlock" => out.landlock_abi = value.parse().ok()?,
                "namespaces" => out.namespaces = value == "1",
                "network_blocked" => out.network_blocked = value == "1",
                _ => continue,
            }
            seen += 1;
        }
        (seen == 3).then_some(out)
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    #[error(
        "usage: perch-sandbox [--write DIR]... [--read-only DIR]... [--no-network] (--probe | -- PROGRAM [ARGS]...): {0}"
    )]
    Usage(String),
    #[error("Landlock is not available on this kernel, so the command was not run")]
    NoLandlock,
    #[error("the sandbox could not be set up: {0}")]
    Setup(String),
    #[error("could not run {program}: {source}")]
    Exec { program: String, source: std::io::Error },
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
        for dir in &self.writable {
            args.push("--write".into());
            args.push(dir.clone().into_os_string());
        }
        for dir in &self.read_only {
            args.push("--read-only".into());
            args.push(dir.clone().into_os_string());
        }
        if !self.network {
            args.push("--no-network".into());
        }
        args
    }
}

/// Parses the launcher's arguments (without the program name).
pub fn parse_args(args: impl IntoIterator<Item = OsString>) -> Result<Invocation, SandboxError> {
    let mut policy = Policy { network: true, ..Policy::default() };
    let mut args = args.into_iter();
    let path = |value: Option<OsString>, flag: &str| {
        value.map(PathBuf::from).ok_or_else(|| SandboxError::Usage(format!("{flag} needs a folder")))
    };
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--write") => policy.writable.push(path(args.next(), "--write")?),
            Some("--read-only") => policy.read_only.push(path(args.next(), "--read-only")?),
            Some("--no-network") => policy.network = false,
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

/// Restricts this process to `policy`. Linux only; elsewhere nothing is enforced.
pub fn restrict_self(policy: &Policy) -> Result<Enforcement, SandboxError> {
    #[cfg(target_os = "linux")]
    {
        linux::restrict_self(policy)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = policy;
        Ok(Enforcement::default())
    }
}

/// Replaces this process with `command` (returns only on failure).
pub fn exec(command: &[OsString]) -> SandboxError {
    let program = command.first().map_or(OsStr::new(""), |p| p.as_os_str());
    let mut cmd = std::process::Command::new(program);
    cmd.args(&command[1..]);
    #[cfg(unix)]
    let source = std::os::unix::process::CommandExt::exec(&mut cmd);
    #[cfg(not(unix))]
    let source = match cmd.status() {
        Ok(status) => std::process::exit(status.code().unwrap_or(1)),
        Err(e) => e,
    };
    SandboxError::Exec { program: program.to_string_lossy().into_owned(), source }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_round_trip() {
        let policy = Policy {
            writable: vec!["/w".into(), "/t".into()],
            read_only: vec!["/w/.git".into()],
            network: false,
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
        let e = Enforcement { landlock_abi: 7, namespaces: true, network_blocked: false };
        assert_eq!(Enforcement::from_line(&e.to_line()), Some(e));
        assert_eq!(Enforcement::from_line("landlock=x"), None);
    }
}
