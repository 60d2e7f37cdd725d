import { useState } from "react";
import type { ApprovalChoice, ApprovalDetail, OpenQuestion } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";
import { useQuestions } from "../../lib/questions";
import { useSettings } from "../../lib/settings";
import { ShellCommand } from "./ShellCommand";

type Choice = { choice: ApprovalChoice; label: string; kind?: "primary" | "danger" };

/** The question for a terminal tool: the command (or session, or input) with what it needs to
 * be judged, and Run / Deny / Always allow this command. */
export function TerminalApproval({ ask, detail }: { ask: OpenQuestion; detail: ApprovalDetail }) {
  const { answer } = useQuestions();
  // The first command, before a working folder is chosen: Run waits for the folder.
  const [folder, setFolder] = useState<string | null>(null);
  const waitingForFolder = detail.kind === "command" && detail.needs_folder && folder === null;
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
          {detail.needs_folder && <FolderChoice chosen={folder} onChosen={setFolder} />}
          <dl className="facts compact">
            <dt>In</dt>
            <dd className="path">{detail.needs_folder ? (folder ?? "(choose a folder)") : detail.cwd}</dd>
            {detail.reason && (
              <>
                <dt>Why</dt>
                <dd>{detail.reason}</dd>
              </>
            )}
            {!detail.needs_folder && (
              <>
                <dt>Sandbox</dt>
                <dd className={detail.sandbox.enforced ? undefined : "warning"}>{detail.sandbox.summary}</dd>
              </>
            )}
          </dl>
          {detail.why_asked && !detail.needs_folder && <p className="note">{detail.why_asked}</p>}
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
          <button
            key={c.choice}
            type="button"
            className={c.kind}
            disabled={waitingForFolder && c.choice !== "deny"}
            onClick={() => void answer(ask.id, { kind: "approval", choice: c.choice })}
          >
            {c.label}
          </button>
        ))}
      </div>
    </div>
  );
}

/** Where commands may run and change files, chosen once: typed, or picked in the system's
 * dialog; Perch checks it (not the home folder itself, not its own data) and saves it. */
function FolderChoice({ chosen, onChosen }: { chosen: string | null; onChosen: (folder: string) => void }) {
  const [typed, setTyped] = useState("");
  const [error, setError] = useState<string | null>(null);
  const { reload } = useSettings();
  const choose = async (path: string | null) => {
    setError(null);
    try {
      const folder = await call(commands.terminalChooseFolder(path));
      if (folder) {
        onChosen(folder);
        await reload();
      }
    } catch (e) {
      setError(errorMessage(e));
    }
  };
  if (chosen) {
    return (
      <p className="note" role="status">
        Commands will run in <span className="path">{chosen}</span> and may change files only there (Settings -&gt; Terminal).
      </p>
    );
  }
  return (
    <form
      className="folder-choice"
      aria-label="Working folder"
      onSubmit={(e) => {
        e.preventDefault();
        if (typed.trim()) void choose(typed);
      }}
    >
      <p className="note">Perch needs a working folder first: commands run there and may change files only there.</p>
      <div className="row">
        <input aria-label="Folder for commands" placeholder="~/projects/app" value={typed} onChange={(e) => setTyped(e.target.value)} />
        <button type="submit" disabled={!typed.trim()}>
          Use
        </button>
        <button type="button" onClick={() => void choose(null)}>
          Choose…
        </button>
      </div>
      {error && (
        <p className="error small" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}
