import { useEffect, useId, useState, type KeyboardEvent } from "react";
import type { CaptureMode, CaptureSettings, ShortcutStatus } from "../../bindings";
import { commands } from "../../ipc";
import { useSettings } from "../../lib/settings";

const MODES: { value: CaptureMode; label: string; hint: string }[] = [
  { value: "fullscreen", label: "Screen", hint: "the monitor under the pointer" },
  { value: "precision", label: "Region", hint: "drag a rectangle on the frozen screen" },
  { value: "window", label: "Window", hint: "click a window" },
  { value: "none", label: "Off", hint: "the shortcut does nothing" },
];

type Modifier = "ctrlKey" | "altKey" | "shiftKey" | "metaKey";
const MODIFIERS: [Modifier, string][] = [
  ["ctrlKey", "Ctrl"],
  ["altKey", "Alt"],
  ["shiftKey", "Shift"],
  ["metaKey", "Super"],
];

/** The accelerator for a key press ("Alt+Period"), or null while only modifiers are down. */
export function accelerator(e: Pick<KeyboardEvent, "code" | Modifier>): string | null {
  if (/^(Control|Alt|Shift|Meta|OS)(Left|Right)?$/.test(e.code)) return null;
  const mods = MODIFIERS.filter(([k]) => e[k]).map(([, name]) => name);
  const key = e.code.replace(/^Key/, "").replace(/^Digit/, "");
  return [...mods, key].join("+");
}

/** What `Alt+Period` looks like to a person. */
export function readable(accel: string): string {
  return accel.replace("Period", ".").replace("Comma", ",").replace("Slash", "/").replaceAll("+", " + ");
}

/** Settings -> General -> Screenshots: the mode, the shortcuts (recorded by pressing them), the
 * size sent to models, and whether each shortcut works on this desktop. */
export function CaptureSettingsCard() {
  const { settings, setCapture } = useSettings();
  const [statuses, setStatuses] = useState<ShortcutStatus[]>([]);
  const capture = settings?.capture;

  useEffect(() => {
    void commands.shortcutStatuses().then(setStatuses, () => {});
  }, []);

  if (!capture) return null;
  const save = async (change: Partial<CaptureSettings>) => setStatuses(await setCapture({ ...capture, ...change }));
  const status = (name: string) => statuses.find((s) => s.name === name);
  return (
    <fieldset className="card">
      <legend>Screenshots</legend>
      <div className="segmented" role="radiogroup" aria-label="Capture mode">
        {MODES.map((m) => (
          <label key={m.value} className={capture.mode === m.value ? "selected" : undefined} title={m.hint}>
            <input
              type="radio"
              name="capture-mode"
              value={m.value}
              checked={capture.mode === m.value}
              onChange={() => void save({ mode: m.value })}
            />
            {m.label}
          </label>
        ))}
      </div>
      <ShortcutField
        label="Screenshot shortcut"
        value={capture.shortcut ?? ""}
        status={status("screenshot")}
        onChange={(shortcut) => void save({ shortcut })}
      />
      <ShortcutField
        label="Capture the focused window"
        value={capture.window_shortcut ?? ""}
        status={status("screenshot_window")}
        onChange={(window_shortcut) => void save({ window_shortcut })}
      />
      <label className="check">
        <input type="checkbox" checked={!!capture.all_monitors} onChange={(e) => void save({ all_monitors: e.target.checked })} />
        Screen mode captures every monitor, side by side
      </label>
      <label className="check">
        <input
          type="checkbox"
          checked={!!capture.auto_screenshot}
          onChange={(e) => void save({ auto_screenshot: e.target.checked })}
        />
        In screen mode, capture the screen with every question sent without one
      </label>
      <label className="field">
        Longest edge sent to models (pixels)
        <input
          type="number"
          aria-label="Longest edge"
          min={256}
          max={8192}
          value={capture.max_edge ?? 1568}
          onChange={(e) => {
            const v = Number(e.target.value);
            if (v >= 256 && v <= 8192) void save({ max_edge: v });
          }}
        />
        <small className="muted">The original is kept full size; models get a copy no larger than this.</small>
      </label>
      <p className="muted small">
        On Wayland the desktop binds the shortcut (it may ask in a dialog and may pick another key); where it
        cannot, bind <code>perch screenshot</code> or <code>perch toggle</code> to a key in your desktop&apos;s
        keyboard settings.
      </p>
    </fieldset>
  );
}

function ShortcutField(props: {
  label: string;
  value: string;
  status: ShortcutStatus | undefined;
  onChange: (accel: string) => void;
}) {
  const { label, value, status, onChange } = props;
  const [recording, setRecording] = useState(false);
  const onKeyDown = (e: KeyboardEvent<HTMLButtonElement>) => {
    if (!recording) return;
    e.preventDefault();
    if (e.key === "Escape") return setRecording(false);
    if ((e.key === "Backspace" || e.key === "Delete") && !e.altKey && !e.ctrlKey) {
      setRecording(false);
      return onChange("");
    }
    const accel = accelerator(e);
    if (accel) {
      setRecording(false);
      onChange(accel);
    }
  };
  // Named by its label and what it shows ("Screenshot shortcut Alt+."), so the name a voice
  // command or a screen reader uses contains the visible text (WCAG 2.5.3).
  const id = useId();
  return (
    <div className="field">
      <span id={`${id}-label`}>{label}</span>
      <button
        type="button"
        id={`${id}-value`}
        className="button shortcut-input"
        aria-labelledby={`${id}-label ${id}-value`}
        onClick={() => setRecording(true)}
        onBlur={() => setRecording(false)}
        onKeyDown={onKeyDown}
      >
        {recording ? "Press the keys… (Esc keeps, Backspace clears)" : value ? readable(value) : "None"}
      </button>
      {status?.problem ? (
        <small className="warn" role="alert">
          {status.problem}
        </small>
      ) : (
        status?.active && (
          <small className="muted">
            {status.assigned
              ? `The desktop bound it as ${status.assigned}.`
              : "Works everywhere on this desktop."}
          </small>
        )
      )}
    </div>
  );
}
