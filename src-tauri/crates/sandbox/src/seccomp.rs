//! The seccomp filter that pairs with Landlock, as Codex's Linux sandbox pairs them: the
//! kernel's key store is never reachable from a command, and where this kernel's Landlock
//! lacks a right the sandbox relies on, the system call behind it is refused outright:
//! below ABI 9 (no scoping of pathname Unix sockets to the writable folders; below 6, of
//! abstract ones either) every new Unix socket, since a filter cannot read the address a
//! socket connects to (`socketpair`, which reaches nothing outside, still works); below ABI 3
//! (no truncation right) `truncate(2)` by path. Each refusal is `EPERM`, which programs report
//! as a plain permission error.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    TargetArch,
};

/// Installs the filter for a Landlock domain of `abi`; false where seccompiler does not know
/// this processor (the probe then says the filter is missing).
pub(crate) fn apply(abi: u32) -> Result<bool, seccompiler::Error> {
    let Ok(arch) = TargetArch::try_from(std::env::consts::ARCH) else {
        return Ok(false);
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    // An empty list of rules refuses the call whatever its arguments. io_uring makes sockets
    // and opens files without the system calls this filter (and Landlock's network rules)
    // look at.
    for call in [
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ] {
        rules.insert(call, Vec::new());
    }
    let family = |f: i32| SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, f as u64);
    // VM sockets reach the host (a virtual machine's, WSL's) past any network namespace.
    let mut socket = vec![SeccompRule::new(vec![family(libc::AF_VSOCK)?])?];
    if abi < crate::SCOPED_UNIX_SOCKETS_ABI {
        socket.push(SeccompRule::new(vec![family(libc::AF_UNIX)?])?);
    }
    rules.insert(libc::SYS_socket, socket);
    if abi < 3 {
        rules.insert(libc::SYS_truncate, Vec::new());
    }
    let filter =
        SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32), arch)?;
    let program: BpfProgram = filter.try_into()?;
    seccompiler::apply_filter(&program)?;
    Ok(true)
}
