"""Per-command start-up of the sandbox launcher, side by side with no sandbox and bubblewrap with
the nearest equivalent policy; 50 runs each, interleaved, in one run (issue 42's figure).

    cargo build --release --locked -p perch-sandbox --bin perch-sandbox
    python3 scripts/bench_launcher.py "$CARGO_TARGET_DIR/release/perch-sandbox"
"""
import os, statistics, subprocess, sys, time
launcher = sys.argv[1]
work = "/var/tmp/perch-bench-work"
os.makedirs(work + "/src/sub", exist_ok=True)
subprocess.run(["git", "init", "-q", work], check=True)
home = os.path.expanduser("~")
hidden = [p for p in ["/run/user/0", home + "/.ssh", home + "/.gnupg", home + "/.aws", home + "/.local/share/keyrings"] if os.path.exists(p)]
perch = [launcher, "--write", work, "--write", "/tmp", "--private-tmp", "--no-network"] + sum([["--hide", h] for h in hidden], []) + ["--"]
bwrap = ["bwrap", "--unshare-user", "--unshare-pid", "--unshare-net", "--die-with-parent", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--bind", work, work, "--ro-bind", work + "/.git", work + "/.git"] + sum([["--tmpfs", h] for h in hidden], []) + ["--"]
ways = [("none", []), ("perch-sandbox", perch), ("bubblewrap", bwrap)]
for name, cmd in {"true": ["true"], "ls /usr": ["ls", "/usr"]}.items():
    times = {k: [] for k, _ in ways}
    for _ in range(50):
        for k, pre in ways:
            t = time.perf_counter()
            subprocess.run(pre + cmd, cwd=work, stdout=subprocess.DEVNULL, check=True)
            times[k].append((time.perf_counter() - t) * 1000)
    for k, _ in ways:
        print(f"{name:8} {k:14} median {statistics.median(times[k]):6.2f} ms")
print("load", os.getloadavg(), "hidden", hidden)
