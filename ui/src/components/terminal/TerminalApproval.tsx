import { useState } from "react";
import { Trans, useLingui } from "@lingui/react/macro";
import type { ApprovalChoice, ApprovalDetail, OpenQuestion } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";
import { useQuestions } from "../../lib/questions";
import { useSettings } from "../../lib/settings";
import { ShellCommand } from "./ShellCommand";

type Choice = { choice: ApprovalChoice; label: string; kind?: "primary" | "danger" };

/** The question for a terminal tool: the command (or session, or input) with what it needs to
 * be judged, and Run / Deny / Always allow this command. */
export function TerminalApproval({ ask, detail }: { ask: OpenQuestion; detail: ApprovalDetail }) {
  const { t } = useLingui();
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
          <p>
            <Trans>Run this command?</Trans>
          </p>
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
            <dt>
              <Trans context="command folder" comment="the folder the command runs in">In</Trans>
            </dt>
            <dd className="folder-row">
              <span className="path">{detail.needs_folder || folder ? (folder ?? t`(choose a folder)`) : detail.cwd}</span>
              {!detail.needs_folder && !changing && !modelChoseFolder && conversationId && (
                <button type="button" className="link-button" onClick={() => setChanging(true)}>
                  <Trans comment="link: run the command in another folder">Change…</Trans>
                </button>
              )}
            </dd>
            {detail.reason && (
              <>
                <dt>
                  <Trans comment="why the model runs the command">Why</Trans>
                </dt>
                <dd>{detail.reason}</dd>
              </>
            )}
            {!detail.needs_folder && !folderChanged && (
              <>
                <dt>
                  <Trans comment="what the sandbox lets the command do">Sandbox</Trans>
                </dt>
                <dd className={detail.sandbox.enforced ? undefined : "warning"}>{detail.sandbox.summary}</dd>
              </>
            )}
          </dl>
          {detail.why_asked && !detail.needs_folder && <p className="note">{detail.why_asked}</p>}
        </>
      );
      choices = [
        { choice: "once", label: t({ context: "terminal command approval", message: "Run", comment: "button: run the command shown, this once" }), kind: "primary" },
        { choice: "deny", label: t({ context: "terminal command approval", message: "Deny", comment: "button: refuse what the model asks" }), kind: "danger" },
        ...(detail.can_remember && !folderChanged
          ? [
              {
                choice: "always" as const,
                label: t({ context: "terminal command approval", message: "Always allow this command", comment: "button: run it, and this command from now on without asking" }),
              },
            ]
          : []),
      ];
      break;
    case "session": {
      const folder = detail.folder;
      const reason = detail.reason;
      body = (
        <>
          <p>
            <Trans>
              Start a terminal session in <span className="path">{folder}</span>? Commands run without asking until this answer
              ends; the blocklist and the sandbox still apply.
            </Trans>
          </p>
          {reason && (
            <p className="muted">
              <Trans comment="why the model asks">Why: {reason}</Trans>
            </p>
          )}
        </>
      );
      choices = [
        { choice: "once", label: t({ context: "terminal session approval", message: "Start session", comment: "button: start the terminal session asked for" }), kind: "primary" },
        { choice: "deny", label: t({ context: "terminal session approval", message: "Deny", comment: "button: refuse what the model asks" }), kind: "danger" },
      ];
      break;
    }
    case "input": {
      const typed = JSON.stringify(detail.text);
      const program = detail.command;
      body = (
        <p>
          <Trans>
            Type <code>{typed}</code> into {program}?
          </Trans>
        </p>
      );
      choices = [
        { choice: "once", label: t({ context: "terminal input approval", message: "Send", comment: "button: type the text shown into the running command" }), kind: "primary" },
        { choice: "deny", label: t({ context: "terminal input approval", message: "Deny", comment: "button: refuse what the model asks" }), kind: "danger" },
      ];
      break;
    }
  }
  return (
    <div className="approval" role="group" aria-label={t`Approve this command`}>
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
  const { t } = useLingui();
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
        {onlyHere ? (
          <Trans>
            Commands in this conversation will run in <span className="path">{chosen}</span> and may change files only there (Settings
            -&gt; Permissions).
          </Trans>
        ) : (
          <Trans>
            Commands will run in <span className="path">{chosen}</span> and may change files only there (Settings -&gt; Terminal).
          </Trans>
        )}
      </p>
    );
  }
  return (
    <form
      className="folder-choice"
      aria-label={t`Working folder`}
      onSubmit={(e) => {
        e.preventDefault();
        if (typed.trim()) void choose(typed);
      }}
    >
      <p className="note">
        {firstUse
          ? t`Perch needs a working folder first: commands run there and may change files only there.`
          : t`Where should commands run? They may change files only there.`}
      </p>
      <div className="row">
        <input aria-label={t`Folder for commands`} placeholder="~/projects/app" value={typed} onChange={(e) => setTyped(e.target.value)} />
        <button type="submit" disabled={!typed.trim()}>
          <Trans comment="button: use the folder typed">Use</Trans>
        </button>
        <button type="button" onClick={() => void choose(null)}>
          <Trans comment="button: pick the folder in the system's dialog">Choose…</Trans>
        </button>
        {onCancel && (
          <button type="button" className="link-button" onClick={onCancel}>
            <Trans>Cancel</Trans>
          </button>
        )}
      </div>
      {conversationId && (
        <label className="check small">
          <input type="checkbox" checked={onlyHere} onChange={(e) => setOnlyHere(e.target.checked)} />
          <Trans>Only for this conversation</Trans>
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
