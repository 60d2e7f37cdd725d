//! Terminal figures: the parser and blocklist's decision time per command over the corpus of
//! dangerous lines (p50/p99), and the sandbox's start-up cost per command: `true` and `ls`
//! with no sandbox, under `perch-sandbox` with the policy Perch gives (namespaces, masks, a PID
//! namespace, Landlock, seccomp) and under bubblewrap with the nearest equivalent (its peer:
//! no Landlock, so the same mounts but a read-only home bound in), side by side in one run;
//! then the whole executor with its PTY, with and without the sandbox.
//! Run: `cargo bench -p perch-core --bench terminal` (after building perch-sandbox).
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use perch_core::terminal::AskLevel;
use perch_core::terminal::exec::{self, Spec};
use perch_core::terminal::policy::{Context, assess, decide};
use perch_sandbox::Policy;
use tokio_util::sync::CancellationToken;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn report(name: &str, mut times: Vec<Duration>) -> Duration {
    times.sort();
    let (p50, p99) = (percentile(&times, 0.5), percentile(&times, 0.99));
    println!("{name:<52} p50 {:>9.1} µs   p99 {:>9.1} µs   (n={})", micros(p50), micros(p99), times.len());
    p50
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn launcher() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let path = dir.join("perch-sandbox");
    assert!(path.is_file(), "build perch-sandbox first: cargo build --release -p perch-sandbox");
    path
}

fn corpus() -> Vec<String> {
    include_str!("../tests/data/dangerous_commands.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.replace("\\n", "\n"))
        .collect()
}

fn decisions() {
    let lines = corpus();
    let (cwd, home) = (Path::new("/work/project"), Path::new("/home/user"));
    let ctx = Context { ask_level: AskLevel::OnMiss, remembered: false, session: false, sandboxed: true };
    for line in &lines {
        decide(&assess(line, cwd, home), ctx); // warm up
    }
    let mut times = Vec::new();
    for _ in 0..common::scaled(20, 1) {
        for line in &lines {
            let t = Instant::now();
            std::hint::black_box(decide(&assess(std::hint::black_box(line), cwd, home), ctx));
            times.push(t.elapsed());
        }
    }
    report(&format!("parse + blocklist + decision ({} lines)", lines.len()), times);
    let ordinary = ["cargo test -p perch-core", "git status && git diff --stat", "ls -la src | grep rs"];
    let mut times = Vec::new();
    for _ in 0..common::scaled(2000, 20) {
        for line in ordinary {
            let t = Instant::now();
            std::hint::black_box(decide(&assess(line, cwd, home), ctx));
            times.push(t.elapsed());
        }
    }
    report("parse + blocklist + decision (ordinary lines)", times);
}

fn spawn_times(argv: &[String], runs: usize) -> Vec<Duration> {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            let status =
                Command::new(&argv[0]).args(&argv[1..]).stdout(std::process::Stdio::null()).status().unwrap();
            assert!(status.success());
            t.elapsed()
        })
        .collect()
}

async fn executor_times(argv: Vec<String>, cwd: &Path, runs: usize) -> Vec<Duration> {
    let mut times = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        let spec = Spec {
            argv: argv.clone(),
            cwd: cwd.to_path_buf(),
            env: perch_core::terminal::guard::command_env(std::ffi::OsStr::new("/usr/bin:/bin"), &[]),
            timeout: Duration::from_secs(30),
            max_output_bytes: 1 << 20,
        };
        let (tx, mut rx) = tokio::sync::mpsc::channel(64);
        let job = exec::start(spec, tx).unwrap();
        tokio::spawn(async move { while rx.recv().await.is_some() {} });
        let report = job.wait_report(None, &CancellationToken::new()).await;
        assert_eq!(report.exit.unwrap().code, Some(0));
        times.push(t.elapsed());
    }
    times
}

mod common;

