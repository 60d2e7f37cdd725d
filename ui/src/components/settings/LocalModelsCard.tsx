import { useState } from "react";
import { plural } from "@lingui/core/macro";
import { Trans, useLingui } from "@lingui/react/macro";
import type { CatalogModel, GpuLayers, LocalModel, LocalSettings, RuntimeStatus } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";
import { ConfirmInPlace } from "../ConfirmInPlace";
import { formatNumber } from "../../lib/format";
import { megabytes, notifyModelsChanged, useLocalModels } from "../../lib/localModels";
import { useSettings } from "../../lib/settings";

/** The settings with every field present (the stored row may predate some). */
function complete(l: LocalSettings | undefined): Required<LocalSettings> {
  return {
    context_length: l?.context_length ?? 4096,
    threads: l?.threads ?? 0,
    keep_alive_secs: l?.keep_alive_secs ?? 300,
    memory_limit_mb: l?.memory_limit_mb ?? 0,
    max_answer_tokens: l?.max_answer_tokens ?? 0,
    gpu_layers: l?.gpu_layers ?? {},
  };
}

/** Settings -> Models -> On this computer: local models run by Perch itself (llama.cpp). */
/** A context length in tokens, as typed in the settings (no grouping: "16384"). */
const contextTokens = (n: number) => formatNumber(n, { useGrouping: false });

export function LocalModelsCard() {
  const { t } = useLingui();
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
  const customContext = contextTokens(options.context_length);
  const gpu = (name: string) => ({
    value: options.gpu_layers[name] ?? ({ mode: "auto" } as GpuLayers),
    onChange: (value: GpuLayers) => {
      const { [name]: _previous, ...rest } = options.gpu_layers;
      save({ gpu_layers: value.mode === "auto" ? rest : { ...rest, [name]: value } });
    },
  });
  const seconds = formatNumber(options.keep_alive_secs);

  return (
    <fieldset className="card">
      <legend>
        <Trans>On this computer</Trans>
      </legend>
      <p className="muted small">
        <Trans>
          Perch runs these models itself: no Ollama, no account, and nothing leaves this computer. Use them as <code>local:NAME</code> in the
          model picker.
        </Trans>
      </p>
      {local.overview && <Runtime status={local.overview.runtime} onUnload={() => void local.change(commands.localRuntimeStop())} />}
      <table className="voice-models" aria-label={t`Local models`}>
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
              gpu={gpu(m.id)}
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
              gpu={gpu(m.name)}
            />
          ))}
        </tbody>
      </table>
      <AddFile
        onAdd={async (path, name) => {
          // The engine names a file added without a name; the confirmation says what it chose.
          const added = await call(commands.localModelAdd(path, name || null));
          notifyModelsChanged();
          await local.refresh();
          return added.name;
        }}
      />
      {local.overview && <FolderNote folder={local.overview.folder} />}
      <label className="field">
        <Trans>Context length</Trans>
        <select aria-label={t`Context length`} value={options.context_length} onChange={(e) => save({ context_length: Number(e.target.value) })}>
          {[2048, 4096, 8192, 16384, 32768].map((n) => {
            const thousands = formatNumber(n / 1024);
            return (
              <option key={n} value={n}>
                {t({ message: `${thousands}k tokens`, comment: "a context length: 4k tokens is 4096" })}
              </option>
            );
          })}
          <option value={0}>{t`As trained (can need a lot of memory)`}</option>
          {![0, 2048, 4096, 8192, 16384, 32768].includes(options.context_length) && (
            <option value={options.context_length}>{t`${customContext} tokens`}</option>
          )}
        </select>
      </label>
      <label className="field">
        <Trans>Keep a model loaded after its answer</Trans>
        <select aria-label={t`Keep loaded`} value={options.keep_alive_secs} onChange={(e) => save({ keep_alive_secs: Number(e.target.value) })}>
          <option value={0}>{t`No, unload at once`}</option>
          <option value={60}>{t`1 minute`}</option>
          <option value={300}>{t`5 minutes`}</option>
          <option value={1800}>{t`30 minutes`}</option>
          <option value={3600}>{t`1 hour`}</option>
          {![0, 60, 300, 1800, 3600].includes(options.keep_alive_secs) && (
            <option value={options.keep_alive_secs}>{t({ message: `${seconds} s`, comment: "a duration in seconds" })}</option>
          )}
        </select>
      </label>
      <NumberField
        label={t`CPU threads (0: one per core)`}
        value={options.threads}
        max={256}
        onSave={(threads) => save({ threads })}
      />
      <NumberField
        label={t`Memory limit in MB (0: whatever is free)`}
        value={options.memory_limit_mb}
        max={1 << 20}
        onSave={(memory_limit_mb) => save({ memory_limit_mb })}
      />
      {/* A small model can fall into repeating itself until its context is full; a limit ends
          such an answer without the user having to stop it. */}
      <NumberField
        label={t`Longest answer in tokens (0: no limit)`}
        value={options.max_answer_tokens}
        max={1 << 20}
        onSave={(max_answer_tokens) => save({ max_answer_tokens })}
      />
      {local.error && (
        <p className="error small" role="alert">
          {local.error}
        </p>
      )}
    </fieldset>
  );
}

