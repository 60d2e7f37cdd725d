//! The page's web process as the kernel sees it. WebKitGTK does not say which process holds a
//! web view, so it is found among the app's descendants by its program's name, and its memory
//! read as everywhere else in Perch: PSS from `/proc/PID/smaps_rollup`.

use std::path::Path;

/// WebKit's page process, started by the app (or below a sandbox launcher, when one is used).
const WEB_PROCESS: &str = "WebKitWebProcess";

/// The page's PSS in bytes, or None while it has no process (ended, or not started yet).
pub fn page_memory() -> Option<u64> {
    descendant_running(std::process::id(), WEB_PROCESS).and_then(perch_core::local::machine::process_memory)
}

/// The first process below `root` (children first) whose program is named `program`.
fn descendant_running(root: u32, program: &str) -> Option<u32> {
    let mut level = vec![root];
    while !level.is_empty() {
        let children: Vec<u32> = level.iter().flat_map(|&pid| children_of(pid)).collect();
        if let Some(&found) = children.iter().find(|&&pid| runs(pid, program)) {
            return Some(found);
        }
        level = children;
    }
    None
}

/// A process's children, as each of its threads lists those it started
/// (`/proc/PID/task/TID/children`), so finding the page's process reads a few files, not all of
/// `/proc`.
fn children_of(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("children")).ok())
        .flat_map(|list| list.split_whitespace().filter_map(|pid| pid.parse().ok()).collect::<Vec<u32>>())
        .collect()
}

/// Whether `pid` runs a program named `program` (the file name of its first argument).
fn runs(pid: u32, program: &str) -> bool {
    let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else { return false };
    let first = cmdline.split(|&b| b == 0).next().unwrap_or_default();
    Path::new(std::str::from_utf8(first).unwrap_or_default()).file_name().is_some_and(|name| name == program)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Child, Command};
    use std::time::{Duration, Instant};

    struct Killed(Child);
    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    fn eventually(mut found: impl FnMut() -> Option<u32>) -> Option<u32> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            if let Some(pid) = found() {
                return Some(pid);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn finds_a_child_and_a_grandchild_by_program_and_nothing_else() {
        let me = std::process::id();
        let child = Killed(Command::new("sleep").arg("30").spawn().unwrap());
        assert_eq!(eventually(|| descendant_running(me, "sleep")), Some(child.0.id()));

        // The shell stays (a command follows), so `sleep` runs below it, as WebKit's page
        // process runs below a sandbox launcher when one is used.
        let shell = Killed(Command::new("sh").args(["-c", "sleep 31; exit 0"]).spawn().unwrap());
        let grandchild = eventually(|| descendant_running(shell.0.id(), "sleep")).expect("the shell's sleep");
        assert_ne!(grandchild, shell.0.id());
        assert_eq!(children_of(shell.0.id()), vec![grandchild]);
        assert!(runs(grandchild, "sleep"));

        assert_eq!(descendant_running(me, "no-such-program"), None);
        assert_eq!(descendant_running(child.0.id(), "sleep"), None, "a process is not below itself");
        // Not a file name that merely ends the same way.
        assert!(!runs(child.0.id(), "eep"));
    }

    #[test]
    fn no_page_process_in_a_test_binary() {
        assert_eq!(page_memory(), None);
    }
}
