import { useEffect, useState, type ReactNode } from "react";
import { Trans, useLingui } from "@lingui/react/macro";
import type { DesktopShortcut, ShortcutStatus } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";

/**
 * Under a global shortcut the desktop did not bind (GNOME before 48 has no portal for them):
 * the reason and hint (`children`), and Perch's offer to add GNOME's own custom shortcut running
 * the `perch` command that does the same, after a yes that names the keys and the command.
 * Once added, what GNOME now runs replaces the hint, with a way to take it out again.
 */
export function DesktopShortcutOffer({ status, children }: { status: ShortcutStatus | undefined; children: ReactNode }) {
  const { t } = useLingui();
  const [shortcut, setShortcut] = useState<DesktopShortcut | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const name = status?.name;
  const accelerator = status?.accelerator;
  const active = status?.active;

  // Asked again when the keys change or the desktop binds them.
  useEffect(() => {
    if (!name || !accelerator) return;
    let live = true;
    call(commands.desktopShortcut(name)).then(
      (found) => live && setShortcut(found),
      (e: unknown) => live && setError(errorMessage(e)),
    );
    return () => {
      live = false;
    };
  }, [name, accelerator, active]);

  const act = async (change: ReturnType<typeof commands.desktopShortcutAdd>) => {
    setBusy(true);
    setError(null);
    setConfirming(false);
    try {
      setShortcut(await call(change));
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  const added = shortcut?.added ?? null;
  const current = added !== null && added.binding === shortcut?.offer.binding && added.command === shortcut.offer.command;
  const keys = shortcut?.keys;
  const command = shortcut?.offer.command;
  const addedKeys = shortcut?.added_keys;
  const addedCommand = added?.command;
  return (
    <div className="desktop-shortcut" data-shortcut={name}>
      {!current && children}
      {shortcut && added && (
        <small className="muted" role="status">
          {current ? (
            <Trans>
              Added to GNOME&apos;s custom shortcuts: {addedKeys} runs <code>{addedCommand}</code>. Change it in
              GNOME&apos;s Settings → Keyboard → View and Customize Shortcuts → Custom Shortcuts.
            </Trans>
          ) : (
            <Trans>
              GNOME&apos;s custom shortcut from Perch runs <code>{addedCommand}</code> on {addedKeys}, not what this
              shortcut is now.
            </Trans>
          )}
        </small>
      )}
      {shortcut && confirming && (
        <div className="approval" role="dialog" aria-label={t`Add to GNOME's shortcuts`}>
          <p>
            <Trans>
              Add a custom shortcut to GNOME&apos;s keyboard settings: {keys} runs <code>{command}</code>?
            </Trans>
          </p>
          <div className="buttons">
            <button type="button" disabled={busy} onClick={() => void act(commands.desktopShortcutAdd(shortcut.name))}>
              {added ? t`Update` : t`Add`}
            </button>
            <button type="button" onClick={() => setConfirming(false)}>
              <Trans>Cancel</Trans>
            </button>
          </div>
        </div>
      )}
      {shortcut && !confirming && (
        <span className="buttons">
          {!current && (
            <button type="button" className="link-button" disabled={busy} onClick={() => setConfirming(true)}>
              {added ? t`Update GNOME's shortcut` : t`Add to GNOME's shortcuts`}
            </button>
          )}
          {added && (
            <button
              type="button"
              className="link-button"
              disabled={busy}
              onClick={() => void act(commands.desktopShortcutRemove(shortcut.name))}
            >
              <Trans>Remove from GNOME&apos;s shortcuts</Trans>
            </button>
          )}
        </span>
      )}
      {error && (
        <small className="warn" role="alert">
          {error}
        </small>
      )}
    </div>
  );
}
