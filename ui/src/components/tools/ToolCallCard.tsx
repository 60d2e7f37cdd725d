import { useEffect, useRef, useState, type ReactNode } from "react";
import type { ApprovalChoice, Progress, ToolCallRecord } from "../../bindings";
import { call as invoke, commands, errorMessage } from "../../ipc";
import { announce } from "../../lib/announce";
import { useQuestions } from "../../lib/questions";
import { TerminalApproval } from "../terminal/TerminalApproval";
import { TerminalCard } from "../terminal/TerminalCard";
import { GoogleSummary, isGoogleCall } from "./GoogleSummary";
import { WebSummary, isWebCall } from "./WebSummary";

const STATUS: Record<ToolCallRecord["status"], string> = {
  pending: "waiting for you",
  running: "running",
  done: "done",
  error: "failed",
  denied: "declined",
  cancelled: "stopped",
  needs_sign_in: "needs sign-in",
};

/** "add" -> "Add", "read_text_file" -> "Read text file". */
export function humanLabel(tool: string): string {
  const words = tool.replace(/[_-]+/g, " ").replace(/([a-z])([A-Z])/g, "$1 $2").trim().toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const CHOICES: { choice: ApprovalChoice; label: string }[] = [
  { choice: "once", label: "Allow once" },
  { choice: "conversation", label: "Allow in this chat" },
  { choice: "always", label: "Always allow" },
  { choice: "deny", label: "Deny" },
  { choice: "never", label: "Never" },
];

/** A tool that sends or destroys is asked about at every call: no "allow in this chat". */
function choicesFor(destructive: boolean) {
  return destructive ? CHOICES.filter((c) => c.choice !== "conversation") : CHOICES;
}

/** One tool call: what runs where, its status, progress, approval and result. */
export function ToolCallCard({ call, progress }: { call: ToolCallRecord; progress?: Progress }) {
  if (call.server === "terminal" && call.tool === "run_command") return <TerminalCard call={call} />;
  return <McpCallCard call={call} progress={progress} />;
}

function McpCallCard({ call, progress }: { call: ToolCallRecord; progress?: Progress }) {
  const { open, answer } = useQuestions();
  const [expanded, setExpanded] = useState(false);
  const ask = open.find((a) => a.question.kind === "tool_approval" && a.question.call_id === call.id);
  const output = call.output;
  const args = JSON.stringify(call.arguments, null, 2);
  const percent = progress?.total ? Math.round((100 * (progress.progress ?? 0)) / progress.total) : null;
  useToolAnnouncements(call);
  return (
    <section className={`tool-card status-${call.status}`} aria-label={`Tool ${call.server}:${call.tool}`}>
      <header>
        <strong>{humanLabel(call.tool)}</strong>
        <span className="muted">
          {call.server ? `${call.server} · ` : ""}
          {call.tool}
        </span>
        <span className="tool-status" data-status={call.status}>
          {STATUS[call.status]}
          {call.duration_ms != null && call.status !== "pending" ? ` · ${call.duration_ms} ms` : ""}
        </span>
      </header>
      {isWebCall(call) ? (
        <WebSummary call={call} />
      ) : isGoogleCall(call) ? (
        <GoogleSummary call={call} />
      ) : (
        <pre className="tool-args">{args}</pre>
      )}
      {call.status === "running" && progress && (
        <div className="tool-progress" role="progressbar" aria-valuenow={percent ?? undefined} aria-valuemin={0} aria-valuemax={100}>
          {percent !== null && <div className="bar" style={{ width: `${percent}%` }} />}
          <span>{progress.message ?? (percent !== null ? `${percent}%` : `${progress.progress ?? 0}`)}</span>
        </div>
      )}
      {call.status === "needs_sign_in" && <SignInAction server={call.server} />}
      {ask?.question.kind === "tool_approval" && ask.question.detail && <TerminalApproval ask={ask} detail={ask.question.detail} />}
      {ask && !(ask.question.kind === "tool_approval" && ask.question.detail) && (
        <ApprovalGroup key={ask.id} title={`${humanLabel(call.tool)} from ${call.server}`}>
          <p>
            Run <strong>{call.tool}</strong> from <strong>{call.server}</strong> with these arguments?
          </p>
          <div className="buttons">
            {choicesFor(ask.question.kind === "tool_approval" && ask.question.destructive).map((c) => (
              <button
                key={c.choice}
                type="button"
                className={c.choice === "once" ? "primary" : c.choice === "deny" || c.choice === "never" ? "danger" : undefined}
                onClick={() => void answer(ask.id, { kind: "approval", choice: c.choice })}
              >
                {c.label}
              </button>
            ))}
          </div>
        </ApprovalGroup>
      )}
      {output && (
        <div className="tool-result">
          <button type="button" className="link" aria-expanded={expanded} onClick={() => setExpanded(!expanded)}>
            {expanded ? "Hide result" : output.is_error ? "Show error" : "Show result"}
          </button>
          {expanded && <pre className={output.is_error ? "error" : undefined}>{output.text}</pre>}
          {output.images.map((img, i) => (
            <img key={i} alt={`Result image ${i + 1}`} src={`data:${img.mime};base64,${img.base64}`} />
          ))}
          {output.truncated_chars > 0 && (
            <p className="muted small-note">{output.truncated_chars} characters were cut before the model saw it.</p>
          )}
        </div>
      )}
    </section>
  );
}

/** What a screen reader hears of a call: that it asks, and how it ended. */
function useToolAnnouncements(call: ToolCallRecord) {
  const before = useRef(call.status);
  useEffect(() => {
    if (before.current === call.status) return;
    before.current = call.status;
    const what = `${humanLabel(call.tool)} from ${call.server}`;
    if (call.status === "running") announce(`${what} is running.`);
    else if (call.status === "done") announce(`${what} is done.`);
    else if (call.status === "error") announce(`${what} failed.`);
    else if (call.status === "denied") announce(`${what} was declined.`);
  }, [call.status, call.tool, call.server]);
}

/** The approval buttons' group. It takes the focus when it appears, so Tab reaches its
 * buttons next, but no button has it: a key pressed for something else (Enter after typing)
 * approves nothing. Unless the person is typing elsewhere, then it is only announced. */
export function ApprovalGroup({ title, children }: { title: string; children: ReactNode }) {
  const group = useRef<HTMLDivElement>(null);
  useEffect(() => {
    announce(`Perch asks to run ${title}. Tab to the choices.`);
    const active = document.activeElement;
    const typing = active instanceof HTMLInputElement || (active instanceof HTMLTextAreaElement && active.value !== "");
    if (!typing) group.current?.focus({ preventScroll: false });
  }, [title]);
  return (
    <div ref={group} className="approval" role="group" aria-label="Approve this tool call" tabIndex={-1}>
      {children}
    </div>
  );
}

/** A call that could not run because its server wants a sign-in: Sign in from the card, in the
 * browser, then the user asks again. */
function SignInAction({ server }: { server: string }) {
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
    <div className="approval" role="group" aria-label={`Sign in to ${server}`}>
      <p>
        {state === "done"
          ? `Signed in to ${server}. Ask again to run it.`
          : state === "waiting"
            ? "Finish signing in in your browser."
            : `${server} needs you to sign in before its tools can run.`}
      </p>
      {state !== "done" && (
        <div className="buttons">
          <button type="button" className="primary" disabled={state === "waiting"} onClick={() => void signIn()}>
            Sign in
          </button>
          {state === "waiting" && (
            <button type="button" onClick={() => void invoke(commands.mcpCancelSignIn(server)).catch(() => {})}>
              Cancel
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
