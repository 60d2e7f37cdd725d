import { useEffect, useState } from "react";
import { Trans, useLingui } from "@lingui/react/macro";
import type { ReviewSocketStatus } from "../bindings";
import { commands } from "../ipc";
import { useSettings } from "../lib/settings";

/** Settings -> Reviews: the socket, auto-show and the editor command. */
export function ReviewSettingsCard() {
  const { t } = useLingui();
  const { settings, setReview } = useSettings();
  const [status, setStatus] = useState<ReviewSocketStatus | null>(null);
  const [editor, setEditor] = useState<string | null>(null);
  const review = settings?.review;

  useEffect(() => {
    void commands.reviewSocketStatus().then(setStatus, () => {});
  }, [review?.socket_enabled]);

  if (!review) return null;
  const saveEditor = () => {
    if (editor !== null && editor !== review.editor_command) void setReview({ ...review, editor_command: editor.trim() });
  };
  // What the editor command's placeholders look like, and one in use.
  const fileToken = "{file}";
  const lineToken = "{line}";
  // eslint-disable-next-line lingui/no-unlocalized-strings -- a command
  const example = "code -g {file}:{line}";
  const socketError = status?.error;
  const socketPath = status?.path;
  return (
    <fieldset className="card">
      <legend>
        <Trans>Reviews</Trans>
      </legend>
      <label className="check">
        <input
          type="checkbox"
          checked={review.socket_enabled}
          onChange={(e) => void setReview({ ...review, socket_enabled: e.target.checked })}
        />
        <Trans>Accept reviews from the editor on a local socket</Trans>
      </label>
      <label className="check">
        <input
          type="checkbox"
          checked={review.auto_show}
          onChange={(e) => void setReview({ ...review, auto_show: e.target.checked })}
        />
        <Trans>Show Perch when a review arrives</Trans>
      </label>
      <label className="field">
        <Trans>Editor command</Trans>
        <input
          type="text"
          aria-label={t`Editor command`}
          placeholder={t`VS Code, Zed or $EDITOR, whichever is installed`}
          value={editor ?? review.editor_command}
          onChange={(e) => setEditor(e.target.value)}
          onBlur={saveEditor}
          onKeyDown={(e) => e.key === "Enter" && saveEditor()}
        />
        <small className="muted">
          <Trans>
            <code>{fileToken}</code> and <code>{lineToken}</code> are replaced, e.g. <code>{example}</code>
          </Trans>
        </small>
      </label>
      <p className="muted small" role="status">
        {socketError
          ? t`The socket is not running: ${socketError}`
          : socketPath
            ? t`Listening at ${socketPath}`
            : t`The socket is off.`}
      </p>
    </fieldset>
  );
}
