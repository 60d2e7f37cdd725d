//! The Linux sandbox in its two stages (see the crate's documentation). Namespaces and mounts
//! come first, in the outer stage, because they need a process that is not yet restricted;
//! Landlock and seccomp last, in process 1 of the new PID namespace, because they cannot be
//! undone and are inherited by everything the command starts.

use std::ffi::OsString;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use caps::{CapSet, Capability};
use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, LandlockStatus, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
};
use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use nix::sys::signal::{SigHandler, SigSet, SigmaskHow, Signal, sigprocmask};
use nix::sys::statvfs::{FsFlags, statvfs};
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::Pid;

use super::{Enforcement, Invocation, Policy, SandboxError, parse_args, program_of, shell_status};

/// The newest ABI whose rights we ask for; older kernels get what they support.
const ABI_WANTED: ABI = ABI::V9;

/// The first argument of the second stage, followed by what the outer stage enforced and the
/// launcher's own arguments.
const STAGE2: &str = "--stage2";

/// Devices every program expects to open for reading and writing.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
    "/dev/shm",
];

/// Signals the terminal sends its whole foreground group (Ctrl+C in `send_input`): for the
/// command, not for the launcher's two stages, which block them once their child is started
/// (a blocked signal stays blocked across `exec`, so never before: the test
/// `ctrl_c_reaches_the_command_and_not_the_launcher` reads the command's mask). A Ctrl+C in
/// the moment between ends the launcher, and with it the command it was meant for.
const JOB_SIGNALS: &[Signal] =
    &[Signal::SIGINT, Signal::SIGQUIT, Signal::SIGTSTP, Signal::SIGTTIN, Signal::SIGTTOU];

pub(crate) fn main(args: Vec<OsString>) -> Result<ExitCode, SandboxError> {
    if args.first().is_some_and(|a| a == STAGE2) {
        let enforced = args.get(1).and_then(|l| l.to_str()).and_then(Enforcement::from_line);
        let enforced = enforced.ok_or_else(|| SandboxError::Usage("--stage2 needs a probe line".into()))?;
        return stage2(enforced, parse_args(args.into_iter().skip(2))?);
    }
    let invocation = parse_args(args.iter().cloned())?;
    outer(&invocation, &args)
}

fn setup(what: &str, e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Setup(format!("{what}: {e}"))
}

/// Dies with its parent: Perch for the outer stage, the outer stage for process 1.
fn die_with_parent() -> Result<(), SandboxError> {
    let parent = nix::unistd::getppid();
    nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(|e| setup("parent-death signal", e))?;
    // The parent may have died before the signal was asked for (outside a new PID namespace,
    // where the parent shows as 0 and cannot change).
    if parent != nix::unistd::getppid() {
        return Err(SandboxError::Setup("the parent ended while the sandbox started".into()));
    }
    Ok(())
}

/// The command gets the job signals as a shell gives them to a foreground job: with their
/// default action. An ignored signal stays ignored across `exec`, so a Perch started with
/// Ctrl+C ignored (`perch &` from a script, `nohup`) would otherwise hand on a terminal whose
/// Ctrl+C does nothing, and bash cannot even trap a signal ignored on entry.
fn default_job_signals() {
    for &signal in JOB_SIGNALS {
        // SAFETY: SIG_DFL installs no handler, so no code of ours can run in a signal's context,
        // and the launcher has no other thread that could be changing dispositions.
        #[allow(unsafe_code)]
        let _ = unsafe { nix::sys::signal::signal(signal, SigHandler::SigDfl) };
    }
}

fn block_job_signals() {
    let set: SigSet = JOB_SIGNALS.iter().copied().collect();
    let _ = sigprocmask(SigmaskHow::SIG_BLOCK, Some(&set), None);
}

