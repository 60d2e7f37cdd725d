//! What this machine offers a local model: CPU threads, free memory, and what a model needs.

use std::path::Path;

/// Bytes beyond the weights and the KV cache: llama.cpp's compute buffers and the process.
const OVERHEAD: u64 = 160 << 20;

/// One thread per physical core (llama.cpp is slower on hyper-threads that share a core), at
/// least one.
pub fn default_threads() -> u32 {
    physical_cores()
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32))
        .max(1)
}

/// Distinct (package, core) pairs among the CPUs Linux lists.
fn physical_cores() -> Option<u32> {
    let cpus = std::fs::read_dir("/sys/devices/system/cpu").ok()?;
    let mut cores = std::collections::BTreeSet::new();
    for cpu in cpus.filter_map(Result::ok) {
        let name = cpu.file_name();
        let name = name.to_string_lossy();
        if !name.strip_prefix("cpu").is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit())) {
            continue;
        }
        let read = |f: &str| std::fs::read_to_string(cpu.path().join("topology").join(f)).ok();
        if let (Some(package), Some(core)) = (read("physical_package_id"), read("core_id")) {
            cores.insert((package.trim().to_owned(), core.trim().to_owned()));
        }
    }
    u32::try_from(cores.len()).ok().filter(|n| *n > 0)
}

/// Memory the system can give a new process without swapping (`MemAvailable`), in bytes;
/// `None` where the system does not say.
pub fn available_memory() -> Option<u64> {
    meminfo_field(&std::fs::read_to_string("/proc/meminfo").ok()?, "MemAvailable:")
}

fn meminfo_field(text: &str, field: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(field))?;
    let kib: u64 = line[field.len()..].trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib * 1024)
}

/// What a model needs in memory: its weights, the KV cache for `context` tokens, and overhead.
pub fn memory_need(weights: u64, kv_bytes_per_token: u64, context: u32) -> u64 {
    weights + kv_bytes_per_token * u64::from(context) + OVERHEAD
}

/// Proportional set size of a process, from `/proc/PID/smaps_rollup`, in bytes.
pub fn process_memory(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(Path::new("/proc").join(pid.to_string()).join("smaps_rollup")).ok()?;
    meminfo_field(&text, "Pss:")
}

pub fn human_size(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.1} GB", bytes as f64 / 1e9)
    } else {
        format!("{} MB", bytes / 1_000_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_fields_are_read_in_bytes() {
        let text = "MemTotal:       24000000 kB\nMemAvailable:    1024 kB\n";
        assert_eq!(meminfo_field(text, "MemAvailable:"), Some(1024 * 1024));
        assert_eq!(meminfo_field(text, "Pss:"), None);
        assert!(available_memory().is_some_and(|m| m > 0), "Linux says");
        assert!(process_memory(std::process::id()).is_some_and(|m| m > 0));
        assert!(default_threads() >= 1);
    }

    #[test]
    fn the_need_adds_weights_cache_and_overhead() {
        assert_eq!(memory_need(1000, 10, 100), 1000 + 1000 + OVERHEAD);
        assert_eq!(human_size(639_446_688), "639 MB");
        assert_eq!(human_size(2_019_377_696), "2.0 GB");
    }
}
