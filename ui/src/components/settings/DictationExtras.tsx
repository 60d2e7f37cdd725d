// Settings -> Voice, what dictated text goes through: the clean-up before it lands (hesitations,
// capitals and full stops, the user's vocabulary), where dictate-anywhere never types, and the
// recent dictations, so words typed where the focus had moved can be copied again.
import { useCallback, useEffect, useState } from "react";
import { Trans, useLingui } from "@lingui/react/macro";
import type { RecentDictation, VoiceSettings } from "../../bindings";
import { commands } from "../../ipc";
import { clockTime, dayLabel } from "../../lib/time";

type Save = (patch: Partial<VoiceSettings>) => void;

/** A list edited as lines of text (one entry each), saved when the field is left. */
function ListField({ label, name, value, onSave, placeholder }: { label: string; name: string; value: string[]; onSave: (list: string[]) => void; placeholder?: string }) {
  const [draft, setDraft] = useState<string | null>(null);
  const commit = () => {
    if (draft === null) return;
    const list = draft
      .split("\n")
      .map((line) => line.trim())
      .filter(Boolean);
    setDraft(null);
    if (list.join("\n") !== value.join("\n")) onSave(list);
  };
  return (
    <label className="field">
      {label}
      <textarea aria-label={name} rows={3} placeholder={placeholder} value={draft ?? value.join("\n")} onChange={(e) => setDraft(e.target.value)} onBlur={commit} />
    </label>
  );
}

/** The clean-up applied to every dictation before it lands (Perch's box or another app). */
export function TextCleanup({ voice, onSave }: { voice: Required<VoiceSettings>; onSave: Save }) {
  const { t } = useLingui();
  return (
    <>
      <label className="check">
        <input type="checkbox" checked={voice.remove_fillers} onChange={(e) => onSave({ remove_fillers: e.target.checked })} />
        <Trans>Remove hesitations (“um”, “uh”)</Trans>
      </label>
      <label className="check">
        <input type="checkbox" checked={voice.tidy_punctuation} onChange={(e) => onSave({ tidy_punctuation: e.target.checked })} />
        <Trans>Capital letters at sentence starts and a full stop at the end</Trans>
      </label>
      <ListField
        label={t`Vocabulary: names and terms spelled your way, one per line (whisper hears them better, and the text takes their spelling)`}
        name={t`Vocabulary`}
        value={voice.vocabulary}
        onSave={(vocabulary) => onSave({ vocabulary })}
      />
    </>
  );
}

/** Dictate-anywhere's never-type list and its recent dictations. */
export function AnywhereExtras({ voice, onSave }: { voice: Required<VoiceSettings>; onSave: Save }) {
  const { t } = useLingui();
  return (
    <>
      <ListField
        label={t`Never type into these applications (window class names, one per line): the words go to the clipboard instead`}
        name={t`Never type into`}
        placeholder="KeePassXC"
        value={voice.never_type_into}
        onSave={(never_type_into) => onSave({ never_type_into })}
      />
      <RecentDictations />
    </>
  );
}

function RecentDictations() {
  const { t } = useLingui();
  const [recent, setRecent] = useState<RecentDictation[]>([]);
  const [copied, setCopied] = useState<number | null>(null);
  const load = useCallback(() => void commands.recentDictations().then(setRecent, () => {}), []);
  useEffect(load, [load]);
  const outcome = (r: RecentDictation) => {
    const o = r.outcome;
    if (o.kind === "typed") {
      const app = o.app;
      return app ? t`Typed into ${app}` : t`Typed at the cursor`;
    }
    const reason = o.reason;
    return o.kind === "copied" ? t`Put on the clipboard: ${reason}` : t`Not typed: ${reason}`;
  };
  return (
    <section className="recent-dictations" aria-labelledby="recent-dictations-title">
      <h3 id="recent-dictations-title" className="small">
        <Trans>Recent dictations</Trans>
      </h3>
      <p className="muted small">
        <Trans>The last day's dictations into other apps, kept only in memory until Perch quits.</Trans>
      </p>
      {recent.length === 0 ? (
        <p className="muted small">
          <Trans>None yet.</Trans>
        </p>
      ) : (
        <ul aria-label={t`Recent dictations`}>
          {recent.map((r, i) => {
            const at = r.at_ms ?? 0;
            const when = `${dayLabel(at)} ${clockTime(at)}`;
            return (
              <li key={`${at}-${i}`}>
                <p className="dictated" dir="auto">
                  {r.text}
                </p>
                <small className="muted">
                  {when} · {outcome(r)}
                </small>
                <button
                  type="button"
                  className="link-button"
                  onClick={() =>
                    void (navigator.clipboard?.writeText(r.text) ?? Promise.reject(new Error())).then(
                      () => setCopied(i),
                      () => setCopied(-1 - i),
                    )
                  }
                >
                  {copied === i ? t`Copied` : copied === -1 - i ? t`Copying failed: select the text and press Ctrl+C` : t`Copy`}
                </button>
              </li>
            );
          })}
        </ul>
      )}
      <div className="buttons">
        <button type="button" className="link-button" onClick={load}>
          <Trans>Refresh</Trans>
        </button>
        {recent.length > 0 && (
          <button type="button" className="link-button" onClick={() => void commands.clearRecentDictations().then(load)}>
            <Trans>Forget them</Trans>
          </button>
        )}
      </div>
    </section>
  );
}
