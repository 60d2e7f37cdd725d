import { useEffect, useState } from "react";
import type { MessageDescriptor } from "@lingui/core";
import { msg, t } from "@lingui/core/macro";
import { Trans, useLingui } from "@lingui/react/macro";
import type { CatalogEntry, McpOverview, ServerView } from "../../bindings";
import { call, commands, errorMessage, events } from "../../ipc";
import { formatNumber } from "../../lib/format";
import { useAction } from "../../lib/useAction";
import { useLoad } from "../../lib/useLoad";
import { useSettings } from "../../lib/settings";
import { freeName, McpCatalog } from "./McpCatalog";

const DOT: Record<ServerView["status"], string> = {
  connected: "green",
  starting: "amber",
  disconnected: "amber",
  error: "red",
  stopped: "grey",
  idle: "grey",
  needs_sign_in: "amber",
};

/** A server's status as the card shows it. */
const STATUS: Record<ServerView["status"], MessageDescriptor> = {
  connected: msg({ message: "connected", comment: "MCP server status" }),
  starting: msg({ message: "starting", comment: "MCP server status" }),
  disconnected: msg({ message: "disconnected", comment: "MCP server status" }),
  error: msg({ message: "error", comment: "MCP server status" }),
  stopped: msg({ message: "stopped", comment: "MCP server status" }),
  idle: msg({ message: "idle", comment: "MCP server status: stopped while unused" }),
  needs_sign_in: msg({ message: "needs sign-in", comment: "MCP server status" }),
};

function uptime(since: number | null, now: number): string {
  if (since === null) return "";
  const s = Math.max(0, Math.round((now - since) / 1000));
  if (s < 60) {
    const seconds = formatNumber(s);
    return t({ message: `${seconds} s`, comment: "uptime in seconds" });
  }
  if (s < 3600) {
    const minutes = formatNumber(Math.floor(s / 60));
    return t({ message: `${minutes} min`, comment: "uptime in minutes" });
  }
  const hours = formatNumber(Math.floor(s / 3600));
  const minutes = formatNumber(Math.floor((s % 3600) / 60));
  return t({ message: `${hours} h ${minutes} min`, comment: "uptime in hours and minutes" });
}

/** Settings -> MCP servers: every server with its status, and what it offers. */
export function McpServers() {
  // Events can ask for the list faster than it arrives: only the newest answer is shown.
  const loaded = useLoad<McpOverview>(() => call(commands.mcpOverview()), "overview");
  const { reload } = loaded;
  const overview = loaded.value;
  const { error: actionError, act } = useAction(reload);
  const error = actionError ?? (loaded.error ? errorMessage(loaded.error) : null);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const unlisten = events.mcpChanged.listen((e) => {
      if (e.payload.event.event === "changed") reload();
    });
    const timer = setInterval(() => setNow(Date.now()), 5000);
    return () => {
      clearInterval(timer);
      void unlisten.then((f) => f());
    };
  }, [reload]);
  if (!overview) return error ? <p role="alert">{error}</p> : null;
  return (
    <>
      {error && (
        <div className="error-card" role="alert">
          <p>{error}</p>
        </div>
      )}
      {overview.problems.map((p, i) => (
        <Problem key={i} file={p.file} line={p.line} server={p.server} message={p.message} />
      ))}
      {overview.servers.map((s) => (
        <ServerCard key={s.config.name} server={s} now={now} act={act} />
      ))}
      <AddServer act={act} servers={overview.servers} />
    </>
  );
}

/** A mistake in the servers file, where it is. */
function Problem({ file, line, server, message }: { file: string; line: number; server: string | null; message: string }) {
  const { t } = useLingui();
  const lineNumber = formatNumber(line);
  return (
    <div className="error-card" role="alert">
      <strong>{server ? t`Server ${server}` : t`MCP servers file`}</strong>
      <p>
        <Trans>
          {file}, line {lineNumber}: {message}
        </Trans>
      </p>
    </div>
  );
}

