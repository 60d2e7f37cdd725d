#!/usr/bin/env bash
# Checks that Rust and Node.js are present and new enough, before anything is built, and says
# exactly how to get them when they are not. `make run` and `make test` run it first.
# The minimums come from Cargo.toml (`rust-version`) and package.json (`engines.node`).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

rust_min=$(sed -n 's/^rust-version *= *"\([0-9.]*\)".*/\1/p' "$root/Cargo.toml" | head -1)
node_min=$(sed -n 's/.*"node" *: *">= *\([0-9]*\).*/\1/p' "$root/package.json" | head -1)

# "1.95.0" -> 1095000, so versions compare as numbers.
as_number() { awk -F. '{ printf "%d%03d%03d\n", $1, $2, $3 }' <<<"$1"; }
version_of() { # command, then prints the first x.y[.z] in its --version output
  "$1" --version 2>/dev/null | grep -oE '[0-9]+\.[0-9]+(\.[0-9]+)?' | head -1
}

problems=0

rust=$(command -v rustc >/dev/null && version_of rustc || true)
if [[ -z "$rust" ]] || ! command -v cargo >/dev/null \
   || (($(as_number "$rust") < $(as_number "$rust_min"))); then
  problems=1
  echo "Perch needs Rust $rust_min or newer; found: ${rust:-none}." >&2
  if command -v rustup >/dev/null; then
    echo "  Update it with rustup:  rustup update stable && rustup default stable" >&2
  else
    echo "  Install it with the official installer (rustup), then open a new shell:" >&2
    echo "    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y" >&2
    echo "    . \"\$HOME/.cargo/env\"" >&2
  fi
fi

node=$(command -v node >/dev/null && version_of node || true)
if [[ -z "$node" ]] || ! command -v npm >/dev/null || ((${node%%.*} < node_min)); then
  problems=1
  echo "Perch needs Node.js $node_min or newer, with npm; found: ${node:-none}." >&2
  echo "  Install it as nodejs.org says (nvm, the Node Version Manager), then open a new shell:" >&2
  echo "    curl -o- https://raw.githubusercontent.com/nvm-sh/nvm/v0.40.3/install.sh | bash" >&2
  echo "    . \"\$HOME/.nvm/nvm.sh\" && nvm install $node_min" >&2
fi

if ((problems)); then
  echo "Then run make again." >&2
  exit 1
fi
