#!/usr/bin/env bash
# Starts a real GNOME Shell 43 (headless, one virtual monitor) with its real portal backend
# (xdg-desktop-portal-gnome), the settings daemon's media keys plugin (which runs the custom
# shortcuts), PipeWire, a private session bus and a private system bus (GNOME Shell needs one),
# then runs the given command inside that desktop: WAYLAND_DISPLAY,
# DBUS_SESSION_BUS_ADDRESS and XDG_RUNTIME_DIR point at it. Everything is torn down after.
set -euo pipefail
[[ $# -gt 0 ]] || { echo "usage: $0 COMMAND..." >&2; exit 2; }
for p in gnome-shell gsettings pipewire wireplumber /usr/libexec/gsd-media-keys /usr/libexec/xdg-desktop-portal /usr/libexec/xdg-desktop-portal-gnome; do
  command -v "$p" >/dev/null || { echo "GNOME lane: $p is missing; run 'make deps'" >&2; exit 1; }
done

lane="$(mktemp -d /tmp/perch-gnome.XXXXXX)"
logs="${GNOME_LANE_LOGS:-$lane/logs}"
mkdir -p "$logs"
export XDG_RUNTIME_DIR="$lane/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
# The desktop's settings (dconf) and extensions live in the lane's own home, never the user's.
export HOME="$lane/home" XDG_CONFIG_HOME="$lane/home/.config" XDG_DATA_HOME="$lane/home/.local/share"
mkdir -p "$XDG_CONFIG_HOME" "$XDG_DATA_HOME"

lane_name=GNOME
# shellcheck source=lane.sh
. "$(dirname "$0")/lane.sh"

# GNOME Shell asks logind and accounts on the system bus: a private one, open to all.
cat >"$lane/system.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path=$lane/system_bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/><allow own="*"/>
    <allow send_type="method_call"/><allow send_type="signal"/>
    <allow send_type="method_return"/><allow send_type="error"/>
    <allow receive_type="method_call"/><allow receive_type="signal"/>
    <allow receive_type="method_return"/><allow receive_type="error"/>
  </policy>
</busconfig>
CONF
dbus-daemon --config-file="$lane/system.conf" --nofork >"$logs/system-bus.log" 2>&1 &
pids+=($!)
export DBUS_SYSTEM_BUS_ADDRESS="unix:path=$lane/system_bus"
wait_for 10 "the system bus" test -S "$lane/system_bus"

# Only GNOME's portal backends (and GTK's, which answers Access as on a GNOME install).
mkdir -p "$lane/portals"
cp /usr/share/xdg-desktop-portal/portals/{gnome,gtk}.portal "$lane/portals/"
export XDG_DESKTOP_PORTAL_DIR="$lane/portals"
export XDG_CURRENT_DESKTOP=GNOME XDG_SESSION_TYPE=wayland XDG_SESSION_DESKTOP=gnome PERCH_TEST_DESKTOP=gnome
# Set before the session bus starts: the services it starts (the GNOME portal, a GTK 4 program)
# inherit its environment.
export WAYLAND_DISPLAY=perch-gnome
eval "$(dbus-launch --sh-syntax)"
pids+=("$DBUS_SESSION_BUS_PID")
pipewire >"$logs/pipewire.log" 2>&1 &
pids+=($!)
wireplumber >"$logs/wireplumber.log" 2>&1 &
pids+=($!)

# A test-only extension turns on GNOME Shell's unsafe mode, so the tests can ask it through
# org.gnome.Shell.Eval which window has the focus, and answer its dialogs as a user would.
ext="$HOME/.local/share/gnome-shell/extensions/perch-test@perch.invalid"
mkdir -p "$ext"
cat >"$ext/metadata.json" <<'JSON'
{"uuid": "perch-test@perch.invalid", "name": "Perch tests", "description": "Unsafe mode for Perch's tests", "shell-version": ["43"]}
JSON
cat >"$ext/extension.js" <<'JS'
function init() {}
const Main = imports.ui.main;
// GNOME starts in the Activities overview; the tests work with the windows as a user does after.
function leaveOverview() { Main.overview.hide(); }
function enable() {
  global.context.unsafe_mode = true;
  if (Main.layoutManager._startingUp) Main.layoutManager.connect("startup-complete", leaveOverview);
  else leaveOverview();
}
function disable() { global.context.unsafe_mode = false; }
JS
gsettings set org.gnome.shell enabled-extensions "['perch-test@perch.invalid']"
gsettings set org.gnome.shell disable-user-extensions false
gnome-shell --headless --wayland --virtual-monitor 1280x800 --wayland-display "$WAYLAND_DISPLAY" \
  >"$logs/gnome-shell.log" 2>&1 &
pids+=($!)
wait_for 60 "GNOME Shell" gdbus call --session -d org.gnome.Shell -o /org/gnome/Shell \
  -m org.freedesktop.DBus.Properties.Get org.gnome.Shell ShellVersion
# GNOME's custom shortcuts are run by the settings daemon's media-keys plugin (GNOME Shell grabs
# the keys for it), as in a GNOME session.
/usr/libexec/gsd-media-keys >"$logs/gsd-media-keys.log" 2>&1 &
pids+=($!)
wait_for 30 "GNOME's media keys daemon" gdbus call --session -d org.gnome.SettingsDaemon.MediaKeys \
  -o /org/gnome/SettingsDaemon/MediaKeys -m org.freedesktop.DBus.Peer.Ping
/usr/libexec/xdg-desktop-portal --verbose >"$logs/portal.log" 2>&1 &
pids+=($!)
wait_for 30 "the desktop portal" gdbus call --session -d org.freedesktop.portal.Desktop \
  -o /org/freedesktop/portal/desktop -m org.freedesktop.DBus.Properties.Get org.freedesktop.portal.Screenshot version

echo "GNOME lane: WAYLAND_DISPLAY=$WAYLAND_DISPLAY"
"$@"
