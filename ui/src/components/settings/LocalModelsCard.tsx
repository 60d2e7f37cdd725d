import { useState } from "react";
import type { CatalogModel, LocalModel, LocalSettings, RuntimeStatus } from "../../bindings";
import { commands } from "../../ipc";
import { megabytes, useLocalModels } from "../../lib/localModels";
import { useSettings } from "../../lib/settings";

/** The settings with every field present (the stored row may predate some). */
function complete(l: LocalSettings | undefined): Required<LocalSettings> {
  return {
    context_length: l?.context_length ?? 4096,
    threads: l?.threads ?? 0,
    keep_alive_secs: l?.keep_alive_secs ?? 300,
    memory_limit_mb: l?.memory_limit_mb ?? 0,
    max_answer_tokens: l?.max_answer_tokens ?? 0,
  };
}

/** Settings -> Models -> On this computer: local models run by Perch itself (llama.cpp). */
export function LocalModelsCard() {
  const { settings, setLocal } = useSettings();
  const local = useLocalModels();
  const [confirm, setConfirm] = useState<string | null>(null);
  if (!settings) return null;
  const options = complete(settings.local);
  const save = (change: Partial<LocalSettings>) => void setLocal({ ...options, ...change });
  const catalogIds = new Set(local.overview?.catalog.map((c) => c.id));
  const others = local.overview?.models.filter((m) => !(catalogIds.has(m.name) && m.source === "downloaded")) ?? [];
  const remove = (name: string) => {
    setConfirm(null);
    void local.change(commands.localModelDelete(name));
  };

  return (
    <fieldset className="card">
      <legend>On this computer</legend>
      <p className="muted small">
        Perch runs these models itself: no Ollama, no account, and nothing leaves this computer. Use them as <code>local:NAME</code> in the model
        picker.
      </p>
      {local.overview && <Runtime status={local.overview.runtime} onUnload={() => void local.change(commands.localRuntimeStop())} />}
      <table className="voice-models" aria-label="Local models">
        <tbody>
          {local.overview?.catalog.map((m) => (
            <CatalogRow
              key={m.id}
              model={m}
              progress={local.progress[m.id]}
              confirming={confirm === m.id}
              onDownload={() => void local.download(m.id)}
              onStop={() => local.cancel(m.id)}
              onDelete={() => setConfirm(m.id)}
              onConfirm={() => remove(m.id)}
              onKeep={() => setConfirm(null)}
            />
          ))}
          {others.map((m) => (
            <OwnRow
              key={m.name}
              model={m}
              confirming={confirm === m.name}
              onDelete={() => setConfirm(m.name)}
              onConfirm={() => remove(m.name)}
              onKeep={() => setConfirm(null)}
            />
          ))}
        </tbody>
      </table>
      <AddFile
        onAdd={async (path, name) => {
          // The engine names a file added without a name; the confirmation says what it chose.
          let named: string | null = null;
          const adding = commands.localModelAdd(path, name || null).then((r) => {
            if (r.status === "ok") named = r.data.name;
            return r;
          });
          return (await local.change(adding)) ? named : null;
        }}
      />
      {local.overview && (
        <p className="muted small">
          GGUF files put in <span className="path">{local.overview.folder}</span> appear here too.
        </p>
      )}
      <label className="field">
        Context length
        <select aria-label="Context length" value={options.context_length} onChange={(e) => save({ context_length: Number(e.target.value) })}>
          {[2048, 4096, 8192, 16384, 32768].map((n) => (
            <option key={n} value={n}>
              {n / 1024}k tokens
            </option>
          ))}
          <option value={0}>As trained (can need a lot of memory)</option>
          {![0, 2048, 4096, 8192, 16384, 32768].includes(options.context_length) && (
            <option value={options.context_length}>{options.context_length} tokens</option>
          )}
        </select>
      </label>
      <label className="field">
        Keep a model loaded after its answer
        <select aria-label="Keep loaded" value={options.keep_alive_secs} onChange={(e) => save({ keep_alive_secs: Number(e.target.value) })}>
          <option value={0}>No, unload at once</option>
          <option value={60}>1 minute</option>
          <option value={300}>5 minutes</option>
          <option value={1800}>30 minutes</option>
          <option value={3600}>1 hour</option>
          {![0, 60, 300, 1800, 3600].includes(options.keep_alive_secs) && (
            <option value={options.keep_alive_secs}>{options.keep_alive_secs} s</option>
          )}
        </select>
      </label>
      <NumberField
        label="CPU threads (0: one per core)"
        value={options.threads}
        max={256}
        onSave={(threads) => save({ threads })}
      />
      <NumberField
        label="Memory limit in MB (0: whatever is free)"
        value={options.memory_limit_mb}
        max={1 << 20}
        onSave={(memory_limit_mb) => save({ memory_limit_mb })}
      />
      {local.error && (
        <p className="error small" role="alert">
          {local.error}
        </p>
      )}
    </fieldset>
  );
}

function Runtime({ status, onUnload }: { status: RuntimeStatus; onUnload: () => void }) {
  const busy = status.state !== "stopped" && status.state !== "crashed";
  return (
    <p className="small" aria-label="Local runtime">
      {busy ? (
        <>
          {status.state === "answering" ? "Answering with" : status.state === "ready" ? "Loaded:" : "Loading"} <code>{status.model ?? "…"}</code>
          {status.context_length ? ` · ${status.context_length} tokens of context` : ""}
          {status.threads ? ` · ${status.threads} threads` : ""}{" "}
          <button type="button" className="link-button" onClick={onUnload}>
            Unload
          </button>
        </>
      ) : (
        <span className="muted">No model loaded; one loads on its first question.</span>
      )}
      {status.message && <span className="error"> {status.message}</span>}
    </p>
  );
}

