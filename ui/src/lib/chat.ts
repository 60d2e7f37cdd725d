// The chat's state: the saved conversation, and the answer streaming into it. Deltas arrive
// faster than frames; they are buffered and shown at most once per animation frame.
import { useCallback, useEffect, useRef, useState } from "react";
import { Channel } from "@tauri-apps/api/core";
import { t } from "@lingui/core/macro";
import type {
  ConversationView,
  FileInput,
  ImageInput,
  Message,
  Progress,
  SelectionInput,
  ToolCallRecord,
  TurnError,
  TurnEvent,
  TurnKind,
  Usage,
} from "../bindings";
import { call, commands, errorMessage } from "../ipc";
import { nextStep } from "./errors";
import { attempt, reportFailure } from "./failures";

export interface Streaming {
  runId: string;
  model: string;
  /** The question as typed, shown until the saved one arrives. */
  question: string | null;
  images: ImageInput[];
  /** The files attached to the question. */
  files: FileInput[];
  thinking: string;
  text: string;
  usage: Usage | null;
  /** Tool calls of this answer so far, latest state of each. */
  toolCalls: ToolCallRecord[];
  progress: Record<string, Progress>;
  /** The question is saved and shown from the conversation. */
  saved: boolean;
  /** The memories the answer was given (from `started`). */
  memories: string[];
}

export interface ChatState {
  view: ConversationView | null;
  streaming: Streaming | null;
  /** Why the last send could not start (nothing was saved), and what to do about it. */
  sendError: { message: string; next: string | null } | null;
  /** Why the last answer failed, for the card under it. */
  answerError: TurnError | null;
  /** The context the engine reported for the model of the last turn. */
  contextLength: { model: string; tokens: number } | null;
}

function fresh(runId: string, model: string, question: string | null, images: ImageInput[], files: FileInput[]): Streaming {
  return { runId, model, question, images, files, thinking: "", text: "", usage: null, toolCalls: [], progress: {}, saved: false, memories: [] };
}

const EMPTY: ChatState = { view: null, streaming: null, sendError: null, answerError: null, contextLength: null };

