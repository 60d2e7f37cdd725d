import type { MessageDescriptor } from "@lingui/core";
import { msg } from "@lingui/core/macro";
import { Trans, useLingui } from "@lingui/react/macro";
import type { ToolCallRecord } from "../../bindings";
import { useQuestions } from "../../lib/questions";
import { formatNumber } from "../../lib/format";
import { formatDuration, jobOfCall, plainOutput, useTerminal } from "../../lib/terminal";
import { ShellCommand } from "./ShellCommand";
import { TerminalApproval } from "./TerminalApproval";

/** A saved call's status, when no job or refusal says more (a command from an earlier run). */
const CALL_STATUS: Partial<Record<ToolCallRecord["status"], MessageDescriptor>> = {
  running: msg({ message: "running", comment: "a terminal command's status" }),
  done: msg({ message: "done", comment: "a terminal command's status" }),
  error: msg({ message: "error", comment: "a terminal command's status" }),
  cancelled: msg({ message: "cancelled", comment: "a terminal command's status" }),
};

/** A run_command call: the command, its approval, live output and how it ended. */
export function TerminalCard({ call }: { call: ToolCallRecord }) {
  const { t } = useLingui();
  const { open } = useQuestions();
  const { jobs, refused, kill, setPanelOpen } = useTerminal();
  const command = String((call.arguments as { command?: unknown } | null)?.command ?? "");
  const ask = open.find((a) => a.question.kind === "tool_approval" && a.question.call_id === call.id);
  const detail = ask?.question.kind === "tool_approval" ? ask.question.detail : null;
  const job = jobOfCall(jobs, call.id);
  const stopped = refused[call.id];
  const event = job?.event ?? stopped ?? null;
  const running = job && !job.event;
  const seconds = job?.runningFor ? formatNumber(job.runningFor) : "";
  const exitCode = event?.exit_code;
  const saved = CALL_STATUS[call.status];
  const blocked = stopped?.blocked;
  const status = stopped?.blocked
    ? t({ message: "blocked", comment: "a terminal command's status" })
    : stopped?.denied || call.status === "denied"
      ? t({ message: "declined", comment: "a terminal command's status" })
      : running
        ? job.runningFor
          ? t({ message: `running for ${seconds} s`, comment: "a terminal command's status; s: seconds" })
          : t({ message: "running", comment: "a terminal command's status" })
        : event
          ? event.exit_code === null
            ? event.timed_out
              ? t({ message: "timed out", comment: "a terminal command's status" })
              : t({ message: "stopped", comment: "a terminal command's status" })
            : t({ message: `exit ${exitCode}`, comment: "a terminal command's status: its exit code" })
          : call.status === "pending"
            ? t({ message: "waiting for you", comment: "a tool call's status: it waits for approval" })
            : saved
              ? t(saved)
              : call.status;
  const tail = job ? plainOutput(job.tail).trimEnd() : "";
  return (
    <section className={`tool-card terminal-card status-${call.status}`} aria-label={t`Terminal command ${command}`}>
      <header>
        <strong>
          <Trans comment="the terminal card's title">Terminal</Trans>
        </strong>
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
      {blocked && (
        <p className="error" role="alert">
          <Trans>Blocked by Perch: {blocked}. It did not run.</Trans>
        </p>
      )}
      {tail && <pre className="terminal-tail" aria-label={t({ message: "Output", comment: "the command's last lines of output" })}>{tail.split("\n").slice(-12).join("\n")}</pre>}
      {!job && !ask && call.output && <pre className="terminal-tail muted">{call.output.text.split("\n").slice(-6).join("\n")}</pre>}
      {job && (
        <div className="buttons">
          {running && (
            <button type="button" className="danger" onClick={() => void kill(job.view.job)}>
              <Trans comment="button: kill the running command">Kill</Trans>
            </button>
          )}
          <button type="button" className="link" onClick={() => setPanelOpen(true)}>
            <Trans>Open terminal</Trans>
          </button>
          {job.view.sandbox && <small className="muted">{job.view.sandbox.enforced ? t`sandboxed` : t`not sandboxed`}</small>}
        </div>
      )}
    </section>
  );
}
