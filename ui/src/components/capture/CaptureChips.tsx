import { useState } from "react";
import type { Capture } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";
import { useLoad } from "../../lib/useLoad";
import { useEscape } from "../../lib/useEscape";

interface Props {
  captures: Capture[];
  onRemove: (id: string) => void;
}

/** The captures riding on the next question: a thumbnail each, a click to view, × to remove. */
export function CaptureChips({ captures, onRemove }: Props) {
  const [viewing, setViewing] = useState<Capture | null>(null);
  if (captures.length === 0) return null;
  return (
    <>
      {captures.map((c) => (
        <span key={c.id} className="chip capture-chip" data-capture={c.id}>
          <button
            type="button"
            className="capture-thumb"
            title={`${c.source}: ${c.width} x ${c.height} (the model gets ${c.model_width} x ${c.model_height})`}
            aria-label={`View ${c.source}`}
            onClick={() => setViewing(c)}
          >
            <img src={c.thumbnail} alt="" />
          </button>
          <span className="capture-name">{c.source}</span>
          <button type="button" aria-label={`Remove ${c.source}`} onClick={() => onRemove(c.id)}>
            ×
          </button>
        </span>
      ))}
      {viewing && <CaptureViewer capture={viewing} onClose={() => setViewing(null)} onRemove={onRemove} />}
    </>
  );
}

/** A capture at full window size, with Copy and Remove; Esc closes it. */
function CaptureViewer({ capture, onClose, onRemove }: { capture: Capture; onClose: () => void; onRemove: (id: string) => void }) {
  const [copyNote, setNote] = useState<string | null>(null);
  const view = useLoad(() => call(commands.captureView(capture.id)), capture.id);
  const src = view.value ?? null;
  const note = copyNote ?? (view.error ? errorMessage(view.error) : null);
  useEscape(onClose);

  const copy = async () => {
    try {
      await call(commands.captureCopy(capture.id));
      setNote("Copied to the clipboard.");
    } catch (e) {
      setNote(errorMessage(e));
    }
  };
  return (
    <div className="capture-viewer" role="dialog" aria-label={capture.source} onClick={onClose}>
      <figure onClick={(e) => e.stopPropagation()}>
        {src ? <img src={src} alt={capture.source} /> : <div className="muted">Loading…</div>}
        <figcaption>
          <span>
            {capture.source} · {capture.width} x {capture.height}
            {capture.model_width !== capture.width && ` (sent as ${capture.model_width} x ${capture.model_height})`}
          </span>
          <span className="actions">
            <button type="button" onClick={() => void copy()}>
              Copy
            </button>
            <button
              type="button"
              onClick={() => {
                onRemove(capture.id);
                onClose();
              }}
            >
              Remove
            </button>
            <button type="button" onClick={onClose}>
              Close
            </button>
          </span>
          {note && (
            <span className="muted small" role="status">
              {note}
            </span>
          )}
        </figcaption>
      </figure>
    </div>
  );
}
