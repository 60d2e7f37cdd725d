import { useEffect, useState } from "react";
import { t } from "@lingui/core/macro";
import { Trans, useLingui } from "@lingui/react/macro";
import type { CompatibleServer, KeysOverview, ModelInfo, Price, ProviderEndpoint } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";
import { formatNumber } from "../../lib/format";
import { useSettings } from "../../lib/settings";
import { LocalModelsCard } from "./LocalModelsCard";
import { NumberField } from "./ToolSettingsCard";

/** The providers' address fields. */
type UrlKey = "ollama_url" | "openai_url" | "anthropic_url" | "gemini_url";

/** The labels are the providers' names, the same in every language. */
const URLS: { key: UrlKey; label: string; provider: string; env?: string }[] = [
  // eslint-disable-next-line lingui/no-unlocalized-strings -- a product name
  { key: "ollama_url", label: "Ollama", provider: "ollama", env: "OLLAMA_HOST" },
  { key: "openai_url", label: "OpenAI", provider: "openai", env: "OPENAI_BASE_URL" },
  // eslint-disable-next-line lingui/no-unlocalized-strings -- a product name
  { key: "anthropic_url", label: "Anthropic", provider: "anthropic" },
  // eslint-disable-next-line lingui/no-unlocalized-strings -- a product name
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
  if (!trimmed) return t`Type the server's address, e.g. http://127.0.0.1:1234/v1.`;
  const rest = trimmed.replace(/^https?:\/\//, "");
  if (rest === trimmed) return t`The address must start with http:// or https://.`;
  if (!rest || /\s/.test(rest)) return t`The address needs a host after http://, with no spaces.`;
  return null;
}

const BUILT_IN = ["ollama", "openai", "anthropic", "gemini", "local"];

/** Why `name` cannot name a server (its models are called NAME:model); `null` when it can. */
export function serverNameProblem(name: string, taken: string[]): string | null {
  const n = name.trim().toLowerCase();
  if (!n) return t`Give the server a short name.`;
  if (!/^[a-z0-9][a-z0-9_-]*$/.test(n)) return t`Use letters, digits, - and _ only (its models are called NAME:model).`;
  if (BUILT_IN.includes(n)) return t`“${n}” is a built-in provider; pick another name.`;
  if (taken.includes(n)) return t`A server is already called “${n}”.`;
  return null;
}

/** The address a provider is reached at when it is not the one in its field. */
function overridden(inUse: ProviderEndpoint[], provider: string, field: string): string | null {
  const url = inUse.find((e) => e.name === provider)?.url;
  return url && url.replace(/\/+$/, "") !== field.replace(/\/+$/, "") ? url : null;
}

function ProvidersCard() {
  const { t } = useLingui();
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
      <legend>
        <Trans>Providers</Trans>
      </legend>
      {URLS.map(({ key, label, provider, env }) => {
        const inUseUrl = env ? overridden(inUse, provider, providers[key] ?? "") : null;
        return (
          <label key={key} className="field">
            {label}
            <input
              type="url"
              aria-label={t`${label} URL`}
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
            {env && inUseUrl && (
              <span className="warning small" role="note">
                <Trans>
                  In use: {inUseUrl}, set by {env}; this field applies when {env} is not set.
                </Trans>
              </span>
            )}
          </label>
        );
      })}
      <NumberField
        label={t`Longest context for Ollama models (tokens; a model trained for less uses its own; more takes more memory)`}
        aria={t`Ollama context`}
        min={512}
        step={1024}
        value={providers.ollama_context ?? 16384}
        onSave={(n) => void setProviders({ ...providers, ollama_context: n })}
      />
      <div className="subhead">
        <Trans>OpenAI-compatible servers</Trans>
      </div>
      {providers.compatible.map((s) => (
        <div key={s.name} className="inline-row">
          <code>{s.name}</code> <span className="path">{s.url}</span>
          <button
            type="button"
            className="link-button"
            onClick={() => void setProviders({ ...providers, compatible: providers.compatible.filter((c) => c.name !== s.name) })}
          >
            <Trans>Remove</Trans>
          </button>
        </div>
      ))}
      <form
        className="inline-row"
        aria-label={t`Add an OpenAI-compatible server`}
        onSubmit={(e) => {
          e.preventDefault();
          addServer();
        }}
      >
        <input
          aria-label={t`Server name`}
          placeholder={t`name, e.g. lmstudio`}
          aria-invalid={serverError.name ? true : undefined}
          value={server.name}
          onChange={(e) => setServer({ ...server, name: e.target.value })}
        />
        <input
          aria-label={t`Server URL`}
          placeholder="http://127.0.0.1:1234/v1"
          aria-invalid={serverError.url ? true : undefined}
          value={server.url}
          onChange={(e) => setServer({ ...server, url: e.target.value })}
        />
        <label className="check">
          <input type="checkbox" checked={server.needs_key} onChange={(e) => setServer({ ...server, needs_key: e.target.checked })} />
          <Trans comment="checkbox: the server needs an API key">key</Trans>
        </label>
        <button type="submit" className="button" disabled={!server.name.trim() || !server.url.trim()}>
          <Trans>Add</Trans>
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
  const { t } = useLingui();
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
      <legend>
        <Trans>API keys</Trans>
      </legend>
      {overview.backend.warning && (
        <p className="warning-note" role="note">
          {overview.backend.warning}
        </p>
      )}
      {overview.keys.map((k) => {
        const provider = k.provider;
        const masked = k.masked;
        return (
          <div key={k.provider} className="key-row">
            <span className="key-name">{k.provider}</span>
            <span className="muted key-status">
              {masked ? (k.source === "env" ? t`${masked} (environment)` : masked) : t`no key`}
            </span>
            <input
              type="password"
              aria-label={t`${provider} key`}
              placeholder={t`paste a key`}
              autoComplete="off"
              value={typed[k.provider] ?? ""}
              onChange={(e) => setTyped({ ...typed, [k.provider]: e.target.value })}
              onKeyDown={(e) => e.key === "Enter" && void save(k.provider)}
            />
            <button type="button" className="button" disabled={!typed[k.provider]?.trim()} onClick={() => void save(k.provider)}>
              <Trans>Save</Trans>
            </button>
            {k.masked && k.source !== "env" && (
              <button
                type="button"
                className="link-button"
                aria-label={t`Delete ${provider} key`}
                onClick={() => void call(commands.keyDelete(k.provider)).then(() => setVersion((v) => v + 1))}
              >
                <Trans>Delete</Trans>
              </button>
            )}
            {results[k.provider] && (
              <p className={results[k.provider].works ? "key-result ok" : "key-result bad"} role="status">
                {results[k.provider].message}
              </p>
            )}
          </div>
        );
      })}
    </fieldset>
  );
}

