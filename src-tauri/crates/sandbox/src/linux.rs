//! The Linux sandbox: namespaces first (they need a process that is not yet restricted), then
//! Landlock, which cannot be undone and is inherited across `exec`.

use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, LandlockStatus, Ruleset, RulesetAttr, RulesetCreatedAttr,
    RulesetStatus, Scope, path_beneath_rules,
};
use nix::mount::{MsFlags, mount};
use nix::sched::{CloneFlags, unshare};
use nix::sys::statvfs::{FsFlags, statvfs};

use super::{Enforcement, Policy, SandboxError};

/// The newest ABI whose rights we ask for; older kernels get what they support.
const ABI_WANTED: ABI = ABI::V6;

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

pub(crate) fn restrict_self(policy: &Policy) -> Result<Enforcement, SandboxError> {
    let mut enforced = Enforcement::default();
    match enter_namespaces(policy) {
        Ok(()) => {
            enforced.namespaces = true;
            enforced.network_blocked = !policy.network;
        }
        // Without user namespaces (disabled by the administrator) Landlock still applies;
        // read-only folders are then only as protected as their permissions make them.
        Err(e) => eprintln!("perch-sandbox: namespaces unavailable ({e}); continuing with Landlock only"),
    }
    let status = landlock(policy)?;
    if let LandlockStatus::Available { effective_abi, .. } = status.0
        && status.1 != RulesetStatus::NotEnforced
    {
        enforced.landlock_abi = effective_abi as u32;
        // ABI 4 and later refuse TCP bind and connect when the network is off.
        enforced.network_blocked |= !policy.network && effective_abi as u32 >= 4;
    }
    Ok(enforced)
}

fn setup(what: &str, e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Setup(format!("{what}: {e}"))
}

/// New user and mount namespaces (and a network one when the network is off), the user mapped
/// to itself, and read-only bind mounts over the read-only folders.
fn enter_namespaces(policy: &Policy) -> Result<(), SandboxError> {
    let (uid, gid) = (nix::unistd::getuid(), nix::unistd::getgid());
    let mut flags = CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWNS;
    if !policy.network {
        flags |= CloneFlags::CLONE_NEWNET;
    }
    unshare(flags).map_err(|e| setup("unshare", e))?;
    std::fs::write("/proc/self/setgroups", "deny").map_err(|e| setup("setgroups", e))?;
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1")).map_err(|e| setup("uid_map", e))?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1")).map_err(|e| setup("gid_map", e))?;
    // Our mounts must not leak back to the parent namespace.
    mount(None::<&str>, "/", None::<&str>, MsFlags::MS_REC | MsFlags::MS_PRIVATE, None::<&str>)
        .map_err(|e| setup("private mounts", e))?;
    for dir in policy.read_only.iter().filter(|d| d.is_dir()) {
        bind_read_only(dir)?;
    }
    Ok(())
}

fn bind_read_only(dir: &Path) -> Result<(), SandboxError> {
    mount(Some(dir), dir, None::<&str>, MsFlags::MS_BIND | MsFlags::MS_REC, None::<&str>)
        .map_err(|e| setup(&format!("bind {}", dir.display()), e))?;
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

/// Everything readable and executable; writable beneath the policy's folders and the devices.
fn landlock(policy: &Policy) -> Result<(LandlockStatus, RulesetStatus), SandboxError> {
    let err = |e: landlock::RulesetError| setup("landlock", e);
    let mut ruleset = Ruleset::default().handle_access(AccessFs::from_all(ABI_WANTED)).map_err(err)?;
    if !policy.network {
        ruleset = ruleset.handle_access(AccessNet::from_all(ABI_WANTED)).map_err(err)?;
    }
    ruleset = ruleset.scope(Scope::from_all(ABI_WANTED)).map_err(err)?;
    let writable: Vec<PathBuf> = policy.writable.iter().filter(|d| d.exists()).cloned().collect();
    let devices: Vec<&Path> = DEVICES.iter().map(Path::new).filter(|p| p.exists()).collect();
    let device_rights = AccessFs::from_read(ABI_WANTED)
        | AccessFs::WriteFile
        | AccessFs::IoctlDev
        | AccessFs::Truncate
        | AccessFs::MakeReg
        | AccessFs::RemoveFile;
    let status = ruleset
        .create()
        .map_err(err)?
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(ABI_WANTED)))
        .map_err(err)?
        .add_rules(path_beneath_rules(&devices, device_rights))
        .map_err(err)?
        .add_rules(path_beneath_rules(&writable, AccessFs::from_all(ABI_WANTED)))
        .map_err(err)?
        .restrict_self()
        .map_err(err)?;
    Ok((status.landlock, status.ruleset))
}
