import { useCallback, useEffect, useState } from "react";
import { Channel } from "@tauri-apps/api/core";
import type { DownloadProgress, InputDevice, ModelView, PushToTalkMode, ShortcutStatus, VoiceSettings } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";
import { useSettings } from "../../lib/settings";

const LANGUAGES: [string, string][] = [
  ["auto", "Detect"],
  ["en", "English"],
  ["de", "German"],
  ["es", "Spanish"],
  ["fr", "French"],
  ["it", "Italian"],
  ["ja", "Japanese"],
  ["nl", "Dutch"],
  ["pl", "Polish"],
  ["pt", "Portuguese"],
  ["ru", "Russian"],
  ["uk", "Ukrainian"],
  ["zh", "Chinese"],
];

const mb = (bytes: number) => `${Math.round(bytes / 1e6)} MB`;

/** The settings with every field present (the stored row may predate some). */
function complete(v: VoiceSettings): Required<VoiceSettings> {
  return {
    model: v.model ?? "tiny.en",
    language: v.language ?? "auto",
    device: v.device ?? "",
    push_to_talk: v.push_to_talk ?? "",
    push_to_talk_mode: v.push_to_talk_mode ?? "hold",
    send_after_dictation: v.send_after_dictation ?? false,
    partial_results: v.partial_results ?? true,
    max_seconds: v.max_seconds ?? 300,
    keep_model_secs: v.keep_model_secs ?? 120,
  };
}

/** Settings -> Voice: the whisper models, the microphone, push-to-talk and what happens to the text. */
export function VoiceSettingsCard() {
  const { settings, setVoice } = useSettings();
  const voice = settings?.voice ? complete(settings.voice) : null;
  const save = (change: Partial<VoiceSettings>) => voice && void setVoice({ ...voice, ...change });
  if (!voice) return null;
  return (
    <>
      <ModelManager chosen={voice.model} onChoose={(model) => save({ model })} />
      <fieldset className="card">
        <legend>Dictation</legend>
        <Microphone value={voice.device} onChange={(device) => save({ device })} />
        <label className="field">
          Language
          <select aria-label="Language" value={voice.language} onChange={(e) => save({ language: e.target.value })}>
            {LANGUAGES.map(([code, name]) => (
              <option key={code} value={code}>
                {name}
              </option>
            ))}
            {!LANGUAGES.some(([code]) => code === voice.language) && <option value={voice.language}>{voice.language}</option>}
          </select>
          {voice.model.endsWith(".en") && <small className="muted">English-only models always transcribe English.</small>}
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={voice.send_after_dictation}
            onChange={(e) => save({ send_after_dictation: e.target.checked })}
          />
          Send after dictation (otherwise the text waits in the box for you to edit)
        </label>
        <label className="check">
          <input type="checkbox" checked={voice.partial_results} onChange={(e) => save({ partial_results: e.target.checked })} />
          Show text while I speak
        </label>
        <label className="field">
          Longest recording
          <select
            aria-label="Longest recording"
            value={voice.max_seconds}
            onChange={(e) => save({ max_seconds: Number(e.target.value) })}
          >
            {[60, 120, 300, 600, 900].map((s) => (
              <option key={s} value={s}>
                {s / 60} min
              </option>
            ))}
            {![60, 120, 300, 600, 900].includes(voice.max_seconds) && <option value={voice.max_seconds}>{voice.max_seconds} s</option>}
          </select>
        </label>
        <label className="field">
          Keep the model in memory after dictating
          <select
            aria-label="Keep the model in memory"
            value={voice.keep_model_secs}
            onChange={(e) => save({ keep_model_secs: Number(e.target.value) })}
          >
            <option value={0}>No, release it at once</option>
            <option value={120}>2 minutes</option>
            <option value={600}>10 minutes</option>
            <option value={3600}>1 hour</option>
            {![0, 120, 600, 3600].includes(voice.keep_model_secs) && (
              <option value={voice.keep_model_secs}>{voice.keep_model_secs} s</option>
            )}
          </select>
        </label>
      </fieldset>
      <PushToTalk
        accelerator={voice.push_to_talk}
        mode={voice.push_to_talk_mode}
        onSave={(push_to_talk, push_to_talk_mode) => save({ push_to_talk, push_to_talk_mode })}
      />
    </>
  );
}

function Microphone({ value, onChange }: { value: string; onChange: (device: string) => void }) {
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
  return (
    <label className="field">
      Microphone
      <span className="row">
        <select aria-label="Microphone" value={value} onChange={(e) => onChange(e.target.value)}>
          <option value="">System default{devices?.find((d) => d.is_default) ? ` (${devices.find((d) => d.is_default)!.name})` : ""}</option>
          {devices?.map((d) => (
            <option key={d.name} value={d.name}>
              {d.name}
              {d.sample_rate ? ` · ${d.sample_rate / 1000} kHz, ${d.channels} ch` : ""}
            </option>
          ))}
          {missing && <option value={value}>{value} (not connected)</option>}
        </select>
        <button type="button" className="link-button" onClick={() => void load()}>
          Refresh
        </button>
      </span>
      {devices?.length === 0 && <small className="error">No microphone found.</small>}
      {error && <small className="error">{error}</small>}
    </label>
  );
}

