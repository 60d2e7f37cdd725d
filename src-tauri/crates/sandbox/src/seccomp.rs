//! The seccomp filter that pairs with Landlock, as Codex's Linux sandbox pairs them: the
//! kernel's key store is never reachable from a command, and where this kernel's Landlock
//! lacks a right the sandbox relies on, the system call behind it is refused outright:
//! below ABI 6 (no scoping of abstract Unix sockets) every Unix socket, since a filter cannot
//! read the address a socket connects to; below ABI 3 (no truncation right) `truncate(2)` by
//! path. Each refusal is `EPERM`, which programs report as a plain permission error.

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
    // An empty list of rules refuses the call whatever its arguments.
    for call in [libc::SYS_keyctl, libc::SYS_add_key, libc::SYS_request_key] {
        rules.insert(call, Vec::new());
    }
    if abi < 6 {
        let unix = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, libc::AF_UNIX as u64)?;
        rules.insert(libc::SYS_socket, vec![SeccompRule::new(vec![unix])?]);
    }
    if abi < 3 {
        rules.insert(libc::SYS_truncate, Vec::new());
    }
    let filter =
        SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(libc::EPERM as u32), arch)?;
    let program: BpfProgram = filter.try_into()?;
    seccompiler::apply_filter(&program)?;
    Ok(true)
}
