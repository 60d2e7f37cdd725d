// A hands-free conversation: Perch listens, sends what was said after a pause (a countdown the
// user can cancel), speaks the answer, and listens again. Talking over the voice silences it
// and an answer still being written (the answer so far stays in the chat), and starts the next
// question. Tool approvals are never answered by voice: nothing is heard until the voice starts
// or the answer ends, and the turn that listens is cancelled when a question comes up. Esc ends
// the mode.
import { useSyncExternalStore } from "react";
import { t } from "@lingui/core/macro";
import { call, commands, errorMessage } from "../ipc";
import { dictationState, markIdle, markStarting, onDictationEvent, useDictation } from "./dictation";
import { onSpeechEvent, setEscapeEnds, speechState, stopSpeaking, useSpeech } from "./speech";

export type TalkPhase = "off" | "listening" | "countdown" | "thinking" | "speaking";

let active = false;
let failure: string | null = null;
/** A question (a tool's approval) is open: nothing is heard until it is answered by hand. */
let questionOpen = false;
/** The chat is writing an answer, and how to stop it (talking over it does). */
let answering = false;
let stopAnswer: (() => void) | null = null;
/** A question was heard and goes to the chat (once an answer being written has stopped):
 * nothing listens until it has gone. */
let questionHeard = false;
const subscribers = new Set<() => void>();
let unsubscribe: (() => void)[] = [];

function notify() {
  subscribers.forEach((n) => n());
}

async function listen() {
  if (!active || questionOpen || questionHeard || dictationState().phase !== "idle") return;
  markStarting();
  try {
    await call(commands.conversationListen());
  } catch (e) {
    // No microphone, no model, another dictation running: nothing listens, so the dictation's
    // state goes back to idle (the mic button usable again) and the mode ends saying why.
    markIdle();
    failure = errorMessage(e);
    await end();
  }
}

/** Starts the hands-free conversation. */
export async function startConversation() {
  if (active) return;
  active = true;
  failure = null;
  questionHeard = false;
  notify();
  unsubscribe = [
    // Listening starts as the voice does (so talking over it interrupts it), and again when it
    // has finished, stopped or failed.
    onSpeechEvent(() => {
      if (active) void listen();
    }),
    onDictationEvent((event) => {
      if (!active) return;
      if (event.event === "heard") {
        if (speechState().speaking !== null) void stopSpeaking();
        // An answer still being written stops too; the question heard is sent once it has.
        if (answering) stopAnswer?.();
      }
      if (event.event === "final" && event.data.send) questionHeard = true;
      if (event.event === "failed" && event.data.kind === "no_speech") void listen();
      notify();
    }),
  ];
  setEscapeEnds(() => void end());
  try {
    await call(commands.conversationSet(true));
  } catch (e) {
    failure = errorMessage(e);
    await end();
    return;
  }
  await listen();
}

/** Ends it: the voice silenced and the microphone closed. */
export async function endConversation() {
  await end();
}

async function end() {
  if (!active) return;
  active = false;
  unsubscribe.forEach((u) => u());
  unsubscribe = [];
  setEscapeEnds(null);
  notify();
  await call(commands.conversationSet(false)).catch(() => undefined);
}

/** Cancels the countdown: the question is sent when the mic is stopped by hand. */
export async function keepListening() {
  await call(commands.conversationKeepListening()).catch(() => undefined);
}

/** Told by the window whether an answer is being written, and how to stop it. When it ends
 * (answered, stopped, failed) Perch listens for the next question, whether or not anything was
 * spoken. */
export function setAnswering(on: boolean, stop: (() => void) | null) {
  stopAnswer = stop;
  if (on === answering) return;
  answering = on;
  if (on) questionHeard = false;
  else void listen();
}

/** Told by the composer that a question heard in the conversation could not be sent (no model,
 * too long for it, refused): the mode ends, and the question waits in the message box. */
export function questionNotSent() {
  if (!active) return;
  failure = t`Your question was not sent: it waits in the message box, with what to do under it.`;
  void end();
}

/** Told by the window whether a question waits for the user (it pauses the listening). */
export function setQuestionOpen(open: boolean) {
  if (open === questionOpen) return;
  questionOpen = open;
  if (open && active && dictationState().phase !== "idle") void call(commands.voiceCancel()).catch(() => undefined);
  if (!open) void listen();
}

export function toggleConversation() {
  return active ? endConversation() : startConversation();
}

function subscribe(n: () => void) {
  subscribers.add(n);
  return () => void subscribers.delete(n);
}

/** What the conversation is doing, for the window's bar, the button and the mini bubble. */
export function useConversation(): { phase: TalkPhase; countdown: number | null; failure: string | null } {
  const on = useSyncExternalStore(subscribe, () => active);
  const lastFailure = useSyncExternalStore(subscribe, () => failure);
  const dictation = useDictation();
  const { speaking } = useSpeech();
  if (!on) return { phase: "off", countdown: null, failure: lastFailure };
  const countdown = dictation.countdown ?? null;
  const phase: TalkPhase =
    speaking !== null
      ? "speaking"
      : countdown !== null
        ? "countdown"
        : dictation.phase === "listening" || dictation.phase === "starting"
          ? "listening"
          : "thinking";
  return { phase, countdown, failure: lastFailure };
}

/** For tests: forget everything. */
export function resetConversation() {
  unsubscribe.forEach((u) => u());
  unsubscribe = [];
  active = false;
  failure = null;
  questionOpen = false;
  answering = false;
  stopAnswer = null;
  questionHeard = false;
}