/// Stage 1: namespaces and mounts, then stage 2 as process 1 of the new PID namespace.
fn outer(invocation: &Invocation, args: &[OsString]) -> Result<ExitCode, SandboxError> {
    let policy = match invocation {
        Invocation::Probe(p) | Invocation::Run(p, _) => p,
    };
    die_with_parent()?;
    let cwd = std::env::current_dir().ok();
    let mut enforced = Enforcement::default();
    match enter_namespaces(policy) {
        Ok(()) => {
            enforced.namespaces = true;
            enforced.pid_namespace = true;
            enforced.network_blocked = !policy.network;
            mask(policy, cwd.as_deref())?;
            enforced.hidden = true;
            // Found after the masks, in the folders as the command will see them.
            let protected =
                crate::protect::protected(&policy.writable).map_err(|e| setup("repositories", e))?;
            for path in policy.read_only.iter().filter(|p| p.exists()).chain(&protected) {
                bind_read_only(path)?;
            }
            // Where we stand may now be a kept folder mounted again: stand in the new one.
            if let Some(cwd) = &cwd {
                std::env::set_current_dir(cwd).map_err(|e| setup("working folder", e))?;
            }
            pass_mount_right()?;
        }
        // Without user namespaces (disabled by the administrator) Landlock still applies, but
        // nothing is hidden and nothing contains what the command leaves running; the probe
        // says so and Perch asks about every command.
        Err(e) => eprintln!("perch-sandbox: namespaces unavailable ({e}); continuing with Landlock only"),
    }
    let mut stage2 = Command::new("/proc/self/exe")
        .arg(STAGE2)
        .arg(enforced.to_line())
        .args(args)
        .spawn()
        .map_err(|e| setup("second stage", e))?;
    block_job_signals();
    let status = stage2.wait().map_err(|e| setup("second stage", e))?;
    Ok(ExitCode::from(shell_status(status)))
}

/// Lets process 1, started with `execve`, mount the namespace's `/proc`. For a user other
/// than root `execve` clears every capability, also those this stage holds in the namespace
/// it made; one raised into the ambient set is kept. Process 1 clears it once `/proc` is
/// mounted ([`drop_capabilities`]).
fn pass_mount_right() -> Result<(), SandboxError> {
    let raise = |set| caps::raise(None, set, Capability::CAP_SYS_ADMIN).map_err(|e| setup("capabilities", e));
    raise(CapSet::Inheritable)?;
    raise(CapSet::Ambient)
}

/// Every capability gone, for good: the command runs with none, also where Perch runs as root
/// (mapped to root in the namespace, where `execve` would otherwise give them back).
fn drop_capabilities() -> Result<(), SandboxError> {
    // Needs CAP_SETPCAP, which only root has here; for anyone else `execve` grants nothing.
    let _ = caps::clear(None, CapSet::Bounding);
    for set in [CapSet::Ambient, CapSet::Inheritable, CapSet::Effective, CapSet::Permitted] {
        caps::clear(None, set).map_err(|e| setup("capabilities", e))?;
    }
    Ok(())
}

/// New user, mount and PID namespaces (and a network one when the network is off), the user
/// mapped to itself, and the mounts made private so none leaks back.
fn enter_namespaces(policy: &Policy) -> Result<(), SandboxError> {
    let (uid, gid) = (nix::unistd::getuid(), nix::unistd::getgid());
    let mut flags = CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS | CloneFlags::CLONE_NEWPID;
    if !policy.network {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    unshare(flags).map_err(|e| setup("unshare", e))?;
    std::fs::write("/proc/self/setgroups", "deny").map_err(|e| setup("setgroups", e))?;
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1")).map_err(|e| setup("uid_map", e))?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1")).map_err(|e| setup("gid_map", e))?;
    mount(None::<&str>, "/", None::<&str>, MsFlags::MS_REC | MsFlags::MS_PRIVATE, None::<&str>)
        .map_err(|e| setup("private mounts", e))
}

