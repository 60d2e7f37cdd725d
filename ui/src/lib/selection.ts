// Text selected in another application, brought in with the selection shortcut: waiting as a
// chip in the composer, then sent with a question; the last one sent can be replaced by an
// answer in its application. Kept in memory only (a selection may be a password).
import { useSyncExternalStore } from "react";
import type { SelectedText } from "../bindings";
import { call, commands, events } from "../ipc";

interface State {
  /** Waiting in the composer. */
  pending: SelectedText | null;
  /** Why the last shortcut press brought nothing (no text selected, too large...). */
  problem: string | null;
  /** Sent with the last question: its answer can replace it. */
  sent: SelectedText | null;
}

let state: State = { pending: null, problem: null, sent: null };
const listeners = new Set<() => void>();
let listening: Promise<unknown> | null = null;

function set(next: Partial<State>) {
  state = { ...state, ...next };
  listeners.forEach((l) => l());
}

/** Takes what the shell holds (once: the shell forgets it). */
async function load() {
  const taken = await commands.selectionTake().catch(() => null);
  if (!taken) return;
  set({ pending: taken.selection ?? state.pending, problem: taken.problem ?? null });
}

function subscribe(notify: () => void) {
  listeners.add(notify);
  if (!listening) {
    listening = events.selectionTaken.listen(() => void load());
    void load();
  }
  return () => listeners.delete(notify);
}

export function useSelection(): State {
  return useSyncExternalStore(subscribe, () => state);
}

export function dropSelection() {
  set({ pending: null, problem: null });
}

export function dismissSelectionProblem() {
  set({ problem: null });
}

/** The pending selection, moved to `sent` as its question goes out. */
export function takeSelectionForSend(): SelectedText | null {
  const taken = state.pending;
  if (taken) set({ pending: null, sent: taken });
  return taken;
}

/** A send that could not start gives the selection back. */
export function restoreSelection(selection: SelectedText) {
  set({ pending: selection });
}

/** Types `answer` over the sent selection in its application (one code fence around the whole
 * answer is taken off: the text, not its Markdown). */
export async function replaceSentSelection(answer: string) {
  if (!state.sent) return;
  const fenced = /^```[^\n]*\n([\s\S]*?)\n```\s*$/.exec(answer.trim());
  await call(commands.selectionReplace(state.sent, fenced ? fenced[1] : answer.trim()));
}

/** For tests: forgets everything, and asks the shell again on the next subscriber. */
export function resetSelection() {
  state = { pending: null, problem: null, sent: null };
  listening = null;
}
