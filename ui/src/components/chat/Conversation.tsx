import { useEffect } from "react";
import { Trans, useLingui } from "@lingui/react/macro";
import {
  endConversation,
  keepListening,
  setAnswering,
  setQuestionOpen,
  toggleConversation,
  useConversation,
} from "../../lib/conversation";
import { formatNumber } from "../../lib/format";
import { useQuestions } from "../../lib/questions";
import { TalkIcon } from "../Icons";

/** The keys that start and end a hands-free conversation in the window. */
export const TALK_SHORTCUT = "Ctrl+Shift+Space";

/** The composer's button for a hands-free conversation (Ctrl+Shift+Space). */
export function TalkButton() {
  const { t } = useLingui();
  const { phase } = useConversation();
  const on = phase !== "off";
  const shortcut = TALK_SHORTCUT;
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey && e.shiftKey && !e.altKey && e.code === "Space") {
        e.preventDefault();
        void toggleConversation();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
  return (
    <button
      type="button"
      className={`icon-button talk${on ? " on" : ""}`}
      aria-label={on ? t`End the conversation` : t`Talk hands-free`}
      aria-pressed={on}
      aria-keyshortcuts="Control+Shift+Space"
      title={on ? t`End the conversation (Esc)` : t`Talk hands-free (${shortcut})`}
      onClick={() => void toggleConversation()}
    >
      <TalkIcon />
    </button>
  );
}

/** What a hands-free conversation is doing, above the composer: listening, about to send (a
 * countdown with Keep listening), thinking or speaking; announced to screen readers as it
 * changes. Also where the conversation learns of the chat: a question waiting for the user
 * pauses the listening, and an answer being written (`answering`) is stopped by talking over it. */
export function ConversationBar({ answering, onStopAnswer }: { answering: boolean; onStopAnswer: () => void }) {
  const { t } = useLingui();
  const { phase, countdown, failure } = useConversation();
  const waiting = useQuestions().open.length > 0;
  useEffect(() => setQuestionOpen(waiting), [waiting]);
  useEffect(() => setAnswering(answering, onStopAnswer), [answering, onStopAnswer]);
  if (phase === "off") {
    return failure ? (
      <p className="conversation-bar failed" role="alert">
        {failure}
      </p>
    ) : null;
  }
  const seconds = formatNumber((countdown ?? 0) / 1000, { minimumFractionDigits: 1, maximumFractionDigits: 1 });
  const text =
    waiting && phase !== "speaking"
      ? t`Answer the question above with a click or a key: Perch does not take a spoken yes.`
      : phase === "listening"
        ? t`Listening… ask your question.`
        : phase === "countdown"
          ? t`Sending in ${seconds} s`
          : phase === "speaking"
            ? t`Speaking… talk to interrupt.`
            : t`Thinking…`;
  return (
    <div className={`conversation-bar ${phase}`} role="region" aria-label={t`Hands-free conversation`}>
      {/* During the countdown the status (read once) is "Sending soon", and the seconds are shown. */}
      <span role="status" aria-live="polite" className={phase === "countdown" ? "sr-only" : undefined}>
        {phase === "countdown" ? t`Sending soon` : text}
      </span>
      {phase === "countdown" && (
        <span aria-hidden="true" className="countdown">
          {text}
        </span>
      )}
      {phase === "countdown" && (
        <button type="button" onClick={() => void keepListening()}>
          <Trans comment="button: do not send yet, keep listening">Keep listening</Trans>
        </button>
      )}
      <button type="button" onClick={() => void endConversation()} aria-keyshortcuts="Escape">
        <Trans comment="button: end the hands-free conversation">End</Trans>
      </button>
    </div>
  );
}
