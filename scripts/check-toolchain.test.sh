#!/usr/bin/env bash
# Tests check-toolchain.sh against stand-in `rustc`, `cargo`, `node` and `npm` commands that
# report chosen versions (or are absent), on a PATH holding nothing else of theirs.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The tools the script itself uses, and nothing else.
mkdir "$tmp/base"
for t in bash sed awk grep head dirname; do ln -s "$(command -v "$t")" "$tmp/base/$t"; done

fake() { # dir, command, version output
  mkdir -p "$1"
  printf '#!/bin/sh\necho "%s"\n' "$3" >"$1/$2"
  chmod +x "$1/$2"
}

run() { # rustc version (or ""), node version (or ""), rustup present (0/1); prints status and stderr
  local bin="$tmp/bin-$RANDOM"
  mkdir -p "$bin"
  [[ -n "$1" ]] && fake "$bin" rustc "rustc $1 (59807616e 2026-04-14)" && fake "$bin" cargo "cargo $1"
  [[ -n "$2" ]] && fake "$bin" node "v$2" && fake "$bin" npm "11.19.1"
  [[ "$3" == 1 ]] && fake "$bin" rustup "rustup 1.29.0"
  local status=0
  PATH="$bin:$tmp/base" "$tmp/base/bash" "$here/check-toolchain.sh" 2>"$tmp/err" || status=$?
  echo "$status"
}

fail() { echo "check-toolchain.test: $1"; cat "$tmp/err"; exit 1; }

[[ $(run 1.95.0 20.20.2 1) == 0 ]] || fail "the versions it needs were refused"
[[ $(run 1.96.1 22.1.0 1) == 0 ]] || fail "newer versions were refused"

[[ $(run 1.94.1 20.20.2 1) == 1 ]] || fail "an old Rust passed"
grep -q "Rust 1.95 or newer; found: 1.94.1" "$tmp/err" || fail "no version in the message"
grep -q "rustup update stable" "$tmp/err" || fail "no rustup update instruction"

[[ $(run "" 20.20.2 0) == 1 ]] || fail "a missing Rust passed"
grep -q "sh.rustup.rs" "$tmp/err" || fail "no installer for a missing Rust"
grep -q "found: none" "$tmp/err" || fail "a missing Rust not said"

[[ $(run 1.95.0 18.19.0 1) == 1 ]] || fail "an old Node passed"
grep -q "Node.js 20 or newer, with npm; found: 18.19.0" "$tmp/err" || fail "no Node version in the message"
grep -q "nvm install 20" "$tmp/err" || fail "no nvm instruction"

[[ $(run 1.95.0 "" 1) == 1 ]] || fail "a missing Node passed"
echo "check-toolchain.test: ok"
