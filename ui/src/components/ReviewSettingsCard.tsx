import { useEffect, useState } from "react";
import type { ReviewSocketStatus } from "../bindings";
import { commands } from "../ipc";
import { useSettings } from "../lib/settings";

/** Settings -> Reviews: the socket, auto-show and the editor command. */
export function ReviewSettingsCard() {
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
  return (
    <fieldset className="card">
      <legend>Reviews</legend>
      <label className="check">
        <input
          type="checkbox"
          checked={review.socket_enabled}
          onChange={(e) => void setReview({ ...review, socket_enabled: e.target.checked })}
        />
        Accept reviews from the editor on a local socket
      </label>
      <label className="check">
        <input
          type="checkbox"
          checked={review.auto_show}
          onChange={(e) => void setReview({ ...review, auto_show: e.target.checked })}
        />
        Show Perch when a review arrives
      </label>
      <label className="field">
        Editor command
        <input
          type="text"
          aria-label="Editor command"
          placeholder="VS Code, Zed or $EDITOR, whichever is installed"
          value={editor ?? review.editor_command}
          onChange={(e) => setEditor(e.target.value)}
          onBlur={saveEditor}
          onKeyDown={(e) => e.key === "Enter" && saveEditor()}
        />
        <small className="muted">
          <code>{"{file}"}</code> and <code>{"{line}"}</code> are replaced, e.g. <code>code -g {"{file}:{line}"}</code>
        </small>
      </label>
      <p className="muted small" role="status">
        {status?.error
          ? `The socket is not running: ${status.error}`
          : status?.path
            ? `Listening at ${status.path}`
            : "The socket is off."}
      </p>
    </fieldset>
  );
}
