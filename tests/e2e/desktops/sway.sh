#!/usr/bin/env bash
# Starts a real sway (headless wlroots backend) with its real portal backend
# (xdg-desktop-portal-wlr), PipeWire and a private session bus, then runs the given command
# inside that desktop: WAYLAND_DISPLAY, DISPLAY (its XWayland), DBUS_SESSION_BUS_ADDRESS and
# XDG_RUNTIME_DIR point at it. Everything is torn down when the command ends.
#
# sway refuses to run as root, so for root it runs as `nobody` (root's clients, the tests and the
# app, may use its sockets anyway). xdg-desktop-portal-wlr writes its screenshot to a fixed
# /tmp/out.png, so two sway lanes never run at once (a lock).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
[[ $# -gt 0 ]] || { echo "usage: $0 COMMAND..." >&2; exit 2; }
for p in sway swaymsg wtype grim pipewire /usr/libexec/xdg-desktop-portal /usr/libexec/xdg-desktop-portal-wlr; do
  command -v "$p" >/dev/null || { echo "sway lane: $p is missing; run 'make deps'" >&2; exit 1; }
done

exec 9>/tmp/perch-sway-lane.lock
flock 9

# sway refuses to run as root: then it runs as `nobody`, in a folder under /run, not /tmp (its
# runtime folder is nobody's, and a folder others cannot read left in /tmp, were a lane ever
# killed before cleaning up, would make the sandbox refuse commands working there: its
# repository check fails closed). Anyone else runs it as themselves.
if [[ $(id -u) -eq 0 ]]; then
  lane="$(mktemp -d /run/perch-sway.XXXXXX)"
  as_sway_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
else
  lane="$(mktemp -d "${TMPDIR:-/tmp}/perch-sway.XXXXXX")"
  as_sway_user=()
fi
chmod 755 "$lane"
logs="${SWAY_LANE_LOGS:-$lane/logs}"
mkdir -p "$logs"
export XDG_RUNTIME_DIR="$lane/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
if [[ $(id -u) -eq 0 ]]; then chown nobody:nogroup "$XDG_RUNTIME_DIR"; fi

lane_cleanup() { pkill -f "sway -c $lane/" 2>/dev/null || true; }
lane_name=sway
# shellcheck source=lane.sh
. "$(dirname "$0")/lane.sh"

# The lane's config: one 1280x800 output and XWayland on from the start; the tests add key
# bindings with swaymsg, as Settings tells the user to (SWAY_LANE_BINDINGS adds lines here).
cat >"$lane/config" <<CONF
output HEADLESS-1 resolution 1280x800
xwayland force
focus_follows_mouse no
${SWAY_LANE_BINDINGS:-}
CONF
chmod 644 "$lane/config"

# sway runs what its bindings `exec` as its own user, who cannot reach the app (root's). A
# `perch` first on sway's PATH hands each command line to the tests through a file
# (SWAY_LANE_COMMANDS), and they run the real CLI with it (tests/e2e/desktops/sway.test.js).
export SWAY_LANE_COMMANDS="$lane/commands"
install -m 666 /dev/null "$SWAY_LANE_COMMANDS"
mkdir -p "$lane/bin"
cat >"$lane/bin/perch" <<'SHIM'
#!/bin/sh
printf '%s\n' "$*" >>"$SWAY_LANE_COMMANDS"
SHIM
chmod 755 "$lane/bin" "$lane/bin/perch"

sway_env=(env -i PATH="$lane/bin:$PATH" HOME=/nonexistent XDG_RUNTIME_DIR="$XDG_RUNTIME_DIR" SWAY_LANE_COMMANDS="$SWAY_LANE_COMMANDS"
  WLR_BACKENDS=headless WLR_LIBINPUT_NO_DEVICES=1 WLR_RENDERER=pixman WLR_HEADLESS_OUTPUTS=1)
"${sway_env[@]}" "${as_sway_user[@]}" sway -c "$lane/config" >"$logs/sway.log" 2>&1 9>&- &
pids+=($!)
wait_for 20 "sway" sh -c "ls '$XDG_RUNTIME_DIR'/wayland-* | grep -v lock"
WAYLAND_DISPLAY="$(basename "$(ls "$XDG_RUNTIME_DIR"/wayland-* | grep -v lock | head -1)")"
export WAYLAND_DISPLAY
SWAYSOCK="$(ls "$XDG_RUNTIME_DIR"/sway-ipc.*.sock | head -1)"
export SWAYSOCK
export XDG_CURRENT_DESKTOP=sway XDG_SESSION_TYPE=wayland XDG_SESSION_DESKTOP=sway PERCH_TEST_DESKTOP=sway
echo "sway lane: WAYLAND_DISPLAY=$WAYLAND_DISPLAY in $XDG_RUNTIME_DIR"

# sway's XWayland, for the X clients (xhost lets root's clients in, as root is not sway's user).
swaymsg -q exec 'echo "$DISPLAY" > "$XDG_RUNTIME_DIR/display"'
wait_for 20 "XWayland" test -s "$XDG_RUNTIME_DIR/display"
DISPLAY="$(cat "$XDG_RUNTIME_DIR/display")"
export DISPLAY
swaymsg -q exec 'xhost +si:localuser:root > "$XDG_RUNTIME_DIR/xhost.log" 2>&1'
wait_for 20 "XWayland access for root" xdpyinfo

# A private session bus, where the portal frontend is started on demand and picks the wlr
# backend for XDG_CURRENT_DESKTOP=sway; only this lane's backends are offered (xdg-desktop-portal
# 1.16 falls back to any installed backend otherwise).
mkdir -p "$lane/portals"
# Screenshot needs an Access backend beside wlr's (1.16 exports it only with both): GTK's,
# as Debian's sway users have it.
cp /usr/share/xdg-desktop-portal/portals/{wlr,gtk}.portal "$lane/portals/"
export XDG_DESKTOP_PORTAL_DIR="$lane/portals"
eval "$(dbus-launch --sh-syntax 9>&-)"
pids+=("$DBUS_SESSION_BUS_PID")
pipewire >"$logs/pipewire.log" 2>&1 9>&- &
pids+=($!)
wait_for 20 "PipeWire" test -S "$XDG_RUNTIME_DIR/pipewire-0"
# Started here rather than on demand, so their logs are kept (and a missing one is seen now).
/usr/libexec/xdg-desktop-portal-wlr >"$logs/portal-wlr.log" 2>&1 9>&- &
pids+=($!)
/usr/libexec/xdg-desktop-portal --verbose >"$logs/portal.log" 2>&1 9>&- &
pids+=($!)
wait_for 20 "the desktop portal" gdbus call --session -d org.freedesktop.portal.Desktop \
  -o /org/freedesktop/portal/desktop -m org.freedesktop.DBus.Properties.Get org.freedesktop.portal.Screenshot version

# A headless seat has no keyboard: one kept alive lets GTK own the selection and the clipboard.
wtype -s 86400000 -k Shift_L 9>&- &
pids+=($!)

echo "sway lane: WAYLAND_DISPLAY=$WAYLAND_DISPLAY DISPLAY=$DISPLAY"
"$@"
