#!/usr/bin/env bash
# Recompresses the .deb Tauri bundles (gzip) with xz, as Debian's own packages are: the same
# files, 28.9 MiB -> 16.0 MiB to download. dpkg has read xz packages since 1.15.6 (2010).
# Usage: repack-deb.sh PATH.deb
set -euo pipefail
deb="${1:?usage: repack-deb.sh PATH.deb}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
dpkg-deb --raw-extract "$deb" "$work/root"
dpkg-deb -Zxz -z9 --root-owner-group --build "$work/root" "$work/repacked.deb" >/dev/null
# The same package, checked before it replaces the original.
listing() { dpkg-deb --contents "$1" | awk '{sub(/^\.?\//, "", $6); sub(/\/$/, "", $6); if ($6 != "") print $1, $3, $6}' | sort; }
cmp <(listing "$deb") <(listing "$work/repacked.deb")
mv "$work/repacked.deb" "$deb"
echo "$deb: $(du -h "$deb" | cut -f1) (xz)"
