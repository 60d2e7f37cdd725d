import { Trans, useLingui } from "@lingui/react/macro";
import { megabytes, useLocalModels } from "../../lib/localModels";

/**
 * First run with nothing to talk to (no Ollama, no key, no local model): offers the smallest
 * good local model, one download and then chat works offline.
 */
export function LocalOffer() {
  const { t } = useLingui();
  const local = useLocalModels();
  const first = local.overview?.catalog[0];
  if (!first) return local.error ? <p className="error small">{local.error}</p> : null;
  const p = local.progress[first.id];
  const percent = p && p.total > 0 ? Math.round((100 * p.done) / p.total) : 0;
  const title = first.title;
  const size = megabytes(first.size);
  const memory = megabytes(first.memory);
  const partial = megabytes(first.partial);
  const received = p ? megabytes(p.done) : "";
  const total = p ? megabytes(p.total) : "";
  return (
    <div className="local-offer" role="region" aria-label={t`Chat on this computer`}>
      <strong>
        <Trans>Chat on this computer</Trans>
      </strong>
      <p>
        <Trans>
          Download {title} ({size}, about {memory} of memory): Perch runs it itself, privately, with no account and no network once it
          is here. More models are in Settings → Models.
        </Trans>
      </p>
      {p ? (
        <div className="tool-progress" role="progressbar" aria-label={t`Downloading ${title}`} aria-valuenow={percent} aria-valuemin={0} aria-valuemax={100}>
          <div className="bar" style={{ width: `${percent}%` }} />
          <span>{p.total > 0 ? t({ message: `${received} of ${total}`, comment: "a download's progress: received of total size" }) : t`Starting…`}</span>
          <button type="button" className="link-button" onClick={() => local.cancel(first.id)}>
            <Trans comment="button: stop the download">Stop</Trans>
          </button>
        </div>
      ) : (
        <button type="button" onClick={() => void local.download(first.id)}>
          {first.partial > 0 ? t`Resume download (${partial} here)` : t`Download ${title}`}
        </button>
      )}
      {local.error && (
        <>
          <p className="error small" role="alert">
            {local.error}
          </p>
          <p className="muted small">
            <Trans>
              No connection? Add a GGUF file you already have (Settings → Models → Add a GGUF file, or <code>perch local add PATH</code>), or
              set a mirror with <code>PERCH_MODEL_MIRROR</code>.
            </Trans>
          </p>
        </>
      )}
    </div>
  );
}
