import type { ApprovalChoice, ApprovalDetail, OpenQuestion } from "../../bindings";
import { useQuestions } from "../../lib/questions";
import { ShellCommand } from "./ShellCommand";

type Choice = { choice: ApprovalChoice; label: string; kind?: "primary" | "danger" };

/** The question for a terminal tool: the command (or session, or input) with what it needs to
 * be judged, and Run / Deny / Always allow this command. */
export function TerminalApproval({ ask, detail }: { ask: OpenQuestion; detail: ApprovalDetail }) {
  const { answer } = useQuestions();
  let body;
  let choices: Choice[];
  switch (detail.kind) {
    case "command":
      body = (
        <>
          <p>Run this command?</p>
          <pre className="shell-line">
            <ShellCommand command={detail.command} />
          </pre>
          <dl className="facts compact">
            <dt>In</dt>
            <dd className="path">{detail.cwd}</dd>
            {detail.reason && (
              <>
                <dt>Why</dt>
                <dd>{detail.reason}</dd>
              </>
            )}
            <dt>Sandbox</dt>
            <dd className={detail.sandbox.enforced ? undefined : "warning"}>{detail.sandbox.summary}</dd>
          </dl>
          {detail.why_asked && <p className="note">{detail.why_asked}</p>}
        </>
      );
      choices = [
        { choice: "once", label: "Run", kind: "primary" },
        { choice: "deny", label: "Deny", kind: "danger" },
        ...(detail.can_remember ? [{ choice: "always" as const, label: "Always allow this command" }] : []),
      ];
      break;
    case "session":
      body = (
        <>
          <p>
            Start a terminal session in <span className="path">{detail.folder}</span>? Commands run without asking until this
            answer ends; the blocklist and the sandbox still apply.
          </p>
          {detail.reason && <p className="muted">Why: {detail.reason}</p>}
        </>
      );
      choices = [
        { choice: "once", label: "Start session", kind: "primary" },
        { choice: "deny", label: "Deny", kind: "danger" },
      ];
      break;
    case "input":
      body = (
        <p>
          Type <code>{JSON.stringify(detail.text)}</code> into {detail.command}?
        </p>
      );
      choices = [
        { choice: "once", label: "Send", kind: "primary" },
        { choice: "deny", label: "Deny", kind: "danger" },
      ];
      break;
  }
  return (
    <div className="approval" role="group" aria-label="Approve this command">
      {body}
      <div className="buttons">
        {choices.map((c) => (
          <button key={c.choice} type="button" className={c.kind} onClick={() => void answer(ask.id, { kind: "approval", choice: c.choice })}>
            {c.label}
          </button>
        ))}
      </div>
    </div>
  );
}
