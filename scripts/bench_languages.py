#!/usr/bin/env python3
"""What the UI's languages cost its page: first paint and memory of two builds of the UI (say,
the commit before the catalogue and now), each served to Chromium with bench_startup.py's IPC
shim on one Xvfb display, runs alternating so drift affects both; medians. Also the bytes the
page loads before its first paint (the entry chunk and, for the new build, one catalogue).

  python3 scripts/bench_languages.py --before OLD/ui/dist --after ui/dist [--runs 10] [--locale de_DE.UTF-8]
"""

import argparse
import gzip
import os
import shutil
import statistics
import threading
from pathlib import Path

import bench_startup as bench


def first_paint_bytes(dist: Path, locale_tag: str) -> tuple[int, int]:
    """Raw and gzip bytes of the entry script, plus the catalogue chunk for `locale_tag` if any."""
    assets = dist / "assets"
    files = [p for p in assets.glob("index-*.js")]
    files += [p for p in assets.glob(f"{locale_tag}-*.js")]
    raw = sum(p.stat().st_size for p in files)
    packed = sum(len(gzip.compress(p.read_bytes(), 9)) for p in files)
    return raw, packed


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, type=Path)
    ap.add_argument("--after", required=True, type=Path)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--idle", type=float, default=5.0)
    ap.add_argument("--locale", default="en_US.UTF-8", help="the system locale the shim reports")
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = ap.parse_args()
    bench.IPC_SHIM = f"window.__PERCH_BENCH_LOCALE__ = {args.locale!r};" + bench.IPC_SHIM
    xvfb, display = bench.start_display()
    env = {**os.environ, "DISPLAY": display}
    results = {"before": [], "after": []}
    try:
        for run in range(args.runs):
            order = ["before", "after"] if run % 2 == 0 else ["after", "before"]
            for name in order:
                bench.DIST = getattr(args, name).resolve()
                server = bench.PaintServer()
                threading.Thread(target=server.serve_forever, daemon=True).start()
                try:
                    paint_ms, pss_kib, _ = bench.run_chromium(args.chromium, server, env, args.idle)
                finally:
                    server.shutdown()
                results[name].append((paint_ms, pss_kib))
                print(f"run {run + 1} {name}: first paint {paint_ms:.0f} ms, PSS {pss_kib / 1024:.1f} MiB", flush=True)
    finally:
        xvfb.terminate()
    tag = args.locale.split(".")[0].replace("_", "-")
    tag = {"zh-CN": "zh-CN", "pt-BR": "pt-BR"}.get(tag, tag.split("-")[0])
    for name in ("before", "after"):
        paints = [p for p, _ in results[name]]
        pss = [m for _, m in results[name]]
        raw, packed = first_paint_bytes(getattr(args, name), tag)
        print(
            f"{name}: first paint median {statistics.median(paints):.0f} ms, "
            f"PSS median {statistics.median(pss) / 1024:.1f} MiB, "
            f"scripts before first paint {raw / 1024:.0f} KiB ({packed / 1024:.0f} KiB gzip)"
        )


if __name__ == "__main__":
    main()