function ServerCard({ server, now, act }: { server: ServerView; now: number; act: (p: Promise<unknown>) => Promise<void> }) {
  const { t } = useLingui();
  const [open, setOpen] = useState(false);
  const [logs, setLogs] = useState<string[] | null>(null);
  const [confirming, setConfirming] = useState(false);
  const name = server.config.name;
  // Its apps (tools with their own interface): shown unless turned off here or for every server.
  const { settings, setTools } = useSettings();
  const tools = settings?.tools;
  const appsOff = tools?.apps_off ?? [];
  const hasApps = server.tools.some((tool) => tool.ui?.resource_uri) || appsOff.includes(name);
  const appsShown = (tools?.apps ?? true) && !appsOff.includes(name);
  const showApps = async (on: boolean) => {
    if (!tools) return;
    const off = appsOff.filter((s) => s !== name);
    await setTools({ ...tools, apps_off: on ? off : [...off, name] });
  };
  const running = server.status === "connected" || server.status === "starting" || server.status === "disconnected";
  const transport =
    server.config.transport.type === "stdio"
      ? [server.config.transport.command, ...server.config.transport.args].join(" ")
      : server.config.transport.url;
  const showLogs = async () => setLogs(await call(commands.mcpLogs(name)));
  const toolCount = formatNumber(server.tools.length);
  return (
    <fieldset className="card server" aria-label={t`Server ${name}`}>
      <legend>
        <span className={`dot ${DOT[server.status]}`} aria-hidden="true" /> {name}
      </legend>
      <p className="muted small path" title={transport}>
        {transport}
      </p>
      <dl className="facts">
        <dt>
          <Trans>Status</Trans>
        </dt>
        <dd data-testid={`status-${name}`}>
          {server.config.enabled ? t(STATUS[server.status]) : t({ message: "off", comment: "MCP server status: turned off" })}
        </dd>
        {server.pid !== null && (
          <>
            <dt>
              <Trans comment="process id">PID</Trans>
            </dt>
            <dd>{server.pid}</dd>
          </>
        )}
        {(server.status === "connected" || server.status === "idle") && (
          <>
            <dt>
              <Trans>Tools</Trans>
            </dt>
            <dd>{toolCount}</dd>
          </>
        )}
        {server.status === "connected" && (
          <>
            <dt>
              <Trans comment="how long the server has been running">Up</Trans>
            </dt>
            <dd>{uptime(server.connected_at, now)}</dd>
          </>
        )}
        {server.server_info && (
          <>
            <dt>
              <Trans comment="the server's own name and version">Server</Trans>
            </dt>
            <dd>
              {server.server_info} ({server.protocol_version})
            </dd>
          </>
        )}
      </dl>
      {server.last_error && <p className="error small">{server.last_error}</p>}
      {/* A server that offers nothing usually says why (the Google server: not connected yet). */}
      {server.tools.length === 0 && server.instructions && server.status === "connected" && (
        <p className="small muted" data-testid={`instructions-${server.config.name}`}>
          {server.instructions}
        </p>
      )}
      <SignIn server={server} act={act} now={now} />
      {server.status === "idle" && server.config.enabled && (
        <p className="muted small">
          <Trans>Stopped while unused, to save memory; it starts again when one of its tools is called.</Trans>
        </p>
      )}
      {confirming && (
        <div className="approval" role="dialog" aria-label={t`Remove ${name}`}>
          <p>
            {server.config.bundled
              ? t`Turn ${name} off? It ships with Perch, so it stays listed.`
              : t`Remove ${name} from your servers?`}
          </p>
          <div className="buttons">
            <button
              type="button"
              className="danger"
              onClick={() => {
                setConfirming(false);
                void act(call(commands.mcpRemove(name)));
              }}
            >
              {server.config.bundled ? t`Turn off` : t`Remove`}
            </button>
            <button type="button" onClick={() => setConfirming(false)}>
              <Trans>Cancel</Trans>
            </button>
          </div>
        </div>
      )}
      <div className="buttons">
        {running ? (
          <button type="button" onClick={() => void act(call(commands.mcpStop(name)))}>
            <Trans>Stop</Trans>
          </button>
        ) : (
          <button type="button" onClick={() => void act(call(commands.mcpStart(name)))} disabled={!server.config.enabled}>
            <Trans>Start</Trans>
          </button>
        )}
        <button type="button" onClick={() => void act(call(commands.mcpRestart(name)))} disabled={!server.config.enabled}>
          <Trans>Restart</Trans>
        </button>
        <button type="button" onClick={() => void act(call(commands.mcpRefresh(name)))} disabled={server.status !== "connected"}>
          <Trans>Refresh</Trans>
        </button>
        <label className="check inline">
          <input
            type="checkbox"
            checked={server.config.enabled}
            onChange={(e) => void act(call(commands.mcpSetEnabled(name, e.target.checked)))}
          />
          <Trans comment="checkbox: the server is turned on">On</Trans>
        </label>
        {hasApps && (
          <label className="check inline">
            <input type="checkbox" checked={appsShown} disabled={!tools?.apps} onChange={(e) => void showApps(e.target.checked)} />
            <Trans comment="checkbox: show this MCP server's apps (tools with their own interface)">Apps</Trans>
          </label>
        )}
        <button type="button" className="danger" onClick={() => setConfirming(true)}>
          <Trans>Remove</Trans>
        </button>
      </div>
      <button type="button" className="link" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? t`Hide details` : t`Tools, resources and prompts`}
      </button>
      {open && (
        <div className="server-details">
          <h4>
            <Trans>Tools</Trans>
          </h4>
          {server.tools.length === 0 && (
            <p className="muted small">
              <Trans>None (or not connected).</Trans>
            </p>
          )}
          {server.tools.map((tool) => (
            <details key={tool.name}>
              <summary>
                <code>{tool.name}</code>{" "}
                {tool.read_only && (
                  <span className="tag">
                    <Trans comment="tag: the tool only reads">read-only</Trans>
                  </span>
                )}
                {tool.destructive && (
                  <span className="tag danger">
                    <Trans comment="tag: the tool changes or deletes things">changes things</Trans>
                  </span>
                )}
              </summary>
              <p className="small pre-line">{tool.description}</p>
              <pre className="tool-args">{JSON.stringify(tool.input_schema, null, 2)}</pre>
            </details>
          ))}
          {server.resources.length > 0 && (
            <h4>
              <Trans>Resources</Trans>
            </h4>
          )}
          {server.resources.map((r) => (
            <ResourceRow key={r.uri} server={name} uri={r.uri} label={r.name} />
          ))}
          {server.prompts.length > 0 && (
            <h4>
              <Trans>Prompts</Trans>
            </h4>
          )}
          {server.prompts.map((p) => (
            <PromptRow key={p.name} server={name} prompt={p.name} description={p.description} args={p.arguments.map((a) => a.name)} />
          ))}
          <h4>
            <Trans>Log</Trans>
          </h4>
          <button type="button" onClick={() => void showLogs()}>
            {logs ? t`Reload log` : t`Show log`}
          </button>
          {logs && <pre className="server-log">{logs.length ? logs.join("\n") : t`Nothing yet.`}</pre>}
        </div>
      )}
    </fieldset>
  );
}

