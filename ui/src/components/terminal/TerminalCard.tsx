import type { ToolCallRecord } from "../../bindings";
import { useQuestions } from "../../lib/questions";
import { formatDuration, jobOfCall, plainOutput, useTerminal } from "../../lib/terminal";
import { ShellCommand } from "./ShellCommand";
import { TerminalApproval } from "./TerminalApproval";

/** A run_command call: the command, its approval, live output and how it ended. */
export function TerminalCard({ call }: { call: ToolCallRecord }) {
  const { open } = useQuestions();
  const { jobs, refused, kill, setPanelOpen } = useTerminal();
  const command = String((call.arguments as { command?: unknown } | null)?.command ?? "");
  const ask = open.find((a) => a.question.kind === "tool_approval" && a.question.call_id === call.id);
  const detail = ask?.question.kind === "tool_approval" ? ask.question.detail : null;
  const job = jobOfCall(jobs, call.id);
  const stopped = refused[call.id];
  const event = job?.event ?? stopped ?? null;
  const running = job && !job.event;
  const status = stopped?.blocked
    ? "blocked"
    : stopped?.denied || call.status === "denied"
      ? "declined"
      : running
        ? job.runningFor
          ? `running for ${job.runningFor} s`
          : "running"
        : event
          ? event.exit_code === null
            ? event.timed_out
              ? "timed out"
              : "stopped"
            : `exit ${event.exit_code}`
          : call.status === "pending"
            ? "waiting for you"
            : call.status;
  const tail = job ? plainOutput(job.tail).trimEnd() : "";
  return (
    <section className={`tool-card terminal-card status-${call.status}`} aria-label={`Terminal command ${command}`}>
      <header>
        <strong>Terminal</strong>
        {job && <span className="muted path">{job.view.cwd}</span>}
        <span className="tool-status" data-status={call.status}>
          {status}
          {event && event.duration_ms > 0 ? ` · ${formatDuration(event.duration_ms)}` : ""}
        </span>
      </header>
      {!detail && (
        <pre className="shell-line">
          <ShellCommand command={command} />
        </pre>
      )}
      {ask && detail && <TerminalApproval ask={ask} detail={detail} />}
      {stopped?.blocked && (
        <p className="error" role="alert">
          Blocked by Perch: {stopped.blocked}. It did not run.
        </p>
      )}
      {tail && <pre className="terminal-tail" aria-label="Output">{tail.split("\n").slice(-12).join("\n")}</pre>}
      {!job && !ask && call.output && <pre className="terminal-tail muted">{call.output.text.split("\n").slice(-6).join("\n")}</pre>}
      {job && (
        <div className="buttons">
          {running && (
            <button type="button" className="danger" onClick={() => void kill(job.view.job)}>
              Kill
            </button>
          )}
          <button type="button" className="link" onClick={() => setPanelOpen(true)}>
            Open terminal
          </button>
          {job.view.sandbox && <small className="muted">{job.view.sandbox.enforced ? "sandboxed" : "not sandboxed"}</small>}
        </div>
      )}
    </section>
  );
}
