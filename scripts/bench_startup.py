#!/usr/bin/env python3
"""Start-up figures for Perch against the same UI in Chromium (an Electron stand-in).

For each run, on one Xvfb display: the time from launching the process to the UI's first
paint, and the proportional set size (PSS) of the whole process tree after it has idled.
Perch is launched twice per run in the same data folder: the first launch of a new install
starts the bundled MCP servers to learn their tools; every later launch (the figures reported
first) leaves them idle until a tool is called.
Also the size of each program on disk. Runs alternate between the two so drift affects both.

First paint is the same signal for both: the UI calls its `ui_ready` command two animation
frames after its first render. Perch logs it; in Chromium a small IPC shim, injected by this
script's server, answers the UI's commands (so it renders the same Chat page) and reports
`ui_ready` to the server.
"""

import argparse
import http.server
import json
import os
import shutil
import signal
import socketserver
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DIST = ROOT / "ui" / "dist"

# Answers the UI's start-up commands the way a healthy Perch does.
IPC_SHIM = """
window.__TAURI_INTERNALS__ = (() => {
  let next = 1;
  const replies = {
    app_status: { version: "bench", fatal: null, data_dir: "/tmp/bench", data_dir_source: "env",
                  schema_version: 2, notices: [] },
    get_window_mode: "normal",
    ui_language: { chosen: null, system: window.__PERCH_BENCH_LOCALE__ ?? "en_US.UTF-8" },
    get_settings: { theme: "system", window: { mode: "normal", bounds: null, mini_origin: null } },
  };
  return {
    metadata: { currentWindow: { label: "main" }, currentWebview: { label: "main" } },
    transformCallback: () => next++,
    unregisterCallback: () => {},
    convertFileSrc: (p) => p,
    invoke: async (cmd) => {
      if (cmd === "ui_ready") { navigator.sendBeacon("/__first-paint"); return null; }
      if (cmd in replies) return replies[cmd];
      return null;
    },
  };
})();
"""


