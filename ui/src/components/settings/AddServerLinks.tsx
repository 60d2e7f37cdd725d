// "Add server" links (`perch://mcp/add?...`): the shell reads each link (the engine says what it
// proposes, or why it cannot be used) and keeps it until answered; this asks, over whatever page
// is open. It shows exactly what Add saves: the whole command line with its arguments and the
// names of its environment variables (values hidden until asked for), or the address. Nothing
// is saved or started before Add, and Add goes through `mcp_import` like the Add form.
import { useEffect, useState } from "react";
import { Trans, useLingui } from "@lingui/react/macro";
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
  const { t } = useLingui();
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
    <ModalDialog key={request.id} className="dialog card" label={t`Add an MCP server`}>
      {request.proposal ? (
        <Proposal key={request.id} proposal={request.proposal} done={done} />
      ) : (
        <>
          <h2>
            <Trans>A link to add a server could not be used</Trans>
          </h2>
          <p className="error small" role="alert">
            {request.error}
          </p>
          <p className="muted small">
            <Trans>Nothing was saved.</Trans>
          </p>
          <div className="buttons">
            <button type="button" onClick={() => void done()}>
              <Trans>Close</Trans>
            </button>
          </div>
        </>
      )}
    </ModalDialog>
  );
}

function Proposal({ proposal, done }: { proposal: ProposedServer; done: () => Promise<void> }) {
  const { t } = useLingui();
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
  const name = proposal.name;
  const transport = proposal.transport;
  const secrets = transport.type === "stdio" ? transport.env : transport.headers;
  const secretNames = Object.keys(secrets);
  const replaces = servers.find((s) => s.config.name === name);
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
        <Trans>
          Add the MCP server <strong>{name}</strong>?
        </Trans>
      </h2>
      <p className="muted small">
        <Trans>A link asks to add it. Nothing is saved or started until you press Add.</Trans>
      </p>
      {transport.type === "stdio" ? (
        <>
          <p className="warning-note" role="note">
            <Trans>
              This runs a program on your computer, with your files and your permissions. Add it only if you trust
              where the link came from.
            </Trans>
          </p>
          <p className="small">
            <Trans>Command line:</Trans>
          </p>
          <pre className="tool-args" aria-label={t`Command line`}>
            {[transport.command, ...transport.args].map(shellQuote).join(" ")}
          </pre>
        </>
      ) : (
        <>
          {transport.url.startsWith("http://") && !/^http:\/\/(127\.|localhost[:/]|\[::1\])/.test(transport.url) && (
            <p className="warning-note" role="note">
              <Trans>This address is not encrypted (http://): what Perch sends it can be read on the way.</Trans>
            </p>
          )}
          <p className="small">
            <Trans>Perch will connect to:</Trans>
          </p>
          <pre className="tool-args" aria-label={t`Server address`}>
            {transport.url}
          </pre>
        </>
      )}
      {secretNames.length > 0 && (
        <>
          <p className="small">{transport.type === "stdio" ? t`Environment variables:` : t`Headers:`}</p>
          <pre className="tool-args" aria-label={transport.type === "stdio" ? t`Environment` : t`Headers`}>
            {secretNames.map((k) => (transport.type === "stdio" ? `${k}=` : `${k}: `) + (reveal ? secrets[k] : MASK)).join("\n")}
          </pre>
          <button type="button" className="link" onClick={() => setReveal(!reveal)}>
            {reveal ? t`Hide values` : t`Show values`}
          </button>
        </>
      )}
      {replaces && (
        <p className="warning-note" role="note">
          <Trans>You already have a server named {name}; Add replaces it.</Trans>
        </p>
      )}
      {problem && (
        <p className="error small" role="alert">
          {problem}
        </p>
      )}
      <div className="buttons">
        <button type="button" className="primary" disabled={adding} onClick={() => void add()}>
          <Trans>Add</Trans>
        </button>
        <button type="button" disabled={adding} onClick={() => void done()}>
          <Trans>Cancel</Trans>
        </button>
      </div>
    </>
  );
}
