import { useState } from "react";
import { Trans, useLingui } from "@lingui/react/macro";
import type { QuickAction } from "../../bindings";
import { useModels } from "../../lib/models";
import { complete, type Action } from "../../lib/quickActions";

/**
 * The user's own quick actions on a selection (Settings -> General -> Screenshots, beside the
 * selection shortcut): a name for the chip's button, the words sent with the selection, and the
 * model that answers (the conversation's when none is chosen). Saved when a field is left.
 */
export function QuickActions({ actions: saved, onSave }: { actions: QuickAction[]; onSave: (actions: Action[]) => void }) {
  const { t } = useLingui();
  const models = useModels();
  const actions = saved.map(complete);
  const [drafts, setDrafts] = useState<Action[] | null>(null);
  const shown = drafts ?? actions;
  const edit = (i: number, change: Partial<Action>) => setDrafts(shown.map((a, j) => (j === i ? { ...a, ...change } : a)));
  // Only whole actions (a name and words to send) are saved; one being written stays on screen.
  const commit = (list: Action[]) => {
    const whole = (a: Action) => !!(a.name.trim() && a.prompt.trim());
    const kept = list.filter(whole).map((a) => ({ ...a, name: a.name.trim(), prompt: a.prompt.trim() }));
    if (JSON.stringify(kept) !== JSON.stringify(actions)) onSave(kept);
    setDrafts(list.every(whole) ? null : list);
  };
  return (
    <section className="quick-actions" aria-labelledby="quick-actions-title">
      <h3 id="quick-actions-title" className="small">
        <Trans>Your quick actions on selected text</Trans>
      </h3>
      {shown.map((a, i) => {
        const n = i + 1;
        return (
          <div key={i} className="quick-action" role="group" aria-label={t`Quick action ${n}`}>
            <input aria-label={t`Name`} placeholder={t`Name (the button's label)`} value={a.name} onChange={(e) => edit(i, { name: e.target.value })} onBlur={() => commit(shown)} />
            <textarea
              aria-label={t`What to ask`}
              placeholder={t`What to ask about the selected text`}
              rows={2}
              value={a.prompt}
              onChange={(e) => edit(i, { prompt: e.target.value })}
              onBlur={() => commit(shown)}
            />
            <span className="row">
              <select aria-label={t`Model`} value={a.model} onChange={(e) => commit(shown.map((b, j) => (j === i ? { ...b, model: e.target.value } : b)))}>
                <option value="">{t`The conversation's model`}</option>
                {models.offered.map((m) => (
                  <option key={m.id} value={m.id}>
                    {m.id}
                  </option>
                ))}
                {a.model && !models.offered.some((m) => m.id === a.model) && <option value={a.model}>{a.model}</option>}
              </select>
              <button type="button" className="link-button" onClick={() => commit(shown.filter((_, j) => j !== i))}>
                <Trans>Remove</Trans>
              </button>
            </span>
          </div>
        );
      })}
      <button type="button" className="link-button" onClick={() => setDrafts([...shown, { name: "", prompt: "", model: "" }])}>
        <Trans>Add a quick action</Trans>
      </button>
    </section>
  );
}
