import { useEffect, useReducer, useRef, useState, type ReactNode } from "react";
import type { MessageDescriptor } from "@lingui/core";
import { msg, plural } from "@lingui/core/macro";
import { Trans, useLingui } from "@lingui/react/macro";
import type { ApprovalChoice, Progress, ToolCallRecord } from "../../bindings";
import { call as invoke, commands, errorMessage } from "../../ipc";
import { announce } from "../../lib/announce";
import { formatNumber } from "../../lib/format";
import { useQuestions } from "../../lib/questions";
import { TerminalApproval } from "../terminal/TerminalApproval";
import { TerminalCard } from "../terminal/TerminalCard";
import { useHasApp, useMissingServer } from "../../lib/mcpApps/appTools";
import { useSettings } from "../../lib/settings";
import { AppFrame } from "./AppFrame";
import { GoogleSummary, isGoogleCall } from "./GoogleSummary";
import { KnowledgeSummary, isKnowledgeCall } from "./KnowledgeSummary";
import { MemoryProposal } from "./MemoryProposal";
import { WebSummary, isWebCall } from "./WebSummary";

const STATUS: Record<ToolCallRecord["status"], MessageDescriptor> = {
  pending: msg({ message: "waiting for you", comment: "a tool call's status: it waits for approval" }),
  running: msg({ message: "running", comment: "a tool call's status" }),
  done: msg({ message: "done", comment: "a tool call's status" }),
  error: msg({ message: "failed", comment: "a tool call's status" }),
  denied: msg({ message: "declined", comment: "a tool call's status" }),
  cancelled: msg({ message: "stopped", comment: "a tool call's status" }),
  needs_sign_in: msg({ message: "needs sign-in", comment: "a tool call's status" }),
};

