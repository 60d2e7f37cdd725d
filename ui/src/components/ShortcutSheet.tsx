import { Fragment, useCallback, useEffect, useState } from "react";
import type { MessageDescriptor } from "@lingui/core";
import { msg } from "@lingui/core/macro";
import { Trans, useLingui } from "@lingui/react/macro";
import { SHORTCUTS } from "../lib/shortcuts";
import { useEscape } from "../lib/useEscape";
import type { ShortcutStatus } from "../bindings";
import { commands } from "../ipc";
import { CloseIcon } from "./Icons";
import { readable } from "./settings/CaptureSettingsCard";
import { ModalDialog } from "./ModalDialog";

/** Every key Perch answers to, in one place. Global shortcuts set in Settings are named there. */
const GROUPS: { title: MessageDescriptor; keys: [string, MessageDescriptor][] }[] = [
  {
    title: msg`Anywhere in Perch`,
    keys: [
      [SHORTCUTS.newChat, msg`New chat`],
      [SHORTCUTS.mini, msg`Mini mode, and back`],
      [SHORTCUTS.quit, msg`Quit`],
      ["Ctrl+= / Ctrl+-", msg`Larger or smaller text (Ctrl+0: back to 100%)`],
      ["?", msg`This list`],
      ["Esc", msg`Close what is on top (this list, a dialog, a large image)`],
    ],
  },
  {
    title: msg`In the chat`,
    keys: [
      ["Enter", msg`Send`],
      ["Shift+Enter", msg`New line`],
      ["Esc", msg`Stop the answer (what arrived is kept)`],
      ["↑", msg`Edit your last question, in an empty box`],
      ["@", msg`Attach a file: ↑ ↓ choose, Enter or Tab attach, Esc close`],
      ["Tab", msg`Reach a tool's approval buttons; Enter answers only the one focused`],
      ["Ctrl+Shift+Space", msg`Talk hands-free, and end it (Esc ends it too)`],
      ["Esc", msg`Stop reading an answer aloud (before anything else)`],
    ],
  },
];

/** The global shortcuts (their names in `shortcut_statuses`), what each does and where it is
 * set, with the keys they have until Perch says which are bound. */
const GLOBAL: [name: string, key: string, what: MessageDescriptor][] = [
  ["screenshot", "Alt+Period", msg`Screenshot into the chat (General -> Screenshots)`],
  ["screenshot_window", "Alt+Shift+Period", msg`Screenshot of the focused window (General -> Screenshots)`],
  ["selection", "Ctrl+Alt+E", msg`Selected text into the chat (General -> Screenshots)`],
  ["push_to_talk", "Ctrl+Alt+Space", msg`Push to talk (Voice)`],
  ["dictate_anywhere", "Ctrl+Alt+D", msg`Dictate into the focused app (Voice)`],
];
const OUTSIDE = msg`Outside Perch (set in Settings)`;

/** Each global shortcut's keys as bound now: the one the desktop assigned (Wayland's portal
 * lets the user pick another), else the configured one, or "Off". */
function useGlobalKeys(): Map<string, string> {
  const { t } = useLingui();
  const [statuses, setStatuses] = useState<ShortcutStatus[] | null>(null);
  useEffect(() => {
    let live = true;
    const asked = [commands.shortcutStatuses(), commands.voiceShortcutStatuses()];
    void Promise.all(asked).then(
      (lists) => live && setStatuses(lists.flat()),
      () => {},
    );
    return () => {
      live = false;
    };
  }, []);
  const keys = new Map<string, string>();
  for (const [name, key] of GLOBAL) {
    const status = statuses?.find((s) => s.name === name);
    const accelerator = status ? status.accelerator : key;
    keys.set(name, status?.assigned ?? (accelerator ? readable(accelerator).replaceAll(" + ", "+") : t`Off`));
  }
  return keys;
}

/** Opens with `?` (outside a text field), or from `openShortcutSheet`. */
export function ShortcutSheet() {
  const [open, setOpen] = useState(false);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== "?" || e.ctrlKey || e.altKey || e.metaKey || typing(e.target)) return;
      e.preventDefault();
      setOpen(true);
    };
    const onAsk = () => setOpen(true);
    window.addEventListener("keydown", onKey);
    window.addEventListener(OPEN_EVENT, onAsk);
    return () => {
      window.removeEventListener("keydown", onKey);
      window.removeEventListener(OPEN_EVENT, onAsk);
    };
  }, []);
  const close = useCallback(() => setOpen(false), []);
  if (!open) return null;
  return <Sheet onClose={close} />;
}

/** The event `openShortcutSheet` sends (a button elsewhere, such as Settings -> Keyboard). */
const OPEN_EVENT = "perch:shortcut-sheet";

export function openShortcutSheet() {
  window.dispatchEvent(new Event(OPEN_EVENT));
}

function Sheet({ onClose }: { onClose: () => void }) {
  const { t } = useLingui();
  useEscape(onClose);
  const globalKeys = useGlobalKeys();
  const groups = [...GROUPS, { title: OUTSIDE, keys: GLOBAL.map(([name, , what]): [string, MessageDescriptor] => [globalKeys.get(name) ?? "", what]) }];
  return (
    <ModalDialog labelledBy="shortcut-sheet-title" backdropClassName="shortcut-sheet" onBackdrop={onClose}>
      <div className="sheet-head">
        <h2 id="shortcut-sheet-title">
          <Trans>Keyboard shortcuts</Trans>
        </h2>
        <button type="button" className="icon-button" aria-label={t`Close`} onClick={onClose}>
          <CloseIcon />
        </button>
      </div>
      <div tabIndex={0} className="sheet-body" aria-label={t`Shortcuts`}>
        {groups.map((g) => (
          <section key={g.title.id} aria-label={t(g.title)}>
            <h3>{t(g.title)}</h3>
            <dl>
              {g.keys.map(([key, what]) => (
                <Fragment key={`${key}-${what.id}`}>
                  <dt>
                    <kbd>{key}</kbd>
                  </dt>
                  <dd>{t(what)}</dd>
                </Fragment>
              ))}
            </dl>
          </section>
        ))}
      </div>
    </ModalDialog>
  );
}

/** Whether a key press is text for a field (where `?` is a question mark, not a command). */
function typing(target: EventTarget | null): boolean {
  if (!(target instanceof HTMLElement)) return false;
  return target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName);
}