function ModelManager({ chosen, onChoose }: { chosen: string; onChoose: (name: string) => void }) {
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
      <legend>Speech model</legend>
      <p className="muted small">
        Whisper runs on this computer; nothing you say leaves it. Bigger models make fewer mistakes and need more memory and time.
      </p>
      <table className="voice-models" aria-label="Whisper models">
        <tbody>
          {models.map((m) => {
            const p = progress[m.name];
            return (
              <tr key={m.name} aria-label={`Model ${m.name}`}>
                <td>
                  <label className="check">
                    <input
                      type="radio"
                      name="voice-model"
                      aria-label={`Use ${m.name}`}
                      checked={chosen === m.name}
                      disabled={m.state !== "ready"}
                      onChange={() => onChoose(m.name)}
                    />
                    <strong>{m.name}</strong>
                  </label>
                  <small className="muted">
                    {m.english_only ? "English" : "99 languages"} · {m.summary}
                  </small>
                </td>
                <td className="muted small">
                  {mb(m.size)} disk
                  <br />~{m.memory_mb} MB memory
                </td>
                <td>
                  {p ? (
                    <div className="tool-progress" role="progressbar" aria-label={`Downloading ${m.name}`} aria-valuenow={Math.round((100 * p.done) / Math.max(1, p.total))} aria-valuemin={0} aria-valuemax={100}>
                      <div className="bar" style={{ width: `${(100 * p.done) / Math.max(1, p.total)}%` }} />
                      <span>
                        {mb(p.done)} of {mb(p.total)}
                      </span>
                      <button type="button" className="link-button" onClick={() => void call(commands.voiceModelCancel(m.name))}>
                        Stop
                      </button>
                    </div>
                  ) : m.state === "ready" ? (
                    confirm === m.name ? (
                      <span className="buttons">
                        <button type="button" className="danger" onClick={() => void remove(m.name)}>
                          Delete {m.name}
                        </button>
                        <button type="button" className="link-button" onClick={() => setConfirm(null)}>
                          Keep
                        </button>
                      </span>
                    ) : (
                      <button type="button" className="link-button" onClick={() => setConfirm(m.name)}>
                        Delete
                      </button>
                    )
                  ) : (
                    <button type="button" onClick={() => void download(m.name)}>
                      {m.state === "partial" ? `Resume (${mb(m.partial)} here)` : "Download"}
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
  const [draft, setDraft] = useState<string | null>(null);
  const commit = () => {
    if (draft !== null && draft.trim() && draft.trim() !== chosen) onChoose(draft.trim());
    setDraft(null);
  };
  return (
    <label className="field">
      Or use a model file (whisper.cpp ggml format)
      <input
        aria-label="Model file"
        placeholder="/path/to/ggml-model.bin"
        value={draft ?? chosen}
        onChange={(e) => setDraft(e.target.value)}
        onBlur={commit}
        onKeyDown={(e) => e.key === "Enter" && commit()}
      />
      {chosen && <small className="muted">Dictation uses this file.</small>}
    </label>
  );
}

function PushToTalk(props: { accelerator: string; mode: PushToTalkMode; onSave: (accelerator: string, mode: PushToTalkMode) => void }) {
  const [status, setStatus] = useState<ShortcutStatus | null>(null);
  const [draft, setDraft] = useState<string | null>(null);
  useEffect(() => {
    void commands.voiceShortcutStatus().then(setStatus, () => {});
  }, [props.accelerator, props.mode]);
  const commit = () => {
    if (draft !== null && draft.trim() !== props.accelerator) props.onSave(draft.trim(), props.mode);
    setDraft(null);
  };
  return (
    <fieldset className="card">
      <legend>Push to talk</legend>
      <label className="field">
        Shortcut (works while Perch is hidden or in mini mode; empty turns it off)
        <input
          aria-label="Push-to-talk shortcut"
          placeholder="Ctrl+Alt+Space"
          value={draft ?? props.accelerator}
          onChange={(e) => setDraft(e.target.value)}
          onBlur={commit}
          onKeyDown={(e) => e.key === "Enter" && commit()}
        />
      </label>
      <div className="segmented" role="radiogroup" aria-label="Push-to-talk mode">
        {(
          [
            ["hold", "Hold to talk"],
            ["toggle", "Press to start and stop"],
          ] as const
        ).map(([mode, label]) => (
          <label key={mode} className={props.mode === mode ? "selected" : undefined}>
            <input type="radio" name="ptt-mode" checked={props.mode === mode} onChange={() => props.onSave(props.accelerator, mode)} />
            {label}
          </label>
        ))}
      </div>
      {status?.problem ? (
        <p className="error small" role="alert">
          {status.problem}
        </p>
      ) : status?.active ? (
        <small className="muted">Active: {status.assigned ?? status.accelerator}</small>
      ) : null}
    </fieldset>
  );
}