/** "add" -> "Add", "read_text_file" -> "Read text file". */
export function humanLabel(tool: string): string {
  const words = tool.replace(/[_-]+/g, " ").replace(/([a-z])([A-Z])/g, "$1 $2").trim().toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const CHOICES: { choice: ApprovalChoice; label: MessageDescriptor }[] = [
  { choice: "once", label: msg({ context: "tool call approval", message: "Allow once", comment: "button: run this tool call, this once" }) },
  { choice: "conversation", label: msg({ context: "tool call approval", message: "Allow in this chat", comment: "button: run this tool without asking for the rest of this chat" }) },
  { choice: "always", label: msg({ context: "tool call approval", message: "Always allow", comment: "button: run this tool without asking from now on" }) },
  { choice: "deny", label: msg({ context: "tool call approval", message: "Deny", comment: "button: refuse what the model asks" }) },
  { choice: "never", label: msg({ context: "tool call approval", message: "Never", comment: "button: refuse this tool now and from now on" }) },
];

/** A tool that sends or destroys is asked about at every call: no "allow in this chat". */
function choicesFor(destructive: boolean) {
  return destructive ? CHOICES.filter((c) => c.choice !== "conversation") : CHOICES;
}

/** One tool call: what runs where, its status, progress, approval and result. `live`: in an
 * answer still streaming (whose cards are drawn again, as the saved answer, when it ends). */
export function ToolCallCard({ call, progress, live = false }: { call: ToolCallRecord; progress?: Progress; live?: boolean }) {
  if (call.server === "terminal" && call.tool === "run_command") return <TerminalCard call={call} />;
  if (call.server === "memory" && call.tool === "remember") return <MemoryProposal call={call} />;
  return <McpCallCard call={call} progress={progress} live={live} />;
}

function McpCallCard({ call, progress, live }: { call: ToolCallRecord; progress?: Progress; live: boolean }) {
  const { t } = useLingui();
  const { open, answer } = useQuestions();
  const [expanded, setExpanded] = useState(false);
  const ask = open.find((a) => a.question.kind === "tool_approval" && a.question.call_id === call.id);
  const output = call.output;
  const args = JSON.stringify(call.arguments, null, 2);
  const percent = progress?.total ? Math.round((100 * (progress.progress ?? 0)) / progress.total) : null;
  const cut = formatNumber(output?.truncated_chars ?? 0);
  useToolAnnouncements(call);
  const { server, tool } = call;
  const hasApp = useHasApp(server, tool);
  const missing = useMissingServer(server);
  const missingLine = missing?.line;
  const missingWhy = missing?.message;
  const tools = useSettings().settings?.tools;
  const appsOn = tools ? (tools.apps ?? true) && !(tools.apps_off ?? []).includes(server) : false;
  const [asText, setAsText] = useState(false);
  // Bumped when the card's app ends a tool call: its record of them is read again.
  const [appCallsEnded, appCallEnded] = useReducer((n: number) => n + 1, 0);
  // What the card's app has the model told: as saved, until the open app changes it.
  const [toldNow, setTold] = useState<string | null | undefined>(undefined);
  const told = toldNow === undefined ? (call.app_context ?? null) : toldNow;
  // An app starts once the answer is saved: the streaming answer's cards are replaced then, and
  // a frame started in one would load its page twice (and lose what the user did in it).
  const appReady = hasApp && appsOn && call.status === "done" && output != null;
  const showApp = appReady && !asText && !live;
  const asker = ask?.question.kind === "tool_approval" ? ask.question.app : null;
  const askedTool = ask?.question.kind === "tool_approval" ? ask.question.tool : tool;
  // An app asks about its own calls on its card: the heading names the tool it asks for.
  const label = humanLabel(askedTool);
  // Milliseconds as the engine measured them: "12 ms".
  const took = call.duration_ms != null ? formatNumber(call.duration_ms, { style: "unit", unit: "millisecond" }) : "";
  return (
    <section className={`tool-card status-${call.status}`} aria-label={t`Tool ${server}:${tool}`}>
      <header>
        <strong>{humanLabel(call.tool)}</strong>
        <span className="muted">
          {call.server ? `${call.server} · ` : ""}
          {call.tool}
        </span>
        <span className="tool-status" data-status={call.status}>
          {t(STATUS[call.status])}
          {call.duration_ms != null && call.status !== "pending" ? ` · ${took}` : ""}
        </span>
      </header>
      {isWebCall(call) ? (
        <WebSummary call={call} />
      ) : isGoogleCall(call) ? (
        <GoogleSummary call={call} />
      ) : isKnowledgeCall(call) ? (
        <KnowledgeSummary call={call} />
      ) : (
        <pre className="tool-args">{args}</pre>
      )}
      {call.status === "running" && progress && (
        <div className="tool-progress" role="progressbar" aria-valuenow={percent ?? undefined} aria-valuemin={0} aria-valuemax={100}>
          {percent !== null && <div className="bar" style={{ width: `${percent}%` }} />}
          <span>{progress.message ?? (percent !== null ? formatNumber(percent / 100, { style: "percent" }) : formatNumber(progress.progress ?? 0))}</span>
        </div>
      )}
      {call.status === "needs_sign_in" && <SignInAction server={call.server} />}
      {missing && !live && (
        // Its app (if it has one) and its tools are gone from every chat until the file is
        // fixed: said here, where the missing app would have been.
        <p className="tool-note warn" role="note">
          <Trans>
            {server} is not loaded: the MCP servers file has a problem (line {missingLine}: {missingWhy}). Fix it in Settings → MCP or in the file; Perch reads it again when it is saved.
          </Trans>
        </p>
      )}
      {ask?.question.kind === "tool_approval" && ask.question.detail && <TerminalApproval ask={ask} detail={ask.question.detail} />}
      {ask && !(ask.question.kind === "tool_approval" && ask.question.detail) && (
        <ApprovalGroup key={ask.id} title={t({ message: `${label} from ${server}`, comment: "a tool and the MCP server it belongs to" })}>
          {asker ? (
            <>
              <p>
                <Trans>
                  The <strong>{asker}</strong> app in this answer wants to run <strong>{askedTool}</strong> from <strong>{server}</strong> with:
                </Trans>
              </p>
              {ask?.question.kind === "tool_approval" && <pre className="tool-args">{JSON.stringify(ask.question.arguments, null, 2)}</pre>}
            </>
          ) : (
            <p>
              <Trans>
                Run <strong>{tool}</strong> from <strong>{server}</strong> with these arguments?
              </Trans>
            </p>
          )}
          <div className="buttons">
            {choicesFor(ask.question.kind === "tool_approval" && ask.question.destructive).map((c) => (
              <button
                key={c.choice}
                type="button"
                className={c.choice === "once" ? "primary" : c.choice === "deny" || c.choice === "never" ? "danger" : undefined}
                onClick={() => void answer(ask.id, { kind: "approval", choice: c.choice })}
              >
                {t(c.label)}
              </button>
            ))}
          </div>
        </ApprovalGroup>
      )}
      {appReady && live && (
        <p className="muted small-note">
          <Trans>Its app opens when the answer is finished.</Trans>
        </p>
      )}
      {showApp && (
        <AppFrame key={call.id} call={call} asking={ask != null} onShowText={() => setAsText(true)} onToolCalled={appCallEnded} onModelContext={setTold} />
      )}
      {appReady && !live && asText && (
        <button type="button" className="link" onClick={() => setAsText(false)}>
          <Trans>Show app</Trans>
        </button>
      )}
      {told && (
        <details className="app-calls app-context">
          <summary>{t`What its app told the model`}</summary>
          <pre>{told}</pre>
        </details>
      )}
      {hasApp && !live && call.status === "done" && <AppCalls cardId={call.id} ended={appCallsEnded} />}
      {output && (
        <div className="tool-result">
          <button type="button" className="link" aria-expanded={expanded} onClick={() => setExpanded(!expanded)}>
            {expanded ? t`Hide result` : output.is_error ? t`Show error` : t`Show result`}
          </button>
          {expanded && <pre className={output.is_error ? "error" : undefined}>{output.text}</pre>}
          {output.images.map((img, i) => {
            const number = formatNumber(i + 1);
            return <img key={i} alt={t`Result image ${number}`} src={`data:${img.mime};base64,${img.base64}`} />;
          })}
          {output.truncated_chars > 0 && (
            <p className="muted small-note">
              <Trans>{cut} characters were cut before the model saw it.</Trans>
            </p>
          )}
        </div>
      )}
    </section>
  );
}

/** The calls the card's app made (each asked about on this card, or let through by a rule), as
 * saved: what an app ran stays on record after it is closed, like the model's own calls.
 * `ended` changes when another call of the app ended. */
function AppCalls({ cardId, ended }: { cardId: string; ended: number }) {
  const { t } = useLingui();
  const [calls, setCalls] = useState<ToolCallRecord[]>([]);
  useEffect(() => {
    let current = true;
    void invoke(commands.mcpAppCalls(cardId)).then(
      (reply) => current && reply.Ok && setCalls(reply.Ok),
      () => {},
    );
    return () => {
      current = false;
    };
  }, [cardId, ended]);
  if (calls.length === 0) return null;
  const count = calls.length;
  return (
    <details className="app-calls">
      <summary>{t`${plural(count, { one: "# call from its app", other: "# calls from its app" })}`}</summary>
      <ul>
        {calls.map((c) => {
          const took = c.duration_ms != null ? ` · ${formatNumber(c.duration_ms, { style: "unit", unit: "millisecond" })}` : "";
          return (
            <li key={c.id}>
              <details>
                <summary>
                  {humanLabel(c.tool)}{" "}
                  <span className="tool-status" data-status={c.status}>
                    {t(STATUS[c.status])}
                    {took}
                  </span>
                </summary>
                <pre className="tool-args">{JSON.stringify(c.arguments, null, 2)}</pre>
                {c.output && c.output.text.trim() !== "" && <pre className={c.output.is_error ? "error" : undefined}>{c.output.text}</pre>}
              </details>
            </li>
          );
        })}
      </ul>
    </details>
  );
}

/** What a screen reader hears of a call: that it asks, and how it ended. */
function useToolAnnouncements(call: ToolCallRecord) {
  const { t } = useLingui();
  const before = useRef(call.status);
  useEffect(() => {
    if (before.current === call.status) return;
    before.current = call.status;
    const label = humanLabel(call.tool);
    const server = call.server;
    if (call.status === "running") announce(t`${label} from ${server} is running.`);
    else if (call.status === "done") announce(t`${label} from ${server} is done.`);
    else if (call.status === "error") announce(t`${label} from ${server} failed.`);
    else if (call.status === "denied") announce(t`${label} from ${server} was declined.`);
  }, [call.status, call.tool, call.server, t]);
}

/** The approval buttons' group. It takes the focus when it appears, so Tab reaches its
 * buttons next, but no button has it: a key pressed for something else (Enter after typing)
 * approves nothing. Unless the person is typing elsewhere, then it is only announced. */
export function ApprovalGroup({ title, children }: { title: string; children: ReactNode }) {
  const { t } = useLingui();
  const group = useRef<HTMLDivElement>(null);
  useEffect(() => {
    announce(t`Perch asks to run ${title}. Tab to the choices.`);
    const active = document.activeElement;
    const typing = active instanceof HTMLInputElement || (active instanceof HTMLTextAreaElement && active.value !== "");
    if (!typing) group.current?.focus({ preventScroll: false });
    // `t` changes only with the language.
  }, [title, t]);
  return (
    <div ref={group} className="approval" role="group" aria-label={t`Approve this tool call`} tabIndex={-1}>
      {children}
    </div>
  );
}

/** A call that could not run because its server wants a sign-in: Sign in from the card, in the
 * browser, then the user asks again. */
function SignInAction({ server }: { server: string }) {
  const { t } = useLingui();
  const [state, setState] = useState<"ready" | "waiting" | "done">("ready");
  const [error, setError] = useState<string | null>(null);
  const signIn = async () => {
    setState("waiting");
    setError(null);
    try {
      await invoke(commands.mcpSignIn(server, null));
      setState("done");
    } catch (e) {
      setState("ready");
      setError(errorMessage(e));
    }
  };
  return (
    <div className="approval" role="group" aria-label={t`Sign in to ${server}`}>
      <p>
        {state === "done"
          ? t`Signed in to ${server}. Ask again to run it.`
          : state === "waiting"
            ? t`Finish signing in in your browser.`
            : t`${server} needs you to sign in before its tools can run.`}
      </p>
      {state !== "done" && (
        <div className="buttons">
          <button type="button" className="primary" disabled={state === "waiting"} onClick={() => void signIn()}>
            <Trans>Sign in</Trans>
          </button>
          {state === "waiting" && (
            <button type="button" onClick={() => void invoke(commands.mcpCancelSignIn(server)).catch(() => {})}>
              <Trans comment="button: stop waiting for the sign-in">Cancel</Trans>
            </button>
          )}
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
