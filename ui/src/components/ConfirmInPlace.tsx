import { Trans } from "@lingui/react/macro";
import type { ReactNode } from "react";

/**
 * The one way Perch asks "are you sure" inside a row (a conversation, a model): first the
 * action's own button, then the act named in full as a danger button beside Keep. The caller
 * holds which row is asking, so that only one asks at a time.
 */
export function ConfirmInPlace(props: {
  asking: boolean;
  onAsk: () => void;
  onConfirm: () => void;
  onKeep: () => void;
  /** The first button's text ("Delete"), and its accessible name where the row needs one. */
  action: ReactNode;
  actionLabel?: string;
  /** The confirming button's text: the act in full where the row needs it ("Delete tiny.en"). */
  confirm: ReactNode;
  /** The class of the first and the Keep buttons ("link-button" in Settings' lists). */
  buttonClass?: string;
  /** Group the two buttons in their own `.buttons` span (a row without a button group). */
  grouped?: boolean;
}) {
  if (!props.asking) {
    return (
      <button type="button" className={props.buttonClass} aria-label={props.actionLabel} onClick={props.onAsk}>
        {props.action}
      </button>
    );
  }
  const buttons = (
    <>
      <button type="button" className="danger" onClick={props.onConfirm}>
        {props.confirm}
      </button>
      <button type="button" className={props.buttonClass} onClick={props.onKeep}>
        <Trans comment="button: keep what was about to be deleted">Keep</Trans>
      </button>
    </>
  );
  return props.grouped ? <span className="buttons">{buttons}</span> : buttons;
}