export function useChat(conversationId: string | undefined, onConversation: (id: string) => void) {
  const [state, setState] = useState<ChatState>(EMPTY);
  const buffer = useRef({ thinking: "", text: "" });
  const frame = useRef<number | null>(null);
  const streamingConversation = useRef<string | null>(null);
  /** The run on screen: Stop reads it, so Stop does not change with every streamed frame. */
  const streamingRun = useRef<string | null>(null);
  /** The conversation on screen: `run` reads it, so `run` is not rebuilt on every reload. */
  const shownConversation = useRef<string | null>(null);
  useEffect(() => {
    shownConversation.current = state.view?.conversation.id ?? null;
  }, [state.view]);

  const reload = useCallback(async (id: string) => {
    const view = await call(commands.conversationView(id));
    setState((s) => ({ ...s, view }));
  }, []);

  const flush = useCallback(() => {
    frame.current = null;
    const { thinking, text } = buffer.current;
    setState((s) => (s.streaming ? { ...s, streaming: { ...s.streaming, thinking, text } } : s));
  }, []);

  /** The channel one turn's events arrive on, from `chat_send` (`runId` known) or from
   * `chat_attach` for a view that comes back mid-answer (`runId` null: the replayed `started`
   * names it), and `settle`, which loads the saved answer once the turn is over. */
  const follow = useCallback(
    (runId: string | null, fromConversation: string | null) => {
      let current = runId;
      let answerError: TurnError | null = null;
      let settled: Promise<void> | null = null;
      // The saved answer is loaded when its chat is the one on screen: the chat it was asked in,
      // or the new chat it is the first answer of (its run is still the one on screen).
      const onScreen = (id: string) =>
        shownConversation.current === id || (shownConversation.current === null && streamingRun.current === current);
      const settle = (id: string) =>
        (settled ??= (onScreen(id) ? reload(id) : Promise.resolve()).then(() => {
          streamingConversation.current = null;
          if (streamingRun.current === current) streamingRun.current = null;
          setState((s) => (s.streaming?.runId === current ? { ...s, streaming: null, answerError } : s));
        }));
      const channel = new Channel<TurnEvent>();
      channel.onmessage = (event) => {
        // A run whose chat was left (Ctrl+N) goes on in the engine; here only its end counts,
        // and its text must not reach the buffer the next answer streams into.
        if (current !== null && streamingRun.current !== current) {
          if (event.event === "finished") void settle(event.data.message.conversation_id);
          return;
        }
        switch (event.event) {
          case "started":
            streamingConversation.current = event.data.conversation.id;
            if (current === null) {
              // Attached: the answer is drawn from here on, and Stop and Esc reach it.
              current = event.data.run_id;
              streamingRun.current = current;
              buffer.current = { thinking: "", text: "" };
              const streaming = fresh(current, event.data.conversation.model ?? "", null, [], []);
              setState((s) => ({ ...s, streaming: { ...streaming, saved: true } }));
            }
            {
              const { context_length: tokens, conversation, memories } = event.data;
              const model = conversation.model ?? "";
              const given = memories.map((m) => m.text);
              setState((s) => ({
                ...s,
                contextLength: tokens === null ? null : { model, tokens },
                streaming: s.streaming ? { ...s.streaming, memories: given } : s.streaming,
              }));
            }
            if (!fromConversation && runId) onConversation(event.data.conversation.id);
            void reload(event.data.conversation.id).then(() =>
              setState((s) => (s.streaming ? { ...s, streaming: { ...s.streaming, saved: true } } : s)),
            );
            break;
          case "thinking":
            buffer.current.thinking += event.data;
            frame.current ??= requestAnimationFrame(flush);
            break;
          case "text":
            buffer.current.text += event.data;
            frame.current ??= requestAnimationFrame(flush);
            break;
          case "usage":
            setState((s) => (s.streaming ? { ...s, streaming: { ...s.streaming, usage: event.data } } : s));
            break;
          case "tool_call": {
            const record = event.data;
            // Text that arrived before the call is shown before its card.
            flush();
            setState((s) => {
              if (!s.streaming) return s;
              const calls = s.streaming.toolCalls.filter((c) => c.id !== record.id);
              const index = s.streaming.toolCalls.findIndex((c) => c.id === record.id);
              if (index >= 0) calls.splice(index, 0, record);
              else calls.push(record);
              return { ...s, streaming: { ...s.streaming, toolCalls: calls } };
            });
            break;
          }
          case "tool_progress": {
            const { id, progress } = event.data;
            setState((s) =>
              s.streaming ? { ...s, streaming: { ...s.streaming, progress: { ...s.streaming.progress, [id]: progress } } } : s,
            );
            break;
          }
          case "finished":
            if (frame.current !== null) cancelAnimationFrame(frame.current);
            frame.current = null;
            answerError = event.data.error;
            void settle(event.data.message.conversation_id).then(() => setState((s) => ({ ...s, answerError })));
            break;
        }
      };
      return { channel, settle };
    },
    [onConversation, reload, flush],
  );

  const run = useCallback(
    async (kind: TurnKind, model: string, question: string | null, images: ImageInput[]): Promise<boolean> => {
      const runId = crypto.randomUUID();
      buffer.current = { thinking: "", text: "" };
      const conversation_id = shownConversation.current;
      streamingConversation.current = conversation_id;
      streamingRun.current = runId;
      const files = kind.kind === "ask" ? (kind.files ?? []) : [];
      setState((s) => ({ ...s, sendError: null, answerError: null, streaming: fresh(runId, model, question, images, files) }));
      // The answer is over when `finished` arrives or the command returns, in either order:
      // the first loads the saved conversation (once per answer), the second waits for it.
      const { channel, settle } = follow(runId, conversation_id);
      try {
        const answer = await call(commands.chatSend({ conversation_id, model, kind, run_id: runId }, channel));
        // The saved conversation is the truth, whatever events arrived or not.
        await settle(answer.conversation_id);
        return true;
      } catch (e) {
        streamingConversation.current = null;
        streamingRun.current = null;
        setState((s) => ({ ...s, streaming: null, sendError: { message: errorMessage(e), next: nextStep(e) } }));
        return false;
      }
    },
    [follow],
  );

  /** Comes back to the answer being written in `id` (after Settings, mini mode, a freed page). */
  const attach = useCallback(
    async (id: string) => {
      const { channel } = follow(null, id);
      const attached = await call(commands.chatAttach(id, channel)).catch(() => false);
      // It ended in between: the saved answer is the truth.
      if (!attached && shownConversation.current === id) await reload(id);
    },
    [follow, reload],
  );

  // Open the conversation in the URL (unless it is the one being answered into).
  useEffect(() => {
    if (!conversationId) {
      // A new chat (Ctrl+N), even with an answer still being written in the one left: that
      // answer goes on and is saved there, but its text, its usage and its Stop are not this
      // chat's.
      streamingConversation.current = null;
      streamingRun.current = null;
      shownConversation.current = null;
      setState(EMPTY);
      return;
    }
    if (streamingConversation.current === conversationId) return;
    let live = true;
    call(commands.conversationView(conversationId)).then(
      (view) => {
        if (!live) return;
        setState({ ...EMPTY, view });
        shownConversation.current = view.conversation.id;
        // An answer still being written (this page was left, or loaded again, mid-answer).
        if (view.messages.some((m) => m.message.status === "streaming")) void attach(view.conversation.id);
      },
      (e) => live && setState({ ...EMPTY, sendError: { message: errorMessage(e), next: nextStep(e) } }),
    );
    return () => {
      live = false;
    };
  }, [conversationId, attach]);

  const send = useCallback(
    (text: string, images: ImageInput[], model: string, files: FileInput[] = [], selections: SelectionInput[] = []) =>
      run(
        {
          kind: "ask",
          text,
          images,
          ...(files.length > 0 ? { files } : {}),
          ...(selections.length > 0 ? { selections } : {}),
        },
        model,
        text,
        images,
      ),
    [run],
  );
  const regenerate = useCallback(
    (message: Message, model: string) => run({ kind: "regenerate", message_id: message.id }, model, null, []),
    [run],
  );
  const edit = useCallback(
    (message: Message, text: string, model: string) =>
      run({ kind: "edit", message_id: message.id, text }, model, text, []),
    [run],
  );
  const stop = useCallback(async () => {
    const runId = streamingRun.current;
    if (!runId) return;
    const failed = t`Could not stop the answer`;
    const stopped = await attempt(failed, commands.chatStop(runId));
    // `false`: the engine knows no such run. Fine if the answer ended meanwhile; otherwise the
    // answer is still streaming and the user must know the Stop did nothing.
    if (stopped === false && streamingRun.current === runId) {
      reportFailure(failed, t`Perch found no answer running to stop. Try Stop again.`);
    }
  }, []);

  return { state, send, regenerate, edit, stop };
}