/** Where Perch looks for GGUF files of the user's own. */
function FolderNote({ folder }: { folder: string }) {
  return (
    <p className="muted small">
      <Trans>
        GGUF files put in <span className="path">{folder}</span> appear here too.
      </Trans>
    </p>
  );
}

function Runtime({ status, onUnload }: { status: RuntimeStatus; onUnload: () => void }) {
  const { t } = useLingui();
  const busy = status.state !== "stopped" && status.state !== "crashed";
  const model = status.model ?? "…";
  const context = status.context_length ? contextTokens(status.context_length) : "";
  const threads = status.threads ?? 0;
  const runsOn = status.runs_on;
  return (
    <p className="small" aria-label={t`Local runtime`}>
      {busy ? (
        <>
          {status.state === "answering" ? (
            <Trans>
              Answering with <code>{model}</code>
            </Trans>
          ) : status.state === "ready" ? (
            <Trans>
              Loaded: <code>{model}</code>
            </Trans>
          ) : (
            <Trans>
              Loading <code>{model}</code>
            </Trans>
          )}
          {context ? ` · ${t`${context} tokens of context`}` : ""}
          {threads ? ` · ${t`${plural(threads, { one: "# thread", other: "# threads" })}`}` : ""}{" "}
          <button type="button" className="link-button" onClick={onUnload}>
            <Trans>Unload</Trans>
          </button>
          {runsOn && (
            <span className="muted" aria-label={t`Runs on`}>
              <br />
              <Trans>Runs on {runsOn}</Trans>
            </span>
          )}
        </>
      ) : (
        <span className="muted">
          <Trans>No model loaded; one loads on its first question.</Trans>
        </span>
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

/** Delete (or, for a file of the user's own, Forget), then the same again with the name to confirm. */
function DeleteButtons({ name, forget = false, ...a }: RowActions & { name: string; forget?: boolean }) {
  const { t } = useLingui();
  return (
    <ConfirmInPlace
      asking={a.confirming}
      onAsk={a.onDelete}
      onConfirm={a.onConfirm}
      onKeep={a.onKeep}
      action={forget ? t({ message: "Forget", comment: "button: Perch forgets a model file the user added; the file stays" }) : t`Delete`}
      confirm={forget ? t`Forget ${name}` : t`Delete ${name}`}
      buttonClass="link-button"
      grouped
    />
  );
}

/** How much of a model goes to the graphics card: as many layers as fit (the default), all,
 *  none, or a number of layers. */
type GpuChoice = { value: GpuLayers; onChange: (value: GpuLayers) => void };

function GpuSelect({ title, value, onChange }: GpuChoice & { title: string }) {
  const { t } = useLingui();
  const [draft, setDraft] = useState<string | null>(null);
  const layers = value.mode === "count" ? value.layers : 16;
  const commit = () => {
    const n = Number(draft);
    if (draft !== null && Number.isInteger(n) && n >= 0 && n <= 1000) onChange({ mode: "count", layers: n });
    setDraft(null);
  };
  return (
    <span className="gpu-choice">
      <select
        aria-label={t`Graphics card for ${title}`}
        value={value.mode}
        onChange={(e) => {
          const mode = e.target.value as GpuLayers["mode"];
          onChange(mode === "count" ? { mode, layers } : ({ mode } as GpuLayers));
        }}
      >
        <option value="auto">{t({ message: "GPU: as much as fits", comment: "graphics card use for a local model" })}</option>
        <option value="all">{t({ message: "GPU: all layers", comment: "graphics card use for a local model" })}</option>
        <option value="none">{t({ message: "CPU only", comment: "graphics card use for a local model" })}</option>
        <option value="count">{t({ message: "GPU: some layers", comment: "graphics card use for a local model" })}</option>
      </select>
      {value.mode === "count" && (
        <input
          type="number"
          min={0}
          max={1000}
          aria-label={t`Layers on the graphics card for ${title}`}
          value={draft ?? String(layers)}
          onChange={(e) => setDraft(e.target.value)}
          onBlur={commit}
          onKeyDown={(e) => e.key === "Enter" && commit()}
        />
      )}
    </span>
  );
}

function CatalogRow(
  props: RowActions & {
    model: CatalogModel;
    progress?: { done: number; total: number };
    onDownload: () => void;
    onStop: () => void;
    gpu: GpuChoice;
  },
) {
  const { t } = useLingui();
  const { model: m, progress: p } = props;
  const percent = p && p.total > 0 ? Math.round((100 * p.done) / p.total) : 0;
  const title = m.title;
  const size = megabytes(m.size);
  const memory = megabytes(m.memory);
  const done = p ? megabytes(p.done) : "";
  const total = p ? megabytes(p.total) : "";
  const partial = megabytes(m.partial);
  return (
    <tr aria-label={t`Model ${title}`}>
      <td>
        <strong>{m.title}</strong> <code className="muted">local:{m.id}</code>
        <small className="muted">
          {m.note}
          {m.tools ? ` · ${t({ message: "tools", comment: "model capability: can call tools" })}` : ""}
          {m.thinking ? ` · ${t({ message: "thinks", comment: "model capability: reasons before answering" })}` : ""} ·{" "}
          <a href={m.licence_url} onClick={(e) => (e.preventDefault(), void commands.openUrl(m.licence_url))}>
            {m.licence}
          </a>
        </small>
        {m.installed && <GpuSelect title={m.title} {...props.gpu} />}
      </td>
      <td className="muted small">
        {t({ message: `${size} disk`, comment: "the space a model takes on disk" })}
        <br />
        {t({ message: `~${memory} memory`, comment: "about how much memory a model needs" })}
      </td>
      <td>
        {p ? (
          <div className="tool-progress" role="progressbar" aria-label={t`Downloading ${title}`} aria-valuenow={percent} aria-valuemin={0} aria-valuemax={100}>
            <div className="bar" style={{ width: `${percent}%` }} />
            <span>{p.total > 0 ? t`${done} of ${total}` : t`Starting…`}</span>
            <button type="button" className="link-button" onClick={props.onStop}>
              <Trans>Stop</Trans>
            </button>
          </div>
        ) : m.installed ? (
          <DeleteButtons {...props} name={m.title} />
        ) : (
          <button type="button" onClick={props.onDownload}>
            {m.partial > 0 ? t`Resume (${partial} here)` : t`Download`}
          </button>
        )}
      </td>
    </tr>
  );
}

function OwnRow(props: RowActions & { model: LocalModel; gpu: GpuChoice }) {
  const { t } = useLingui();
  const m = props.model;
  const added = m.source === "added";
  const name = m.name;
  const size = megabytes(m.size);
  return (
    <tr aria-label={t`Model ${name}`}>
      <td>
        <strong>{m.title}</strong> <code className="muted">local:{m.name}</code>
        <small className="muted path">{m.path}</small>
        {m.problem && <small className="error">{m.problem}</small>}
        <GpuSelect title={m.name} {...props.gpu} />
      </td>
      <td className="muted small">{t({ message: `${size} disk`, comment: "the space a model takes on disk" })}</td>
      <td>
        {/* An added file belongs to the user: Perch only forgets it. */}
        <DeleteButtons {...props} name={m.name} forget={added} />
      </td>
    </tr>
  );
}

/** A GGUF file added by its path; what went wrong shows under the fields, where the eye is. */
function AddFile({ onAdd }: { onAdd: (path: string, name: string) => Promise<string> }) {
  const { t } = useLingui();
  const [path, setPath] = useState("");
  const [name, setName] = useState("");
  const [busy, setBusy] = useState(false);
  const [added, setAdded] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const add = async () => {
    if (!path.trim() || busy) return;
    setBusy(true);
    setAdded(null);
    setError(null);
    try {
      setAdded(await onAdd(path.trim(), name.trim()));
      setPath("");
      setName("");
    } catch (e) {
      // The fields are kept, so the path can be corrected.
      setError(errorMessage(e));
    }
    setBusy(false);
  };
  // The system's file chooser, showing GGUF files: the path goes in the field, to be added.
  const browse = async () => {
    setError(null);
    try {
      const picked = await call(commands.filesChooseFile(t`Add a GGUF file`, t`GGUF models`, ["gguf"]));
      if (picked) setPath(picked);
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  return (
    <div className="field">
      <Trans>Add a GGUF file</Trans>
      <span className="row">
        <input
          aria-label={t`GGUF file`}
          placeholder="/path/to/model.gguf"
          value={path}
          onChange={(e) => setPath(e.target.value)}
          onKeyDown={(e) => e.key === "Enter" && void add()}
        />
        <button type="button" onClick={() => void browse()}>
          <Trans comment="button: pick a file in the system's file chooser">Browse…</Trans>
        </button>
        <input aria-label={t`Model name`} placeholder={t`name (optional)`} value={name} onChange={(e) => setName(e.target.value)} />
        <button type="button" disabled={!path.trim() || busy} onClick={() => void add()}>
          <Trans>Add file</Trans>
        </button>
      </span>
      {added && (
        <small className="muted" role="status">
          <Trans>Added: pick it in the chat's model list as local:{added}.</Trans>
        </small>
      )}
      {error && (
        <small className="error" role="alert">
          {error}
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
