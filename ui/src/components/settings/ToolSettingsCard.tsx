import { useEffect, useState } from "react";
import { Channel } from "@tauri-apps/api/core";
import type { DownloadProgress, ModelStatus, RetrieverChoice, ToolSettings } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";
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
  const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;
  return (
    <div className="field" aria-label="Embedded model">
      <span>Built-in model (all-MiniLM-L6-v2)</span>
      {status.present ? (
        <small className="muted">Downloaded; picks tools by meaning, on this computer.</small>
      ) : progress ? (
        <div className="tool-progress" role="progressbar" aria-valuenow={progress.total ? Math.round((100 * progress.done) / progress.total) : 0} aria-valuemin={0} aria-valuemax={100}>
          <div className="bar" style={{ width: `${progress.total ? (100 * progress.done) / progress.total : 0}%` }} />
          <span>
            {mb(progress.done)} of {mb(progress.total)}
          </span>
        </div>
      ) : (
        <div className="buttons">
          <button type="button" onClick={() => void download()}>
            Download ({mb(status.download_bytes)})
          </button>
          <small className="muted">Until then, tools are picked by Ollama's embeddings or by keywords.</small>
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

const RETRIEVERS: { value: RetrieverChoice; label: string }[] = [
  { value: "auto", label: "Best available" },
  { value: "mini_lm", label: "Built-in model (all-MiniLM-L6-v2)" },
  { value: "ollama", label: "Ollama embeddings" },
  { value: "bm25", label: "Keywords (BM25)" },
];

/** Settings -> Tools: how many tools the model sees, which always, and which folders servers
 * may use (what runs unasked is under Permissions). */
export function ToolSettingsCard() {
  const { settings, setTools } = useSettings();
  const tools = settings?.tools;
  if (!tools) return null;
  const save = (change: Partial<ToolSettings>) => void setTools({ ...tools, ...change });
  return (
    <>
      <fieldset className="card">
        <legend>Tools</legend>
        <label className="check">
          <input type="checkbox" checked={tools.enabled} onChange={(e) => save({ enabled: e.target.checked })} />
          Let models use tools from MCP servers
        </label>
        <label className="check">
          <input type="checkbox" checked={tools.allow_read_only} onChange={(e) => save({ allow_read_only: e.target.checked })} />
          Run tools marked read-only without asking
        </label>
        <label className="check">
          <input type="checkbox" checked={tools.skip_with_images} onChange={(e) => save({ skip_with_images: e.target.checked })} />
          Offer no tools when an image is attached
        </label>
        <NumberField label="Tools offered per message (K)" aria="Tools per message" min={1} value={tools.top_k ?? 8} onSave={(n) => save({ top_k: n })} />
        <NumberField label="Tool rounds per answer" aria="Tool rounds" min={1} value={tools.max_rounds ?? 30} onSave={(n) => save({ max_rounds: n })} />
        <NumberField
          label="Longest tool result (characters)"
          aria="Longest tool result"
          min={500}
          step={1000}
          value={tools.max_result_chars ?? 20000}
          onSave={(n) => save({ max_result_chars: n })}
        />
        <label className="field">
          Picking the tools
          <select aria-label="Retriever" value={tools.retriever} onChange={(e) => save({ retriever: e.target.value as RetrieverChoice })}>
            {RETRIEVERS.map((r) => (
              <option key={r.value} value={r.value}>
                {r.label}
              </option>
            ))}
          </select>
        </label>
        <EmbeddedModel />
        <label className="field">
          Always offered (server:tool, one per line)
          <textarea
            aria-label="Always-on tools"
            rows={3}
            defaultValue={(tools.always_on ?? []).join("\n")}
            onBlur={(e) => save({ always_on: lines(e.target.value) })}
          />
        </label>
        <label className="field">
          Folders (one per line): MCP servers may work in them, and file references in answers open from them
          <textarea
            aria-label="Folders"
            rows={2}
            placeholder="/home/me/projects/app"
            defaultValue={(tools.roots ?? []).join("\n")}
            onBlur={(e) => save({ roots: lines(e.target.value) })}
          />
        </label>
      </fieldset>
      <p className="muted small center">Which tools run without asking: Settings → Permissions.</p>
    </>
  );
}
