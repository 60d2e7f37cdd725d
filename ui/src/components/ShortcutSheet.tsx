import { Fragment, useCallback, useEffect, useState } from "react";
import { SHORTCUTS } from "../lib/shortcuts";
import { useEscape } from "../lib/useEscape";
import { CloseIcon } from "./Icons";
import { ModalDialog } from "./ModalDialog";

/** Every key Perch answers to, in one place. Global shortcuts set in Settings are named there. */
const GROUPS: { title: string; keys: [string, string][] }[] = [
  {
    title: "Anywhere in Perch",
    keys: [
      [SHORTCUTS.newChat, "New chat"],
      [SHORTCUTS.mini, "Mini mode, and back"],
      [SHORTCUTS.quit, "Quit"],
      ["?", "This list"],
      ["Esc", "Close what is on top (this list, a dialog, a large image)"],
    ],
  },
  {
    title: "In the chat",
    keys: [
      ["Enter", "Send"],
      ["Shift+Enter", "New line"],
      ["Esc", "Stop the answer (what arrived is kept)"],
      ["↑", "Edit your last question, in an empty box"],
      ["@", "Attach a file: ↑ ↓ choose, Enter or Tab attach, Esc close"],
      ["Tab", "Reach a tool's approval buttons; Enter answers only the one focused"],
    ],
  },
  {
    title: "Outside Perch (set in Settings)",
    keys: [
      ["Alt+.", "Screenshot into the chat (General -> Screenshots)"],
      ["Ctrl+Alt+Space", "Push to talk (Voice)"],
    ],
  },
];

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
  useEscape(onClose);
  return (
    <ModalDialog labelledBy="shortcut-sheet-title" backdropClassName="shortcut-sheet" onBackdrop={onClose}>
      <div className="sheet-head">
        <h2 id="shortcut-sheet-title">Keyboard shortcuts</h2>
        <button type="button" className="icon-button" aria-label="Close" onClick={onClose}>
          <CloseIcon />
        </button>
      </div>
      <div tabIndex={0} className="sheet-body" aria-label="Shortcuts">
        {GROUPS.map((g) => (
          <section key={g.title} aria-label={g.title}>
            <h3>{g.title}</h3>
            <dl>
              {g.keys.map(([key, what]) => (
                <Fragment key={`${key}-${what}`}>
                  <dt>
                    <kbd>{key}</kbd>
                  </dt>
                  <dd>{what}</dd>
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
