// Reading aloud in the window: which answer the voice is reading (from the shell's
// `SpeechUpdate` events), Speak and Stop, and Esc silencing the voice before it does anything
// else.
import { useSyncExternalStore } from "react";
import { t } from "@lingui/core/macro";
import type { Phrases, SpeechEvent } from "../bindings";
import { call, commands, errorMessage, events } from "../ipc";

export type SpeechState = {
  /** The answer being read (its message id), or null. */
  speaking: string | null;
  /** Why the last reading failed (which answer's), with what to do. */
  failure: { id: string; message: string } | null;
};

let state: SpeechState = { speaking: null, failure: null };
const subscribers = new Set<() => void>();
let listening: Promise<unknown> | null = null;

function set(next: SpeechState) {
  state = next;
  subscribers.forEach((notify) => notify());
}

const eventListeners = new Set<(event: SpeechEvent) => void>();
/** What Esc does first while a hands-free conversation is on: ends it. */
let escapeEnds: (() => void) | null = null;

/** Calls `listener` with every event of the voice from now on (the hands-free loop). */
export function onSpeechEvent(listener: (event: SpeechEvent) => void): () => void {
  ensureListening();
  eventListeners.add(listener);
  return () => void eventListeners.delete(listener);
}

/** While set, Esc calls `end` (and nothing else) instead of only silencing the voice. */
export function setEscapeEnds(end: (() => void) | null) {
  ensureListening();
  escapeEnds = end;
}

export function speechState(): SpeechState {
  return state;
}

/** Applies one event from the shell (exported for tests). */
export function applySpeech(event: SpeechEvent) {
  eventListeners.forEach((listener) => listener(event));
  switch (event.kind) {
    case "speaking":
      return set({ speaking: event.id, failure: null });
    case "finished":
    case "stopped":
      return state.speaking === event.id ? set({ ...state, speaking: null }) : undefined;
    case "failed":
      return set({ speaking: null, failure: { id: event.id, message: event.message } });
  }
}

function onEscape(e: KeyboardEvent) {
  if (e.key !== "Escape") return;
  // Esc ends a hands-free conversation, or else first silences the voice; only an Esc with
  // neither does what it otherwise does.
  if (escapeEnds) {
    e.preventDefault();
    e.stopImmediatePropagation();
    escapeEnds();
  } else if (state.speaking !== null) {
    e.preventDefault();
    e.stopImmediatePropagation();
    void stopSpeaking();
  }
}

function ensureListening() {
  if (!listening) {
    listening = events.speechUpdate.listen((e) => applySpeech(e.payload.event));
    window.addEventListener("keydown", onEscape, true);
    // Answers read as they stream are said with the window's phrases too.
    void call(commands.speechPhrases(speechPhrases())).catch(() => undefined);
  }
}

function subscribe(notify: () => void) {
  ensureListening();
  subscribers.add(notify);
  return () => void subscribers.delete(notify);
}

export function useSpeech(): SpeechState {
  return useSyncExternalStore(subscribe, () => state);
}

/** What is said in place of code, tables and bare links, in the UI's language. */
export function speechPhrases(): Phrases {
  // The engine puts the code's language and the table's row count where these stand.
  const language = "{language}";
  const rows = "{rows}";
  return {
    code: t({ message: `Here is some ${language} code.`, comment: "said aloud in place of a code block: language is Rust, Python..." }),
    code_plain: t({ message: "Here is some code.", comment: "said aloud in place of a code block" }),
    table: t({ message: `Here is a table of ${rows} rows.`, comment: "said aloud in place of a table" }),
    link: t({ message: "a link", comment: "said aloud in place of a web address" }),
    image: t({ message: "an image", comment: "said aloud in place of an image without a description" }),
  };
}

/** Reads an answer aloud from its start. */
export async function speakAnswer(messageId: number) {
  set({ speaking: String(messageId), failure: null });
  try {
    await call(commands.speakMessage(messageId, speechPhrases()));
  } catch (e) {
    set({ speaking: null, failure: { id: String(messageId), message: errorMessage(e) } });
  }
}

export async function stopSpeaking() {
  set({ ...state, speaking: null });
  await call(commands.speechStop()).catch(() => undefined);
}

/** For tests: forget everything, listeners included. */
export function resetSpeech() {
  state = { speaking: null, failure: null };
  eventListeners.clear();
  escapeEnds = null;
  if (listening) window.removeEventListener("keydown", onEscape, true);
  listening = null;
}
