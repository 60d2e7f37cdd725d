import { Trans } from "@lingui/react/macro";
import { speakAnswer, stopSpeaking, useSpeech } from "../../lib/speech";

/** Speak on an answer: reads it aloud; Stop (or Esc) while it is being read. */
export function SpeakButton({ messageId }: { messageId: number }) {
  const { speaking, failure } = useSpeech();
  const reading = speaking === String(messageId);
  return (
    <>
      {reading ? (
        <button type="button" aria-pressed="true" aria-keyshortcuts="Escape" onClick={() => void stopSpeaking()}>
          <Trans comment="button: stop reading the answer aloud">Stop reading</Trans>
        </button>
      ) : (
        <button type="button" onClick={() => void speakAnswer(messageId)}>
          <Trans comment="button: read the answer aloud">Read aloud</Trans>
        </button>
      )}
      {reading && (
        <span className="sr-only" role="status">
          <Trans>Reading the answer aloud. Press Escape to stop.</Trans>
        </span>
      )}
      {/* Under the answer that failed only, until it is read again. */}
      {failure?.id === String(messageId) && !reading && (
        <small className="muted" role="alert">
          {failure.message}
        </small>
      )}
    </>
  );
}
