import { useEffect, useState } from "react";
import { Channel } from "@tauri-apps/api/core";
import type { MessageDescriptor } from "@lingui/core";
import { msg } from "@lingui/core/macro";
import { Trans, useLingui } from "@lingui/react/macro";
import type { DownloadProgress, ModelStatus, RetrieverChoice, ToolSettings } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";
import { formatBytes } from "../../lib/format";
import { useSettings } from "../../lib/settings";

/** A number saved when the field is left or Enter pressed, never half-typed. */
export function NumberField(props: { label: string; aria: string; value: number; min: number; step?: number; onSave: (n: number) => void }) {
  const [draft, setDraft] = useState<string | null>(null);
  const commit = () => {
    if (draft === null) return;
    const n = Math.max(props.min, Math.round(Number(draft) || props.min));
    setDraft(null);
    if (n !== props.value) props.onSave(n);
  };
  return (
    <label className="field">
      {props.label}
      <input
        type="number"
        aria-label={props.aria}
        min={props.min}
        step={props.step}
        value={draft ?? String(props.value)}
        onChange={(e) => setDraft(e.target.value)}
        onBlur={commit}
        onKeyDown={(e) => e.key === "Enter" && commit()}
      />
    </label>
  );
}

/** The embedded retrieval model: downloaded once, with progress and a checksum. */
function EmbeddedModel() {
  const { t } = useLingui();
  const [status, setStatus] = useState<ModelStatus | null>(null);
  const [progress, setProgress] = useState<DownloadProgress | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    void call(commands.toolsModelStatus()).then(setStatus, (e) => setError(errorMessage(e)));
  }, []);
  const download = async () => {
    const channel = new Channel<DownloadProgress>();
    channel.onmessage = setProgress;
    setError(null);
    setProgress({ done: 0, total: status?.download_bytes ?? 0 });
    try {
      setStatus(await call(commands.toolsModelDownload(channel)));
    } catch (e) {
      setError(errorMessage(e));
    }
    setProgress(null);
  };
  if (!status) return error ? <p className="error small">{error}</p> : null;
  const done = progress ? formatBytes(progress.done) : "";
  const total = progress ? formatBytes(progress.total) : "";
  const size = formatBytes(status.download_bytes);
  return (
    <div className="field" aria-label={t`Embedded model`}>
      <span>{t(BUILT_IN)}</span>
      {status.present ? (
        <small className="muted">
          <Trans>Downloaded; picks tools by meaning, on this computer.</Trans>
        </small>
      ) : progress ? (
        <div className="tool-progress" role="progressbar" aria-valuenow={progress.total ? Math.round((100 * progress.done) / progress.total) : 0} aria-valuemin={0} aria-valuemax={100}>
          <div className="bar" style={{ width: `${progress.total ? (100 * progress.done) / progress.total : 0}%` }} />
          <span>
            {t({ message: `${done} of ${total}`, comment: "download progress: 45.0 MB of 91.3 MB" })}
          </span>
        </div>
      ) : (
        <div className="buttons">
          <button type="button" onClick={() => void download()}>
            <Trans>Download ({size})</Trans>
          </button>
          <small className="muted">
            <Trans>Until then, tools are picked by Ollama's embeddings or by keywords.</Trans>
          </small>
        </div>
      )}
      {error && (
        <p className="error small" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}

const lines = (text: string) => text.split("\n").map((l) => l.trim()).filter(Boolean);

/** The retrieval model that ships with Perch (its name stays as it is). */
const BUILT_IN = msg`Built-in model (all-MiniLM-L6-v2)`;

const RETRIEVERS: { value: RetrieverChoice; label: MessageDescriptor }[] = [
  { value: "auto", label: msg({ message: "Best available", comment: "how tools are picked: the best way available" }) },
  { value: "mini_lm", label: BUILT_IN },
  { value: "ollama", label: msg`Ollama embeddings` },
  { value: "bm25", label: msg`Keywords (BM25)` },
];

/** Settings -> Tools: how many tools the model sees, which always, and which folders servers
 * may use (what runs unasked is under Permissions). */
export function ToolSettingsCard() {
  const { t } = useLingui();
  const { settings, setTools } = useSettings();
  const tools = settings?.tools;
  if (!tools) return null;
  const save = (change: Partial<ToolSettings>) => void setTools({ ...tools, ...change });
  return (
    <>
      <fieldset className="card">
        <legend>
          <Trans>Tools</Trans>
        </legend>
        <label className="check">
          <input type="checkbox" checked={tools.enabled} onChange={(e) => save({ enabled: e.target.checked })} />
          <Trans>Let models use tools from MCP servers</Trans>
        </label>
        <label className="check">
          <input type="checkbox" checked={tools.allow_read_only} onChange={(e) => save({ allow_read_only: e.target.checked })} />
          <Trans>Run tools marked read-only without asking</Trans>
        </label>
        <label className="check">
          <input type="checkbox" checked={tools.skip_with_images} onChange={(e) => save({ skip_with_images: e.target.checked })} />
          <Trans>Offer no tools when an image is attached</Trans>
        </label>
        <label className="check">
          <input type="checkbox" checked={tools.apps ?? true} onChange={(e) => save({ apps: e.target.checked })} />
          <Trans>Show the apps tool servers send (a tool's own interface in its card)</Trans>
        </label>
        <NumberField
          label={t`Tools offered per message (K)`}
          aria={t`Tools per message`}
          min={1}
          value={tools.top_k ?? 8}
          onSave={(n) => save({ top_k: n })}
        />
        <NumberField
          label={t`Tool rounds per answer`}
          aria={t`Tool rounds`}
          min={1}
          value={tools.max_rounds ?? 30}
          onSave={(n) => save({ max_rounds: n })}
        />
        <NumberField
          label={t`Longest tool result (characters)`}
          aria={t`Longest tool result`}
          min={500}
          step={1000}
          value={tools.max_result_chars ?? 20000}
          onSave={(n) => save({ max_result_chars: n })}
        />
        <label className="field">
          <Trans>Picking the tools</Trans>
          <select aria-label={t`Retriever`} value={tools.retriever} onChange={(e) => save({ retriever: e.target.value as RetrieverChoice })}>
            {RETRIEVERS.map((r) => (
              <option key={r.value} value={r.value}>
                {t(r.label)}
              </option>
            ))}
          </select>
        </label>
        <EmbeddedModel />
        <label className="field">
          <Trans>Always offered (server:tool, one per line)</Trans>
          <textarea
            aria-label={t`Always-on tools`}
            rows={3}
            defaultValue={(tools.always_on ?? []).join("\n")}
            onBlur={(e) => save({ always_on: lines(e.target.value) })}
          />
        </label>
        <label className="field">
          <Trans>Folders (one per line): MCP servers may work in them, and file references in answers open from them</Trans>
          <textarea
            aria-label={t`Folders`}
            rows={2}
            placeholder="/home/me/projects/app"
            defaultValue={(tools.roots ?? []).join("\n")}
            onBlur={(e) => save({ roots: lines(e.target.value) })}
          />
        </label>
      </fieldset>
      <p className="muted small center">
        <Trans>Which tools run without asking: Settings → Permissions.</Trans>
      </p>
    </>
  );
}
