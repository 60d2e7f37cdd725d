import { useCallback, useEffect, useState } from "react";
import { Channel } from "@tauri-apps/api/core";
import type { MessageDescriptor } from "@lingui/core";
import { msg, t } from "@lingui/core/macro";
import { Trans, useLingui } from "@lingui/react/macro";
import type { DownloadProgress, InputDevice, ModelView, Probe, ShortcutStatus, VoiceSettings } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";
import { ConfirmInPlace } from "../ConfirmInPlace";
import { formatBytes, formatNumber } from "../../lib/format";
import { useSettings } from "../../lib/settings";
import { AnywhereExtras, TextCleanup } from "./DictationExtras";
import { DesktopShortcutOffer } from "./DesktopShortcutOffer";
import { ReadAloudCard } from "./ReadAloudCard";

/** The languages whisper is told to expect (codes as whisper knows them). */
const LANGUAGES: [string, MessageDescriptor][] = [
  ["auto", msg({ message: "Detect", comment: "dictation language: detect it from the speech" })],
  ["en", msg`English`],
  ["de", msg`German`],
  ["es", msg`Spanish`],
  ["fr", msg`French`],
  ["it", msg`Italian`],
  ["ja", msg`Japanese`],
  ["nl", msg`Dutch`],
  ["pl", msg`Polish`],
  ["pt", msg`Portuguese`],
  ["ru", msg`Russian`],
  ["uk", msg`Ukrainian`],
  ["zh", msg`Chinese`],
];

/** A model's size in whole megabytes (gigabytes with one decimal from 1 GB). */
const mb = (bytes: number) => formatBytes(bytes, { wholeMegabytes: true });

/** The settings with every field present (the stored row may predate some). */
function complete(v: VoiceSettings): Required<VoiceSettings> {
  return {
    model: v.model ?? "tiny.en",
    language: v.language ?? "auto",
    device: v.device ?? "",
    push_to_talk: v.push_to_talk ?? "",
    push_to_talk_mode: v.push_to_talk_mode ?? "hold",
    dictate_anywhere: v.dictate_anywhere ?? "",
    send_after_dictation: v.send_after_dictation ?? false,
    partial_results: v.partial_results ?? true,
    max_seconds: v.max_seconds ?? 300,
    keep_model_secs: v.keep_model_secs ?? 30,
    never_type_into: v.never_type_into ?? [],
    tidy_punctuation: v.tidy_punctuation ?? false,
    remove_fillers: v.remove_fillers ?? true,
    vocabulary: v.vocabulary ?? [],
    use_gpu: v.use_gpu ?? true,
  };
}

/** Settings -> Voice: the whisper models, the microphone, push-to-talk and what happens to the text. */
export function VoiceSettingsCard() {
  const { t } = useLingui();
  const { settings, setVoice } = useSettings();
  const voice = settings?.voice ? complete(settings.voice) : null;
  const save = (change: Partial<VoiceSettings>) => voice && void setVoice({ ...voice, ...change });
  if (!voice) return null;
  return (
    <>
      <ModelManager chosen={voice.model} onChoose={(model) => save({ model })} />
      <fieldset className="card">
        <legend>
          <Trans>Dictation</Trans>
        </legend>
        <Microphone value={voice.device} onChange={(device) => save({ device })} />
        <label className="field">
          <Trans>Language</Trans>
          <select aria-label={t`Language`} value={voice.language} onChange={(e) => save({ language: e.target.value })}>
            {LANGUAGES.map(([code, name]) => (
              <option key={code} value={code}>
                {t(name)}
              </option>
            ))}
            {!LANGUAGES.some(([code]) => code === voice.language) && <option value={voice.language}>{voice.language}</option>}
          </select>
          {voice.model.endsWith(".en") && (
            <small className="muted">
              <Trans>English-only models always transcribe English.</Trans>
            </small>
          )}
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={voice.send_after_dictation}
            onChange={(e) => save({ send_after_dictation: e.target.checked })}
          />
          <Trans>Send after dictation (otherwise the text waits in the box for you to edit)</Trans>
        </label>
        <label className="check">
          <input type="checkbox" checked={voice.partial_results} onChange={(e) => save({ partial_results: e.target.checked })} />
          <Trans>Show text while I speak</Trans>
        </label>
        <TextCleanup voice={voice} onSave={save} />
        <label className="field">
          <Trans>Longest recording</Trans>
          <select
            aria-label={t`Longest recording`}
            value={voice.max_seconds}
            onChange={(e) => save({ max_seconds: Number(e.target.value) })}
          >
            {[60, 120, 300, 600, 900].map((s) => {
              const minutes = formatNumber(s / 60);
              return (
                <option key={s} value={s}>
                  {t({ message: `${minutes} min`, comment: "a duration in minutes" })}
                </option>
              );
            })}
            {![60, 120, 300, 600, 900].includes(voice.max_seconds) && <option value={voice.max_seconds}>{inSeconds(voice.max_seconds)}</option>}
          </select>
        </label>
        <label className="field">
          <Trans>Keep the model in memory after dictating</Trans>
          <select
            aria-label={t`Keep the model in memory`}
            value={voice.keep_model_secs}
            onChange={(e) => save({ keep_model_secs: Number(e.target.value) })}
          >
            <option value={0}>{t`No, release it at once`}</option>
            <option value={30}>{inSeconds(30)}</option>
            <option value={120}>{t`2 minutes`}</option>
            <option value={600}>{t`10 minutes`}</option>
            <option value={3600}>{t`1 hour`}</option>
            {![0, 30, 120, 600, 3600].includes(voice.keep_model_secs) && (
              <option value={voice.keep_model_secs}>{inSeconds(voice.keep_model_secs)}</option>
            )}
          </select>
        </label>
        <GraphicsCard voice={voice} onSave={save} />
      </fieldset>
      <PushToTalk voice={voice} onSave={save} />
      <ReadAloudCard />
    </>
  );
}

