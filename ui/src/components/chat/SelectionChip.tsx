import { Trans, useLingui } from "@lingui/react/macro";
import type { SelectedText } from "../../bindings";
import { formatLocale } from "../../i18n";
import { dismissSelectionProblem, dropSelection } from "../../lib/selection";
import { useSettings } from "../../lib/settings";
import { complete } from "../../lib/quickActions";

/** The text selected in another application, waiting to go with the next question, and the
 * quick actions that send it at once with their own words. */
export function SelectionChip({
  selection,
  disabled,
  onAction,
}: {
  selection: SelectedText;
  disabled: boolean;
  /** Sends `prompt` with the selection, to `model` when the action names one. */
  onAction: (prompt: string, model?: string) => void;
}) {
  const { t } = useLingui();
  const { settings } = useSettings();
  const app = selection.app || t`another application`;
  const preview = selection.text.length > 160 ? `${selection.text.slice(0, 160)}…` : selection.text;
  // The model is asked for the UI's language by its English name, which every model knows.
  const language = new Intl.DisplayNames(["en"], { type: "language" }).of(formatLocale()) ?? formatLocale();
  const actions = [
    { label: t`Explain`, prompt: t`Explain the selected text.` },
    {
      label: t`Fix spelling and grammar`,
      prompt: t`Fix the spelling and grammar of the selected text. Answer with the corrected text only, nothing else.`,
    },
    { label: t`Translate`, prompt: t`Translate the selected text into ${language}. Answer with the translation only.` },
    { label: t`Summarise`, prompt: t`Summarise the selected text in a few sentences.` },
    ...(settings?.capture?.quick_actions ?? []).map(complete).map((a) => ({ label: a.name, prompt: a.prompt, model: a.model || undefined })),
  ];
  return (
    <div className="selection-chip" role="group" aria-label={t`Selected in ${app}`}>
      <div className="selection-head">
        <span className="chip">
          <Trans>Selected in {app}</Trans>
        </span>
        <button type="button" className="link-button small" aria-label={t`Remove the selected text`} onClick={dropSelection}>
          ×
        </button>
      </div>
      <blockquote className="selection-text">{preview}</blockquote>
      <div className="selection-actions">
        {actions.map((a: { label: string; prompt: string; model?: string }, i) => (
          <button key={`${i}-${a.label}`} type="button" className="button small" disabled={disabled} onClick={() => onAction(a.prompt, a.model)}>
            {a.label}
          </button>
        ))}
      </div>
    </div>
  );
}

/** Why the selection shortcut brought nothing in. */
export function SelectionProblem({ problem }: { problem: string }) {
  const { t } = useLingui();
  return (
    <p className="composer-note warn" role="alert">
      {problem}{" "}
      <button type="button" className="link-button" aria-label={t`Dismiss`} onClick={dismissSelectionProblem}>
        ×
      </button>
    </p>
  );
}
