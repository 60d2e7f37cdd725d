// "Add server" links (`perch://mcp/add?...`): the shell reads each link (the engine says what it
// proposes, or why it cannot be used: a name a server or a permission already has is refused)
// and keeps it until answered; this asks, over whatever page is open. It shows exactly what Add
// saves: the whole command line with its arguments and the names of its environment variables
// (values hidden until asked for), or the address. Nothing is saved or started before Add, and
// Add asks the shell to save the proposal it kept (`mcp_add_link_accept`). A link can arrive
// while the user types elsewhere, so the dialog takes the focus on Cancel, a key cannot press
// Add for a moment after it shows (as browsers do for permission prompts), and Esc cancels.
import { useEffect, useRef, useState, type MouseEvent } from "react";
import { Trans, useLingui } from "@lingui/react/macro";
import type { AddLinkRequest, ProposedServer } from "../../bindings";
import { call, commands, errorMessage, events } from "../../ipc";
import { useEscape } from "../../lib/useEscape";
import { useLoad } from "../../lib/useLoad";
import { ModalDialog } from "../ModalDialog";

/** An argument as a POSIX shell would need it written, so spaces and quotes show unambiguously. */
export function shellQuote(arg: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

const MASK = "••••••••";

/** How long after the dialog shows a key (Enter, Space) cannot press Add: a key meant for
 * another window must not add a server. A click is a deliberate act and counts at once. */
export const KEY_ACTIVATION_DELAY_MS = 1000;

/** The links waiting for an answer, the oldest asked first. */
export function AddServerLinks() {
  const { t } = useLingui();
  const links = useLoad<AddLinkRequest[]>(() => call(commands.mcpAddLinks()), "links");
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
        <Proposal key={request.id} id={request.id} proposal={request.proposal} done={done} reload={reload} />
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
          <OnEscape run={done} />
        </>
      )}
    </ModalDialog>
  );
}

/** Esc answers the dialog as Cancel (or Close) would. */
function OnEscape({ run }: { run: () => void }) {
  useEscape(run);
  return null;
}

interface ProposalProps {
  id: number;
  proposal: ProposedServer;
  done: () => Promise<void>;
  reload: () => void;
}

function Proposal({ id, proposal, done, reload }: ProposalProps) {
  const { t } = useLingui();
  const [reveal, setReveal] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const [adding, setAdding] = useState(false);
  const shownAt = useRef(Number.POSITIVE_INFINITY);
  useEffect(() => {
    shownAt.current = Date.now();
  }, []);
  const name = proposal.name;
  const transport = proposal.transport;
  const secrets = transport.type === "stdio" ? transport.env : transport.headers;
  const secretNames = Object.keys(secrets);
  const cancel = () => {
    if (!adding) void done();
  };
  useEscape(cancel);
  const add = async (e: MouseEvent) => {
    // A click from a key (Enter, Space) has no pointer, so `detail` is 0.
    if (e.detail === 0 && Date.now() - shownAt.current < KEY_ACTIVATION_DELAY_MS) return;
    setAdding(true);
    try {
      await call(commands.mcpAddLinkAccept(id));
      reload();
    } catch (error) {
      setProblem(errorMessage(error));
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
      {problem && (
        <p className="error small" role="alert">
          {problem}
        </p>
      )}
      <div className="buttons">
        <button type="button" className="primary" disabled={adding} onClick={(e) => void add(e)}>
          <Trans>Add</Trans>
        </button>
        <button type="button" data-autofocus disabled={adding} onClick={cancel}>
          <Trans>Cancel</Trans>
        </button>
      </div>
    </>
  );
}
