import { toggleDictation, useDictation } from "../../lib/dictation";
import { MicIcon } from "../Icons";

/** The composer's microphone: click to dictate, click again to stop; the ring shows the level. */
export function MicButton({ shortcut }: { shortcut: string }) {
  const { phase, level, seconds } = useDictation();
  const recording = phase === "listening";
  const label = recording ? "Stop dictation" : phase === "transcribing" ? "Transcribing" : "Dictate";
  const hint = shortcut ? ` (${shortcut})` : "";
  return (
    <button
      type="button"
      className={`icon-button mic ${phase}`}
      aria-label={label}
      aria-pressed={recording}
      title={recording ? `Stop and transcribe${hint}` : `Dictate${hint}`}
      disabled={phase === "transcribing" || phase === "starting"}
      onClick={() => void toggleDictation()}
    >
      {recording && (
        <span
          className="mic-level"
          role="meter"
          aria-label="Microphone level"
          aria-valuemin={0}
          aria-valuemax={1}
          aria-valuenow={Number(level.toFixed(2))}
          style={{ transform: `scale(${1 + level * 0.8})` }}
        />
      )}
      <MicIcon />
      {recording && <span className="mic-time">{Math.floor(seconds)}s</span>}
    </button>
  );
}