function ModelChoiceCard() {
  const { t } = useLingui();
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
      <legend>
        <Trans>Models</Trans>
      </legend>
      {available.length === 0 && (
        <p className="muted small">
          <Trans>No models are available: download one above, start Ollama, or add a key.</Trans>
        </p>
      )}
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
                {[
                  m.capabilities.vision && t({ message: "vision", comment: "model capability: reads images" }),
                  m.capabilities.tools && t({ message: "tools", comment: "model capability: can call tools" }),
                  m.capabilities.thinking && t({ message: "thinking", comment: "model capability: reasons before answering" }),
                ]
                  .filter(Boolean)
                  .join(" · ")}
              </span>
            </label>
          </li>
        ))}
      </ul>
      <label className="field">
        <Trans>New chats start with</Trans>
        <select
          aria-label={t`Default model`}
          value={models.default_model ?? ""}
          onChange={(e) => void setModels({ ...models, default_model: e.target.value || null })}
        >
          <option value="">{t`Automatic (qwen3-vl:8b-instruct, else the first installed)`}</option>
          {available.map((m) => (
            <option key={m.id} value={m.id}>
              {m.id}
            </option>
          ))}
        </select>
      </label>
      <label className="check">
        <input type="checkbox" checked={models.thinking} onChange={(e) => void setModels({ ...models, thinking: e.target.checked })} />
        <Trans>Show the reasoning of thinking models</Trans>
      </label>
    </fieldset>
  );
}

function PricesCard() {
  const { t } = useLingui();
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
      <legend>
        <Trans>Prices (USD per million tokens)</Trans>
      </legend>
      <table className="prices" aria-label={t`Prices`}>
        <thead>
          <tr>
            <th>
              <Trans>Model</Trans>
            </th>
            <th>
              <Trans context="price column" comment="price column: input tokens">In</Trans>
            </th>
            <th>
              <Trans context="price column" comment="price column: output tokens">Out</Trans>
            </th>
            <th />
          </tr>
        </thead>
        <tbody>
          {table.map((p) => {
            const own = mine.some((m) => m.model === p.model);
            const model = p.model;
            return (
              <tr key={p.model} className={own ? "own" : undefined}>
                <td>{p.model}</td>
                <td>{price(p.input)}</td>
                <td>{price(p.output)}</td>
                <td>
                  {own && (
                    <button
                      type="button"
                      className="link-button"
                      aria-label={t`Reset ${model}`}
                      onClick={() => void setModels({ ...settings.models, prices: mine.filter((m) => m.model !== p.model) })}
                    >
                      <Trans>Reset</Trans>
                    </button>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <div className="inline-row">
        <input aria-label={t`Price model`} placeholder={t`provider:model or prefix*`} value={row.model} onChange={(e) => setRow({ ...row, model: e.target.value })} />
        <input
          aria-label={t`Input price`}
          placeholder={t({ message: "in", comment: "placeholder: price of input tokens" })}
          inputMode="decimal"
          value={row.input}
          onChange={(e) => setRow({ ...row, input: e.target.value })}
        />
        <input
          aria-label={t`Output price`}
          placeholder={t({ message: "out", comment: "placeholder: price of output tokens" })}
          inputMode="decimal"
          value={row.output}
          onChange={(e) => setRow({ ...row, output: e.target.value })}
        />
        <button type="button" className="button" onClick={add}>
          <Trans comment="button: set a model's price">Set</Trans>
        </button>
      </div>
    </fieldset>
  );
}

/** A price per million tokens as typed (no rounding: some are fractions of a cent); none is blank. */
function price(usd: number | null): string {
  return usd === null ? "" : formatNumber(usd, { maximumFractionDigits: 6 });
}
