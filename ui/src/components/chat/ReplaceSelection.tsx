// "Replace in <app>": the answer to a question about text selected in another application can
// take that text's place. Nothing is typed on the first press: the engine says exactly what it
// would type (the answer as plain text) and how, or why it will only put it on the clipboard
// (a terminal, where typed lines run; an application on the never-type list), and the user
// confirms what they see.
import { useEffect, useRef, useState } from "react";
import { Trans, useLingui } from "@lingui/react/macro";
import type { Replacement } from "../../bindings";
import { errorMessage } from "../../ipc";
import { previewReplacement, replaceSentSelection } from "../../lib/selection";

/** The engine's reason, as a sentence. */
const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

export function ReplaceSelection({ answer, app }: { answer: string; app: string }) {
  const { t } = useLingui();
  const sentApp = app; // the name the catalogues know the placeholder by
  const [preview, setPreview] = useState<Replacement | null>(null);
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const shown = useRef<HTMLElement>(null);
  // The preview opens below the answer's last line: bring all of it, buttons too, into view.
  useEffect(() => {
    shown.current?.scrollIntoView?.({ block: "nearest" });
  }, [preview]);

  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setProblem(null);
    setNote(null);
    try {
      await work();
    } catch (e) {
      setProblem(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  const show = () => run(async () => setPreview(await previewReplacement(answer)));
  const confirm = () =>
    run(async () => {
      const done = await replaceSentSelection(answer);
      setPreview(null);
      if (done?.kind === "on_clipboard") setNote(done.message);
    });

  return (
    <div className="replace-selection">
      {!preview && (
        <button type="button" className="button small" disabled={busy} onClick={() => void show()}>
          {sentApp ? <Trans>Replace in {sentApp}</Trans> : <Trans>Replace the selection</Trans>}
        </button>
      )}
      {preview && (
        <section ref={shown} className="replace-preview" aria-label={t({ message: "What replaces the selection", comment: "the preview of the text typed over the selection in another application" })}>
          {preview.refused ? (
            <p className="warning-note" role="note">
              {capitalised(preview.refused)}.{" "}
              <Trans>Perch will put this text on the clipboard instead, for you to paste:</Trans>
            </p>
          ) : (
            <p className="small">
              {preview.delivery === "paste" ? (
                <Trans comment="the text has several lines, so it is pasted rather than typed key by key">
                  Perch will paste exactly this over the selection, without pressing Enter:
                </Trans>
              ) : (
                <Trans>Perch will type exactly this over the selection:</Trans>
              )}
            </p>
          )}
          <pre className="tool-args" aria-label={t({ message: "Text to type", comment: "the exact text Perch will type or paste" })}>
            {preview.text}
          </pre>
          <div className="buttons">
            <button type="button" className="primary" disabled={busy} onClick={() => void confirm()}>
              {preview.refused ? (
                <Trans comment="button: put the text on the clipboard">Copy to the clipboard</Trans>
              ) : (
                <Trans comment="button: type the previewed text over the selection">Replace</Trans>
              )}
            </button>
            <button type="button" disabled={busy} onClick={() => setPreview(null)}>
              <Trans>Cancel</Trans>
            </button>
          </div>
        </section>
      )}
      {note && (
        <p className="small" role="status">
          {note}
        </p>
      )}
      {problem && (
        <p className="error small" role="alert">
          {problem}
        </p>
      )}
    </div>
  );
}
