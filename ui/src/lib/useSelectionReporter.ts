import { useEffect, type RefObject } from "react";
import { commands } from "../ipc";

const SETTLE_MS = 200;

/** Tells the engine what text is selected inside `container` (for get_selection on the socket). */
export function useSelectionReporter(container: RefObject<HTMLElement | null>) {
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let last: string | null = null;
    const report = () => {
      const selection = document.getSelection();
      const inside = !!selection?.anchorNode && !!container.current?.contains(selection.anchorNode);
      const text = inside ? selection!.toString() : "";
      const next = text.trim() ? text : null;
      if (next !== last) {
        last = next;
        void commands.setSelection(next);
      }
    };
    const onChange = () => {
      clearTimeout(timer);
      timer = setTimeout(report, SETTLE_MS);
    };
    document.addEventListener("selectionchange", onChange);
    return () => {
      clearTimeout(timer);
      document.removeEventListener("selectionchange", onChange);
    };
  }, [container]);
}
