#!/usr/bin/env bash
# Installs a Perch .deb on a clean Debian system, uses it there as a user would, removes it,
# and checks that nothing of Perch's is left outside the user's data folder.
#
#   test-install.sh PACKAGE.deb
#
# The system is a fresh minimal Debian root made with debootstrap from Debian's mirror
# (bookworm, or INSTALL_SUITE), entered with bubblewrap. The package is installed with
# `apt-get install ./PACKAGE.deb --no-install-recommends`, so apt resolves every dependency from
# the package's own list and nothing else; then, as a new user: `perch --version`,
# `perch doctor` (the sandbox probe, an HTTP client), a tool call through a bundled MCP server,
# the sandbox launcher running a command inside and refusing a write outside, the app under
# Xvfb to its first painted window (a screenshot), a second start as the autostart entry does
# (it must hand over to the first and exit), the `perch:` handler and the desktop entry
# registered, the icon in the theme. Last, `apt-get purge` and `autoremove --purge`.
#
# Needs root (debootstrap) and debootstrap, bubblewrap, Xvfb and ImageMagick
# (scripts/setup-system.sh --test). About two minutes, most of it apt. Logs, the doctor's
# report, the app's log and the screenshot in INSTALL_ARTIFACTS (target/install-artifacts/SUITE);
# INSTALL_KEEP=1 keeps the root for a look inside.
set -euo pipefail

deb="$(realpath "${1:?usage: test-install.sh PACKAGE.deb}")"
suite="${INSTALL_SUITE:-bookworm}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
root_dir="$(cd "$(dirname "$0")/.." && pwd)"
art="${INSTALL_ARTIFACTS:-$root_dir/target/install-artifacts/$suite}"
[[ $(id -u) -eq 0 ]] || { echo "test-install.sh: needs root (debootstrap); run it with sudo" >&2; exit 1; }
for tool in debootstrap bwrap Xvfb import dpkg-deb; do
  command -v "$tool" >/dev/null || { echo "test-install.sh: $tool is missing: scripts/setup-system.sh --test installs it" >&2; exit 1; }
done

rm -rf "$art" && mkdir -p "$art"
mkdir -p -m 1777 /tmp/.X11-unix
work="$(mktemp -d /var/tmp/perch-install.XXXXXX)"
root="$work/root"
display=""
session_pid=""
cleanup() {
  # The session's bubblewrap ends every process in its PID namespace with it.
  [[ -n "$session_pid" ]] && kill "$session_pid" 2>/dev/null && wait "$session_pid" 2>/dev/null
  [[ -n "$display" ]] && kill "$xvfb_pid" 2>/dev/null
  if [[ -n "${INSTALL_KEEP:-}" ]]; then echo "kept: $root"; else rm -rf "$work"; fi
}
trap cleanup EXIT

