import { useEffect, useId, useState, type KeyboardEvent } from "react";
import type { MessageDescriptor } from "@lingui/core";
import { msg } from "@lingui/core/macro";
import { Trans, useLingui } from "@lingui/react/macro";
import type { CaptureMode, CaptureSettings, ShortcutStatus } from "../../bindings";
import { commands } from "../../ipc";
import { useSettings } from "../../lib/settings";
import { DesktopShortcutOffer } from "./DesktopShortcutOffer";
import { QuickActions } from "./QuickActions";

const MODES: { value: CaptureMode; label: MessageDescriptor; hint: MessageDescriptor }[] = [
  {
    value: "fullscreen",
    label: msg({ message: "Screen", comment: "screenshot mode: the whole monitor" }),
    hint: msg`the monitor under the pointer`,
  },
  {
    value: "precision",
    label: msg({ message: "Region", comment: "screenshot mode: a rectangle dragged on the screen" }),
    hint: msg`drag a rectangle on the frozen screen`,
  },
  { value: "window", label: msg({ message: "Window", comment: "screenshot mode: one window" }), hint: msg`click a window` },
  {
    value: "none",
    label: msg({ message: "Off", comment: "screenshot mode: the shortcut is off" }),
    hint: msg`the shortcut does nothing`,
  },
];

type Modifier = "ctrlKey" | "altKey" | "shiftKey" | "metaKey";
/* eslint-disable lingui/no-unlocalized-strings -- keys' names, in the accelerators the engine binds */
const MODIFIERS: [Modifier, string][] = [
  ["ctrlKey", "Ctrl"],
  ["altKey", "Alt"],
  ["shiftKey", "Shift"],
  ["metaKey", "Super"],
];
/* eslint-enable lingui/no-unlocalized-strings */

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
  const { t } = useLingui();
  const { settings, setCapture } = useSettings();
  const [statuses, setStatuses] = useState<ShortcutStatus[]>([]);
  const capture = settings?.capture;

  useEffect(() => {
    void commands.shortcutStatuses().then(setStatuses, () => {});
  }, []);

  if (!capture) return null;
  const save = async (change: Partial<CaptureSettings>) => setStatuses(await setCapture({ ...capture, ...change }));
  const status = (name: string) => statuses.find((s) => s.name === name);
  // eslint-disable-next-line lingui/no-unlocalized-strings -- a command
  const screenshotCommand = "perch screenshot";
  // eslint-disable-next-line lingui/no-unlocalized-strings -- a command
  const toggleCommand = "perch toggle";
  return (
    <fieldset className="card">
      <legend>
        <Trans>Screenshots</Trans>
      </legend>
      <div className="segmented" role="radiogroup" aria-label={t`Capture mode`}>
        {MODES.map((m) => (
          <label key={m.value} className={capture.mode === m.value ? "selected" : undefined} title={t(m.hint)}>
            <input
              type="radio"
              name="capture-mode"
              value={m.value}
              checked={capture.mode === m.value}
              onChange={() => void save({ mode: m.value })}
            />
            {t(m.label)}
          </label>
        ))}
      </div>
      <ShortcutField
        label={t`Screenshot shortcut`}
        value={capture.shortcut ?? ""}
        status={status("screenshot")}
        onChange={(shortcut) => void save({ shortcut })}
      />
      <ShortcutField
        label={t`Capture the focused window`}
        value={capture.window_shortcut ?? ""}
        status={status("screenshot_window")}
        onChange={(window_shortcut) => void save({ window_shortcut })}
      />
      <ShortcutField
        label={t`Bring the selected text into Perch`}
        value={capture.selection_shortcut ?? ""}
        status={status("selection")}
        onChange={(selection_shortcut) => void save({ selection_shortcut })}
      />
      <QuickActions actions={capture.quick_actions ?? []} onSave={(quick_actions) => void save({ quick_actions })} />
      <label className="check">
        <input type="checkbox" checked={!!capture.all_monitors} onChange={(e) => void save({ all_monitors: e.target.checked })} />
        <Trans>Screen mode captures every monitor, side by side</Trans>
      </label>
      <label className="check">
        <input
          type="checkbox"
          checked={!!capture.auto_screenshot}
          onChange={(e) => void save({ auto_screenshot: e.target.checked })}
        />
        <Trans>In screen mode, capture the screen with every question sent without one</Trans>
      </label>
      <label className="field">
        <Trans>Longest edge sent to models (pixels)</Trans>
        <input
          type="number"
          aria-label={t`Longest edge`}
          min={256}
          max={8192}
          value={capture.max_edge ?? 1568}
          onChange={(e) => {
            const v = Number(e.target.value);
            if (v >= 256 && v <= 8192) void save({ max_edge: v });
          }}
        />
        <small className="muted">
          <Trans>The original is kept full size; models get a copy no larger than this.</Trans>
        </small>
      </label>
      <p className="muted small">
        <Trans>
          On Wayland the desktop binds the shortcut (it may ask in a dialog and may pick another key); where it
          cannot, bind <code>{screenshotCommand}</code> or <code>{toggleCommand}</code> to a key in your desktop&apos;s
          keyboard settings.
        </Trans>
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
  const { t } = useLingui();
  const assigned = status?.assigned;
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
        {recording
          ? t`Press the keys… (Esc keeps, Backspace clears)`
          : value
            ? readable(value)
            : t({ message: "None", comment: "no shortcut set" })}
      </button>
      {status?.problem ? (
        <DesktopShortcutOffer status={status}>
          <small className="warn" role="alert">
            {status.problem}
          </small>
        </DesktopShortcutOffer>
      ) : (
        status?.active && (
          <small className="muted">
            {assigned ? t`The desktop bound it as ${assigned}.` : t`Works everywhere on this desktop.`}
          </small>
        )
      )}
    </div>
  );
}