/** A server's sign-in: Sign in when it asks for one, the browser step while it runs (with the
 * page's address, for a browser that did not open), and who signed in with Sign out after. */
function SignIn({ server, act, now }: { server: ServerView; act: (p: Promise<unknown>) => Promise<void>; now: number }) {
  const { t } = useLingui();
  const name = server.config.name;
  const page = server.sign_in_page;
  const [copied, setCopied] = useState(false);
  if (page !== null) {
    return (
      <div className="sign-in" role="status" aria-label={t`Signing in to ${name}`}>
        <p className="small">
          {page ? t`Finish signing in in your browser. If no page opened, open this address:` : t`Opening your browser…`}
        </p>
        {page && (
          <p className="small path" title={page}>
            <code>{page}</code>
          </p>
        )}
        <div className="buttons">
          {page && (
            <button
              type="button"
              onClick={() => void navigator.clipboard?.writeText(page).then(() => setCopied(true))}
            >
              {copied ? t`Copied` : t`Copy address`}
            </button>
          )}
          <button type="button" onClick={() => void act(call(commands.mcpCancelSignIn(name)))}>
            <Trans>Cancel</Trans>
          </button>
        </div>
      </div>
    );
  }
  const signedIn = server.sign_in?.signed_in ? server.sign_in : null;
  if (signedIn) {
    const expires = signedIn.expires_at ? new Date(signedIn.expires_at) : null;
    const issuer = signedIn.issuer;
    // Scopes are the server's own names, listed as they are.
    const scopes = signedIn.scopes.join(", ");
    const who = issuer
      ? scopes
        ? t`Signed in with ${issuer}, allowed ${scopes}.`
        : t`Signed in with ${issuer}.`
      : scopes
        ? t`Signed in, allowed ${scopes}.`
        : t`Signed in.`;
    const expired = expires && !signedIn.can_refresh && expires.getTime() < now;
    return (
      <div className="sign-in">
        <p className="small muted">
          {who}
          {expired && ` ${t`The sign-in has run out: sign in again.`}`}
        </p>
        <div className="buttons">
          {server.status === "needs_sign_in" && (
            <button type="button" className="primary" onClick={() => void act(call(commands.mcpSignIn(name, null)))}>
              <Trans>Sign in again</Trans>
            </button>
          )}
          <button type="button" onClick={() => void act(call(commands.mcpSignOut(name)))}>
            <Trans>Sign out</Trans>
          </button>
        </div>
      </div>
    );
  }
  if (server.status !== "needs_sign_in") return null;
  return (
    <div className="buttons">
      <button type="button" className="primary" onClick={() => void act(call(commands.mcpSignIn(name, null)))}>
        <Trans>Sign in</Trans>
      </button>
    </div>
  );
}

