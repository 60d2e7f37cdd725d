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
