import { useEffect, useState } from "react";
import type { CompatibleServer, KeysOverview, ModelInfo, Price, ProviderEndpoint } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";
import { useSettings } from "../../lib/settings";
import { LocalModelsCard } from "./LocalModelsCard";
import { NumberField } from "./ToolSettingsCard";

/** The providers' address fields. */
type UrlKey = "ollama_url" | "openai_url" | "anthropic_url" | "gemini_url";

const URLS: { key: UrlKey; label: string; provider: string; env?: string }[] = [
  { key: "ollama_url", label: "Ollama", provider: "ollama", env: "OLLAMA_HOST" },
  { key: "openai_url", label: "OpenAI", provider: "openai", env: "OPENAI_BASE_URL" },
  { key: "anthropic_url", label: "Anthropic", provider: "anthropic" },
  { key: "gemini_url", label: "Gemini", provider: "gemini" },
];

/** Settings -> Models: where providers live, their keys, which models to offer, and prices. */
export function ModelsSettings() {
  return (
    <>
      <LocalModelsCard />
      <ProvidersCard />
      <KeysCard />
      <ModelChoiceCard />
      <PricesCard />
    </>
  );
}

/** Why `url` cannot be a provider's address, in the user's words; `null` when it can. */
export function urlProblem(url: string): string | null {
  const trimmed = url.trim();
  if (!trimmed) return "Type the server's address, e.g. http://127.0.0.1:1234/v1.";
  const rest = trimmed.replace(/^https?:\/\//, "");
  if (rest === trimmed) return "The address must start with http:// or https://.";
  if (!rest || /\s/.test(rest)) return "The address needs a host after http://, with no spaces.";
  return null;
}

const BUILT_IN = ["ollama", "openai", "anthropic", "gemini", "local"];

/** Why `name` cannot name a server (its models are called NAME:model); `null` when it can. */
export function serverNameProblem(name: string, taken: string[]): string | null {
  const n = name.trim().toLowerCase();
  if (!n) return "Give the server a short name.";
  if (!/^[a-z0-9][a-z0-9_-]*$/.test(n)) return "Use letters, digits, - and _ only (its models are called NAME:model).";
  if (BUILT_IN.includes(n)) return `“${n}” is a built-in provider; pick another name.`;
  if (taken.includes(n)) return `A server is already called “${n}”.`;
  return null;
}

/** The address a provider is reached at when it is not the one in its field. */
function overridden(inUse: ProviderEndpoint[], provider: string, field: string): string | null {
  const url = inUse.find((e) => e.name === provider)?.url;
  return url && url.replace(/\/+$/, "") !== field.replace(/\/+$/, "") ? url : null;
}

function ProvidersCard() {
  const { settings, setProviders } = useSettings();
  const [draft, setDraft] = useState<Record<string, string>>({});
  const [urlErrors, setUrlErrors] = useState<Record<string, string>>({});
  const [server, setServer] = useState<CompatibleServer>({ name: "", url: "", needs_key: false });
  const [serverError, setServerError] = useState<{ name: string | null; url: string | null }>({ name: null, url: null });
  // The addresses in use, which an environment variable may have set over the fields.
  const [inUse, setInUse] = useState<ProviderEndpoint[]>([]);
  useEffect(() => {
    call(commands.providerEndpoints()).then(setInUse, () => {});
  }, [settings?.providers]);
  if (!settings) return null;
  // Fields Rust fills with defaults are optional in the generated types; they are always sent.
  const providers = { ...settings.providers, compatible: settings.providers.compatible ?? [] };
  // A bad address is said next to its field and kept there to fix; only a good one is saved.
  const saveUrl = (key: UrlKey) => {
    const value = draft[key];
    if (value === undefined || value.trim() === providers[key]) return;
    const problem = urlProblem(value);
    setUrlErrors({ ...urlErrors, [key]: problem ?? "" });
    if (!problem) void setProviders({ ...providers, [key]: value.trim() });
  };
  const addServer = () => {
    const name = serverNameProblem(server.name, providers.compatible.map((c) => c.name));
    const url = urlProblem(server.url);
    setServerError({ name, url });
    if (name || url) return;
    void setProviders({ ...providers, compatible: [...providers.compatible, { ...server, name: server.name.trim().toLowerCase(), url: server.url.trim() }] });
    setServer({ name: "", url: "", needs_key: false });
  };
  return (
    <fieldset className="card">
      <legend>Providers</legend>
      {URLS.map(({ key, label, provider, env }) => (
        <label key={key} className="field">
          {label}
          <input
            type="url"
            aria-label={`${label} URL`}
            value={draft[key] ?? providers[key]}
            onChange={(e) => setDraft({ ...draft, [key]: e.target.value })}
            aria-invalid={urlErrors[key] ? true : undefined}
            onBlur={() => saveUrl(key)}
            onKeyDown={(e) => e.key === "Enter" && saveUrl(key)}
          />
          {urlErrors[key] && (
            <span className="error small" role="alert">
              {urlErrors[key]}
            </span>
          )}
          {env && overridden(inUse, provider, providers[key] ?? "") && (
            <span className="warning small" role="note">
              In use: {overridden(inUse, provider, providers[key] ?? "")}, set by {env}; this field applies when {env} is not set.
            </span>
          )}
        </label>
      ))}
      <NumberField
        label="Longest context for Ollama models (tokens; a model trained for less uses its own; more takes more memory)"
        aria="Ollama context"
        min={512}
        step={1024}
        value={providers.ollama_context ?? 16384}
        onSave={(n) => void setProviders({ ...providers, ollama_context: n })}
      />
      <div className="subhead">OpenAI-compatible servers</div>
      {providers.compatible.map((s) => (
        <div key={s.name} className="inline-row">
          <code>{s.name}</code> <span className="path">{s.url}</span>
          <button
            type="button"
            className="link-button"
            onClick={() => void setProviders({ ...providers, compatible: providers.compatible.filter((c) => c.name !== s.name) })}
          >
            Remove
          </button>
        </div>
      ))}
      <form
        className="inline-row"
        aria-label="Add an OpenAI-compatible server"
        onSubmit={(e) => {
          e.preventDefault();
          addServer();
        }}
      >
        <input
          aria-label="Server name"
          placeholder="name, e.g. lmstudio"
          aria-invalid={serverError.name ? true : undefined}
          value={server.name}
          onChange={(e) => setServer({ ...server, name: e.target.value })}
        />
        <input
          aria-label="Server URL"
          placeholder="http://127.0.0.1:1234/v1"
          aria-invalid={serverError.url ? true : undefined}
          value={server.url}
          onChange={(e) => setServer({ ...server, url: e.target.value })}
        />
        <label className="check">
          <input type="checkbox" checked={server.needs_key} onChange={(e) => setServer({ ...server, needs_key: e.target.checked })} />
          key
        </label>
        <button type="submit" className="button" disabled={!server.name.trim() || !server.url.trim()}>
          Add
        </button>
      </form>
      {(serverError.name || serverError.url) && (
        <p className="error small" role="alert">
          {[serverError.name, serverError.url].filter(Boolean).join(" ")}
        </p>
      )}
    </fieldset>
  );
}

function KeysCard() {
  const [overview, setOverview] = useState<KeysOverview | null>(null);
  const [typed, setTyped] = useState<Record<string, string>>({});
  const [results, setResults] = useState<Record<string, { works: boolean; message: string }>>({});
  const [version, setVersion] = useState(0);
  useEffect(() => {
    call(commands.keysOverview()).then(setOverview, () => {});
  }, [version]);
  if (!overview) return null;
  const save = async (provider: string) => {
    const key = typed[provider]?.trim();
    if (!key) return;
    setTyped({ ...typed, [provider]: "" });
    try {
      setResults({ ...results, [provider]: await call(commands.keySet(provider, key)) });
    } catch (e) {
      setResults({ ...results, [provider]: { works: false, message: errorMessage(e) } });
    }
    setVersion((v) => v + 1);
  };
  return (
    <fieldset className="card">
      <legend>API keys</legend>
      {overview.backend.warning && (
        <p className="warning-note" role="note">
          {overview.backend.warning}
        </p>
      )}
      {overview.keys.map((k) => (
        <div key={k.provider} className="key-row">
          <span className="key-name">{k.provider}</span>
          <span className="muted key-status">
            {k.masked ? `${k.masked}${k.source === "env" ? " (environment)" : ""}` : "no key"}
          </span>
          <input
            type="password"
            aria-label={`${k.provider} key`}
            placeholder="paste a key"
            autoComplete="off"
            value={typed[k.provider] ?? ""}
            onChange={(e) => setTyped({ ...typed, [k.provider]: e.target.value })}
            onKeyDown={(e) => e.key === "Enter" && void save(k.provider)}
          />
          <button type="button" className="button" disabled={!typed[k.provider]?.trim()} onClick={() => void save(k.provider)}>
            Save
          </button>
          {k.masked && k.source !== "env" && (
            <button
              type="button"
              className="link-button"
              aria-label={`Delete ${k.provider} key`}
              onClick={() => void call(commands.keyDelete(k.provider)).then(() => setVersion((v) => v + 1))}
            >
              Delete
            </button>
          )}
          {results[k.provider] && (
            <p className={results[k.provider].works ? "key-result ok" : "key-result bad"} role="status">
              {results[k.provider].message}
            </p>
          )}
        </div>
      ))}
    </fieldset>
  );
}

function ModelChoiceCard() {
  const { settings, setModels } = useSettings();
  const [available, setAvailable] = useState<ModelInfo[] | null>(null);
  useEffect(() => {
    call(commands.modelsList(false)).then((o) => setAvailable(o.providers.flatMap((p) => p.models)), () => setAvailable([]));
  }, []);
  if (!settings || !available) return null;
  const models = { ...settings.models, enabled: settings.models.enabled ?? [], prices: settings.models.prices ?? [] };
  const toggle = (id: string, on: boolean) => {
    const base = models.enabled.length ? models.enabled : available.map((m) => m.id);
    const enabled = on ? [...new Set([...base, id])] : base.filter((m) => m !== id);
    void setModels({ ...models, enabled: enabled.length === available.length ? [] : enabled });
  };
  return (
    <fieldset className="card">
      <legend>Models</legend>
      {available.length === 0 && <p className="muted small">No models are available: download one above, start Ollama, or add a key.</p>}
      <ul className="model-list">
        {available.map((m) => (
          <li key={m.id}>
            <label className="check">
              <input
                type="checkbox"
                checked={!models.enabled.length || models.enabled.includes(m.id)}
                onChange={(e) => toggle(m.id, e.target.checked)}
              />
              <span>{m.id}</span>
              <span className="muted small-inline">
                {[m.capabilities.vision && "vision", m.capabilities.tools && "tools", m.capabilities.thinking && "thinking"]
                  .filter(Boolean)
                  .join(" · ")}
              </span>
            </label>
          </li>
        ))}
      </ul>
      <label className="field">
        New chats start with
        <select
          aria-label="Default model"
          value={models.default_model ?? ""}
          onChange={(e) => void setModels({ ...models, default_model: e.target.value || null })}
        >
          <option value="">Automatic (qwen3-vl:8b-instruct, else the first installed)</option>
          {available.map((m) => (
            <option key={m.id} value={m.id}>
              {m.id}
            </option>
          ))}
        </select>
      </label>
      <label className="check">
        <input type="checkbox" checked={models.thinking} onChange={(e) => void setModels({ ...models, thinking: e.target.checked })} />
        Show the reasoning of thinking models
      </label>
    </fieldset>
  );
}

function PricesCard() {
  const { settings, setModels } = useSettings();
  const [table, setTable] = useState<Price[]>([]);
  const [row, setRow] = useState({ model: "", input: "", output: "" });
  useEffect(() => {
    call(commands.prices()).then(setTable, () => {});
  }, [settings?.models.prices]);
  if (!settings) return null;
  const mine = settings.models.prices ?? [];
  const add = () => {
    const price: Price = { model: row.model.trim(), input: Number(row.input), output: Number(row.output) };
    if (!price.model || !Number.isFinite(price.input) || !Number.isFinite(price.output)) return;
    void setModels({ ...settings.models, prices: [...mine.filter((p) => p.model !== price.model), price] });
    setRow({ model: "", input: "", output: "" });
  };
  return (
    <fieldset className="card">
      <legend>Prices (USD per million tokens)</legend>
      <table className="prices" aria-label="Prices">
        <thead>
          <tr>
            <th>Model</th>
            <th>In</th>
            <th>Out</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {table.map((p) => {
            const own = mine.some((m) => m.model === p.model);
            return (
              <tr key={p.model} className={own ? "own" : undefined}>
                <td>{p.model}</td>
                <td>{p.input}</td>
                <td>{p.output}</td>
                <td>
                  {own && (
                    <button
                      type="button"
                      className="link-button"
                      aria-label={`Reset ${p.model}`}
                      onClick={() => void setModels({ ...settings.models, prices: mine.filter((m) => m.model !== p.model) })}
                    >
                      Reset
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <div className="inline-row">
        <input aria-label="Price model" placeholder="provider:model or prefix*" value={row.model} onChange={(e) => setRow({ ...row, model: e.target.value })} />
        <input aria-label="Input price" placeholder="in" inputMode="decimal" value={row.input} onChange={(e) => setRow({ ...row, input: e.target.value })} />
        <input aria-label="Output price" placeholder="out" inputMode="decimal" value={row.output} onChange={(e) => setRow({ ...row, output: e.target.value })} />
        <button type="button" className="button" onClick={add}>
          Set
        </button>
      </div>
    </fieldset>
  );
}
