import { useEffect, useRef } from "react";
import { getCurrentWindow } from "@tauri-apps/api/window";
import { commands } from "../ipc";
import { SHORTCUTS } from "../lib/shortcuts";
import { hasFinals, useDictation } from "../lib/dictation";
import { attempt, useFailures } from "../lib/failures";
import { useQuestions } from "../lib/questions";

// A press that moves further than this drags the bubble; a shorter one is a click.
const DRAG_THRESHOLD = 4;

/**
 * Mini mode: a 52x52 bubble. Click to restore the window; drag to move it. While dictating
 * (push-to-talk works here and while hidden) a ring pulses with the microphone's level; when
 * the text is ready the window opens with it in the input box.
 */
export function MiniBubble() {
  const press = useRef<{ x: number; y: number; dragging: boolean } | null>(null);
  const { phase, level, notice } = useDictation();
  useEffect(() => {
    if (phase === "idle" && hasFinals()) void restore();
  }, [phase]);
  // The bubble is too small for a notice: the newest failure is its tooltip and a red ring.
  const failure = useFailures().at(-1);
  const busy = phase === "listening" || phase === "transcribing";
  // A question waiting (an approval holds an answer until the user opens Perch).
  const waiting = useQuestions().open.length;
  // The badge's number is in the name, as it is on screen (WCAG 2.5.3).
  const waitingText = waiting === 1 ? "1 question is waiting for you" : `${waiting} questions are waiting for you`;

  return (
    <button
      type="button"
      className={["mini-bubble", busy && phase, failure && "failed"].filter(Boolean).join(" ")}
      aria-label={
        phase === "listening"
          ? "Perch is listening"
          : phase === "transcribing"
            ? "Perch is transcribing"
            : waiting > 0
              ? `Open Perch: ${waitingText}`
              : "Open Perch"
      }
      title={
        failure
          ? `${failure.title}: ${failure.detail}`
          : notice && phase === "idle"
            ? notice.text
            : waiting > 0
              ? `Open Perch: ${waitingText} (${SHORTCUTS.mini})`
              : `Open Perch (${SHORTCUTS.mini})`
      }
      onPointerDown={(e) => {
        if (e.button === 0) press.current = { x: e.screenX, y: e.screenY, dragging: false };
      }}
      onPointerMove={(e) => {
        const p = press.current;
        if (!p || p.dragging) return;
        if (Math.hypot(e.screenX - p.x, e.screenY - p.y) > DRAG_THRESHOLD) {
          p.dragging = true;
          void getCurrentWindow().startDragging();
        }
      }}
      onPointerUp={() => {
        const p = press.current;
        press.current = null;
        if (p && !p.dragging) void restore();
      }}
      onKeyDown={(e) => {
        if (e.key === "Enter" || e.key === " ") void restore();
      }}
    >
      {busy && <span className="bubble-ring" style={{ transform: `scale(${0.85 + level * 0.3})` }} />}
      <img src="/perch.png" alt="" width={34} height={34} draggable={false} />
      {waiting > 0 && (
        <span className="bubble-badge" aria-hidden="true">
          {waiting}
        </span>
      )}
    </button>
  );
}

function restore() {
  return attempt("Could not open the window", commands.setWindowMode("normal"));
}
