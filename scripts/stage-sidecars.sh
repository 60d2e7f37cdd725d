#!/usr/bin/env bash
# Copies the bundled MCP servers (one binary, `perch-mcp`, linked under each server's name by
# repack-deb.sh), the terminal's sandbox launcher and the perch-llm sidecar from a cargo
# output folder (e.g. target/release) into
# src-tauri/binaries/ under the names Tauri's externalBin expects (NAME-<target triple>), so the
# release bundle installs them beside the app, where Perch looks for them.
set -euo pipefail
from="${1:?usage: stage-sidecars.sh CARGO_OUTPUT_DIR}"
root="$(cd "$(dirname "$0")/.." && pwd)"
triple="$(rustc -vV | sed -n 's/^host: //p')"
mkdir -p "$root/src-tauri/binaries"
for bin in perch-mcp perch-sandbox perch-llm; do
  install -m 0755 "$from/$bin" "$root/src-tauri/binaries/$bin-$triple"
done
# ONNX Runtime for the natural voices (speech out), from the onnxruntime wheel `make deps` put in
# the venv (scripts/python-requirements.txt pins it): the packages install it as
# /usr/lib/perch/libonnxruntime.so.1, where perch-speech looks (it is opened at run time, not
# linked, so a machine without it still starts and speaks with espeak-ng).
venv="${VENV:-$HOME/.cache/perch/venv}"
runtime="$(ls "$venv"/lib/python3*/site-packages/onnxruntime/capi/libonnxruntime.so.1.* 2>/dev/null | head -1)"
[ -n "$runtime" ] || { echo "no libonnxruntime.so in $venv: run make deps" >&2; exit 1; }
install -m 0644 "$runtime" "$root/src-tauri/binaries/libonnxruntime.so.1"
