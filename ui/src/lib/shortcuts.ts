import { useEffect } from "react";
import { t } from "@lingui/core/macro";
import type { WindowMode } from "../bindings";
import { commands } from "../ipc";
import { attempt, reportFailure } from "./failures";

/** Keyboard shortcuts that work on every page. Page-level keys live with their pages. Key names
 * are not translated. */
export const SHORTCUTS = {
   
  mini: "Ctrl+Shift+M",
   
  quit: "Ctrl+Q",
   
  newChat: "Ctrl+N",
} as const;

/** Asks the chat's message box to take the focus. */
export const FOCUS_COMPOSER = "perch:focus-composer";

/** Puts text in the chat's message box (its `detail`), after what is there; never sends it. */
export const PUT_IN_COMPOSER = "perch:put-in-composer";

/** The conversation the chat page last showed, so the Chat tab returns to it. */
export const lastConversation: { id: string | null } = { id: null };

export function useGlobalShortcuts(mode: WindowMode) {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!e.ctrlKey || e.altKey || e.metaKey) return;
      const key = e.key.toLowerCase();
      if (e.shiftKey && key === "m") {
        e.preventDefault();
        void attempt(t`Could not change the window mode`, commands.setWindowMode(mode === "mini" ? "normal" : "mini"));
      } else if (!e.shiftKey && key === "q") {
        e.preventDefault();
        commands.quitApp().catch((e) => reportFailure(t`Could not quit Perch`, e));
      } else if (!e.shiftKey && key === "n") {
        e.preventDefault();
        window.location.hash = "#/";
        // After the chat has rendered: its box takes the focus (it may already be there).
        setTimeout(() => window.dispatchEvent(new Event(FOCUS_COMPOSER)), 0);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [mode]);
}