step() { printf '\n== %s\n' "$*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# Inside the root. The host's /proc, not a new one: bubblewrap covers parts of a /proc it
# mounts itself with read-only binds, and the kernel then refuses the sandbox launcher's own
# /proc mount in its namespaces (as it does in most containers); a user's machine has no such
# covers. A private /tmp, the X server's socket, and the package at /tmp/perch.deb.
bwrap_extra=()
inroot() {
  bwrap --bind "$root" / --bind /proc /proc --dev /dev --ro-bind /sys /sys "${bwrap_extra[@]}" \
    --perms 1777 --tmpfs /tmp --ro-bind /tmp/.X11-unix /tmp/.X11-unix --ro-bind "$deb" /tmp/perch.deb \
    --unshare-pid --unshare-ipc --unshare-uts --die-with-parent --chdir / --clearenv \
    --setenv PATH /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --setenv HOME /root --setenv LANG C.UTF-8 --setenv DEBIAN_FRONTEND noninteractive "$@"
}
# As the user `ada`, in her home, with her login's environment and the test display.
as_user() {
  inroot setpriv --reuid=ada --regid=ada --init-groups \
    env HOME=/home/ada USER=ada LOGNAME=ada XDG_RUNTIME_DIR=/tmp/ada-run DISPLAY="$display" \
    sh -c 'mkdir -p -m 0700 "$XDG_RUNTIME_DIR" && cd && exec "$@"' sh "$@"
}

version="$(dpkg-deb --field "$deb" Version)"
package="$(dpkg-deb --field "$deb" Package)"
echo "$package $version ($(du -h "$deb" | cut -f1)) on a clean Debian $suite"

step "a clean Debian $suite (debootstrap, minbase)"
debootstrap --variant=minbase "$suite" "$root" "$mirror" > "$art/debootstrap.log" 2>&1 \
  || { tail -20 "$art/debootstrap.log"; fail "debootstrap could not make the root"; }
cp /etc/resolv.conf "$root/etc/resolv.conf"
# The host's mirror settings (a proxy, a snapshot mirror's date checks) apply inside too.
apt-config dump | grep -E '^Acquire::(https?::Proxy|Check-Valid-Until|Check-Date) ' > "$root/etc/apt/apt.conf.d/00host" || true
inroot apt-get update -q > "$art/apt-update.log" 2>&1 || { tail "$art/apt-update.log"; fail "apt-get update"; }
inroot dpkg-query -W -f '${Package}\n' | sort > "$work/packages-before"
inroot useradd --create-home --shell /bin/bash ada

step "apt-get install ./$(basename "$deb") (its own dependency list, no recommends)"
inroot apt-get install -y -q --no-install-recommends /tmp/perch.deb > "$art/install.log" 2>&1 \
  || { tail -30 "$art/install.log"; fail "apt could not install the package"; }
grep -E '^Need to get|newly installed' "$art/install.log" || true
inroot dpkg-query -W -f '${Status}' "$package" | grep -qx 'install ok installed' || fail "$package is not installed"
inroot dpkg -L "$package" | sort > "$work/files"
# Every program finds every library it links against among the installed packages.
for bin in $(grep -E '^/usr/bin/' "$work/files"); do
  [[ -L "$root$bin" ]] && continue
  missing="$(inroot ldd "$bin" | grep 'not found' || true)"
  [[ -z "$missing" ]] || fail "$bin: libraries the package's dependencies do not bring: $missing"
done
echo "ok  every program's libraries are there"

step "the command line, as a user"
got="$(as_user perch --version)"
[[ "$got" == "perch $version" ]] || fail "perch --version said '$got', not 'perch $version'"
echo "ok  $got"
as_user perch doctor > "$art/doctor.txt" 2>&1 || { cat "$art/doctor.txt"; fail "perch doctor"; }
grep -q '^ok database' "$art/doctor.txt" || { cat "$art/doctor.txt"; fail "the doctor found no working database"; }
# The probe runs the installed launcher (found beside the app) in all its namespaces.
grep -q '^ok sandbox' "$art/doctor.txt" || { cat "$art/doctor.txt"; fail "the doctor found no working sandbox"; }
# Secure connections need the system's root certificates: a dependency (ca-certificates).
grep -q '^ok certificates' "$art/doctor.txt" || { cat "$art/doctor.txt"; fail "the doctor found no root certificates"; }
grep -q '^-- ollama .*not running at http://' "$art/doctor.txt" || { cat "$art/doctor.txt"; fail "the doctor's HTTP probe of Ollama failed"; }
echo "ok  perch doctor: database, sandbox, certificates, HTTP ($art/doctor.txt)"
# A system whose root certificates are gone (/etc/ssl hidden): the doctor says what to
# install, and plain-HTTP services are still reached (Ollama's probe gets as far as connecting).
bwrap_extra=(--tmpfs /etc/ssl)
as_user perch doctor > "$art/doctor-no-certificates.txt" 2>&1 || { cat "$art/doctor-no-certificates.txt"; fail "perch doctor without certificates"; }
bwrap_extra=()
grep -q '^-- certificates .*install the ca-certificates package' "$art/doctor-no-certificates.txt" \
  && grep -q '^-- ollama .*not running at http://' "$art/doctor-no-certificates.txt" \
  || { cat "$art/doctor-no-certificates.txt"; fail "without certificates the doctor did not say what to install, or HTTP failed"; }
echo "ok  without root certificates: the doctor says to install ca-certificates; plain HTTP still works"

# The bundled servers are the package's perch-mcp under their names, started by the engine.
as_user perch mcp list > "$art/mcp-list.txt" 2>&1 || { cat "$art/mcp-list.txt"; fail "perch mcp list"; }
for server in demo filesystem web google; do
  grep -qE "^$server +connected" "$art/mcp-list.txt" || { cat "$art/mcp-list.txt"; fail "the bundled server $server did not start"; }
done
sum="$(as_user perch mcp call demo add '{"a":2,"b":3}')"
[[ "$sum" == "5" ]] || fail "the demo server's add tool answered '$sum'"
echo "ok  bundled MCP servers connected; a tool call answered $sum"

# The launcher runs a command that writes in its folder, and refuses one writing outside.
as_user mkdir -p /home/ada/project
as_user perch-sandbox --write /home/ada/project -- sh -c 'echo inside > /home/ada/project/made' \
  || fail "a sandboxed command that writes in its folder failed"
[[ "$(cat "$root/home/ada/project/made")" == inside ]] || fail "the sandboxed command's file is not there"
if as_user perch-sandbox --write /home/ada/project -- sh -c 'echo outside > /home/ada/escaped' 2>/dev/null \
  || [[ -e "$root/home/ada/escaped" ]]; then
  fail "a sandboxed command wrote outside its folder"
fi
echo "ok  the sandbox runs a command in its folder and refuses a write outside it"

# Speech out: espeak-ng comes with the package's dependencies (libespeak-ng1), and ONNX Runtime
# with the package itself; a Piper voice (PyPI's, copied in) speaks through them on this clean
# system, and espeak-ng's own voice does too.
grep -q '^ok speech out .*natural voices through ONNX Runtime (/usr/lib/perch/libonnxruntime.so.1)' "$art/doctor.txt" \
  || { cat "$art/doctor.txt"; fail "the doctor found no speech out with the packaged ONNX Runtime"; }
voice="${PERCH_PIPER_TEST_VOICE:?the Piper test voice (make sets PERCH_PIPER_TEST_VOICE)}"
# In the user's home: the commands run with a /tmp of their own.
cp "$voice" "$voice.json" "$root/home/ada/"
chmod a+r "$root/home/ada/$(basename "$voice")" "$root/home/ada/$(basename "$voice").json"
for chosen in "/home/ada/$(basename "$voice")" espeak; do
  rm -f "$root/home/ada/said.wav"
  as_user perch say --voice "$chosen" --out /home/ada/said.wav "Perch is installed and speaks." > "$art/say.txt" 2>&1 \
    || { cat "$art/say.txt"; fail "perch say --voice $chosen"; }
  if [[ "$chosen" != espeak ]] && grep -q 'Speaking with espeak-ng' "$art/say.txt"; then
    cat "$art/say.txt"; fail "the Piper voice did not speak"
  fi
  size="$(stat -c %s "$root/home/ada/said.wav")"
  (( size > 40000 )) || fail "perch say --voice $chosen wrote only $size bytes"
done
echo "ok  perch say: a Piper voice through the packaged ONNX Runtime, and espeak-ng"

step "a desktop (desktop-file-utils, xdg-utils, D-Bus, as any desktop has)"
inroot apt-get install -y -q --no-install-recommends desktop-file-utils xdg-utils dbus > "$art/desktop-install.log" 2>&1 \
  || { tail -20 "$art/desktop-install.log"; fail "apt could not install the desktop's tools"; }
handler="$(as_user xdg-mime query default x-scheme-handler/perch)"
entry="$(grep -E '^/usr/share/applications/[^/]+\.desktop$' "$work/files" | head -1)"
[[ -n "$entry" ]] || fail "the package installs no desktop entry"
[[ "$handler" == "$(basename "$entry")" ]] || fail "perch: links open '$handler', not $(basename "$entry")"
inroot desktop-file-validate "$entry" || fail "$entry does not validate"
icon="$(sed -n 's/^Icon=//p' "$root$entry")"
icons="$(cd "$root" && ls usr/share/icons/hicolor/*/apps/"$icon".png 2>/dev/null | wc -l)"
((icons > 0)) || fail "the icon $icon is not in the hicolor theme"
echo "ok  $(basename "$entry") validates and handles perch: links; icon $icon in $icons sizes"

step "the app under Xvfb"
for n in $(seq 90 120); do [[ -e /tmp/.X11-unix/X$n ]] || { display=":$n"; break; }; done
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp > "$art/xvfb.log" 2>&1 &
xvfb_pid=$!
for _ in $(seq 50); do [[ -e "/tmp/.X11-unix/X${display#:}" ]] && break; sleep 0.1; done
# The app in a session bus of its own, as a login has; a second start, as the autostart
# entry runs it, while the first is up must hand over to it and exit.
cat > "$root/home/ada/session.sh" <<'EOF'
#!/bin/sh
PERCH_LOG=info perch-desktop > app.log 2>&1 &
app=$!
while [ ! -e second ]; do kill -0 $app 2>/dev/null || exit 1; sleep 0.2; done
timeout 30 perch-desktop --autostart > second.log 2>&1
echo $? > second.rc
while [ ! -e stop ]; do sleep 0.2; done
kill $app
wait $app 2>/dev/null
EOF
chmod 0755 "$root/home/ada/session.sh"
as_user dbus-run-session -- /home/ada/session.sh &
session_pid=$!
for _ in $(seq 120); do grep -q 'first paint' "$root/home/ada/app.log" 2>/dev/null && break; sleep 0.5; done
grep -q 'first paint' "$root/home/ada/app.log" 2>/dev/null || { cat "$root/home/ada/app.log" >&2 || true; fail "the app did not paint within a minute"; }
grep 'first paint' "$root/home/ada/app.log" | sed 's/\x1b\[[0-9;]*m//g'
# (The bundled servers rest here until a tool is used: the CLI above saved their tool lists.)
sleep 2
import -display "$display" -window root "$art/window.png"
colours="$(identify -format '%k' "$art/window.png")"
((colours > 50)) || fail "the screen shows $colours colours: no window was painted ($art/window.png)"
touch "$root/home/ada/second"
for _ in $(seq 80); do [[ -e "$root/home/ada/second.rc" ]] && break; sleep 0.5; done
[[ "$(cat "$root/home/ada/second.rc" 2>/dev/null)" == 0 ]] || { cat "$root/home/ada/second.log" >&2 || true; fail "a second start did not hand over to the first and exit"; }
apps="$(inroot pgrep -c -u ada -x perch-desktop || true)"
touch "$root/home/ada/stop"
wait "$session_pid" || true
cp "$root/home/ada/app.log" "$art/app.log"
[[ "$apps" == 1 ]] || fail "$apps copies of the app ran after the second start, not 1"
echo "ok  first painted window ($colours colours, $art/window.png); a second start handed over to it"

step "apt-get purge $package, autoremove"
inroot apt-get purge -y -q "$package" > "$art/purge.log" 2>&1 || { tail -20 "$art/purge.log"; fail "apt-get purge"; }
inroot apt-get autoremove --purge -y -q >> "$art/purge.log" 2>&1 || { tail -20 "$art/purge.log"; fail "apt-get autoremove"; }
status="$(inroot dpkg-query -W -f '${db:Status-Status}' "$package" 2>/dev/null || true)"
[[ -z "$status" || "$status" == not-installed ]] || fail "$package is still there after the purge ($status)"
# Nothing the package put there (folders it shares with others excepted).
while read -r path; do
  [[ -d "$root$path" && ! -L "$root$path" ]] && continue
  [[ -e "$root$path" || -L "$root$path" ]] && fail "$path is left after the purge"
done < "$work/files"
# Nothing named after Perch anywhere but the user's home, and no desktop cache naming it.
left="$(cd "$root" && find . -xdev \( -path ./proc -o -path ./sys -o -path ./dev -o -path ./tmp -o -path ./home \) -prune \
  -o -iname '*perch*' -print)"
[[ -z "$left" ]] || fail "left after the purge: $left"
if (cd "$root" && grep -lsi perch usr/share/applications/* usr/share/icons/*/icon-theme.cache); then
  fail "a desktop database still names Perch after the purge"
fi
# The user's data stays, as users expect of an uninstall.
[[ -s "$root/home/ada/.local/share/perch/perch.db" ]] || fail "the user's data folder is gone"
inroot dpkg-query -W -f '${Package}\n' | sort > "$work/packages-after"
echo "ok  nothing of Perch's left outside /home/ada/.local/share/perch, which stays;" \
  "$(comm -13 "$work/packages-before" "$work/packages-after" | wc -l) packages remain of the desktop tools installed after it"
echo
echo "The package installed, worked and left cleanly on Debian $suite."
