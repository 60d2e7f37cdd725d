import { Trans, useLingui } from "@lingui/react/macro";
import { commands } from "../ipc";
import { reportFailure } from "../lib/failures";
import { FailureNotices } from "./Notices";

/** Shown instead of the app when the engine could not start: what happened, and what to do. */
export function FatalScreen({ message }: { message: string }) {
  const { t } = useLingui();
  return (
    <div className="fatal" role="alert" data-tauri-drag-region>
      <img src="/perch.png" alt="" width={40} height={40} />
      <h1>
        <Trans>Perch could not start</Trans>
      </h1>
      <p className="fatal-message">{message}</p>
      <p className="muted">
        <Trans>Fix the problem above, then start Perch again. Nothing has been deleted.</Trans>
      </p>
      <FailureNotices />
      <button type="button" className="button" onClick={() => commands.quitApp().catch((e) => reportFailure(t`Could not quit Perch`, e))}>
        <Trans>Quit Perch</Trans>
      </button>
    </div>
  );
}