/// Folders of the system's sockets, masked by an empty one whatever the kernel offers: the
/// system bus, docker, containerd, podman, libvirt, snapd, cups, the journal, nscd. Landlock
/// scopes pathname sockets only from ABI 9 (below it the seccomp filter refuses Unix sockets
/// too); nothing a command needs lives there but the resolver's file, which is kept.
const SYSTEM_SOCKETS: &[&str] = &["/run", "/var/run"];

/// The private `/tmp` and `/dev/shm`, the system's sockets and the hidden paths masked, and
/// the folders the command must still reach (writable, read-only, where it starts) mounted
/// again where a mask of `/tmp` or of the system's sockets covered them. A folder beneath a
/// hidden path never comes back: it stays out of view, and a command asked to start there
/// does not start.
fn mask(policy: &Policy, cwd: Option<&Path>) -> Result<(), SandboxError> {
    let real = |p: &Path| std::fs::canonicalize(p).ok();
    let hidden: Vec<PathBuf> = policy.hidden.iter().filter_map(|p| real(p)).collect();
    let mut system: Vec<PathBuf> =
        SYSTEM_SOCKETS.iter().filter_map(|p| real(Path::new(p))).filter(|p| p.is_dir()).collect();
    system.dedup();
    let mut masks: Vec<PathBuf> = Vec::new();
    if policy.private_tmp {
        masks.extend(["/tmp", "/dev/shm"].into_iter().map(PathBuf::from).filter(|p| p.is_dir()));
    }
    masks.extend(system.iter().cloned());
    let under_hidden = |dir: &Path| hidden.iter().any(|h| dir.starts_with(h));
    // Held open across the masking: a folder under a mask is mounted again from its handle.
    let mut kept: Vec<(PathBuf, File)> = Vec::new();
    for dir in policy.writable.iter().chain(&policy.read_only).map(PathBuf::as_path).chain(cwd) {
        let Some(dir) = real(dir).filter(|d| d.is_dir()) else { continue };
        if masks.iter().any(|m| dir.starts_with(m))
            && !under_hidden(&dir)
            && !kept.iter().any(|(k, _)| *k == dir)
        {
            let handle = File::open(&dir).map_err(|e| setup(&format!("open {}", dir.display()), e))?;
            kept.push((dir, handle));
        }
    }
    // The resolver's configuration often lives under /run (systemd-resolved, NetworkManager):
    // without it no name resolves.
    let resolver = real(Path::new("/etc/resolv.conf"))
        .filter(|r| system.iter().any(|s| r.starts_with(s)) && !under_hidden(r))
        .and_then(|r| File::open(&r).ok().map(|f| (r, f)));
    if policy.private_tmp {
        for dir in ["/tmp", "/dev/shm"].into_iter().map(Path::new).filter(|p| p.is_dir()) {
            tmpfs(dir, "mode=1777,size=50%")?;
        }
        private_terminals()?;
    }
    for dir in &system {
        tmpfs(dir, "mode=0755,size=1m")?;
    }
    for path in &hidden {
        hide(path)?;
    }
    // Parents first, so a kept folder inside another kept one is not covered again.
    kept.sort_by_key(|(dir, _)| dir.components().count());
    for (dir, handle) in &kept {
        std::fs::create_dir_all(dir).map_err(|e| setup(&format!("keep {}", dir.display()), e))?;
        let source = format!("/proc/self/fd/{}", handle.as_raw_fd());
        mount(Some(source.as_str()), dir, None::<&str>, MsFlags::MS_BIND | MsFlags::MS_REC, None::<&str>)
            .map_err(|e| setup(&format!("keep {}", dir.display()), e))?;
    }
    if let Some((file, handle)) = &resolver {
        let keep = |e: std::io::Error| setup(&format!("keep {}", file.display()), e);
        std::fs::create_dir_all(file.parent().unwrap_or(Path::new("/"))).map_err(keep)?;
        File::create(file).map_err(keep)?;
        let source = format!("/proc/self/fd/{}", handle.as_raw_fd());
        mount(Some(source.as_str()), file.as_path(), None::<&str>, MsFlags::MS_BIND, None::<&str>)
            .map_err(|e| setup(&format!("keep {}", file.display()), e))?;
    }
    // A hidden path inside a kept folder came back with it: mask it again.
    for path in hidden.iter().filter(|h| kept.iter().any(|(k, _)| h.starts_with(k))) {
        hide(path)?;
    }
    Ok(())
}