/** Whether dictation runs on the graphics card, and where it runs now (asked again after a change). */
function GraphicsCard({ voice, onSave }: { voice: Required<VoiceSettings>; onSave: (change: Partial<VoiceSettings>) => void }) {
  const { t } = useLingui();
  const [runsOn, setRunsOn] = useState<string | null>(null);
  useEffect(() => {
    void call(commands.voiceRunsOn()).then(setRunsOn, () => setRunsOn(null));
  }, [voice.use_gpu, voice.model]);
  return (
    <label className="check">
      <input type="checkbox" checked={voice.use_gpu} onChange={(e) => onSave({ use_gpu: e.target.checked })} />
      <Trans>Transcribe on the graphics card when the model fits its memory</Trans>
      {runsOn && (
        <small className="muted" aria-label={t`Dictation runs on`}>
          <Trans>Runs on {runsOn}</Trans>
        </small>
      )}
    </label>
  );
}

/** A number of seconds, short: "45 s". */
function inSeconds(n: number): string {
  const seconds = formatNumber(n);
  return t({ message: `${seconds} s`, comment: "a duration in seconds" });
}

function Microphone({ value, onChange }: { value: string; onChange: (device: string) => void }) {
  const { t } = useLingui();
  const [devices, setDevices] = useState<InputDevice[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(
    () =>
      call(commands.voiceDevices()).then(
        (found) => {
          setError(null);
          setDevices(found);
        },
        (e) => setError(errorMessage(e)),
      ),
    [],
  );
  useEffect(() => void load(), [load]);
  const missing = value && devices && !devices.some((d) => d.name === value);
  const systemDefault = devices?.find((d) => d.is_default)?.name;
  return (
    <label className="field">
      <Trans>Microphone</Trans>
      <span className="row">
        <select aria-label={t`Microphone`} value={value} onChange={(e) => onChange(e.target.value)}>
          <option value="">{systemDefault ? t`System default (${systemDefault})` : t`System default`}</option>
          {devices?.map((d) => {
            const name = d.name;
            const kilohertz = formatNumber((d.sample_rate ?? 0) / 1000);
            const channels = formatNumber(d.channels ?? 0);
            return (
              <option key={name} value={name}>
                {d.sample_rate
                  ? t({ message: `${name} · ${kilohertz} kHz, ${channels} ch`, comment: "a microphone: its name, sample rate and number of channels" })
                  : name}
              </option>
            );
          })}
          {missing && <option value={value}>{t`${value} (not connected)`}</option>}
        </select>
        <button type="button" className="link-button" onClick={() => void load()}>
          <Trans>Refresh</Trans>
        </button>
      </span>
      {devices?.length === 0 && (
        <small className="error">
          <Trans>No microphone found.</Trans>
        </small>
      )}
      {error && <small className="error">{error}</small>}
    </label>
  );
}

function ModelManager({ chosen, onChoose }: { chosen: string; onChoose: (name: string) => void }) {
  const { t } = useLingui();
  const [models, setModels] = useState<ModelView[]>([]);
  const [progress, setProgress] = useState<Record<string, DownloadProgress>>({});
  const [error, setError] = useState<string | null>(null);
  const [confirm, setConfirm] = useState<string | null>(null);
  const refresh = useCallback(() => void call(commands.voiceModels()).then(setModels, (e) => setError(errorMessage(e))), []);
  useEffect(refresh, [refresh]);

  const download = async (name: string) => {
    const channel = new Channel<DownloadProgress>();
    channel.onmessage = (p) => setProgress((all) => ({ ...all, [name]: p }));
    setError(null);
    try {
      await call(commands.voiceModelDownload(name, channel));
    } catch (e) {
      setError(errorMessage(e));
    }
    setProgress(({ [name]: _, ...rest }) => rest);
    refresh();
  };
  const remove = async (name: string) => {
    setConfirm(null);
    try {
      await call(commands.voiceModelDelete(name));
    } catch (e) {
      setError(errorMessage(e));
    }
    refresh();
  };
  const custom = chosen && !models.some((m) => m.name === chosen);

  return (
    <fieldset className="card">
      <legend>
        <Trans>Speech model</Trans>
      </legend>
      <p className="muted small">
        <Trans>
          Whisper runs on this computer; nothing you say leaves it. Bigger models make fewer mistakes and need more memory and time.
        </Trans>
      </p>
      <table className="voice-models" aria-label={t`Whisper models`}>
        <tbody>
          {models.map((m) => {
            const p = progress[m.name];
            const name = m.name;
            const size = mb(m.size);
            const memory = mb(m.memory_mb * 1e6);
            const done = p ? mb(p.done) : "";
            const total = p ? mb(p.total) : "";
            const partial = mb(m.partial);
            return (
              <tr key={m.name} aria-label={t`Model ${name}`}>
                <td>
                  <label className="check">
                    <input
                      type="radio"
                      name="voice-model"
                      aria-label={t`Use ${name}`}
                      checked={chosen === m.name}
                      disabled={m.state !== "ready"}
                      onChange={() => onChoose(m.name)}
                    />
                    <strong>{m.name}</strong>
                  </label>
                  <small className="muted">
                    {m.english_only ? t({ message: "English", comment: "a speech model that knows only English" }) : t`99 languages`} · {m.summary}
                  </small>
                </td>
                <td className="muted small">
                  {t({ message: `${size} disk`, comment: "the space a model takes on disk" })}
                  <br />
                  {t({ message: `~${memory} memory`, comment: "about how much memory a model needs" })}
                </td>
                <td>
                  {p ? (
                    <div className="tool-progress" role="progressbar" aria-label={t`Downloading ${name}`} aria-valuenow={Math.round((100 * p.done) / Math.max(1, p.total))} aria-valuemin={0} aria-valuemax={100}>
                      <div className="bar" style={{ width: `${(100 * p.done) / Math.max(1, p.total)}%` }} />
                      <span>{t`${done} of ${total}`}</span>
                      <button type="button" className="link-button" onClick={() => void call(commands.voiceModelCancel(m.name))}>
                        <Trans>Stop</Trans>
                      </button>
                    </div>
                  ) : m.state === "ready" ? (
                    <ConfirmInPlace
                      asking={confirm === m.name}
                      onAsk={() => setConfirm(m.name)}
                      onConfirm={() => void remove(m.name)}
                      onKeep={() => setConfirm(null)}
                      action={<Trans>Delete</Trans>}
                      confirm={<Trans>Delete {name}</Trans>}
                      buttonClass="link-button"
                      grouped
                    />
                  ) : (
                    <button type="button" onClick={() => void download(m.name)}>
                      {m.state === "partial" ? t`Resume (${partial} here)` : t`Download`}
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <ModelFile chosen={custom ? chosen : ""} onChoose={onChoose} />
      {error && (
        <p className="error small" role="alert">
          {error}
        </p>
      )}
    </fieldset>
  );
}

/** A ggml model file of the user's own (a quantized or fine-tuned whisper), used as it is. */
function ModelFile({ chosen, onChoose }: { chosen: string; onChoose: (path: string) => void }) {
  const { t } = useLingui();
  const [draft, setDraft] = useState<string | null>(null);
  const commit = () => {
    if (draft !== null && draft.trim() && draft.trim() !== chosen) onChoose(draft.trim());
    setDraft(null);
  };
  return (
    <label className="field">
      <Trans>Or use a model file (whisper.cpp ggml format)</Trans>
      <input
        aria-label={t`Model file`}
        placeholder="/path/to/ggml-model.bin"
        value={draft ?? chosen}
        onChange={(e) => setDraft(e.target.value)}
        onBlur={commit}
        onKeyDown={(e) => e.key === "Enter" && commit()}
      />
      {chosen && (
        <small className="muted">
          <Trans>Dictation uses this file.</Trans>
        </small>
      )}
    </label>
  );
}

function PushToTalk({ voice, onSave }: { voice: Required<VoiceSettings>; onSave: (patch: Partial<VoiceSettings>) => void }) {
  const { t } = useLingui();
  const [statuses, setStatuses] = useState<ShortcutStatus[]>([]);
  const [typing, setTyping] = useState<Probe | null>(null);
  useEffect(() => {
    void commands.voiceShortcutStatuses().then(setStatuses, () => {});
  }, [voice.push_to_talk, voice.dictate_anywhere, voice.push_to_talk_mode]);
  useEffect(() => {
    void commands.typingPath().then(setTyping, () => {});
  }, []);
  const typingDetail = typing?.detail ?? null;
  return (
    <fieldset className="card">
      <legend>
        <Trans>Push to talk</Trans>
      </legend>
      <ShortcutField
        label={t`Shortcut (works while Perch is hidden or in mini mode; empty turns it off)`}
        name={t`Push-to-talk shortcut`}
        placeholder="Ctrl+Alt+Space"
        value={voice.push_to_talk}
        status={statuses[0]}
        onSave={(push_to_talk) => onSave({ push_to_talk })}
      />
      <ShortcutField
        label={t`Dictate into any app: the words are typed where the cursor is, in whatever application has the focus (empty turns it off)`}
        name={t`Dictate-anywhere shortcut`}
        placeholder="Ctrl+Alt+D"
        value={voice.dictate_anywhere}
        status={statuses[1]}
        onSave={(dictate_anywhere) => onSave({ dictate_anywhere })}
      />
      {typingDetail !== null && (
        <p className={typing?.available ? "muted small" : "note small"}>
          {/* The detail is the engine's (as `perch doctor` says it). */}
          <Trans>Typing into other apps: {typingDetail}</Trans>
        </p>
      )}
      <div className="segmented" role="radiogroup" aria-label={t`Push-to-talk mode`}>
        {(
          [
            ["hold", t`Hold to talk`],
            ["toggle", t`Press to start and stop`],
          ] as const
        ).map(([mode, label]) => (
          <label key={mode} className={voice.push_to_talk_mode === mode ? "selected" : undefined}>
            <input type="radio" name="ptt-mode" checked={voice.push_to_talk_mode === mode} onChange={() => onSave({ push_to_talk_mode: mode })} />
            {label}
          </label>
        ))}
      </div>
      <AnywhereExtras voice={voice} onSave={onSave} />
    </fieldset>
  );
}

/** One global shortcut's field, saved on Enter or leaving it, with how it bound. */
function ShortcutField(props: {
  label: string;
  name: string;
  placeholder: string;
  value: string;
  status: ShortcutStatus | undefined;
  onSave: (accelerator: string) => void;
}) {
  const [draft, setDraft] = useState<string | null>(null);
  const commit = () => {
    if (draft !== null && draft.trim() !== props.value) props.onSave(draft.trim());
    setDraft(null);
  };
  const active = props.status?.assigned ?? props.status?.accelerator;
  // A div, not a label around it all: the offer below holds buttons of its own.
  return (
    <div className="field">
      <label>
        {props.label}
        <input
          aria-label={props.name}
          placeholder={props.placeholder}
          value={draft ?? props.value}
          onChange={(e) => setDraft(e.target.value)}
          onBlur={commit}
          onKeyDown={(e) => e.key === "Enter" && commit()}
        />
      </label>
      {props.status?.problem ? (
        <DesktopShortcutOffer status={props.status}>
          <span className="error small" role="alert">
            {props.status.problem}
          </span>
        </DesktopShortcutOffer>
      ) : props.status?.active ? (
        <small className="muted">
          <Trans>Active: {active}</Trans>
        </small>
      ) : null}
    </div>
  );
}