function ResourceRow({ server, uri, label }: { server: string; uri: string; label: string }) {
  const [text, setText] = useState<string | null>(null);
  return (
    <div className="small">
      <button type="button" className="link" onClick={() => void call(commands.mcpReadResource(server, uri)).then(setText, (e) => setText(errorMessage(e)))}>
        {label}
      </button>{" "}
      <span className="muted">{uri}</span>
      {text !== null && <pre className="tool-args">{text}</pre>}
    </div>
  );
}

function PromptRow({ server, prompt, description, args }: { server: string; prompt: string; description: string | null; args: string[] }) {
  const [values, setValues] = useState<Record<string, string>>({});
  const [text, setText] = useState<string | null>(null);
  return (
    <details className="small">
      <summary>
        <code>{prompt}</code> {description}
      </summary>
      {args.map((a) => (
        <label key={a} className="field">
          {a}
          <input value={values[a] ?? ""} onChange={(e) => setValues({ ...values, [a]: e.target.value })} />
        </label>
      ))}
      <button type="button" onClick={() => void call(commands.mcpGetPrompt(server, prompt, values)).then(setText, (e) => setText(errorMessage(e)))}>
        <Trans>Get prompt</Trans>
      </button>
      {text !== null && (
        <>
          <pre className="tool-args">{text}</pre>
          <button type="button" onClick={() => void navigator.clipboard?.writeText(text)}>
            <Trans>Copy</Trans>
          </button>
        </>
      )}
    </details>
  );
}

/** Add a server with a small form (which a well-known server can fill), or by pasting JSON in
 * the `mcpServers` shape. */
