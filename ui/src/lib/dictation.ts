// Dictation as the whole window sees it: one listener on the shell's VoiceUpdate events keeps
// the state (listening, level, partial text, problems) for the mic button, the composer and the
// bubble. A dictation may start from the push-to-talk shortcut with no request from the window,
// and the composer may not be on screen (mini mode) when its text arrives, so final texts wait
// in a queue until the composer takes them.
import { useSyncExternalStore } from "react";
import type { DictationEvent, VoiceErrorKind } from "../bindings";
import { call, commands, errorMessage, events } from "../ipc";

export type Phase = "idle" | "starting" | "listening" | "transcribing";

export interface DictationState {
  phase: Phase;
  /** 0..1, for the meter. */
  level: number;
  seconds: number;
  /** Text so far while speaking, shown greyed. */
  partial: string;
  /** A warning (the limit is near) or why the last dictation failed. */
  notice: { text: string; kind: VoiceErrorKind | "warning" } | null;
  /** A hands-free turn's countdown to sending, in milliseconds; null when none runs. */
  countdown?: number | null;
}

export interface FinalText {
  text: string;
  send: boolean;
}

export const IDLE: DictationState = { phase: "idle", level: 0, seconds: 0, partial: "", notice: null };

let state: DictationState = IDLE;
const finals: FinalText[] = [];
const subscribers = new Set<() => void>();
let listening: Promise<unknown> | null = null;

function set(next: Partial<DictationState>) {
  state = { ...state, ...next };
  subscribers.forEach((notify) => notify());
}

const heard = (phase: Phase): Phase => (phase === "starting" ? "listening" : phase);

/**
 * A dictation's state after one event from the shell: the window's dictation and the
 * dictate-anywhere indicator follow the same events the same way.
 */
export function reduce(current: DictationState, event: DictationEvent): DictationState {
  switch (event.event) {
    case "listening":
      return { phase: "listening", level: 0, seconds: 0, partial: "", notice: null };
    // A page that opened after the microphone did (the dictate-anywhere indicator) learns
    // that it listens from the level and the words.
    case "level":
      return { ...current, phase: heard(current.phase), level: event.data.level ?? 0, seconds: event.data.seconds ?? 0 };
    case "partial":
      return { ...current, phase: heard(current.phase), partial: event.data.text };
    case "warning":
      return { ...current, notice: { text: event.data.message, kind: "warning" } };
    case "transcribing":
      return { ...current, phase: "transcribing", level: 0 };
    case "final":
      return { ...current, phase: "idle", partial: "", level: 0, countdown: null };
    case "failed":
      return { ...IDLE, notice: { text: event.data.message, kind: event.data.kind } };
    case "cancelled":
      return IDLE;
    case "heard":
      return { ...current, phase: heard(current.phase) };
    case "countdown":
      return { ...current, countdown: event.data.remaining_ms ?? null };
  }
}

const eventListeners = new Set<(event: DictationEvent) => void>();

/** Calls `listener` with every dictation event from now on (the hands-free loop). */
export function onDictationEvent(listener: (event: DictationEvent) => void): () => void {
  ensureListening();
  eventListeners.add(listener);
  return () => void eventListeners.delete(listener);
}

/** The dictation's state now, outside React. */
export function dictationState(): DictationState {
  return state;
}

/** Starts the state as a dictation the window did not start itself (a hands-free turn). */
export function markStarting() {
  ensureListening();
  set({ phase: "starting", notice: null, partial: "", countdown: null });
}

/** Back to idle with no event from the shell (a hands-free turn that could not start). */
export function markIdle() {
  set({ ...IDLE });
}

/** Applies one event from the shell (exported for tests). */
export function apply(event: DictationEvent) {
  if (event.event === "final") finals.push({ text: event.data.text, send: event.data.send });
  state = reduce(state, event);
  subscribers.forEach((notify) => notify());
  eventListeners.forEach((listener) => listener(event));
}

function ensureListening() {
  listening ??= events.voiceUpdate.listen((e) => apply(e.payload.update.event));
}

function subscribe(notify: () => void) {
  ensureListening();
  subscribers.add(notify);
  return () => void subscribers.delete(notify);
}

export function useDictation(): DictationState {
  return useSyncExternalStore(subscribe, () => state);
}

/** Takes the texts that arrived since the last call (the composer inserts them). */
export function takeFinals(): FinalText[] {
  return finals.splice(0, finals.length);
}

export function dismissNotice() {
  set({ notice: null });
}

/** The mic button: starts, or stops (and transcribes) a dictation in progress. */
export async function toggleDictation() {
  ensureListening();
  if (state.phase === "listening") {
    await call(commands.voiceStop()).catch(() => {});
    return;
  }
  if (state.phase !== "idle") return;
  set({ phase: "starting", notice: null, partial: "" });
  try {
    await call(commands.voiceStart());
  } catch (e) {
    const kind = (e as { kind?: string }).kind === "invalid" ? "model" : "microphone";
    set({ ...IDLE, notice: { text: errorMessage(e), kind } });
  }
}

export async function cancelDictation() {
  await call(commands.voiceCancel()).catch(() => {});
}

/** Puts `text` into `value` at the selection, with a space on either side where words meet. */
export function insertAt(value: string, start: number, end: number, text: string) {
  const before = value.slice(0, start);
  const after = value.slice(end);
  const lead = before && !/\s$/.test(before) ? " " : "";
  const trail = after && !/^\s/.test(after) ? " " : "";
  const inserted = lead + text.trim() + trail;
  return { value: before + inserted + after, caret: before.length + inserted.length };
}

/** For tests: forget everything. */
export function resetDictation() {
  state = IDLE;
  finals.length = 0;
  listening = null;
}

/** Whether final texts wait for the composer. */
export function hasFinals() {
  return finals.length > 0;
}
