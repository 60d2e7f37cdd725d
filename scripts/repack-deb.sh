#!/usr/bin/env bash
# Finishes the .deb Tauri bundles:
# - adds the `perch` command line as a link to the app (the binary is both: see
#   src-tauri/src/main.rs), so the package carries the engine once;
# - adds the bundled MCP servers' names as links to `perch-mcp`, which runs the server it is
#   started as (mcp_servers/bundle);
# - recompresses it with xz instead of gzip, as Debian's own packages are (28.9 MiB -> 16.0
#   MiB for the same files). dpkg has read xz packages since 1.15.6 (2010).
# Usage: repack-deb.sh [--fast] PATH.deb
#   --fast: gzip at its fastest level, for a package only tests install (make test-install).
set -euo pipefail
compression=(-Zxz -z9)
if [[ "${1:-}" == --fast ]]; then compression=(-Zgzip -z1); shift; fi
deb="${1:?usage: repack-deb.sh [--fast] PATH.deb}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
dpkg-deb --raw-extract "$deb" "$work/root"
[ -x "$work/root/usr/bin/perch-desktop" ] || { echo "$deb has no usr/bin/perch-desktop" >&2; exit 1; }
[ -x "$work/root/usr/bin/perch-mcp" ] || { echo "$deb has no usr/bin/perch-mcp" >&2; exit 1; }
links=(perch:perch-desktop)
for server in demo filesystem review web google; do links+=("perch-mcp-$server:perch-mcp"); done
for link in "${links[@]}"; do
  [ -e "$work/root/usr/bin/${link%%:*}" ] || ln -s "${link#*:}" "$work/root/usr/bin/${link%%:*}"
done
dpkg-deb "${compression[@]}" --root-owner-group --build "$work/root" "$work/repacked.deb" >/dev/null
# The same package plus the links, checked before it replaces the original.
listing() { dpkg-deb --contents "$1" | awk '{sub(/^\.?\//, "", $6); sub(/\/$/, "", $6); if ($6 != "") print $1, $3, $6}' | sort; }
cmp <({ listing "$deb"; for link in "${links[@]}"; do echo "lrwxrwxrwx 0 usr/bin/${link%%:*}"; done; } | sort -u) \
  <(listing "$work/repacked.deb")
mv "$work/repacked.deb" "$deb"
echo "$deb: $(du -h "$deb" | cut -f1) (${compression[0]#-Z}, with the links)"
