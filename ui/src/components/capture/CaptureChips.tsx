import { useState } from "react";
import { Trans, useLingui } from "@lingui/react/macro";
import type { Capture } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";
import { formatNumber } from "../../lib/format";
import { useLoad } from "../../lib/useLoad";
import { useEscape } from "../../lib/useEscape";

interface Props {
  captures: Capture[];
  onRemove: (id: string) => void;
}

/** The captures riding on the next question: a thumbnail each, a click to view, × to remove. */
export function CaptureChips({ captures, onRemove }: Props) {
  const { t } = useLingui();
  const [viewing, setViewing] = useState<Capture | null>(null);
  if (captures.length === 0) return null;
  return (
    <>
      {captures.map((c) => {
        const { width, height, modelWidth, modelHeight } = sizes(c);
        const source = c.source;
        return (
          <span key={c.id} className="chip capture-chip" data-capture={c.id}>
            <button
              type="button"
              className="capture-thumb"
              title={t`${source}: ${width} x ${height} (the model gets ${modelWidth} x ${modelHeight})`}
              aria-label={t`View ${source}`}
              onClick={() => setViewing(c)}
            >
              <img src={c.thumbnail} alt="" />
            </button>
            <span className="capture-name">{c.source}</span>
            <button type="button" aria-label={t`Remove ${source}`} onClick={() => onRemove(c.id)}>
              ×
            </button>
          </span>
        );
      })}
      {viewing && <CaptureViewer capture={viewing} onClose={() => setViewing(null)} onRemove={onRemove} />}
    </>
  );
}

/** A capture's pixel sizes, as shown: its own, and the copy the model gets ("2560 x 1440", no
 * grouping, as screen sizes are written). */
function sizes(c: Capture) {
  const pixels = (n: number) => formatNumber(n, { useGrouping: false });
  return {
    width: pixels(c.width),
    height: pixels(c.height),
    modelWidth: pixels(c.model_width),
    modelHeight: pixels(c.model_height),
  };
}

/** A capture at full window size, with Copy and Remove; Esc closes it. */
function CaptureViewer({ capture, onClose, onRemove }: { capture: Capture; onClose: () => void; onRemove: (id: string) => void }) {
  const { t } = useLingui();
  const [copyNote, setNote] = useState<string | null>(null);
  const view = useLoad(() => call(commands.captureView(capture.id)), capture.id);
  const src = view.value ?? null;
  const note = copyNote ?? (view.error ? errorMessage(view.error) : null);
  useEscape(onClose);

  const copy = async () => {
    try {
      await call(commands.captureCopy(capture.id));
      setNote(t`Copied to the clipboard.`);
    } catch (e) {
      setNote(errorMessage(e));
    }
  };
  const { width, height, modelWidth, modelHeight } = sizes(capture);
  const source = capture.source;
  return (
    <div className="capture-viewer" role="dialog" aria-label={capture.source} onClick={onClose}>
      <figure onClick={(e) => e.stopPropagation()}>
        {src ? <img src={src} alt={capture.source} /> : <div className="muted">
            <Trans>Loading…</Trans>
          </div>}
        <figcaption>
          <span>
            {capture.model_width !== capture.width
              ? t`${source} · ${width} x ${height} (sent as ${modelWidth} x ${modelHeight})`
              : t`${source} · ${width} x ${height}`}
          </span>
          <span className="actions">
            <button type="button" onClick={() => void copy()}>
              <Trans comment="button: copy the screenshot to the clipboard">Copy</Trans>
            </button>
            <button
              type="button"
              onClick={() => {
                onRemove(capture.id);
                onClose();
              }}
            >
              <Trans comment="button: remove the screenshot from the next question">Remove</Trans>
            </button>
            <button type="button" onClick={onClose}>
              <Trans>Close</Trans>
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
