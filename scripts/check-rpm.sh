#!/usr/bin/env bash
# Checks the .rpm as Fedora's tools read it: its dependencies are named as Fedora names them
# (no Debian names slipped in from the .deb's list), it holds the app, its sidecars and the
# metadata, and its scripts make the links the .deb carries (`perch` and the bundled MCP
# servers' names) and take them away with the package.
# Usage: check-rpm.sh PATH.rpm
set -euo pipefail
rpm="${1:?usage: check-rpm.sh PATH.rpm}"
command -v rpm >/dev/null || { echo "error: rpm is missing; make deps-system installs it (apt: rpm)" >&2; exit 1; }
fail() { echo "error: $rpm: $*" >&2; exit 1; }
rpm -K "$rpm" >/dev/null 2>&1 || fail "its header or payload digest does not match (rpm -K)"
requires="$(rpm -qp --requires "$rpm" 2>/dev/null)"
# The root certificates HTTPS needs: rustls reads the system's (ca-certificates on Fedora too).
for name in webkit2gtk4.1 gtk3 libayatana-appindicator-gtk3 ca-certificates; do
  grep -qx "$name" <<<"$requires" || fail "does not require $name (has: $(tr '\n' ' ' <<<"$requires"))"
done
if grep -E '^lib[a-z0-9.-]*-[0-9]+$|^libgtk-3-0$' <<<"$requires"; then fail "requires a Debian package name"; fi
files="$(rpm -qlp "$rpm" 2>/dev/null)"
for file in /usr/bin/perch-desktop /usr/bin/perch-mcp /usr/bin/perch-sandbox /usr/bin/perch-llm \
            /usr/share/metainfo/dev.perch.app.metainfo.xml /usr/share/applications/Perch.desktop; do
  grep -qx "$file" <<<"$files" || fail "has no $file"
done
scripts="$(rpm -qp --scripts "$rpm" 2>/dev/null)"
grep -q 'ln -sfn perch-desktop /usr/bin/perch' <<<"$scripts" || fail "its %post does not link /usr/bin/perch"
grep -q 'rm -f /usr/bin/perch' <<<"$scripts" || fail "its %postun does not remove the links"
echo "$rpm: $(du -h "$rpm" | cut -f1); requires $(grep -c . <<<"$requires") capabilities, Fedora's names for the libraries; files, links and scripts as the .deb"
