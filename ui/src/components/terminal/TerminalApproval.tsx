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
  // The first command, before a working folder is chosen: Run waits for the folder. Later, a
  // conversation can be given its own folder here, for a command the model gave no folder.
  const [folder, setFolder] = useState<string | null>(null);
  const [changing, setChanging] = useState(false);
  const conversationId = ask.question.kind === "tool_approval" ? ask.question.conversation_id : null;
  const modelChoseFolder = ask.question.kind === "tool_approval" && typeof (ask.question.arguments as { cwd?: unknown } | null)?.cwd === "string";
  const waitingForFolder = detail.kind === "command" && (detail.needs_folder || changing) && folder === null;
  // Vetted for another folder: what the card said of the sandbox, and "always", no longer hold.
  const folderChanged = detail.kind === "command" && !detail.needs_folder && folder !== null;
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
          {(detail.needs_folder || changing) && (
            <FolderChoice
              chosen={folder}
              onChosen={setFolder}
              conversationId={conversationId}
              firstUse={detail.needs_folder}
              onCancel={detail.needs_folder ? undefined : () => setChanging(false)}
            />
          )}
          <dl className="facts compact">
            <dt>In</dt>
            <dd className="folder-row">
              <span className="path">{detail.needs_folder || folder ? (folder ?? "(choose a folder)") : detail.cwd}</span>
              {!detail.needs_folder && !changing && !modelChoseFolder && conversationId && (
                <button type="button" className="link-button" onClick={() => setChanging(true)}>
                  Change…
                </button>
              )}
            </dd>
            {detail.reason && (
              <>
                <dt>Why</dt>
                <dd>{detail.reason}</dd>
              </>
            )}
            {!detail.needs_folder && !folderChanged && (
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
        ...(detail.can_remember && !folderChanged ? [{ choice: "always" as const, label: "Always allow this command" }] : []),
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

/** Where commands may run and change files: chosen once for every conversation (the first
 * command asks), or for one conversation; typed, or picked in the system's dialog. Perch checks
 * it (not the home folder itself, not its own data) and saves it. */
function FolderChoice(props: {
  chosen: string | null;
  onChosen: (folder: string) => void;
  conversationId: string | null;
  firstUse: boolean;
  onCancel?: () => void;
}) {
  const { chosen, onChosen, conversationId, firstUse, onCancel } = props;
  const [typed, setTyped] = useState("");
  const [error, setError] = useState<string | null>(null);
  // The first folder is everyone's default; one chosen later is this conversation's own.
  const [onlyHere, setOnlyHere] = useState(!firstUse);
  const { reload } = useSettings();
  const choose = async (path: string | null) => {
    setError(null);
    try {
      const folder = await call(commands.terminalChooseFolder(path, onlyHere ? conversationId : null));
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
        Commands {onlyHere ? "in this conversation " : ""}will run in <span className="path">{chosen}</span> and may change
        files only there ({onlyHere ? "Settings -> Permissions" : "Settings -> Terminal"}).
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
      <p className="note">
        {firstUse
          ? "Perch needs a working folder first: commands run there and may change files only there."
          : "Where should commands run? They may change files only there."}
      </p>
      <div className="row">
        <input aria-label="Folder for commands" placeholder="~/projects/app" value={typed} onChange={(e) => setTyped(e.target.value)} />
        <button type="submit" disabled={!typed.trim()}>
          Use
        </button>
        <button type="button" onClick={() => void choose(null)}>
          Choose…
        </button>
        {onCancel && (
          <button type="button" className="link-button" onClick={onCancel}>
            Cancel
          </button>
        )}
      </div>
      {conversationId && (
        <label className="check small">
          <input type="checkbox" checked={onlyHere} onChange={(e) => setOnlyHere(e.target.checked)} />
          Only for this conversation
        </label>
      )}
      {error && (
        <p className="error small" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}
