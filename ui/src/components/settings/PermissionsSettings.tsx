import { useCallback, useEffect, useState } from "react";
import type { Permission, PermissionKind, RuleDecision } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";
import { useSettings } from "../../lib/settings";

/** The kinds in the order the page lists them, each with what it means. */
const KINDS: { kind: PermissionKind; title: string; note: string; none: string }[] = [
  {
    kind: "tool_rule",
    title: "Tool rules",
    note: "For every conversation, checked in this order: deny, then ask, then allow. Patterns are server:tool; either part may be *.",
    none: "No rules: every tool asks first.",
  },
  {
    kind: "conversation_grant",
    title: "Tools allowed in one conversation",
    note: "Granted with “For this conversation” on a tool's card.",
    none: "None.",
  },
  {
    kind: "terminal_command",
    title: "Commands always allowed",
    note: "Each is the whole command, exactly as its card showed it, in the folder it was allowed in. Commands Perch blocks never run, whatever is here.",
    none: "None yet.",
  },
  {
    kind: "conversation_folder",
    title: "Conversations' own folders",
    note: "Where a conversation's commands run and may change files, in place of the working folder from Settings → Terminal.",
    none: "None: every conversation uses the working folder.",
  },
  {
    kind: "terminal_session",
    title: "Terminal sessions",
    note: "Commands run without asking until the answer that asked ends.",
    none: "None running.",
  },
];

/** Settings -> Permissions: everything Perch may do without asking, in one list, each revocable. */
export function PermissionsSettings() {
  const { reload } = useSettings();
  const [all, setAll] = useState<Permission[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [pattern, setPattern] = useState("");
  const [decision, setDecision] = useState<RuleDecision>("allow");

  const list = useCallback(
    () => call(commands.permissionsList()).then(setAll, (e) => setError(errorMessage(e))),
    [],
  );
  useEffect(() => {
    list();
  }, [list]);

  // Rules live in the settings too: read them again, so no form saves a stale copy.
  const change = async (pending: Promise<unknown>) => {
    setError(null);
    try {
      await pending;
    } catch (e) {
      setError(errorMessage(e));
    }
    await Promise.all([list(), reload()]);
  };
  const revoke = (p: Permission) => change(call(commands.permissionsRevoke(p.id)));
  const addRule = async () => {
    await change(call(commands.permissionsAddRule(pattern.trim(), decision)));
    setPattern("");
  };

  return (
    <>
      {error && (
        <p className="error small" role="alert">
          {error}
        </p>
      )}
      {KINDS.map(({ kind, title, note, none }) => {
        const items = all?.filter((p) => p.kind === kind) ?? [];
        return (
          <fieldset className="card" key={kind}>
            <legend>{title}</legend>
            <p className="muted small">{note}</p>
            <ul className="rules" aria-label={title}>
              {items.map((p) => (
                <li key={p.id}>
                  <span className="rule-text">
                    <code>{p.label}</code> <span className="muted small">{p.scope}</span>
                  </span>
                  <button type="button" className="link" aria-label={`Revoke ${p.label}`} onClick={() => void revoke(p)}>
                    Revoke
                  </button>
                </li>
              ))}
              {all && items.length === 0 && <li className="muted small">{none}</li>}
            </ul>
            {kind === "tool_rule" && (
              <form
                className="inline-form"
                aria-label="Add a tool rule"
                onSubmit={(e) => {
                  e.preventDefault();
                  if (pattern.trim()) void addRule();
                }}
              >
                <input aria-label="Rule pattern" placeholder="demo:*" value={pattern} onChange={(e) => setPattern(e.target.value)} />
                <select aria-label="Rule decision" value={decision} onChange={(e) => setDecision(e.target.value as RuleDecision)}>
                  <option value="allow">allow</option>
                  <option value="ask">ask</option>
                  <option value="deny">deny</option>
                </select>
                <button type="submit" disabled={!pattern.trim()}>
                  Add rule
                </button>
              </form>
            )}
          </fieldset>
        );
      })}
    </>
  );
}
