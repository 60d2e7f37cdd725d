#!/usr/bin/env bash
# Runs a benchmark script from this folder against the app on a private Xvfb with openbox,
# like the e2e specs. Usage: bench/run.sh review_render.mjs
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
export E2E_BENCH_SCRIPT="bench/$1"
exec "$here/run.sh"
