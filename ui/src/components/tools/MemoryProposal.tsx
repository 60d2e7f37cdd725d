import { useEffect, useRef, useState } from "react";
import { Trans, useLingui } from "@lingui/react/macro";
import { Link } from "react-router";
import type { ToolCallRecord } from "../../bindings";
import { announce } from "../../lib/announce";
import { useQuestions } from "../../lib/questions";
import { MEMORY_MAX_CHARS } from "../settings/MemoriesCard";

/** The card of a `remember` call: the model's proposal, which the user keeps as written or
 * edited (Ctrl+Enter), or refuses; then what became of it. Nothing is kept without a click or a
 * key here: no rule or grant answers for the user. */
export function MemoryProposal({ call }: { call: ToolCallRecord }) {
  const { t } = useLingui();
  const { open, answer } = useQuestions();
  const ask = open.find((a) => a.question.kind === "memory" && a.question.call_id === call.id);
  const args = call.arguments as { text?: unknown } | null;
  const proposed = ask?.question.kind === "memory" ? ask.question.text : String(args?.text ?? "");
  const [text, setText] = useState<string | null>(null);
  const box = useRef<HTMLTextAreaElement>(null);
  const asking = ask != null;
  useEffect(() => {
    if (!asking) return;
    announce(t`Perch proposes to remember something. Keep it, edit it, or refuse.`);
    // The user may be typing their next question: only an idle page moves the focus here.
    const active = document.activeElement;
    const typing = active instanceof HTMLInputElement || (active instanceof HTMLTextAreaElement && active.value !== "");
    if (!typing) box.current?.focus({ preventScroll: false });
  }, [asking, t]);
  const outcome = call.output?.structured as { kept?: boolean; text?: string } | null | undefined;
  const keptText = outcome?.text ?? proposed;
  const value = text ?? proposed;
  const keep = () => ask && value.trim() && void answer(ask.id, { kind: "memory", keep: value.trim() });
  const refuse = () => ask && void answer(ask.id, { kind: "memory", keep: null });
  return (
    <section className={`tool-card memory-card status-${call.status}`} aria-label={t`Memory proposal`}>
      <header>
        <strong>
          <Trans>Remember</Trans>
        </strong>
      </header>
      {ask ? (
        <div className="approval" role="group" aria-label={t`Keep this memory?`}>
          <label className="field">
            <span>
              <Trans>The model proposes to remember (edit it if you like):</Trans>
            </span>
            <textarea
              ref={box}
              rows={2}
              maxLength={MEMORY_MAX_CHARS}
              value={value}
              onChange={(e) => setText(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
                  e.preventDefault();
                  keep();
                }
              }}
            />
          </label>
          <div className="buttons">
            <button type="button" className="primary" onClick={keep} disabled={!value.trim()}>
              <Trans>Remember</Trans>
            </button>
            <button type="button" className="danger" onClick={refuse}>
              <Trans>Don't remember</Trans>
            </button>
          </div>
        </div>
      ) : outcome?.kept ? (
        <p>
          <Trans>Remembered: “{keptText}”</Trans>{" "}
          <Link to="/settings?section=Memories" className="small">
            <Trans>Manage memories</Trans>
          </Link>
        </p>
      ) : call.output ? (
        <p className="muted">
          {call.output.is_error ? call.output.text : <Trans>Not remembered: “{proposed}”</Trans>}
        </p>
      ) : (
        <p className="muted">“{proposed}”</p>
      )}
    </section>
  );
}
