import { useCallback, useEffect, useMemo, useState } from "react";
import type { Capture, CaptureMode } from "../bindings";
import { call, commands, errorMessage, events } from "../ipc";
import { moveCaptures, splitByChat } from "./chatHoldings";

export interface Captures {
  /** Waiting for this chat's next question, oldest first. */
  pending: Capture[];
  /** Waiting in other chats (taken there, not sent). */
  elsewhere: Capture[];
  /** Brings the captures waiting in other chats into this one. */
  bringHere: () => void;
  /** Why the last capture failed, until dismissed or a capture succeeds. */
  failure: string | null;
  /** Changes each time a new capture asks for the input box. */
  focusTick: number;
  remove: (id: string) => Promise<void>;
  /** What the shortcut does, from the UI (the camera button, auto-screenshot); this chat's
   * chips after it, or null when it failed. */
  take: (mode?: CaptureMode) => Promise<Capture[] | null>;
  /** After a send: the engine took the sent chips off the shelf. */
  refresh: () => Promise<void>;
  dismiss: () => void;
}

/** The captures waiting for `chat`'s next question (a key from `chatKey`), kept in step with
 * the shell's events. */
export function useCaptures(chat: string): Captures {
  // The whole shelf; null until it is first read (owners are not pruned against a guess).
  const [shelf, setShelf] = useState<Capture[] | null>(null);
  const [moved, setMoved] = useState(0);
  const { here: pending, elsewhere } = useMemo(
    () => (shelf ? splitByChat(shelf, chat) : { here: [], elsewhere: [] }),
    // `moved`: the owners changed outside React's state.
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [shelf, chat, moved],
  );
  const [failure, setFailure] = useState<string | null>(null);
  const [focusTick, setFocusTick] = useState(0);

  useEffect(() => {
    let live = true;
    call(commands.capturesPending()).then((list) => live && setShelf(list), () => {});
    const changed = events.capturesChanged.listen((e) => {
      setShelf(e.payload.captures);
      if (e.payload.focus) {
        setFailure(null);
        setFocusTick((t) => t + 1);
      }
    });
    const failed = events.captureFailed.listen((e) => setFailure(e.payload.message));
    return () => {
      live = false;
      void changed.then((off) => off());
      void failed.then((off) => off());
    };
  }, []);

  const remove = useCallback(async (id: string) => {
    try {
      await call(commands.captureRemove(id));
    } catch (e) {
      // Already gone (sent, or cleaned up): the chip goes either way.
      if ((e as { kind?: string }).kind !== "not_found") setFailure(errorMessage(e));
    }
    setShelf((list) => list && list.filter((c) => c.id !== id));
  }, []);

  const take = useCallback(async (mode?: CaptureMode) => {
    try {
      await call(commands.captureStart(mode ?? null));
      const list = await call(commands.capturesPending());
      setShelf(list);
      return splitByChat(list, chat).here;
    } catch (e) {
      setFailure(errorMessage(e));
      return null;
    }
  }, [chat]);

  const refresh = useCallback(async () => {
    const list = await call(commands.capturesPending()).catch(() => null);
    if (list) setShelf(list);
  }, []);
  const dismiss = useCallback(() => setFailure(null), []);
  const bringHere = useCallback(() => {
    moveCaptures(
      elsewhere.map((c) => c.id),
      chat,
    );
    setMoved((n) => n + 1);
  }, [elsewhere, chat]);
  return { pending, elsewhere, bringHere, failure, focusTick, remove, take, refresh, dismiss };
}
