import { useEffect, useRef } from "react";
import { Trans, useLingui } from "@lingui/react/macro";
import type { StartAtLogin as Entry } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";
import { useSettings } from "../../lib/settings";
import { useAction } from "../../lib/useAction";
import { useLoad } from "../../lib/useLoad";

/** The autostart entry as it is on disk, and a way to write or remove it: after each change
 * the entry is read again, and the settings too (a choice answers the offer). */
function useStartAtLogin() {
  const settings = useSettings();
  const loaded = useLoad<Entry>(() => call(commands.startAtLogin()), "start-at-login");
  const { error, act } = useAction(() => {
    loaded.reload();
    void settings.reload();
  });
  const set = (on: boolean) => act(call(commands.setStartAtLogin(on)));
  const loadError = loaded.error ? errorMessage(loaded.error) : null;
  return { entry: loaded.value ?? null, error: error ?? loadError, set };
}

/** Settings -> General: whether the session starts Perch (as its bubble) at login. */
export function StartAtLoginSwitch() {
  const { entry, error, set } = useStartAtLogin();
  const path = entry?.entry ?? "";
  return (
    <div data-testid="start-at-login">
      <label className="check">
        <input
          type="checkbox"
          checked={entry?.state === "on"}
          disabled={!entry}
          aria-describedby="start-at-login-how"
          onChange={(e) => void set(e.target.checked)}
        />
        <Trans>Start Perch when you log in</Trans>
      </label>
      <p id="start-at-login-how" className="muted small">
        {entry?.state === "turned_off_by_desktop" ? (
          <Trans>
            Turned off in your desktop&apos;s own settings. Turning it on here starts Perch at login again.
          </Trans>
        ) : (
          <Trans>
            As its bubble, without taking the focus. The entry is <span className="path-inline">{path}</span>.
          </Trans>
        )}
      </p>
      {error && (
        <p className="error small" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

/** Once, under the first answer: the same switch as a question. Either answer ends the offer.
 * `onShown` once it is on the page (it waits for the entry's state first). */
export function StartAtLoginOffer({ onShown }: { onShown?: () => void }) {
  const { t } = useLingui();
  const { reload } = useSettings();
  const { entry, error, set } = useStartAtLogin();
  const shown = entry?.state === "off";
  const told = useRef(onShown);
  useEffect(() => {
    if (shown) told.current?.();
  }, [shown]);
  if (!shown) return null;
  const notNow = async () => {
    await call(commands.startAtLoginOffered()).catch(() => {});
    await reload();
  };
  return (
    <div className="info-card start-at-login-offer" role="region" aria-label={t`Start at login`}>
      <p>
        <Trans>Keep Perch at hand: start it as its bubble whenever you log in?</Trans>
      </p>
      <div className="buttons">
        <button type="button" className="primary" onClick={() => void set(true)}>
          <Trans>Start at login</Trans>
        </button>
        <button type="button" onClick={() => void notNow()}>
          <Trans comment="button: decline an offer for now">Not now</Trans>
        </button>
      </div>
      {error && (
        <p className="error small" role="alert">
          {error}
        </p>
      )}
      <p className="muted small">
        <Trans>You can change this in Settings → General.</Trans>
      </p>
    </div>
  );
}