interface RowActions {
  confirming: boolean;
  onDelete: () => void;
  onConfirm: () => void;
  onKeep: () => void;
}

function DeleteButtons({ name, label, ...a }: RowActions & { name: string; label: string }) {
  return a.confirming ? (
    <span className="buttons">
      <button type="button" className="danger" onClick={a.onConfirm}>
        {label} {name}
      </button>
      <button type="button" className="link-button" onClick={a.onKeep}>
        Keep
      </button>
    </span>
  ) : (
    <button type="button" className="link-button" onClick={a.onDelete}>
      {label}
    </button>
  );
}

function CatalogRow(
  props: RowActions & {
    model: CatalogModel;
    progress?: { done: number; total: number };
    onDownload: () => void;
    onStop: () => void;
  },
) {
  const { model: m, progress: p } = props;
  const percent = p && p.total > 0 ? Math.round((100 * p.done) / p.total) : 0;
  return (
    <tr aria-label={`Model ${m.title}`}>
      <td>
        <strong>{m.title}</strong> <code className="muted">local:{m.id}</code>
        <small className="muted">
          {m.note}
          {m.tools ? " · tools" : ""}
          {m.thinking ? " · thinks" : ""} ·{" "}
          <a href={m.licence_url} onClick={(e) => (e.preventDefault(), void commands.openUrl(m.licence_url))}>
            {m.licence}
          </a>
        </small>
      </td>
      <td className="muted small">
        {megabytes(m.size)} disk
        <br />~{megabytes(m.memory)} memory
      </td>
      <td>
        {p ? (
          <div className="tool-progress" role="progressbar" aria-label={`Downloading ${m.title}`} aria-valuenow={percent} aria-valuemin={0} aria-valuemax={100}>
            <div className="bar" style={{ width: `${percent}%` }} />
            <span>{p.total > 0 ? `${megabytes(p.done)} of ${megabytes(p.total)}` : "Starting…"}</span>
            <button type="button" className="link-button" onClick={props.onStop}>
              Stop
            </button>
          </div>
        ) : m.installed ? (
          <DeleteButtons {...props} name={m.title} label="Delete" />
        ) : (
          <button type="button" onClick={props.onDownload}>
            {m.partial > 0 ? `Resume (${megabytes(m.partial)} here)` : "Download"}
          </button>
        )}
      </td>
    </tr>
  );
}

function OwnRow(props: RowActions & { model: LocalModel }) {
  const m = props.model;
  const added = m.source === "added";
  return (
    <tr aria-label={`Model ${m.name}`}>
      <td>
        <strong>{m.title}</strong> <code className="muted">local:{m.name}</code>
        <small className="muted path">{m.path}</small>
        {m.problem && <small className="error">{m.problem}</small>}
      </td>
      <td className="muted small">{megabytes(m.size)} disk</td>
      <td>
        {/* An added file belongs to the user: Perch only forgets it. */}
        <DeleteButtons {...props} name={m.name} label={added ? "Forget" : "Delete"} />
      </td>
    </tr>
  );
}

function AddFile({ onAdd }: { onAdd: (path: string, name: string) => Promise<string | null> }) {
  const [path, setPath] = useState("");
  const [name, setName] = useState("");
  const [busy, setBusy] = useState(false);
  const [added, setAdded] = useState<string | null>(null);
  const add = async () => {
    if (!path.trim() || busy) return;
    setBusy(true);
    setAdded(null);
    // The fields are kept when adding fails, so the path can be corrected.
    const named = await onAdd(path.trim(), name.trim());
    if (named) {
      setAdded(named);
      setPath("");
      setName("");
    }
    setBusy(false);
  };
  return (
    <div className="field">
      Add a GGUF file
      <span className="row">
        <input
          aria-label="GGUF file"
          placeholder="/path/to/model.gguf"
          value={path}
          onChange={(e) => setPath(e.target.value)}
          onKeyDown={(e) => e.key === "Enter" && void add()}
        />
        <input aria-label="Model name" placeholder="name (optional)" value={name} onChange={(e) => setName(e.target.value)} />
        <button type="button" disabled={!path.trim() || busy} onClick={() => void add()}>
          Add file
        </button>
      </span>
      {added && (
        <small className="muted" role="status">
          Added: pick it in the chat's model list as local:{added}.
        </small>
      )}
    </div>
  );
}

function NumberField({ label, value, max, onSave }: { label: string; value: number; max: number; onSave: (n: number) => void }) {
  const [draft, setDraft] = useState<string | null>(null);
  const commit = () => {
    const n = Number(draft);
    if (draft !== null && Number.isInteger(n) && n >= 0 && n <= max && n !== value) onSave(n);
    setDraft(null);
  };
  return (
    <label className="field">
      {label}
      <input
        type="number"
        min={0}
        max={max}
        aria-label={label}
        value={draft ?? String(value)}
        onChange={(e) => setDraft(e.target.value)}
        onBlur={commit}
        onKeyDown={(e) => e.key === "Enter" && commit()}
      />
    </label>
  );
}
