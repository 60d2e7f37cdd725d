import { useEffect } from "react";
import { msg, plural } from "@lingui/core/macro";
import { useLingui } from "@lingui/react/macro";
import { i18n } from "../i18n";
import { commands } from "../ipc";
import { SHORTCUTS } from "../lib/shortcuts";
import { hasFinals, useDictation } from "../lib/dictation";
import { useConversation } from "../lib/conversation";
import { attempt, useFailures } from "../lib/failures";
import { formatNumber } from "../lib/format";
import { useQuestions } from "../lib/questions";
import { useDragToMove } from "../lib/dragToMove";

/**
 * Mini mode: a 52x52 bubble. Click to restore the window; drag to move it. While dictating
 * (push-to-talk works here and while hidden) a ring pulses with the microphone's level; when
 * the text is ready the window opens with it in the input box.
 */
export function MiniBubble() {
  const { t } = useLingui();
  const drag = useDragToMove(() => void restore());
  const { phase, level, notice } = useDictation();
  const talk = useConversation().phase;
  useEffect(() => {
    if (phase === "idle" && hasFinals()) void restore();
  }, [phase]);
  // The bubble is too small for a notice: the newest failure is its tooltip and a red ring.
  const failure = useFailures().at(-1);
  const busy = phase === "listening" || phase === "transcribing";
  // A question waiting (an approval holds an answer until the user opens Perch).
  const waiting = useQuestions().open.length;
  const miniKey = SHORTCUTS.mini;
  // The badge's number is in the name, as it is on screen (WCAG 2.5.3).
  const waitingLabel = t`${plural(waiting, {
    one: "Open Perch: # question is waiting for you",
    other: "Open Perch: # questions are waiting for you",
  })}`;
  const waitingTitle = t`${plural(waiting, {
    one: `Open Perch: # question is waiting for you (${miniKey})`,
    other: `Open Perch: # questions are waiting for you (${miniKey})`,
  })}`;
  const what = failure?.title;
  const why = failure?.detail;

  return (
    <button
      type="button"
      className={["mini-bubble", busy && phase, talk !== "off" && `talk-${talk}`, failure && "failed"].filter(Boolean).join(" ")}
      aria-label={
        talk === "speaking"
          ? t`Perch is speaking`
          : talk === "thinking"
            ? t`Perch is thinking`
            : phase === "listening"
          ? t`Perch is listening`
          : phase === "transcribing"
            ? t`Perch is transcribing`
            : waiting > 0
              ? waitingLabel
              : t`Open Perch`
      }
      title={
        failure
          ? t({
              message: `${what}: ${why}`,
              comment: "a thing, then what is wrong with it (a file, a reference or a failed action, and the reason)",
            })
          : notice && phase === "idle"
            ? notice.text
            : waiting > 0
              ? waitingTitle
              : t`Open Perch (${miniKey})`
      }
      {...drag}
      onKeyDown={(e) => {
        if (e.key === "Enter" || e.key === " ") void restore();
      }}
    >
      {busy && <span className="bubble-ring" style={{ transform: `scale(${0.85 + level * 0.3})` }} />}
      <img src="/perch.png" alt="" width={34} height={34} draggable={false} />
      {waiting > 0 && (
        <span className="bubble-badge" aria-hidden="true">
          {formatNumber(waiting)}
        </span>
      )}
    </button>
  );
}

const RESTORE_FAILED = msg`Could not open the window`;

function restore() {
  return attempt(i18n._(RESTORE_FAILED), commands.setWindowMode("normal"));
}