/// `true` and `ls`, 50 runs each (medians), with no sandbox, under perch-sandbox and under
/// bubblewrap where it is installed, interleaved so a busy moment hits all three alike.
fn per_command_overhead(policy: &Policy, work: &Path, hidden: &[PathBuf]) {
    let mut ours = vec![launcher().display().to_string()];
    ours.extend(policy.to_args().into_iter().map(|a| a.to_string_lossy().into_owned()));
    ours.push("--".into());
    let bwrap = which_bwrap().map(|b| {
        let mut argv = vec![b];
        let w = work.display().to_string();
        for a in [
            "--unshare-user",
            "--unshare-pid",
            "--unshare-net",
            "--die-with-parent",
            "--new-session",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
            "--bind",
            &w,
            &w,
        ] {
            argv.push(a.to_owned());
        }
        for h in hidden.iter().filter(|h| h.is_dir()) {
            argv.extend(["--tmpfs".to_owned(), h.display().to_string()]);
        }
        argv.push("--".into());
        argv
    });
    let runs = common::scaled(50, 5);
    println!("Per-command start-up, median of {runs} (interleaved):");
    for program in [["true"].as_slice(), ["ls", "/usr"].as_slice()] {
        let mut none = Vec::new();
        let mut perch = Vec::new();
        let mut bw = Vec::new();
        for _ in 0..runs {
            none.extend(spawn_times(&program.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(), 1));
            let mut argv = ours.clone();
            argv.extend(program.iter().map(|s| (*s).to_owned()));
            perch.extend(spawn_times(&argv, 1));
            if let Some(b) = &bwrap {
                let mut argv = b.clone();
                argv.extend(program.iter().map(|s| (*s).to_owned()));
                bw.extend(spawn_times(&argv, 1));
            }
        }
        let name = program.join(" ");
        let base = report(&format!("  {name}: no sandbox"), none);
        let p = report(&format!("  {name}: perch-sandbox"), perch);
        let overhead = |d: Duration| (micros(d) - micros(base)) / 1000.0;
        let peer = if bwrap.is_some() {
            let b = report(&format!("  {name}: bubblewrap"), bw);
            format!(", bubblewrap {:.2} ms", overhead(b))
        } else {
            " (bubblewrap is not installed: no peer figure)".to_owned()
        };
        println!("  {name}: perch-sandbox adds {:.2} ms{peer}", overhead(p));
    }
}

fn which_bwrap() -> Option<String> {
    ["/usr/bin/bwrap", "/bin/bwrap"].into_iter().find(|p| Path::new(p).is_file()).map(str::to_owned)
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    println!("Terminal figures\n");
    decisions();
    println!();
    let work = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let home = perch_core::terminal::home();
    let hidden = perch_core::terminal::sandbox::hidden_paths(&home, &home.join(".local/share/perch"));
    let policy = perch_core::terminal::sandbox::policy(&[work.path().to_path_buf()], &hidden, false);
    per_command_overhead(&policy, work.path(), &hidden);
    let bash: Vec<String> = ["/bin/bash", "-c", "true"].map(String::from).to_vec();
    let mut sandboxed = vec![launcher().display().to_string()];
    sandboxed.extend(policy.to_args().into_iter().map(|a| a.to_string_lossy().into_owned()));
    sandboxed.push("--".into());
    sandboxed.extend(bash.clone());
    let runs = common::scaled(200, 10);
    println!();
    let plain = report("bash -c true", spawn_times(&bash, runs));
    let boxed = report("perch-sandbox (the full policy, no network) bash", spawn_times(&sandboxed, runs));
    let pty_plain =
        report("executor: PTY + bash -c true", runtime.block_on(executor_times(bash, work.path(), runs)));
    let pty_boxed = report(
        "executor: PTY + sandbox + bash -c true",
        runtime.block_on(executor_times(sandboxed, work.path(), runs)),
    );
    println!(
        "\nsandbox start-up cost per command: {:.2} ms (spawn), {:.2} ms (through the executor)",
        (micros(boxed) - micros(plain)) / 1000.0,
        (micros(pty_boxed) - micros(pty_plain)) / 1000.0
    );
}
