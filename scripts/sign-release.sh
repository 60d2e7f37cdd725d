#!/usr/bin/env bash
# Signs the finished release packages for Perch's updater and writes the manifest it reads.
#
# For each PACKAGE (.deb or .rpm): PACKAGE.sig, the minisign signature `tauri signer` makes (base64),
# bound to the version (the updater refuses a package whose signed version differs from the one
# the manifest announces: `requireSignedVersion` in src-tauri/tauri.conf.json). Then latest.json
# beside them: version, notes, date, and per platform the package's address and signature.
# Signed after repack-deb.sh, so the signature covers the bytes users download.
#
# The private key never enters the repository: TAURI_SIGNING_PRIVATE_KEY (the key's text) or
# TAURI_SIGNING_PRIVATE_KEY_PATH, and TAURI_SIGNING_PRIVATE_KEY_PASSWORD if it has one. Without
# a key the packages are left unsigned and no manifest is written (a local build).
#
# PERCH_RELEASE_URL: where the packages will be downloaded from (default: the GitHub release of
# this version); PERCH_RELEASE_NOTES: a Markdown file of release notes (default: none);
# PERCH_RELEASE_VERSION: the version (default: the workspace's, from Cargo.toml).
# Usage: sign-release.sh PACKAGE.deb|PACKAGE.rpm...
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: sign-release.sh PACKAGE.deb|PACKAGE.rpm..." >&2; exit 2; }
if [ -z "${TAURI_SIGNING_PRIVATE_KEY:-}" ] && [ -z "${TAURI_SIGNING_PRIVATE_KEY_PATH:-}" ]; then
  echo "sign-release: no TAURI_SIGNING_PRIVATE_KEY: packages left unsigned, no update manifest (see RELEASING.md)" >&2
  exit 0
fi
here="$(cd "$(dirname "$0")/.." && pwd)"
version="${PERCH_RELEASE_VERSION:-$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' "$here/Cargo.toml")}"
[ -n "$version" ] || { echo "sign-release: no version found in Cargo.toml" >&2; exit 1; }
base="${PERCH_RELEASE_URL:-https://github.com/perch-app/perch/releases/download/v$version}"
# An empty password is a password too; unset, the signer would ask on the terminal.
export TAURI_SIGNING_PRIVATE_KEY_PASSWORD="${TAURI_SIGNING_PRIVATE_KEY_PASSWORD-}"
for package in "$@"; do
  "$here/node_modules/.bin/tauri" signer sign --app-version "$version" "$package" >/dev/null
done
node "$here/scripts/update-manifest.mjs" "$version" "$base" "${PERCH_RELEASE_NOTES:-}" "$@"
