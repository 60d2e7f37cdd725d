import { useEffect, useRef, type KeyboardEvent, type ReactNode } from "react";

const FOCUSABLE =
  'button:not([disabled]), [href], input:not([disabled]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

/**
 * The one modal dialog: over a backdrop, named, and keeping the keyboard with it: the control
 * marked `data-autofocus` (a dialog that could run something marks Cancel), else its first
 * control, takes the focus when it opens, Tab and Shift+Tab go round its own controls, and the
 * element that had the focus before gets it back when it goes. Closing (Esc, buttons) is the
 * caller's.
 */
export function ModalDialog(props: {
  /** The accessible name, or the id of the element that names it. */
  label?: string;
  labelledBy?: string;
  className?: string;
  backdropClassName?: string;
  onBackdrop?: () => void;
  children: ReactNode;
}) {
  const dialog = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const before = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    const first = dialog.current?.querySelector<HTMLElement>("[data-autofocus]:not([disabled])");
    (first ?? dialog.current?.querySelector<HTMLElement>(FOCUSABLE))?.focus();
    return () => {
      if (before?.isConnected) before.focus();
    };
  }, []);
  const trap = (e: KeyboardEvent) => {
    if (e.key !== "Tab" || !dialog.current) return;
    const focusable = [...dialog.current.querySelectorAll<HTMLElement>(FOCUSABLE)];
    const first = focusable[0];
    const last = focusable[focusable.length - 1];
    if (!first || !last) return;
    if (e.shiftKey && document.activeElement === first) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault();
      first.focus();
    }
  };
  return (
    <div
      className={props.backdropClassName ?? "dialog-backdrop"}
      onClick={(e) => props.onBackdrop && e.target === e.currentTarget && props.onBackdrop()}
    >
      <div
        ref={dialog}
        className={props.className}
        role="dialog"
        aria-modal="true"
        aria-label={props.label}
        aria-labelledby={props.labelledBy}
        onKeyDown={trap}
      >
        {props.children}
      </div>
    </div>
  );
}
