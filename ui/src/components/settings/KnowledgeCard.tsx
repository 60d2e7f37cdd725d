import { useEffect, useState } from "react";
import { Channel } from "@tauri-apps/api/core";
import { Trans, useLingui } from "@lingui/react/macro";
import type { KnowledgeStatus } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";
import { ConfirmInPlace } from "../ConfirmInPlace";

/** Settings -> Tools -> Knowledge folders: the folders the model may search (indexed on this
 * computer), the first index's progress, pausing it, removing a folder. */
export function KnowledgeCard() {
  const { t } = useLingui();
  const [status, setStatus] = useState<KnowledgeStatus | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [adding, setAdding] = useState("");
  const [removing, setRemoving] = useState<string | null>(null);
  useEffect(() => {
    const channel = new Channel<KnowledgeStatus>();
    channel.onmessage = setStatus;
    void call(commands.knowledgeStatus()).then(setStatus, (e) => setError(errorMessage(e)));
    void call(commands.knowledgeWatch(channel)).catch((e) => setError(errorMessage(e)));
    // The command stops sending once the channel is gone with the card.
    return () => {
      channel.onmessage = () => {};
    };
  }, []);
  // What an action changes arrives on the channel, in order; a status asked for here could
  // come back after a newer one and hide it.
  const run = async (action: () => Promise<unknown>) => {
    setError(null);
    try {
      await action();
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  const add = () => {
    const path = adding.trim();
    if (!path) return;
    void run(async () => {
      await call(commands.knowledgeAddFolder(path));
      setAdding("");
    });
  };
  if (!status) return error ? <p className="error small">{error}</p> : null;
  const indexing = status.indexing;
  const { folder, done, total } = indexing ?? { folder: "", done: 0, total: 0, passages: false };
  const percent = total ? Math.round((100 * done) / total) : 0;
  return (
    <fieldset className="card" aria-label={t`Knowledge folders`}>
      <legend>
        <Trans>Knowledge folders</Trans>
      </legend>
      <small className="muted">
        <Trans>
          Perch indexes these folders on this computer, and models search them and cite the file and line. Hidden and
          ignored files, and files that hold keys or passwords, are left out.
        </Trans>
      </small>
      {status.folders.length > 0 && (
        <ul className="knowledge-folders">
          {status.folders.map(({ path, files, passages }) => (
            <li key={path}>
              <span className="path" title={path}>
                {path}
              </span>
              <small className="muted">
                {t({ message: `files: ${files} · passages: ${passages}`, comment: "a knowledge folder's size" })}
              </small>
              <ConfirmInPlace
                asking={removing === path}
                onAsk={() => setRemoving(path)}
                onKeep={() => setRemoving(null)}
                onConfirm={() => {
                  setRemoving(null);
                  void run(() => call(commands.knowledgeRemoveFolder(path)));
                }}
                action={<Trans>Remove</Trans>}
                actionLabel={t`Remove ${path}`}
                confirm={<Trans>Remove and forget its index</Trans>}
                buttonClass="link-button"
                grouped
              />
            </li>
          ))}
        </ul>
      )}
      <div className="buttons">
        <input
          aria-label={t`Folder to add`}
          placeholder={t`~/notes or /path/to/project`}
          value={adding}
          onChange={(e) => setAdding(e.target.value)}
          onKeyDown={(e) => e.key === "Enter" && add()}
        />
        <button type="button" onClick={add} disabled={!adding.trim()}>
          <Trans>Add folder</Trans>
        </button>
      </div>
      {indexing && (
        <div
          className="tool-progress"
          role="progressbar"
          aria-label={indexing.passages ? t`Learning what the passages mean` : t`Indexing ${folder}`}
          aria-valuenow={percent}
          aria-valuemin={0}
          aria-valuemax={100}
        >
          <div className="bar" style={{ width: `${percent}%` }} />
          <span>
            {indexing.passages
              ? t({ message: `Meaning: ${done} of ${total} passages`, comment: "embedding progress: 120 of 800 passages" })
              : t({ message: `${done} of ${total} files`, comment: "indexing progress: 120 of 800 files" })}
          </span>
        </div>
      )}
      {status.folders.length > 0 && (
        <div className="buttons">
          <button type="button" onClick={() => void run(() => call(commands.knowledgeSetPaused(!status.paused)))}>
            {status.paused ? <Trans>Resume indexing</Trans> : <Trans>Pause indexing</Trans>}
          </button>
          <button type="button" onClick={() => void run(() => call(commands.knowledgeReindex()))} disabled={status.paused}>
            <Trans>Index again</Trans>
          </button>
        </div>
      )}
      {status.words_only && (
        <small className="muted">
          <Trans>Searches match words only until the built-in model is downloaded (above).</Trans>
        </small>
      )}
      {error && (
        <p className="error small" role="alert">
          {error}
        </p>
      )}
    </fieldset>
  );
}
