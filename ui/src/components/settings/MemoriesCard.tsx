import { useEffect, useState } from "react";
import { Trans, useLingui } from "@lingui/react/macro";
import type { Memory } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";
import { useSettings } from "../../lib/settings";
import { dayLabel } from "../../lib/time";
import { ConfirmInPlace } from "../ConfirmInPlace";

/** The longest memory (the engine's `MEMORY_MAX_CHARS`): one fact, not a document. */
export const MEMORY_MAX_CHARS = 500;

/** Settings -> Memories: what Perch keeps about the user for later answers (kept only with
 * their yes), whether memories are used at all, and whether models off this computer get them. */
export function MemoriesCard() {
  const { t } = useLingui();
  const { settings, setMemories } = useSettings();
  const [memories, setList] = useState<Memory[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [adding, setAdding] = useState("");
  const [editing, setEditing] = useState<{ id: number; text: string } | null>(null);
  const [forgetting, setForgetting] = useState<number | null>(null);
  const reload = () => call(commands.memoriesList()).then(setList, (e) => setError(errorMessage(e)));
  useEffect(() => {
    void reload();
  }, []);
  const run = async (action: () => Promise<unknown>) => {
    setError(null);
    try {
      await action();
      await reload();
      return true;
    } catch (e) {
      setError(errorMessage(e));
      return false;
    }
  };
  const add = () => {
    const text = adding.trim();
    if (!text) return;
    void run(() => call(commands.memoriesAdd(text))).then((ok) => ok && setAdding(""));
  };
  const saveEdit = () => {
    if (!editing) return;
    const { id, text } = editing;
    void run(() => call(commands.memoriesEdit(id, text))).then((ok) => ok && setEditing(null));
  };
  const options = settings?.memories;
  return (
    <>
      <fieldset className="card">
        <legend>
          <Trans>Memories</Trans>
        </legend>
        <small className="muted">
          <Trans>
            Notes about you, your work and your preferences. The model may propose one; nothing is kept without your yes. A
            question is given only the notes it is about, and its answer shows which.
          </Trans>
        </small>
        <label className="check">
          <input
            type="checkbox"
            checked={options?.enabled ?? true}
            disabled={!options}
            onChange={(e) => options && void setMemories({ ...options, enabled: e.target.checked })}
          />
          <Trans>Use memories (proposals, and notes given to answers)</Trans>
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={options?.cloud ?? false}
            disabled={!options || !options.enabled}
            onChange={(e) => options && void setMemories({ ...options, cloud: e.target.checked })}
          />
          <Trans>Give memories to models that do not run on this computer (cloud providers, Ollama elsewhere)</Trans>
        </label>
      </fieldset>
      <fieldset className="card" aria-label={t`Kept memories`}>
        <legend>
          <Trans>Kept memories</Trans>
        </legend>
        <div className="buttons">
          <input
            aria-label={t`New memory`}
            placeholder={t`e.g. My team deploys on Fridays`}
            maxLength={MEMORY_MAX_CHARS}
            value={adding}
            onChange={(e) => setAdding(e.target.value)}
            onKeyDown={(e) => e.key === "Enter" && add()}
          />
          <button type="button" onClick={add} disabled={!adding.trim()}>
            <Trans>Add</Trans>
          </button>
        </div>
        {memories?.length === 0 && (
          <p className="muted small">
            <Trans>No memories yet. Ask Perch to remember something, or add it here.</Trans>
          </p>
        )}
        {memories && memories.length > 0 && (
          <ul className="memories" aria-label={t`Memories`}>
            {memories.map((m) => {
              const day = dayLabel(m.updated_at);
              const text = m.text;
              return (
              <li key={m.id}>
                {editing?.id === m.id ? (
                  <div className="buttons">
                    <input
                      aria-label={t`Edit memory`}
                      maxLength={MEMORY_MAX_CHARS}
                      value={editing.text}
                      autoFocus
                      onChange={(e) => setEditing({ id: m.id, text: e.target.value })}
                      onKeyDown={(e) => {
                        if (e.key === "Enter") saveEdit();
                        if (e.key === "Escape") {
                          e.stopPropagation();
                          setEditing(null);
                        }
                      }}
                    />
                    <button type="button" className="primary" onClick={saveEdit} disabled={!editing.text.trim()}>
                      <Trans>Save</Trans>
                    </button>
                    <button type="button" onClick={() => setEditing(null)}>
                      <Trans>Cancel</Trans>
                    </button>
                  </div>
                ) : (
                  <>
                    <span className="memory-text">{m.text}</span>
                    <small className="muted">
                      {m.conversation_id
                        ? t({ message: `kept from a chat · ${day}`, comment: "a memory the model proposed, and the day it was kept or last edited" })
                        : t({ message: `added by you · ${day}`, comment: "a memory the user wrote, and the day it was added or last edited" })}
                    </small>
                    <span className="buttons">
                      <button type="button" className="link-button" aria-label={t`Edit ${text}`} onClick={() => setEditing({ id: m.id, text: m.text })}>
                        <Trans>Edit</Trans>
                      </button>
                      <ConfirmInPlace
                        asking={forgetting === m.id}
                        onAsk={() => setForgetting(m.id)}
                        onKeep={() => setForgetting(null)}
                        onConfirm={() => {
                          setForgetting(null);
                          void run(() => call(commands.memoriesForget(m.id)));
                        }}
                        action={<Trans>Forget</Trans>}
                        actionLabel={t`Forget ${text}`}
                        confirm={<Trans>Forget it</Trans>}
                        buttonClass="link-button"
                        grouped
                      />
                    </span>
                  </>
                )}
              </li>
              );
            })}
          </ul>
        )}
        {error && (
          <p className="error small" role="alert">
            {error}
          </p>
        )}
      </fieldset>
    </>
  );
}
