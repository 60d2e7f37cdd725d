import { useState } from "react";
import { Trans, useLingui } from "@lingui/react/macro";
import type { Message, MessageView, TurnError } from "../../bindings";
import { useAnswerReferences } from "../../lib/answerReferences";
import { useSelection } from "../../lib/selection";
import { formatCost, formatNumber, formatTokens } from "../../lib/format";
import { AnswerBody } from "./AnswerBody";
import { ErrorCard } from "./ErrorCard";
import { ReplaceSelection } from "./ReplaceSelection";
import type { Streaming } from "../../lib/chat";
import { Thinking } from "./Thinking";
import { UsedMemories } from "./UsedMemories";
import { SpeakButton } from "./SpeakButton";

interface Props {
  view?: MessageView;
  streaming?: Streaming;
  error?: TurnError | null;
  canRegenerate: boolean;
  onRegenerate?: (message: Message) => void;
}

export function AssistantMessage({ view, streaming, error, canRegenerate, onRegenerate }: Props) {
  const { t } = useLingui();
  const versions = view?.versions ?? [];
  const [shown, setShown] = useState<number | null>(null);
  const message = view ? (shown !== null ? versions[shown] : view.message) : null;
  const index = shown ?? versions.findIndex((v) => v.id === view?.message.id);
  const refs = useAnswerReferences(message && !streaming ? message.id : null, message?.content ?? "");
  const { sent } = useSelection();

  if (streaming) {
    return (
      <article className="message assistant" aria-label={t({ message: "Answer", comment: "the model's answer in the chat" })} aria-busy="true">
        <UsedMemories memories={streaming.memories} />
        <Thinking text={streaming.thinking} live answering={streaming.text.length > 0} />
        <AnswerBody text={streaming.text} toolCalls={streaming.toolCalls} progress={streaming.progress} streaming />
        {!streaming.text && !streaming.thinking && streaming.toolCalls.length === 0 && <p className="muted waiting">…</p>}
        <footer className="message-meta">{streaming.model}</footer>
      </article>
    );
  }
  if (!message) return null;
  const stopped = message.status === "stopped";
  const failed = message.status === "error";
  let tokens: string | null = null;
  if (message.input_tokens !== null && message.output_tokens !== null) {
    const inTokens = formatTokens(message.input_tokens);
    const outTokens = formatTokens(message.output_tokens);
    tokens = t({ message: `${inTokens} in · ${outTokens} out`, comment: "tokens the model read and wrote for this answer" });
  }
  return (
    <article className="message assistant" aria-label={t({ message: "Answer", comment: "the model's answer in the chat" })}>
      {shown === null && <UsedMemories memories={view?.memories ?? []} />}
      <Thinking text={message.thinking ?? ""} live={false} answering />
      <AnswerBody
        text={message.content}
        toolCalls={shown === null ? (view?.tool_calls ?? []) : []}
        references={refs.references}
        onOpenReference={refs.open}
      />
      {refs.problem && (
        <p className="error small" role="alert">
          {refs.problem}
        </p>
      )}
      {stopped && <p className="muted small-note">
          <Trans comment="the answer was stopped before it ended">Stopped.</Trans>
        </p>}
      {failed && <ErrorCard error={shown === null ? (error ?? null) : null} fallback={message.error} />}
      <footer className="message-meta">
        <span>{message.model}</span>
        {tokens && <span>{tokens}</span>}
        {view?.cost != null && shown === null && <span>{formatCost(view.cost)}</span>}
        <span className="actions">
          {versions.length > 1 && (
            <span className="pager" aria-label={t({ message: "Versions", comment: "the answer's regenerated versions" })}>
              <button type="button" aria-label={t`Previous version`} disabled={index <= 0} onClick={() => setShown(index - 1)}>
                ‹
              </button>
              {formatNumber(index + 1)}/{formatNumber(versions.length)}
              <button
                type="button"
                aria-label={t`Next version`}
                disabled={index >= versions.length - 1}
                onClick={() => setShown(index + 1 === versions.length - 1 ? null : index + 1)}
              >
                ›
              </button>
            </span>
          )}
          <button type="button" onClick={() => void navigator.clipboard?.writeText(message.content)}>
            <Trans comment="button: copy the answer's text">Copy</Trans>
          </button>
          <SpeakButton messageId={message.id} />
          {canRegenerate && shown === null && onRegenerate && (
            <button type="button" onClick={() => onRegenerate(message)}>
              <Trans>Regenerate</Trans>
            </button>
          )}
        </span>
      </footer>
      {/* The answer to a question about text selected elsewhere can take that text's place. */}
      {canRegenerate && sent && <ReplaceSelection answer={message.content} app={sent.app} />}
    </article>
  );
}
