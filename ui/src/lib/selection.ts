// Text selected in another application, brought in with the selection shortcut: waiting as a
// chip in the composer, then sent with a question; the last one sent can be replaced by an
// answer in its application. Kept in memory only (a selection may be a password).
import { useSyncExternalStore } from "react";
import type { Replaced, Replacement, SelectedText } from "../bindings";
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

/** What replacing the sent selection with `answer` would do, for the preview: the exact plain
 * text the engine makes of the answer's Markdown, and whether it is typed, pasted, or (in a
 * terminal or a never-type application) only put on the clipboard. */
export async function previewReplacement(answer: string): Promise<Replacement | null> {
  if (!state.sent) return null;
  return call(commands.selectionReplacement(state.sent, answer));
}

/** Replaces the sent selection with `answer`, as the preview showed. */
export async function replaceSentSelection(answer: string): Promise<Replaced | null> {
  if (!state.sent) return null;
  return call(commands.selectionReplace(state.sent, answer));
}

/** For tests: forgets everything, and asks the shell again on the next subscriber. */
export function resetSelection() {
  state = { pending: null, problem: null, sent: null };
  listening = null;
}