class PaintServer(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True

    def __init__(self):
        super().__init__(("127.0.0.1", 0), PaintHandler)
        self.painted = threading.Event()
        self.painted_at = 0.0


class PaintHandler(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, directory=str(DIST), **kwargs)

    def log_message(self, *args):
        pass

    def do_POST(self):
        if self.path == "/__first-paint":
            self.server.painted_at = time.monotonic()
            self.server.painted.set()
        self.send_response(204)
        self.end_headers()

    def do_GET(self):
        if self.path in ("/", "/index.html"):
            html = (DIST / "index.html").read_text()
            html = html.replace("<head>", "<head><script>" + IPC_SHIM + "</script>", 1)
            body = html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            super().do_GET()


def process_tree(root_pid):
    """The pid and every descendant, from /proc."""
    children = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    tree, todo = [], [root_pid]
    while todo:
        pid = todo.pop()
        tree.append(pid)
        todo.extend(children.get(pid, []))
    return tree


def rollup(pid):
    """Pss and SwapPss of one process in KiB (zeros when it is gone)."""
    fields = {"Pss:": 0, "SwapPss:": 0}
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            key = line.split(maxsplit=1)[0] if line else ""
            if key in fields:
                fields[key] = int(line.split()[1])
    except OSError:
        pass
    return fields["Pss:"], fields["SwapPss:"]


def process_name(pid):
    """A short name for a process: WebKit's helpers by role, our binaries by file name."""
    try:
        exe = Path(os.readlink(f"/proc/{pid}/exe")).name
    except OSError:
        return "?"
    return exe


def pss_kib(pids):
    return sum(rollup(p)[0] for p in pids)


def breakdown(pids):
    """PSS in KiB per process name (summed over processes of the same name), and SwapPss."""
    parts, swap = {}, 0
    for pid in pids:
        pss, swap_pss = rollup(pid)
        name = process_name(pid)
        parts[name] = parts.get(name, 0) + pss
        swap += swap_pss
    return parts, swap


def kill_tree(pid):
    pids = process_tree(pid)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for p in pids:
            try:
                os.kill(p, sig)
            except ProcessLookupError:
                pass
        time.sleep(0.5)


def run_perch(app, env, idle, cli=None, hidden_idle=0.0, data=None):
    """Launch to first paint, then the tree's memory visible and idle; with `cli` and
    `hidden_idle`, also after `perch toggle` hid the window for that long. A given `data`
    folder is used and kept (a later launch); else a new one is made and removed."""
    keep = data is not None
    data = data or tempfile.mkdtemp(prefix="perch-bench-")
    env = {**env, "PERCH_DATA_DIR": data, "PERCH_LOG": "info"}
    started = time.monotonic()
    proc = subprocess.Popen([app], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    painted = None
    for line in proc.stderr:
        if "first paint" in line:
            painted = time.monotonic()
            break
    threading.Thread(target=lambda: proc.stderr.read(), daemon=True).start()
    try:
        if painted is None:
            raise RuntimeError("Perch exited before its first paint")
        time.sleep(idle)
        tree = process_tree(proc.pid)
        parts, swap = breakdown(tree)
        extra = {"parts": parts, "swap_kib": swap}
        if cli and hidden_idle > 0:
            subprocess.run([cli, "toggle"], env=env, check=True, capture_output=True, timeout=30)
            time.sleep(hidden_idle)
            hidden_parts, hidden_swap = breakdown(process_tree(proc.pid))
            extra["hidden_parts"], extra["hidden_swap_kib"] = hidden_parts, hidden_swap
    finally:
        kill_tree(proc.pid)
        if not keep:
            shutil.rmtree(data, ignore_errors=True)
    return (painted - started) * 1000, sum(parts.values()), len(tree), extra


def run_chromium(chromium, server, env, idle):
    profile = tempfile.mkdtemp(prefix="chromium-bench-")
    server.painted.clear()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    args = [
        chromium, f"--app={url}", f"--user-data-dir={profile}", "--window-size=450,450",
        "--no-first-run", "--no-default-browser-check", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-gpu", "--disable-quic",
        "--password-store=basic",
    ]
    if os.geteuid() == 0:
        args.append("--no-sandbox")
    started = time.monotonic()
    proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if not server.painted.wait(60):
        kill_tree(proc.pid)
        raise RuntimeError("Chromium did not paint within 60 s")
    painted = server.painted_at
    time.sleep(idle)
    tree = process_tree(proc.pid)
    pss = pss_kib(tree)
    kill_tree(proc.pid)
    shutil.rmtree(profile, ignore_errors=True)
    return (painted - started) * 1000, pss, len(tree)


def start_display():
    n = 80
    while Path(f"/tmp/.X11-unix/X{n}").exists() or Path(f"/tmp/.X{n}-lock").exists():
        n += 1
    xvfb = subprocess.Popen(["Xvfb", f":{n}", "-screen", "0", "1280x800x24", "-nolisten", "tcp", "-noreset"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        if subprocess.run(["xdpyinfo", "-display", f":{n}"], capture_output=True).returncode == 0:
            return xvfb, f":{n}"
        time.sleep(0.1)
    raise RuntimeError("Xvfb did not start")


def du(path):
    return sum(f.stat().st_size for f in Path(path).rglob("*") if f.is_file() and not f.is_symlink())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--app", required=True, help="the release perch-desktop binary")
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--idle", type=float, default=10.0, help="seconds of idle before measuring memory")
    ap.add_argument("--cli", help="the perch CLI, to hide the window (default: beside --app)")
    ap.add_argument("--hidden-idle", type=float, default=0.0,
                    help="also measure after the window was hidden this many seconds (the issue: 300)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not (DIST / "index.html").exists():
        sys.exit("no built UI in ui/dist; run `npm run build -w ui` (make bench does)")

    cli = args.cli or str(Path(args.app).with_name("perch"))
    if args.hidden_idle > 0 and not os.access(cli, os.X_OK):
        sys.exit(f"no perch CLI at {cli}; pass --cli")

    xvfb, display = start_display()
    env = {**os.environ, "DISPLAY": display}
    env.pop("WAYLAND_DISPLAY", None)
    server = PaintServer()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    results = {"perch": [], "chromium": [], "perch_first": []}
    try:
        for i in range(args.runs):
            data = tempfile.mkdtemp(prefix="perch-bench-")
            try:
                results["perch_first"].append(run_perch(args.app, env, args.idle, data=data))
                results["perch"].append(run_perch(args.app, env, args.idle, cli, args.hidden_idle, data=data))
            finally:
                shutil.rmtree(data, ignore_errors=True)
            results["chromium"].append(run_chromium(args.chromium, server, env, args.idle))
            print(f"run {i + 1}/{args.runs}: perch {results['perch'][-1][0]:.0f} ms, "
                  f"chromium {results['chromium'][-1][0]:.0f} ms", file=sys.stderr)
    finally:
        server.shutdown()
        xvfb.terminate()

    # Debian's /usr/bin/chromium is a shell wrapper; the program is in /usr/lib/chromium.
    chromium_real = Path(os.path.realpath(args.chromium))
    if Path("/usr/lib/chromium/chromium").is_file():
        chromium_real = Path("/usr/lib/chromium/chromium")
    chromium_dir = chromium_real.parent
    summary = {}
    first = results.pop("perch_first")
    for name, rows in results.items():
        summary[name] = {
            "first_paint_ms_median": round(statistics.median(r[0] for r in rows)),
            "first_paint_ms_all": [round(r[0]) for r in rows],
            "pss_mib_median": round(statistics.median(r[1] for r in rows) / 1024, 1),
            "processes": rows[-1][2],
        }
    def median_parts(key):
        rows = [r[3][key] for r in results["perch"] if key in r[3]]
        names = sorted({n for row in rows for n in row})
        return {n: round(statistics.median(row.get(n, 0) for row in rows) / 1024, 1) for n in names}

    summary["perch"]["pss_mib_by_process"] = median_parts("parts")
    summary["perch"]["first_launch"] = {
        "first_paint_ms_median": round(statistics.median(r[0] for r in first)),
        "pss_mib_median": round(statistics.median(r[1] for r in first) / 1024, 1),
        "processes": first[-1][2],
    }
    summary["perch"]["swap_pss_mib_max"] = round(max(r[3]["swap_kib"] for r in results["perch"]) / 1024, 1)
    if args.hidden_idle > 0:
        hidden = [sum(r[3]["hidden_parts"].values()) for r in results["perch"]]
        summary["perch"]["hidden_pss_mib_median"] = round(statistics.median(hidden) / 1024, 1)
        summary["perch"]["hidden_pss_mib_by_process"] = median_parts("hidden_parts")
        summary["hidden_idle_s"] = args.hidden_idle
    summary["perch"]["binary_mib"] = round(Path(args.app).stat().st_size / 2**20, 1)
    summary["chromium"]["binary_mib"] = round(chromium_real.stat().st_size / 2**20, 1)
    summary["chromium"]["install_dir_mib"] = round(du(chromium_dir) / 2**20, 1)
    summary["runs"] = args.runs
    summary["idle_s"] = args.idle

    if args.json:
        print(json.dumps(summary, indent=2))
        return
    p, c = summary["perch"], summary["chromium"]
    print(f"\n{'':28}{'Perch':>12}{'Chromium --app':>18}")
    print(f"{'launch -> first paint (ms)':28}{p['first_paint_ms_median']:>12}{c['first_paint_ms_median']:>18}")
    print(f"{'PSS after idle (MiB)':28}{p['pss_mib_median']:>12}{c['pss_mib_median']:>18}")
    for part, mib in p["pss_mib_by_process"].items():
        print(f"{'  ' + part:28}{mib:>12}")
    f = p["first_launch"]
    print(f"{'first launch of an install':28}")
    print(f"{'  launch -> first paint (ms)':28}{f['first_paint_ms_median']:>12}")
    print(f"{'  PSS after idle (MiB)':28}{f['pss_mib_median']:>12}")
    print(f"{'  processes':28}{f['processes']:>12}")
    print(f"{'SwapPss, largest (MiB)':28}{p['swap_pss_mib_max']:>12}")
    if "hidden_pss_mib_median" in p:
        print(f"{'PSS hidden %g s (MiB)' % args.hidden_idle:28}{p['hidden_pss_mib_median']:>12}")
        for part, mib in p["hidden_pss_mib_by_process"].items():
            print(f"{'  ' + part:28}{mib:>12}")
    print(f"{'processes':28}{p['processes']:>12}{c['processes']:>18}")
    print(f"{'binary (MiB)':28}{p['binary_mib']:>12}{c['binary_mib']:>18}")
    print(f"{'chromium install dir (MiB)':28}{'':>12}{c['install_dir_mib']:>18}")
    print(f"\nmedians of {args.runs} runs; memory after {args.idle:g} s idle; Xvfb 1280x800; Perch's "
          "figures are from a later launch, after the first one of its data folder")


if __name__ == "__main__":
    main()
