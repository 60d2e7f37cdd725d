// The windows of the real Wayland desktops the lanes start (tests/e2e/desktops/*.sh, which set
// PERCH_TEST_DESKTOP), as their compositors see them: sway through its IPC, GNOME Shell
// through Eval (its unsafe mode is turned on in the lane by a test-only extension).
import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

/** Every window: id, name (title), app id or X class, Wayland or XWayland, focus, visibility,
 * rectangle {x, y, width, height}. */
export function desktopWindows() {
  if (process.env.PERCH_TEST_DESKTOP === "gnome") return gnomeWindows();
  return swayWindows();
}

export async function swayWindows() {
  const tree = JSON.parse((await run("swaymsg", ["-t", "get_tree"])).stdout);
  const out = [];
  const walk = (n) => {
    if (n.pid) {
      const appId = n.app_id ?? n.window_properties?.class;
      out.push({ id: n.id, pid: n.pid, name: n.name, appId, wayland: n.shell === "xdg_shell", focused: n.focused, visible: n.visible, rect: n.rect, floating: n.type === "floating_con", sticky: n.sticky });
    }
    for (const c of [...(n.nodes ?? []), ...(n.floating_nodes ?? [])]) walk(c);
  };
  walk(tree);
  return out;
}

/** Runs JavaScript inside GNOME Shell and returns what it returns (through JSON). */
export async function gnomeShell(code) {
  const { stdout } = await run("gdbus", [
    "call", "--session", "-d", "org.gnome.Shell", "-o", "/org/gnome/Shell", "-m", "org.gnome.Shell.Eval",
    // Eval answers with the value through JSON.stringify.
    `(() => { ${code} })()`,
  ]);
  // gdbus prints (true, 'RESULT') with the result as a GVariant string literal.
  const m = /^\((true|false), (['"])(.*)\2\)$/s.exec(stdout.trim());
  if (!m || m[1] !== "true") throw new Error(`GNOME Shell's Eval failed: ${stdout}`);
  const text = m[3].replace(/\\(.)/g, "$1");
  return text ? JSON.parse(text) : null;
}

export function gnomeWindows() {
  return gnomeShell(`return global.get_window_actors().map((a) => {
    const w = a.meta_window; const r = w.get_frame_rect();
    return { id: w.get_id(), pid: w.get_pid(), name: w.get_title(), appId: w.get_wm_class(), wayland: w.get_client_type() === 0,
      focused: w.has_focus(), visible: a.visible && !w.minimized, above: w.is_above(), rect: { x: r.x, y: r.y, width: r.width, height: r.height } };
  });`);
}

const pause = (ms) => new Promise((r) => setTimeout(r, ms));

/** A click at (x, y) through a virtual pointer in GNOME Shell: move, press and release as three
 * events apart, as GTK 4 needs them to see a click. */
export async function gnomeClick(x, y) {
  const device = `const C = imports.gi.Clutter, now = imports.gi.GLib.get_monotonic_time();
    global.perchPointer ??= C.get_default_backend().get_default_seat().create_virtual_device(C.InputDeviceType.POINTER_DEVICE);`;
  // A new device's first event can come before the seat has it: created, then moved twice.
  await gnomeShell(`${device} return true;`);
  await pause(150);
  for (const d of [1, 0]) {
    await gnomeShell(`${device} global.perchPointer.notify_absolute_motion(now, ${x - d}, ${y}); return true;`);
    await pause(150);
  }
  await gnomeShell(`${device} global.perchPointer.notify_button(now, C.BUTTON_PRIMARY, C.ButtonState.PRESSED); return true;`);
  await pause(100);
  await gnomeShell(`${device} global.perchPointer.notify_button(now, C.BUTTON_PRIMARY, C.ButtonState.RELEASED); return true;`);
}

/** Keys pressed together through a virtual keyboard in GNOME Shell, as a person presses them:
 * each down in order, then up in the reverse order (Clutter's key names: "Alt_L", "period"). */
export async function gnomeKeys(...keys) {
  const device = `const C = imports.gi.Clutter, now = imports.gi.GLib.get_monotonic_time();
    global.perchKeyboard ??= C.get_default_backend().get_default_seat().create_virtual_device(C.InputDeviceType.KEYBOARD_DEVICE);`;
  // As with the pointer, a new device's first event can come before the seat has it.
  await gnomeShell(`${device} return true;`);
  await pause(150);
  const events = [...keys.map((k) => [k, "PRESSED"]), ...keys.toReversed().map((k) => [k, "RELEASED"])];
  for (const [key, state] of events) {
    await gnomeShell(`${device} global.perchKeyboard.notify_keyval(now, C.KEY_${key}, C.KeyState.${state}); return true;`);
    await pause(100);
  }
}
