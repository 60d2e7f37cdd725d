#!/usr/bin/env bash
# Runs the official MCP client conformance suite (@modelcontextprotocol/conformance, pinned in
# package.json) with the `perch` CLI as the client (client.sh), for both requirement sets:
# 2025-11-25 (the initialize handshake) and 2026-07-28 (stateless requests with _meta). Each
# set's scenarios run at once, against mock servers on loopback. Known failures, each with its
# reason, are in expected-failures/REVISION.yaml; the run fails on any other failure and on a
# listed scenario that passes. Results (checks.json, the client's stdout and stderr per
# scenario) go to target/conformance/REVISION/.
# Expects the CLI built: `make app-debug` (or set PERCH_BIN).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export PERCH_BIN="${PERCH_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/perch}"
suite="$root/node_modules/@modelcontextprotocol/conformance/dist/index.js"
out="${CONFORMANCE_ARTIFACTS:-$root/target/conformance}"

[[ -x "$PERCH_BIN" ]] || { echo "conformance: no perch at $PERCH_BIN; run 'make app-debug' first" >&2; exit 1; }
[[ -f "$suite" ]] || { echo "conformance: the suite is not installed; run 'npm install' at the top" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out"
# The suite splits --command on spaces and runs it from here: a relative path keeps a
# checkout whose path has spaces working.
cd "$root"
status=0
for revision in ${CONFORMANCE_REVISIONS:-2025-11-25 2026-07-28}; do
  echo "== MCP client conformance, requirements $revision"
  started=$SECONDS
  if node --import "$here/node20.mjs" "$suite" client \
      --command tests/conformance/client.sh \
      --requirements "$revision" \
      --expected-failures "$here/expected-failures/$revision.yaml" \
      --output-dir "$out/$revision" >"$out/$revision.log" 2>&1; then
    result=passed
  else
    result=FAILED
    status=1
  fi
  # The summary and the verdict on the expected failures; the whole log is in the file.
  sed -n '/=== SUITE SUMMARY ===/,$p' "$out/$revision.log"
  echo "== requirements $revision: $result in $((SECONDS - started)) s (log: $out/$revision.log)"
done
exit "$status"
