import { useEffect, useState } from "react";
import type { CatalogEntry, McpOverview, ServerView } from "../../bindings";
import { call, commands, errorMessage, events } from "../../ipc";
import { useAction } from "../../lib/useAction";
import { useLoad } from "../../lib/useLoad";
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

const STATUS: Partial<Record<ServerView["status"], string>> = { needs_sign_in: "needs sign-in" };

function uptime(since: number | null, now: number): string {
  if (since === null) return "";
  const s = Math.max(0, Math.round((now - since) / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
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
        <div key={i} className="error-card" role="alert">
          <strong>{p.server ? `Server ${p.server}` : "MCP servers file"}</strong>
          <p>
            {p.file}, line {p.line}: {p.message}
          </p>
        </div>
      ))}
      {overview.servers.map((s) => (
        <ServerCard key={s.config.name} server={s} now={now} act={act} />
      ))}
      <AddServer act={act} servers={overview.servers} />
    </>
  );
}

function ServerCard({ server, now, act }: { server: ServerView; now: number; act: (p: Promise<unknown>) => Promise<void> }) {
  const [open, setOpen] = useState(false);
  const [logs, setLogs] = useState<string[] | null>(null);
  const [confirming, setConfirming] = useState(false);
  const name = server.config.name;
  const running = server.status === "connected" || server.status === "starting" || server.status === "disconnected";
  const transport =
    server.config.transport.type === "stdio"
      ? [server.config.transport.command, ...server.config.transport.args].join(" ")
      : server.config.transport.url;
  const showLogs = async () => setLogs(await call(commands.mcpLogs(name)));
  return (
    <fieldset className="card server" aria-label={`Server ${name}`}>
      <legend>
        <span className={`dot ${DOT[server.status]}`} aria-hidden="true" /> {name}
      </legend>
      <p className="muted small path" title={transport}>
        {transport}
      </p>
      <dl className="facts">
        <dt>Status</dt>
        <dd data-testid={`status-${name}`}>{server.config.enabled ? (STATUS[server.status] ?? server.status) : "off"}</dd>
        {server.pid !== null && (
          <>
            <dt>PID</dt>
            <dd>{server.pid}</dd>
          </>
        )}
        {(server.status === "connected" || server.status === "idle") && (
          <>
            <dt>Tools</dt>
            <dd>{server.tools.length}</dd>
          </>
        )}
        {server.status === "connected" && (
          <>
            <dt>Up</dt>
            <dd>{uptime(server.connected_at, now)}</dd>
          </>
        )}
        {server.server_info && (
          <>
            <dt>Server</dt>
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
          Stopped while unused, to save memory; it starts again when one of its tools is called.
        </p>
      )}
      {confirming && (
        <div className="approval" role="dialog" aria-label={`Remove ${name}`}>
          <p>
            {server.config.bundled
              ? `Turn ${name} off? It ships with Perch, so it stays listed.`
              : `Remove ${name} from your servers?`}
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
              {server.config.bundled ? "Turn off" : "Remove"}
            </button>
            <button type="button" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        </div>
      )}
      <div className="buttons">
        {running ? (
          <button type="button" onClick={() => void act(call(commands.mcpStop(name)))}>
            Stop
          </button>
        ) : (
          <button type="button" onClick={() => void act(call(commands.mcpStart(name)))} disabled={!server.config.enabled}>
            Start
          </button>
        )}
        <button type="button" onClick={() => void act(call(commands.mcpRestart(name)))} disabled={!server.config.enabled}>
          Restart
        </button>
        <button type="button" onClick={() => void act(call(commands.mcpRefresh(name)))} disabled={server.status !== "connected"}>
          Refresh
        </button>
        <label className="check inline">
          <input
            type="checkbox"
            checked={server.config.enabled}
            onChange={(e) => void act(call(commands.mcpSetEnabled(name, e.target.checked)))}
          />
          On
        </label>
        <button type="button" className="danger" onClick={() => setConfirming(true)}>
          Remove
        </button>
      </div>
      <button type="button" className="link" aria-expanded={open} onClick={() => setOpen(!open)}>
        {open ? "Hide details" : `Tools, resources and prompts`}
      </button>
      {open && (
        <div className="server-details">
          <h4>Tools</h4>
          {server.tools.length === 0 && <p className="muted small">None (or not connected).</p>}
          {server.tools.map((t) => (
            <details key={t.name}>
              <summary>
                <code>{t.name}</code> {t.read_only && <span className="tag">read-only</span>}
                {t.destructive && <span className="tag danger">changes things</span>}
              </summary>
              <p className="small pre-line">{t.description}</p>
              <pre className="tool-args">{JSON.stringify(t.input_schema, null, 2)}</pre>
            </details>
          ))}
          {server.resources.length > 0 && <h4>Resources</h4>}
          {server.resources.map((r) => (
            <ResourceRow key={r.uri} server={name} uri={r.uri} label={r.name} />
          ))}
          {server.prompts.length > 0 && <h4>Prompts</h4>}
          {server.prompts.map((p) => (
            <PromptRow key={p.name} server={name} prompt={p.name} description={p.description} args={p.arguments.map((a) => a.name)} />
          ))}
          <h4>Log</h4>
          <button type="button" onClick={() => void showLogs()}>
            {logs ? "Reload log" : "Show log"}
          </button>
          {logs && <pre className="server-log">{logs.length ? logs.join("\n") : "Nothing yet."}</pre>}
        </div>
      )}
    </fieldset>
  );
}

