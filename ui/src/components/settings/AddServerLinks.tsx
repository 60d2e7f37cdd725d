// "Add server" links (`perch://mcp/add?...`): the shell reads each link (the engine says what it
// proposes, or why it cannot be used) and keeps it until answered; this asks, over whatever page
// is open. It shows exactly what Add saves: the whole command line with its arguments and the
// names of its environment variables (values hidden until asked for), or the address. Nothing
// is saved or started before Add, and Add goes through `mcp_import` like the Add form.
import { useEffect, useState } from "react";
import type { AddLinkRequest, ProposedServer, ServerView } from "../../bindings";
import { call, commands, errorMessage, events } from "../../ipc";
import { useLoad } from "../../lib/useLoad";
import { ModalDialog } from "../ModalDialog";

/** An argument as a POSIX shell would need it written, so spaces and quotes show unambiguously. */
export function shellQuote(arg: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

const MASK = "••••••••";

/** The links waiting for an answer, the oldest asked first. */
export function AddServerLinks() {
  const links = useLoad<AddLinkRequest[]>(() => commands.mcpAddLinks(), "links");
  const { reload } = links;
  useEffect(() => {
    const unlisten = events.addLinkArrived.listen(() => reload());
    return () => void unlisten.then((off) => off());
  }, [reload]);
  const request = links.value?.[0];
  if (!request) return null;
  const done = async () => {
    await commands.mcpAddLinkDismiss(request.id).catch(() => false);
    reload();
  };
  return (
    <ModalDialog key={request.id} className="dialog card" label="Add an MCP server">
      {request.proposal ? (
        <Proposal key={request.id} proposal={request.proposal} done={done} />
      ) : (
        <>
          <h2>A link to add a server could not be used</h2>
          <p className="error small" role="alert">
            {request.error}
          </p>
          <p className="muted small">Nothing was saved.</p>
          <div className="buttons">
            <button type="button" onClick={() => void done()}>
              Close
            </button>
          </div>
        </>
      )}
    </ModalDialog>
  );
}

function Proposal({ proposal, done }: { proposal: ProposedServer; done: () => Promise<void> }) {
  const [servers, setServers] = useState<ServerView[]>([]);
  const [reveal, setReveal] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [adding, setAdding] = useState(false);
  useEffect(() => {
    let live = true;
    call(commands.mcpOverview()).then(
      (o) => live && setServers(o.servers),
      () => {},
    );
    return () => {
      live = false;
    };
  }, []);
  const t = proposal.transport;
  const secrets = t.type === "stdio" ? t.env : t.headers;
  const secretNames = Object.keys(secrets);
  const replaces = servers.find((s) => s.config.name === proposal.name);
  const add = async () => {
    setAdding(true);
    try {
      await call(commands.mcpImport(proposal.json));
      await done();
    } catch (e) {
      setProblem(errorMessage(e));
      setAdding(false);
    }
  };
  return (
    <>
      <h2>
        Add the MCP server <strong>{proposal.name}</strong>?
      </h2>
      <p className="muted small">A link asks to add it. Nothing is saved or started until you press Add.</p>
      {t.type === "stdio" ? (
        <>
          <p className="warning-note" role="note">
            This runs a program on your computer, with your files and your permissions. Add it only if you trust
            where the link came from.
          </p>
          <p className="small">Command line:</p>
          <pre className="tool-args" aria-label="Command line">
            {[t.command, ...t.args].map(shellQuote).join(" ")}
          </pre>
        </>
      ) : (
        <>
          {t.url.startsWith("http://") && !/^http:\/\/(127\.|localhost[:/]|\[::1\])/.test(t.url) && (
            <p className="warning-note" role="note">
              This address is not encrypted (http://): what Perch sends it can be read on the way.
            </p>
          )}
          <p className="small">Perch will connect to:</p>
          <pre className="tool-args" aria-label="Server address">
            {t.url}
          </pre>
        </>
      )}
      {secretNames.length > 0 && (
        <>
          <p className="small">{t.type === "stdio" ? "Environment variables:" : "Headers:"}</p>
          <pre className="tool-args" aria-label={t.type === "stdio" ? "Environment" : "Headers"}>
            {secretNames.map((k) => (t.type === "stdio" ? `${k}=` : `${k}: `) + (reveal ? secrets[k] : MASK)).join("\n")}
          </pre>
          <button type="button" className="link" onClick={() => setReveal(!reveal)}>
            {reveal ? "Hide values" : "Show values"}
          </button>
        </>
      )}
      {replaces && (
        <p className="warning-note" role="note">
          You already have a server named {proposal.name}; Add replaces it.
        </p>
      )}
      {problem && (
        <p className="error small" role="alert">
          {problem}
        </p>
      )}
      <div className="buttons">
        <button type="button" className="primary" disabled={adding} onClick={() => void add()}>
          Add
        </button>
        <button type="button" disabled={adding} onClick={() => void done()}>
          Cancel
        </button>
      </div>
    </>
  );
}
