// Failures of actions whose results nothing else shows (Stop, the window buttons, opening a
// link): kept in one small store and shown as dismissible notices, so no click fails silently.
// Callers pass the title already in the UI's language (`` t`Could not stop the answer` ``, at the
// time of the action); the detail is the engine's text, as it wrote it.
import { useSyncExternalStore } from "react";
import { call, errorMessage, type CommandResult } from "../ipc";

export interface Failure {
  id: number;
  /** What the user tried, as a sentence, translated: "Could not stop the answer". */
  title: string;
  /** Why, from the error. */
  detail: string;
}

/** Older failures give way to newer ones; a few on screen are enough. */
const MAX_SHOWN = 3;

let failures: Failure[] = [];
let nextId = 1;
const listeners = new Set<() => void>();

function publish(next: Failure[]) {
  failures = next;
  listeners.forEach((listener) => listener());
}

/** Shows that `title` failed, and why. The same failure twice is shown once. */
export function reportFailure(title: string, error: unknown) {
  const detail = errorMessage(error);
  if (failures.some((f) => f.title === title && f.detail === detail)) return;
  publish([...failures, { id: nextId++, title, detail }].slice(-MAX_SHOWN));
}

export function dismissFailure(id: number) {
  publish(failures.filter((f) => f.id !== id));
}

/** For tests: forget every failure. */
export function resetFailures() {
  publish([]);
}

export function useFailures(): Failure[] {
  return useSyncExternalStore(
    (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    () => failures,
  );
}

/**
 * Runs a command whose result the caller does not otherwise use; a failure (an error result
 * or a rejected call) is reported under `title`, and a success clears an earlier failure of
 * the same action. Resolves to the value, or `undefined` on failure.
 */
export async function attempt<T>(title: string, pending: Promise<CommandResult<T>>): Promise<T | undefined> {
  try {
    const value = await call(pending);
    if (failures.some((f) => f.title === title)) publish(failures.filter((f) => f.title !== title));
    return value;
  } catch (e) {
    reportFailure(title, e);
    return undefined;
  }
}
