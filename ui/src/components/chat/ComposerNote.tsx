import type { ReactNode } from "react";
import { Trans } from "@lingui/react/macro";

interface Props {
  children: ReactNode;
  /** A problem (red) rather than a hint. */
  warn?: boolean;
  /** Shown with a Dismiss link after the text. */
  onDismiss?: () => void;
  className?: string;
  title?: string;
}

/** A line above the composer's input: a hint or a problem, announced, with Dismiss when it can go. */
export function ComposerNote({ children, warn = false, onDismiss, className, title }: Props) {
  const classes = ["composer-note", warn && "warn", className].filter(Boolean).join(" ");
  return (
    <div className={classes} role="alert" title={title}>
      {children}
      {onDismiss && (
        <>
          {" "}
          <button type="button" className="link" onClick={onDismiss}>
            <Trans comment="link: hide this note">Dismiss</Trans>
          </button>
        </>
      )}
    </div>
  );
}
