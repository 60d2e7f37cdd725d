import { useEffect, useState } from "react";
import { Trans, useLingui } from "@lingui/react/macro";
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
  const { t } = useLingui();
  const { settings, reload: reloadSettings } = useSettings();
  const { status, error: loadError, reload } = useUpdateStatus();
  const { error, act } = useAction(reload);
  if (!status) return loadError ? <p role="alert">{errorMessage(loadError)}</p> : null;
  const { phase, offer, route } = status;
  // The card's own message for a failed step; `error` repeats it for a click, so one is shown.
  const failed = phase.kind === "failed" ? phase.message : null;
  const busy = phase.kind === "checking" || phase.kind === "downloading" || phase.kind === "installing";
  const checkAtStart = settings?.updates.check_at_start ?? true;
  const current = status.current_version;
  const version = offer?.version ?? "";
  const received = phase.kind === "downloading" ? formatBytes(phase.received) : "";
  const total = phase.kind === "downloading" && phase.total ? formatBytes(phase.total) : null;
  const saved = phase.kind === "ready" ? phase.saved : null;
  // eslint-disable-next-line lingui/no-unlocalized-strings -- a shell command
  const aptInstall = `sudo apt install ${saved}`;

  return (
    <fieldset className="card updates" aria-label={t`Updates`}>
      <legend>
        <Trans>Updates</Trans>
      </legend>
      <p className="small" role="status">
        {phase.kind === "checking" && t`Looking for a newer Perch…`}
        {phase.kind === "up_to_date" && t`Perch ${current} is up to date.`}
        {phase.kind === "idle" && t`This is Perch ${current}.`}
        {offer && (phase.kind === "available" || phase.kind === "downloading") && (
          <Trans>
            Perch <strong>{version}</strong> is available (this is {current}).
          </Trans>
        )}
        {offer && phase.kind === "ready" && (
          <Trans>
            Perch <strong>{version}</strong> is downloaded and its signature verified.
          </Trans>
        )}
        {phase.kind === "installing" && t`Installing… your system may ask for your password.`}
        {offer && phase.kind === "installed" && t`Perch ${version} is installed. Restart Perch to use it.`}
      </p>
      {(failed ?? error) && (
        <p className="error small" role="alert">
          {failed ?? error}
        </p>
      )}
      {offer?.notes && (phase.kind === "available" || phase.kind === "downloading" || phase.kind === "ready") && (
        <details className="release-notes" open={phase.kind === "available"}>
          <summary>
            <Trans>What&apos;s new in {version}</Trans>
          </summary>
          <Markdown markdown={offer.notes} />
        </details>
      )}
      {phase.kind === "downloading" && (
        <div
          className="tool-progress"
          role="progressbar"
          aria-label={t`Downloading Perch ${version}`}
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={phase.total ? Math.round((phase.received / phase.total) * 100) : undefined}
        >
          <div className="bar" style={{ width: phase.total ? `${(phase.received / phase.total) * 100}%` : "0%" }} />
          <span>
            {total ? t({ message: `${received} of ${total}`, comment: "download progress: 5.0 MB of 20.0 MB" }) : received}
          </span>
        </div>
      )}
      {phase.kind === "ready" && route.kind === "manual" && (
        <p className="warning-note small">
          {route.reason}{" "}
          <Trans>
            The package is saved at <span className="path">{saved}</span>.
          </Trans>{" "}
          {saved?.endsWith(".deb") && (
            <Trans>
              Install it with <code>{aptInstall}</code>, then restart Perch.
            </Trans>
          )}
        </p>
      )}
      {phase.kind === "ready" && phase.install_on_quit && (
        <p className="small muted">
          <Trans>It will be installed when you quit Perch.</Trans>
        </p>
      )}
      <div className="buttons">
        {(phase.kind === "idle" ||
          phase.kind === "up_to_date" ||
          phase.kind === "checking" ||
          (phase.kind === "failed" && phase.step === "check")) && (
          <button type="button" disabled={busy} onClick={() => void act(call(commands.updateCheck()))}>
            <Trans>Check now</Trans>
          </button>
        )}
        {(phase.kind === "available" || (phase.kind === "failed" && phase.step === "download")) && (
          <button type="button" className="primary" onClick={() => void act(call(commands.updateDownload()))}>
            <Trans>Download {version}</Trans>
          </button>
        )}
        {phase.kind === "ready" && route.kind === "in_place" && (
          <>
            <button type="button" className="primary" onClick={() => void act(call(commands.updateInstall(false)))}>
              <Trans>Install and restart</Trans>
            </button>
            {!phase.install_on_quit && (
              <button type="button" onClick={() => void act(call(commands.updateInstall(true)))}>
                <Trans>Install when I quit</Trans>
              </button>
            )}
          </>
        )}
        {phase.kind === "ready" && route.kind === "manual" && phase.saved && (
          <button type="button" onClick={() => void act(call(commands.updateShowPackage()))}>
            <Trans>Show in folder</Trans>
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
        <Trans>Check for updates when Perch starts</Trans>
      </label>
      <p className="small muted">
        <Trans>
          Only asks whether there is a newer version, never on a connection your system reports as metered. Nothing is
          downloaded or installed until you choose to.
        </Trans>
      </p>
    </fieldset>
  );
}

/** A newer Perch found by the check at start: said once, quietly, with the way to it. */
export function UpdateNotice() {
  const { t } = useLingui();
  const { status } = useUpdateStatus();
  const [dismissed, setDismissed] = useState<string | null>(null);
  const offer = status?.phase.kind === "available" ? status.offer : null;
  if (!offer || dismissed === offer.version) return null;
  const version = offer.version;
  return (
    <div className="notices">
      <div className="notice" role="status">
        <div>
          <strong>
            <Trans>Perch {version} is available</Trans>
          </strong>
          <p>
            <Trans>
              <a href="#/settings" onClick={() => setDismissed(version)}>
                See what&apos;s new
              </a>{" "}
              in Settings → General → Updates.
            </Trans>
          </p>
        </div>
        <button
          type="button"
          className="icon-button"
          aria-label={t`Dismiss`}
          onClick={() => setDismissed(offer.version)}
        >
          <CloseIcon />
        </button>
      </div>
    </div>
  );
}
