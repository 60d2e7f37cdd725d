#!/usr/bin/env bash
# Checks what software centres and desktops read from Perch's package, with their own
# validators: the AppStream metadata (appstreamcli) and the desktop entry (desktop-file-validate),
# and that the metadata's newest release is the version being built.
# Usage: check-metadata.sh                     the files in the repository (the entry's template filled in)
#        check-metadata.sh PATH.deb|PATH.rpm    the files as the package installs them
set -euo pipefail
cd "$(dirname "$0")/.."
metainfo=src-tauri/linux/dev.perch.app.metainfo.xml
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for tool in appstreamcli desktop-file-validate; do
  command -v "$tool" >/dev/null || { echo "error: $tool is missing; make deps-test installs it (apt: appstream, desktop-file-utils)" >&2; exit 1; }
done

version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)"
newest="$(grep -o '<release version="[^"]*"' "$metainfo" | head -1 | cut -d'"' -f2)"
if [[ "$newest" != "$version" ]]; then
  echo "error: $metainfo's newest release is $newest, the workspace version is $version: add a <release> (RELEASING.md)" >&2
  exit 1
fi

if [[ $# -eq 0 ]]; then
  # The template as the bundler fills it in for this package (tauri.conf.json's category,
  # description and the main binary's name).
  sed -e 's/{{categories}}/Office;/' -e 's/{{comment}}/A small, fast, private AI assistant/' \
      -e 's/{{exec}}/perch-desktop/g' -e 's/{{icon}}/perch-desktop/' -e 's/{{name}}/Perch/' \
      -e 's|{{mime_type}}|x-scheme-handler/perch|' -e '/^{{[#/]if/d' src-tauri/linux/perch.desktop > "$work/Perch.desktop"
  desktop="$work/Perch.desktop"
else
  mkdir "$work/root"
  case "$1" in
    *.deb) dpkg-deb -x "$1" "$work/root" ;;
    # rpm2cpio 4.18 exits 1 on the bundler's packages though it writes the whole archive (it
    # compares the bytes with a header field the bundler fills differently); check-rpm.sh checks
    # the package's digests with rpm -K, and what is read from the archive is checked below.
    *.rpm) { rpm2cpio "$1" || true; } | (cd "$work/root" && cpio -idm --quiet) ;;
    *) echo "error: $1 is neither a .deb nor a .rpm" >&2; exit 2 ;;
  esac
  desktop="$(find "$work/root/usr/share/applications" -name '*.desktop' | head -1)"
  [[ -n "$desktop" ]] || { echo "error: $1 has no desktop entry" >&2; exit 1; }
  installed="$work/root/usr/share/metainfo/dev.perch.app.metainfo.xml"
  [[ -f "$installed" ]] || { echo "error: $1 has no usr/share/metainfo/dev.perch.app.metainfo.xml" >&2; exit 1; }
  cmp "$installed" "$metainfo"
  launchable="$(grep -o '<launchable type="desktop-id">[^<]*' "$metainfo" | cut -d'>' -f2)"
  [[ "$(basename "$desktop")" == "$launchable" ]] || {
    echo "error: the package's desktop entry is $(basename "$desktop"), the metadata launches $launchable" >&2; exit 1; }
fi
desktop-file-validate "$desktop"
# Errors and warnings fail; infos (tags newer than this validator knows) are shown.
appstreamcli validate --no-net "$metainfo"
echo "metadata: $metainfo and $(basename "$desktop") valid${1:+ in $1}"