/// A devpts of the sandbox's own over `/dev/pts`: the user's other terminals (readable by
/// their owner, so a command could read what is typed there) drop out of view, and new ones
/// still open through `/dev/ptmx`. The command's own terminal is the descriptors it inherited
/// and `/dev/tty`, which the mounts do not touch.
fn private_terminals() -> Result<(), SandboxError> {
    let pts = Path::new("/dev/pts");
    if !pts.is_dir() {
        return Ok(());
    }
    mount(
        Some("devpts"),
        pts,
        Some("devpts"),
        MsFlags::MS_NOSUID | MsFlags::MS_NOEXEC,
        Some("newinstance,ptmxmode=0666,mode=0620"),
    )
    .map_err(|e| setup("devpts", e))?;
    mount(Some("/dev/pts/ptmx"), "/dev/ptmx", None::<&str>, MsFlags::MS_BIND, None::<&str>)
        .map_err(|e| setup("/dev/ptmx", e))
}

fn tmpfs(dir: &Path, options: &str) -> Result<(), SandboxError> {
    mount(Some("tmpfs"), dir, Some("tmpfs"), MsFlags::MS_NOSUID | MsFlags::MS_NODEV, Some(options))
        .map_err(|e| setup(&format!("tmpfs on {}", dir.display()), e))
}

/// A folder becomes an empty, small tmpfs; anything else (a file, a socket) `/dev/null`.
fn hide(path: &Path) -> Result<(), SandboxError> {
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => tmpfs(path, "mode=0700,size=1m"),
        Ok(_) => mount(Some("/dev/null"), path, None::<&str>, MsFlags::MS_BIND, None::<&str>)
            .map_err(|e| setup(&format!("hide {}", path.display()), e)),
        // Gone since it was listed (a mask above covers it already).
        Err(_) => Ok(()),
    }
}

/// A folder or a file bound read-only over itself (nothing when it has gone since it was found).
fn bind_read_only(dir: &Path) -> Result<(), SandboxError> {
    match mount(Some(dir), dir, None::<&str>, MsFlags::MS_BIND | MsFlags::MS_REC, None::<&str>) {
        Err(nix::errno::Errno::ENOENT) => return Ok(()),
        other => other.map_err(|e| setup(&format!("bind {}", dir.display()), e))?,
    }
    // A remount inside a user namespace must keep the flags the mount is locked with.
    let kept = statvfs(dir).map(|s| s.flags()).unwrap_or(FsFlags::empty());
    let mut flags = MsFlags::MS_REMOUNT | MsFlags::MS_BIND | MsFlags::MS_RDONLY;
    for (fs, ms) in [
        (FsFlags::ST_NOSUID, MsFlags::MS_NOSUID),
        (FsFlags::ST_NODEV, MsFlags::MS_NODEV),
        (FsFlags::ST_NOEXEC, MsFlags::MS_NOEXEC),
        (FsFlags::ST_NOATIME, MsFlags::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, MsFlags::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, MsFlags::MS_RELATIME),
    ] {
        if kept.contains(fs) {
            flags |= ms;
        }
    }
    mount(None::<&str>, dir, None::<&str>, flags, None::<&str>)
        .map_err(|e| setup(&format!("read-only {}", dir.display()), e))
}

