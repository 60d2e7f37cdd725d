#!/usr/bin/env bash
# Runs the end-to-end specs against the real app on a virtual display (Xvfb) with a window
# manager, in a private D-Bus session (single instance, keyring).
# Expects the app built with the UI embedded: `make app-debug` (or set PERCH_APP).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export PERCH_APP="${PERCH_APP:-${CARGO_TARGET_DIR:-$root/target}/debug/perch-desktop}"
export E2E_ARTIFACTS="${E2E_ARTIFACTS:-$root/target/e2e-artifacts}"
mkdir -p "$E2E_ARTIFACTS"

[[ -x "$PERCH_APP" ]] || { echo "e2e: no app at $PERCH_APP; run 'make app-debug' first" >&2; exit 1; }
command -v tauri-driver >/dev/null || { echo "e2e: tauri-driver missing; run 'make deps'" >&2; exit 1; }

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

wait_for() { # seconds, description, command...
  local seconds=$1 what=$2; shift 2
  for _ in $(seq $((seconds * 10))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "e2e: $what did not start within ${seconds}s" >&2; return 1
}

# Our own display (-noreset: by default Xvfb resets when its last client leaves, and a
# client connecting during the reset fails), so tests never touch a developer's desktop (E2E_USE_DISPLAY=1 opts out).
if [[ "${E2E_USE_DISPLAY:-}" != 1 || -z "${DISPLAY:-}" ]]; then
  n=90; while [[ -e /tmp/.X11-unix/X$n || -e /tmp/.X$n-lock ]]; do n=$((n + 1)); done
  Xvfb ":$n" -screen 0 1280x800x24 -nolisten tcp -noreset >"$E2E_ARTIFACTS/xvfb.log" 2>&1 &
  pids+=($!)
  export DISPLAY=":$n"
  wait_for 20 "Xvfb on $DISPLAY" xdpyinfo || { cat "$E2E_ARTIFACTS/xvfb.log" >&2; exit 1; }
fi
# A window manager: stacking, focus and window states are its job, and the specs check them.
if ! xprop -root _NET_SUPPORTING_WM_CHECK 2>/dev/null | grep -q "window id"; then
  openbox >"$E2E_ARTIFACTS/openbox.log" 2>&1 &
  pids+=($!)
  wait_for 20 "openbox" sh -c 'xprop -root _NET_SUPPORTING_WM_CHECK | grep -q "window id"' \
    || { cat "$E2E_ARTIFACTS/openbox.log" >&2; exit 1; }
fi

# The fonts the UI is laid out with in tests, and only those (fonts.conf says why).
export FONTCONFIG_FILE="$here/fonts.conf"

cd "$here"
if [[ -n "${E2E_BENCH_SCRIPT:-}" ]]; then
  dbus-run-session -- node "$E2E_BENCH_SCRIPT"
else
  # E2E_SPECS picks some specs (e.g. specs/tools.test.js); all by default.
  dbus-run-session -- node --test --test-concurrency=1 --test-reporter=spec ${E2E_SPECS:-specs/}
fi
