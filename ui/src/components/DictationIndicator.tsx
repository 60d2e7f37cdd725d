import { useEffect, useState } from "react";
import { useLingui } from "@lingui/react/macro";
import { commands, events } from "../ipc";
import { cancelDictation, IDLE, reduce, type DictationState } from "../lib/dictation";
import { formatDuration } from "../lib/format";
import { CloseIcon } from "./Icons";

/** The most of the words so far the one line shows: the end, where the speaker is. */
const TAIL = 90;

/**
 * The dictate-anywhere indicator, alone in its small window that never takes the focus: it
 * shows that Perch listens (the level, the time, the words so far) while the words go to
 * another application. Esc (held by the shell for the whole desktop) or ✕ cancels.
 */
export function DictationIndicator() {
  const { t } = useLingui();
  const [dictation, setDictation] = useState<DictationState>({ ...IDLE, phase: "starting" });
  useEffect(() => {
    const unlisten = events.indicatorUpdate.listen((e) => setDictation((now) => reduce(now, e.payload.update.event)));
    // A dictation that could not start failed before this page listened: its reason is asked
    // for once the listener is in place.
    void unlisten.then(() =>
      commands.indicatorFailure().then((missed) => missed && setDictation((now) => reduce(now, missed.event)), () => {}),
    );
    return () => void unlisten.then((off) => off());
  }, []);
  const { phase, level, seconds, partial, notice } = dictation;
  const words = partial.length > TAIL ? `…${partial.slice(-TAIL)}` : partial;
  const failed = phase === "idle" && notice !== null && notice.kind !== "warning";
  const status = failed
    ? t`The dictation stopped:`
    : phase === "transcribing"
      ? t`Writing it down…`
      : phase === "listening"
        ? t`Listening… Esc cancels.`
        : t`Starting the microphone…`;
  return (
    <div className={`dictation-indicator ${failed ? "failed" : phase}`} data-testid="dictation-indicator">
      <div className="indicator-row">
        <span className="indicator-level" aria-hidden="true">
          <span style={{ transform: `scaleX(${Math.min(1, Math.max(0.04, level))})` }} />
        </span>
        <span className="indicator-status" role="status">
          {status}
        </span>
        {phase === "listening" && <span className="indicator-time">{formatDuration(seconds * 1000)}</span>}
        <button type="button" className="icon-button" aria-label={t`Cancel the dictation`} onClick={() => void cancelDictation()}>
          <CloseIcon />
        </button>
      </div>
      <p className={failed ? "indicator-words error" : "indicator-words"} dir="auto" title={failed ? notice.text : undefined}>
        {notice?.text ?? words}
      </p>
    </div>
  );
}
