import { useEffect, useState } from "react";
import type { UpdateStatus } from "../../bindings";
import { call, commands, errorMessage, events } from "../../ipc";
import { formatBytes } from "../../lib/format";
import { useSettings } from "../../lib/settings";
import { useAction } from "../../lib/useAction";
import { useLoad } from "../../lib/useLoad";
import { CloseIcon } from "../Icons";
import { Markdown } from "../LazyMarkdown";

/** The status as the app last sent it: loaded once, then kept current by `UpdateChanged`. */
export function useUpdateStatus() {
  const loaded = useLoad<UpdateStatus>(() => commands.updateStatus(), "update");
  const [live, setLive] = useState<UpdateStatus | null>(null);
  useEffect(() => {
    const unlisten = events.updateChanged.listen((e) => setLive(e.payload.status));
    return () => void unlisten.then((f) => f());
  }, []);
  return { status: live ?? loaded.value, error: loaded.error, reload: loaded.reload };
}

/** Settings -> General -> Updates. Every step waits for a click: checking only asks. */
export function UpdatesCard() {
  const { settings, reload: reloadSettings } = useSettings();
  const { status, error: loadError, reload } = useUpdateStatus();
  const { error, act } = useAction(reload);
  if (!status) return loadError ? <p role="alert">{errorMessage(loadError)}</p> : null;
  const { phase, offer, route } = status;
  // The card's own message for a failed step; `error` repeats it for a click, so one is shown.
  const failed = phase.kind === "failed" ? phase.message : null;
  const busy = phase.kind === "checking" || phase.kind === "downloading" || phase.kind === "installing";
  const checkAtStart = settings?.updates.check_at_start ?? true;

  return (
    <fieldset className="card updates" aria-label="Updates">
      <legend>Updates</legend>
      <p className="small" role="status">
        {phase.kind === "checking" && "Looking for a newer Perch…"}
        {phase.kind === "up_to_date" && `Perch ${status.current_version} is up to date.`}
        {phase.kind === "idle" && `This is Perch ${status.current_version}.`}
        {offer && (phase.kind === "available" || phase.kind === "downloading") && (
          <>
            Perch <strong>{offer.version}</strong> is available (this is {status.current_version}).
          </>
        )}
        {offer && phase.kind === "ready" && (
          <>
            Perch <strong>{offer.version}</strong> is downloaded and its signature verified.
          </>
        )}
        {phase.kind === "installing" && "Installing… your system may ask for your password."}
        {offer && phase.kind === "installed" && `Perch ${offer.version} is installed. Restart Perch to use it.`}
      </p>
      {(failed ?? error) && (
        <p className="error small" role="alert">
          {failed ?? error}
        </p>
      )}
      {offer?.notes && (phase.kind === "available" || phase.kind === "downloading" || phase.kind === "ready") && (
        <details className="release-notes" open={phase.kind === "available"}>
          <summary>What&apos;s new in {offer.version}</summary>
          <Markdown markdown={offer.notes} />
        </details>
      )}
      {phase.kind === "downloading" && (
        <div
          className="tool-progress"
          role="progressbar"
          aria-label={`Downloading Perch ${offer?.version ?? ""}`}
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={phase.total ? Math.round((phase.received / phase.total) * 100) : undefined}
        >
          <div className="bar" style={{ width: phase.total ? `${(phase.received / phase.total) * 100}%` : "0%" }} />
          <span>
            {phase.total ? `${formatBytes(phase.received)} of ${formatBytes(phase.total)}` : formatBytes(phase.received)}
          </span>
        </div>
      )}
      {phase.kind === "ready" && route.kind === "manual" && (
        <p className="warning-note small">
          {route.reason} The package is saved at <span className="path">{phase.saved}</span>.{" "}
          {phase.saved?.endsWith(".deb") && (
            <>
              Install it with <code>sudo apt install {phase.saved}</code>, then restart Perch.
            </>
          )}
        </p>
      )}
      {phase.kind === "ready" && phase.install_on_quit && (
        <p className="small muted">It will be installed when you quit Perch.</p>
      )}
      <div className="buttons">
        {(phase.kind === "idle" ||
          phase.kind === "up_to_date" ||
          phase.kind === "checking" ||
          (phase.kind === "failed" && phase.step === "check")) && (
          <button type="button" disabled={busy} onClick={() => void act(call(commands.updateCheck()))}>
            Check now
          </button>
        )}
        {(phase.kind === "available" || (phase.kind === "failed" && phase.step === "download")) && (
          <button type="button" className="primary" onClick={() => void act(call(commands.updateDownload()))}>
            Download {offer?.version}
          </button>
        )}
        {phase.kind === "ready" && route.kind === "in_place" && (
          <>
            <button type="button" className="primary" onClick={() => void act(call(commands.updateInstall(false)))}>
              Install and restart
            </button>
            {!phase.install_on_quit && (
              <button type="button" onClick={() => void act(call(commands.updateInstall(true)))}>
                Install when I quit
              </button>
            )}
          </>
        )}
        {phase.kind === "ready" && route.kind === "manual" && phase.saved && (
          <button type="button" onClick={() => void act(call(commands.updateShowPackage()))}>
            Show in folder
          </button>
        )}
      </div>
      <label className="check">
        <input
          type="checkbox"
          checked={checkAtStart}
          disabled={!settings}
          onChange={(e) =>
            void act(call(commands.setUpdateSettings(e.target.checked))).then(() => void reloadSettings())
          }
        />
        Check for updates when Perch starts
      </label>
      <p className="small muted">
        Only asks whether there is a newer version, never on a connection your system reports as metered. Nothing is
        downloaded or installed until you choose to.
      </p>
    </fieldset>
  );
}

/** A newer Perch found by the check at start: said once, quietly, with the way to it. */
export function UpdateNotice() {
  const { status } = useUpdateStatus();
  const [dismissed, setDismissed] = useState<string | null>(null);
  const offer = status?.phase.kind === "available" ? status.offer : null;
  if (!offer || dismissed === offer.version) return null;
  return (
    <div className="notices">
      <div className="notice" role="status">
        <div>
          <strong>Perch {offer.version} is available</strong>
          <p>
            <a href="#/settings" onClick={() => setDismissed(offer.version)}>
              See what&apos;s new
            </a>{" "}
            in Settings → General → Updates.
          </p>
        </div>
        <button
          type="button"
          className="icon-button"
          aria-label="Dismiss"
          onClick={() => setDismissed(offer.version)}
        >
          <CloseIcon />
        </button>
      </div>
    </div>
  );
}
