import { useCallback, useEffect, useState } from "react";
import type { MessageDescriptor } from "@lingui/core";
import { msg } from "@lingui/core/macro";
import { Trans, useLingui } from "@lingui/react/macro";
import type { Permission, PermissionKind, RuleDecision } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";
import { useSettings } from "../../lib/settings";

/** The kinds in the order the page lists them, each with what it means. */
const KINDS: { kind: PermissionKind; title: MessageDescriptor; note: MessageDescriptor; none: MessageDescriptor }[] = [
  {
    kind: "tool_rule",
    title: msg`Tool rules`,
    note: msg`For every conversation, checked in this order: deny, then ask, then allow. Patterns are server:tool; either part may be *.`,
    none: msg`No rules: every tool asks first.`,
  },
  {
    kind: "conversation_grant",
    title: msg`Tools allowed in one conversation`,
    note: msg`Granted with “Allow in this chat” on a tool's card.`,
    none: msg({ message: "None.", comment: "no tools allowed in one conversation" }),
  },
  {
    kind: "terminal_command",
    title: msg`Commands always allowed`,
    note: msg`Each is the whole command, exactly as its card showed it, in the folder it was allowed in. Commands Perch blocks never run, whatever is here.`,
    none: msg({ message: "None yet.", comment: "no commands always allowed" }),
  },
  {
    kind: "conversation_folder",
    title: msg`Conversations' own folders`,
    note: msg`Where a conversation's commands run and may change files, in place of the working folder from Settings → Terminal.`,
    none: msg`None: every conversation uses the working folder.`,
  },
  {
    kind: "terminal_session",
    title: msg`Terminal sessions`,
    note: msg`Commands run without asking until the answer that asked ends.`,
    none: msg({ message: "None running.", comment: "no terminal sessions" }),
  },
];

/** Settings -> Permissions: everything Perch may do without asking, in one list, each revocable. */
export function PermissionsSettings() {
  const { t } = useLingui();
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
            <legend>{t(title)}</legend>
            <p className="muted small">{t(note)}</p>
            <ul className="rules" aria-label={t(title)}>
              {items.map((p) => {
                const label = p.label;
                return (
                  <li key={p.id}>
                    <span className="rule-text">
                      <code>{label}</code> <span className="muted small">{p.scope}</span>
                    </span>
                    <button type="button" className="link" aria-label={t`Revoke ${label}`} onClick={() => void revoke(p)}>
                      <Trans>Revoke</Trans>
                    </button>
                  </li>
                );
              })}
              {all && items.length === 0 && <li className="muted small">{t(none)}</li>}
            </ul>
            {kind === "tool_rule" && (
              <form
                className="inline-form"
                aria-label={t`Add a tool rule`}
                onSubmit={(e) => {
                  e.preventDefault();
                  if (pattern.trim()) void addRule();
                }}
              >
                <input aria-label={t`Rule pattern`} placeholder="demo:*" value={pattern} onChange={(e) => setPattern(e.target.value)} />
                <select aria-label={t`Rule decision`} value={decision} onChange={(e) => setDecision(e.target.value as RuleDecision)}>
                  <option value="allow">{t({ message: "allow", comment: "a tool rule's decision: run without asking" })}</option>
                  <option value="ask">{t({ message: "ask", comment: "a tool rule's decision: ask first" })}</option>
                  <option value="deny">{t({ message: "deny", comment: "a tool rule's decision: never run" })}</option>
                </select>
                <button type="submit" disabled={!pattern.trim()}>
                  <Trans>Add rule</Trans>
                </button>
              </form>
            )}
          </fieldset>
        );
      })}
    </>
  );
}
