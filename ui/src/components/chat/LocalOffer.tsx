import { megabytes, useLocalModels } from "../../lib/localModels";

/**
 * First run with nothing to talk to (no Ollama, no key, no local model): offers the smallest
 * good local model, one download and then chat works offline.
 */
export function LocalOffer() {
  const local = useLocalModels();
  const first = local.overview?.catalog[0];
  if (!first) return local.error ? <p className="error small">{local.error}</p> : null;
  const p = local.progress[first.id];
  const percent = p && p.total > 0 ? Math.round((100 * p.done) / p.total) : 0;
  return (
    <div className="local-offer" role="region" aria-label="Chat on this computer">
      <strong>Chat on this computer</strong>
      <p>
        Download {first.title} ({megabytes(first.size)}, about {megabytes(first.memory)} of memory): Perch runs it itself, privately, with no
        account and no network once it is here. More models are in Settings → Models.
      </p>
      {p ? (
        <div className="tool-progress" role="progressbar" aria-label={`Downloading ${first.title}`} aria-valuenow={percent} aria-valuemin={0} aria-valuemax={100}>
          <div className="bar" style={{ width: `${percent}%` }} />
          <span>{p.total > 0 ? `${megabytes(p.done)} of ${megabytes(p.total)}` : "Starting…"}</span>
          <button type="button" className="link-button" onClick={() => local.cancel(first.id)}>
            Stop
          </button>
        </div>
      ) : (
        <button type="button" onClick={() => void local.download(first.id)}>
          {first.partial > 0 ? `Resume download (${megabytes(first.partial)} here)` : `Download ${first.title}`}
        </button>
      )}
      {local.error && (
        <>
          <p className="error small" role="alert">
            {local.error}
          </p>
          <p className="muted small">
            No connection? Add a GGUF file you already have (Settings → Models → Add a GGUF file, or <code>perch local add PATH</code>), or set a
            mirror with <code>PERCH_MODEL_MIRROR</code>.
          </p>
        </>
      )}
    </div>
  );
}