function AddServer({ act, servers }: { act: (p: Promise<unknown>) => Promise<void>; servers: ServerView[] }) {
  const { t } = useLingui();
  const [mode, setMode] = useState<"form" | "json">("form");
  const [name, setName] = useState("");
  const [command, setCommand] = useState("");
  const [url, setUrl] = useState("");
  const [json, setJson] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  // A picked server that takes a token in a header; the field shows while its address is kept.
  const [picked, setPicked] = useState<CatalogEntry | null>(null);
  const [token, setToken] = useState("");
  const tokenHeader = picked?.needs.kind === "token" && url.trim() === picked.url ? picked.needs : null;
  const pick = (entry: CatalogEntry) => {
    setMode("form");
    setName(freeName(entry.name, servers));
    setUrl(entry.url);
    setCommand("");
    setPicked(entry);
    setToken("");
    setProblem(null);
  };
  const submit = async () => {
    let text = json;
    if (mode === "form") {
      const parts = command.trim().split(/\s+/).filter(Boolean);
      const headers = tokenHeader && token.trim() ? { headers: { [tokenHeader.header]: tokenHeader.prefix + token.trim() } } : {};
      const entry = url.trim() ? { type: "http", url: url.trim(), ...headers } : { command: parts[0] ?? "", args: parts.slice(1) };
      text = JSON.stringify({ mcpServers: { [name.trim()]: entry } });
    }
    try {
      await call(commands.mcpImport(text));
      setProblem(null);
      setName("");
      setCommand("");
      setUrl("");
      setJson("");
      setPicked(null);
      setToken("");
    } catch (e) {
      setProblem(errorMessage(e));
    }
    await act(Promise.resolve());
  };
  return (
    <fieldset className="card">
      <legend>
        <Trans>Add a server</Trans>
      </legend>
      <McpCatalog servers={servers} onPick={pick} />
      <div className="segmented" role="radiogroup" aria-label={t`How to add`}>
        {(["form", "json"] as const).map((m) => (
          <label key={m} className={mode === m ? "selected" : undefined}>
            <input type="radio" name="add-mode" checked={mode === m} onChange={() => setMode(m)} />
            {m === "form" ? t`Form` : t`Paste JSON`}
          </label>
        ))}
      </div>
      {mode === "form" ? (
        <>
          <label className="field">
            <Trans>Name</Trans>
            <input aria-label={t`Server name`} value={name} onChange={(e) => setName(e.target.value)} placeholder="time" />
          </label>
          <label className="field">
            <Trans>Command</Trans>
            {/* eslint-disable-next-line lingui/no-unlocalized-strings -- an example command line */}
            <input aria-label={t`Server command`} value={command} onChange={(e) => setCommand(e.target.value)} placeholder="uvx mcp-server-time" />
          </label>
          <label className="field">
            <Trans>Or URL (Streamable HTTP)</Trans>
            <input aria-label={t`Server URL`} value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://example.com/mcp" />
          </label>
          {tokenHeader && picked?.needs.kind === "token" && (
            <label className="field">
              <TokenHint header={tokenHeader.header} prefix={tokenHeader.prefix} where={picked.needs.where_to_get} />
              <input aria-label={t`Server token`} type="password" autoComplete="off" value={token} onChange={(e) => setToken(e.target.value)} />
            </label>
          )}
        </>
      ) : (
        <label className="field">
          JSON
          <textarea
            aria-label={t`Servers JSON`}
            rows={6}
            value={json}
            onChange={(e) => setJson(e.target.value)}
            // eslint-disable-next-line lingui/no-unlocalized-strings -- example JSON, code
            placeholder={'{ "mcpServers": { "time": { "command": "uvx", "args": ["mcp-server-time"] } } }'}
          />
        </label>
      )}
      {problem && (
        <p className="error small" role="alert">
          {problem}
        </p>
      )}
      <button type="button" className="primary" onClick={() => void submit()} disabled={mode === "form" ? !name.trim() || !(command.trim() || url.trim()) : !json.trim()}>
        <Trans>Add</Trans>
      </button>
    </fieldset>
  );
}

/** What the token field is for: the header it is sent in, and where to make one. */
function TokenHint({ header, prefix, where }: { header: string; prefix: string; where: string }) {
  return (
    <span>
      <Trans>
        Token, sent as {header}: {prefix}… (make one at <span className="path">{where}</span>)
      </Trans>
    </span>
  );
}
