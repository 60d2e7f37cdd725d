//! What the benchmarks share: the quick mode CI runs (`PERCH_BENCH_QUICK=1`, `make bench-quick`),
//! a few iterations of each figure so a broken benchmark is seen at once. Quick figures are
//! printed, never judged: they come from a debug build on a busy machine.

/// Whether this is a quick run.
#[allow(dead_code)]
pub fn quick() -> bool {
    std::env::var_os("PERCH_BENCH_QUICK").is_some_and(|v| !v.is_empty() && v != "0")
}

/// `full`, or `few` in a quick run.
#[allow(dead_code)]
pub fn scaled(full: usize, few: usize) -> usize {
    if quick() { few } else { full }
}