/** A server's sign-in: Sign in when it asks for one, the browser step while it runs (with the
 * page's address, for a browser that did not open), and who signed in with Sign out after. */
function SignIn({ server, act, now }: { server: ServerView; act: (p: Promise<unknown>) => Promise<void>; now: number }) {
  const name = server.config.name;
  const page = server.sign_in_page;
  const [copied, setCopied] = useState(false);
  if (page !== null) {
    return (
      <div className="sign-in" role="status" aria-label={`Signing in to ${name}`}>
        <p className="small">
          {page ? "Finish signing in in your browser. If no page opened, open this address:" : "Opening your browser…"}
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
              {copied ? "Copied" : "Copy address"}
            </button>
          )}
          <button type="button" onClick={() => void act(call(commands.mcpCancelSignIn(name)))}>
            Cancel
          </button>
        </div>
      </div>
    );
  }
  const signedIn = server.sign_in?.signed_in ? server.sign_in : null;
  if (signedIn) {
    const expires = signedIn.expires_at ? new Date(signedIn.expires_at) : null;
    return (
      <div className="sign-in">
        <p className="small muted">
          Signed in{signedIn.issuer ? ` with ${signedIn.issuer}` : ""}
          {signedIn.scopes.length > 0 ? `, allowed ${signedIn.scopes.join(", ")}` : ""}
          {expires && !signedIn.can_refresh && expires.getTime() < now
            ? ". The sign-in has run out: sign in again."
            : "."}
        </p>
        <div className="buttons">
          {server.status === "needs_sign_in" && (
            <button type="button" className="primary" onClick={() => void act(call(commands.mcpSignIn(name, null)))}>
              Sign in again
            </button>
          )}
          <button type="button" onClick={() => void act(call(commands.mcpSignOut(name)))}>
            Sign out
          </button>
        </div>
      </div>
    );
  }
  if (server.status !== "needs_sign_in") return null;
  return (
    <div className="buttons">
      <button type="button" className="primary" onClick={() => void act(call(commands.mcpSignIn(name, null)))}>
        Sign in
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
        Get prompt
      </button>
      {text !== null && (
        <>
          <pre className="tool-args">{text}</pre>
          <button type="button" onClick={() => void navigator.clipboard?.writeText(text)}>
            Copy
          </button>
        </>
      )}
    </details>
  );
}

/** Add a server with a small form (which a well-known server can fill), or by pasting JSON in
 * the `mcpServers` shape. */
function AddServer({ act, servers }: { act: (p: Promise<unknown>) => Promise<void>; servers: ServerView[] }) {
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
      <legend>Add a server</legend>
      <McpCatalog servers={servers} onPick={pick} />
      <div className="segmented" role="radiogroup" aria-label="How to add">
        {(["form", "json"] as const).map((m) => (
          <label key={m} className={mode === m ? "selected" : undefined}>
            <input type="radio" name="add-mode" checked={mode === m} onChange={() => setMode(m)} />
            {m === "form" ? "Form" : "Paste JSON"}
          </label>
        ))}
      </div>
      {mode === "form" ? (
        <>
          <label className="field">
            Name
            <input aria-label="Server name" value={name} onChange={(e) => setName(e.target.value)} placeholder="time" />
          </label>
          <label className="field">
            Command
            <input aria-label="Server command" value={command} onChange={(e) => setCommand(e.target.value)} placeholder="uvx mcp-server-time" />
          </label>
          <label className="field">
            Or URL (Streamable HTTP)
            <input aria-label="Server URL" value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://example.com/mcp" />
          </label>
          {tokenHeader && picked?.needs.kind === "token" && (
            <label className="field">
              <span>
                Token, sent as {tokenHeader.header}: {tokenHeader.prefix}… (make one at{" "}
                <span className="path">{picked.needs.where_to_get}</span>)
              </span>
              <input aria-label="Server token" type="password" autoComplete="off" value={token} onChange={(e) => setToken(e.target.value)} />
            </label>
          )}
        </>
      ) : (
        <label className="field">
          JSON
          <textarea
            aria-label="Servers JSON"
            rows={6}
            value={json}
            onChange={(e) => setJson(e.target.value)}
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
        Add
      </button>
    </fieldset>
  );
}