/// Stage 2, process 1 of the namespace: `/proc`, Landlock, seccomp, then the command.
fn stage2(mut enforced: Enforcement, invocation: Invocation) -> Result<ExitCode, SandboxError> {
    let (policy, command) = match invocation {
        Invocation::Probe(p) => (p, None),
        Invocation::Run(p, c) => (p, Some(c)),
    };
    die_with_parent()?;
    if enforced.pid_namespace {
        // A /proc of this namespace: Perch and every other process of the user drop out of view.
        mount(
            Some("proc"),
            "/proc",
            Some("proc"),
            MsFlags::MS_NOSUID | MsFlags::MS_NODEV | MsFlags::MS_NOEXEC,
            None::<&str>,
        )
        .map_err(|e| setup("/proc", e))?;
    }
    drop_capabilities()?;
    let abi = landlock(&policy)?;
    enforced.landlock_abi = abi;
    // ABI 4 and later refuse TCP bind and connect when the network is off.
    enforced.network_blocked |= !policy.network && abi >= 4;
    enforced.seccomp = crate::seccomp::apply(abi).map_err(|e| setup("seccomp", e))?;
    let Some(command) = command else {
        println!("{}", enforced.to_line());
        return Ok(ExitCode::SUCCESS);
    };
    if abi == 0 {
        return Err(SandboxError::NoLandlock);
    }
    let program = program_of(&command);
    default_job_signals();
    let child = Command::new(program)
        .args(&command[1..])
        .spawn()
        .map_err(|source| SandboxError::Exec { program: program.to_string_lossy().into_owned(), source })?;
    block_job_signals();
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
    // Process 1 reaps every orphan of the namespace; the command's own end ends the namespace.
    loop {
        match waitpid(None::<Pid>, None) {
            Ok(WaitStatus::Exited(p, code)) if p == pid => {
                return Ok(ExitCode::from(u8::try_from(code & 0xff).unwrap_or(255)));
            }
            Ok(WaitStatus::Signaled(p, signal, _)) if p == pid => {
                return Ok(ExitCode::from(u8::try_from(128 + signal as i32).unwrap_or(255)));
            }
            Ok(_) | Err(nix::errno::Errno::EINTR) => {}
            Err(e) => return Err(setup("wait", e)),
        }
    }
}

/// Everything readable and executable; writable (and pathname sockets reachable, ABI 9)
/// beneath the policy's folders and the devices. Returns the ABI in force (0: none).
fn landlock(policy: &Policy) -> Result<u32, SandboxError> {
    let err = |e: landlock::RulesetError| setup("landlock", e);
    let wanted = match policy.max_abi {
        Some(n) if n < ABI_WANTED as u32 => ABI::from(i32::try_from(n).unwrap_or(0)),
        _ => ABI_WANTED,
    };
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(wanted))
        .map_err(err)?;
    if !policy.network {
        ruleset = ruleset.handle_access(AccessNet::from_all(wanted)).map_err(err)?;
    }
    if !Scope::from_all(wanted).is_empty() {
        ruleset = ruleset.scope(Scope::from_all(wanted)).map_err(err)?;
    }
    let writable: Vec<PathBuf> = policy.writable.iter().filter(|d| d.exists()).cloned().collect();
    let devices: Vec<&Path> = DEVICES.iter().map(Path::new).filter(|p| p.exists()).collect();
    let device_rights = AccessFs::from_read(wanted)
        | (AccessFs::from_all(wanted)
            & (AccessFs::WriteFile
                | AccessFs::IoctlDev
                | AccessFs::Truncate
                | AccessFs::MakeReg
                | AccessFs::RemoveFile));
    let status = ruleset
        .create()
        .map_err(err)?
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(wanted)))
        .map_err(err)?
        .add_rules(path_beneath_rules(&devices, device_rights))
        .map_err(err)?
        .add_rules(path_beneath_rules(&writable, AccessFs::from_all(wanted)))
        .map_err(err)?
        .restrict_self()
        .map_err(err)?;
    match (status.landlock, status.ruleset) {
        (_, RulesetStatus::NotEnforced) => Ok(0),
        (LandlockStatus::Available { effective_abi, .. }, _) => Ok((effective_abi as u32).min(wanted as u32)),
        _ => Ok(0),
    }
}
