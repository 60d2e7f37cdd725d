import { useEffect, useState } from "react";
import { Channel } from "@tauri-apps/api/core";
import { t } from "@lingui/core/macro";
import { Trans, useLingui } from "@lingui/react/macro";
import type { DownloadProgress, OutputDevice, SpeechSettings, VoiceChoice, VoiceView } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";
import { formatBytes, formatNumber } from "../../lib/format";
import { useSettings } from "../../lib/settings";

function complete(s: SpeechSettings | undefined): Required<SpeechSettings> {
  return {
    voice: s?.voice ?? "auto",
    speed_percent: s?.speed_percent ?? 100,
    device: s?.device ?? "",
    speak_answers: s?.speak_answers ?? false,
  };
}

/** Settings -> Voice, reading aloud: the natural voices (downloaded here), which one reads,
 * its speed, the loudspeaker, and reading every answer as it is written. */
/** Which voice reads, and why espeak-ng does when it does. */
function describe(choice: VoiceChoice): string {
  if (choice.kind === "piper") {
    const name = choice.name;
    return t`Answers are read by ${name}.`;
  }
  const reason = choice.reason;
  return t`espeak-ng reads answers: ${reason}.`;
}

function notConnected(device: string): string {
  return t`${device} (not connected)`;
}

export function ReadAloudCard() {
  const { t } = useLingui();
  const { settings, setSpeech } = useSettings();
  const speech = complete(settings?.speech);
  const [voices, setVoices] = useState<VoiceView[]>([]);
  const [devices, setDevices] = useState<OutputDevice[] | null>(null);
  const [choice, setChoice] = useState<VoiceChoice | null>(null);
  const [progress, setProgress] = useState<Record<string, number>>({});
  const [error, setError] = useState<string | null>(null);
  // Bumped after a download or a deletion: the list and the choice are read again.
  const [version, setVersion] = useState(0);
  const reload = () => setVersion((v) => v + 1);
  useEffect(() => {
    void call(commands.speechVoices()).then(setVoices, (e) => setError(errorMessage(e)));
    void call(commands.speechChoice()).then(setChoice, () => setChoice(null));
  }, [version, speech.voice]);
  useEffect(() => {
    void call(commands.speechDevices()).then(setDevices, (e) => setError(errorMessage(e)));
  }, []);
  const save = (change: Partial<SpeechSettings>) => void setSpeech({ ...speech, ...change });
  const download = async (name: string) => {
    const channel = new Channel<DownloadProgress>();
    channel.onmessage = (p) => setProgress((all) => ({ ...all, [name]: p.total ? p.done / p.total : 0 }));
    setError(null);
    try {
      await call(commands.speechVoiceDownload(name, channel));
    } catch (e) {
      setError(errorMessage(e));
    }
    setProgress(({ [name]: _, ...rest }) => rest);
    reload();
  };
  if (!settings) return null;
  const speed = formatNumber(speech.speed_percent);
  return (
    <fieldset className="card">
      <legend>
        <Trans>Reading aloud</Trans>
      </legend>
      <label className="check">
        <input type="checkbox" checked={speech.speak_answers} onChange={(e) => save({ speak_answers: e.target.checked })} />
        <Trans>Read answers aloud as they are written</Trans>
      </label>
      <label className="field">
        <Trans>Voice</Trans>
        <select aria-label={t`Voice`} value={speech.voice} onChange={(e) => save({ voice: e.target.value })}>
          <option value="auto">{t`The natural voice of the app's language`}</option>
          {voices
            .filter((v) => v.state === "ready")
            .map((v) => (
              <option key={v.name} value={v.name}>
                {v.name}
              </option>
            ))}
          <option value="espeak">{t`espeak-ng (robotic, every language)`}</option>
          {!["auto", "espeak"].includes(speech.voice) && !voices.some((v) => v.name === speech.voice && v.state === "ready") && (
            <option value={speech.voice}>{speech.voice}</option>
          )}
        </select>
        {choice && (
          <small className="muted" aria-live="polite">
            {describe(choice)}
          </small>
        )}
      </label>
      <label className="field">
        <Trans>Speed: {speed} %</Trans>
        <input
          type="range"
          min={50}
          max={200}
          step={10}
          aria-label={t`Speed`}
          value={speech.speed_percent}
          onChange={(e) => save({ speed_percent: Number(e.target.value) })}
        />
      </label>
      <label className="field">
        <Trans>Loudspeaker</Trans>
        <select aria-label={t`Loudspeaker`} value={speech.device} onChange={(e) => save({ device: e.target.value })}>
          <option value="">{t`System default`}</option>
          {devices?.map((d) => (
            <option key={d.name} value={d.name}>
              {d.name}
            </option>
          ))}
          {speech.device && devices && !devices.some((d) => d.name === speech.device) && (
            <option value={speech.device}>{notConnected(speech.device)}</option>
          )}
        </select>
      </label>
      <ul className="plain" aria-label={t`Natural voices`}>
        {voices.map((v) => {
          const size = formatBytes(v.size, { wholeMegabytes: true });
          const name = v.name;
          const share = progress[v.name];
          return (
            <li key={v.name} className="row">
              <span>
                {v.name} <small className="muted">{v.summary}</small>
              </span>
              {share !== undefined ? (
                <>
                  <progress max={1} value={share} aria-label={t`Downloading ${name}`} />
                  <button type="button" onClick={() => void call(commands.speechVoiceCancel(v.name))}>
                    <Trans>Stop</Trans>
                  </button>
                </>
              ) : v.state === "ready" ? (
                <button type="button" onClick={() => void call(commands.speechVoiceDelete(v.name)).then(reload, (e) => setError(errorMessage(e)))}>
                  <Trans>Delete</Trans>
                </button>
              ) : (
                <button type="button" onClick={() => void download(v.name)}>
                  {v.state === "partial" ? t`Resume (${size})` : t`Download (${size})`}
                </button>
              )}
            </li>
          );
        })}
      </ul>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </fieldset>
  );
}
