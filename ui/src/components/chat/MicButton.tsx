import { useLingui } from "@lingui/react/macro";
import { toggleDictation, useDictation } from "../../lib/dictation";
import { formatNumber } from "../../lib/format";
import { MicIcon } from "../Icons";

/** The composer's microphone: click to dictate, click again to stop; the ring shows the level. */
export function MicButton({ shortcut }: { shortcut: string }) {
  const { t } = useLingui();
  const { phase, level, seconds } = useDictation();
  const recording = phase === "listening";
  const label = recording ? t`Stop dictation` : phase === "transcribing" ? t`Transcribing` : t`Dictate`;
  const title = recording
    ? shortcut
      ? t`Stop and transcribe (${shortcut})`
      : t`Stop and transcribe`
    : shortcut
      ? t`Dictate (${shortcut})`
      : t`Dictate`;
  // How long it has listened: "12s".
  const elapsed = formatNumber(Math.floor(seconds), { style: "unit", unit: "second", unitDisplay: "narrow" });
  // The time shows beside the button, not in it: its name stays what it does.
  return (
    <span className="mic-wrap">
      <button
        type="button"
        className={`icon-button mic ${phase}`}
        aria-label={label}
        aria-pressed={recording}
        title={title}
        disabled={phase === "transcribing" || phase === "starting"}
        onClick={() => void toggleDictation()}
      >
        {recording && (
          <span
            className="mic-level"
            role="meter"
            aria-label={t`Microphone level`}
            aria-valuemin={0}
            aria-valuemax={1}
            aria-valuenow={Number(level.toFixed(2))}
            style={{ transform: `scale(${1 + level * 0.8})` }}
          />
        )}
        <MicIcon />
      </button>
      {recording && (
        <span className="mic-time" aria-hidden="true">
          {elapsed}
        </span>
      )}
    </span>
  );
}
