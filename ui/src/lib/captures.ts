import { useCallback, useEffect, useState } from "react";
import type { Capture, CaptureMode } from "../bindings";
import { call, commands, errorMessage, events } from "../ipc";

export interface Captures {
  /** Waiting for the next question, oldest first. */
  pending: Capture[];
  /** Why the last capture failed, until dismissed or a capture succeeds. */
  failure: string | null;
  /** Changes each time a new capture asks for the input box. */
  focusTick: number;
  remove: (id: string) => Promise<void>;
  /** What the shortcut does, from the UI (the camera button, auto-screenshot); the chips after
   * it, or null when it failed. */
  take: (mode?: CaptureMode) => Promise<Capture[] | null>;
  /** After a send: the engine took the sent chips off the shelf. */
  refresh: () => Promise<void>;
  dismiss: () => void;
}

/** The captures waiting for the next question, kept in step with the shell's events. */
export function useCaptures(): Captures {
  const [pending, setPending] = useState<Capture[]>([]);
  const [failure, setFailure] = useState<string | null>(null);
  const [focusTick, setFocusTick] = useState(0);

  useEffect(() => {
    let live = true;
    call(commands.capturesPending()).then((list) => live && setPending(list), () => {});
    const changed = events.capturesChanged.listen((e) => {
      setPending(e.payload.captures);
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
    setPending((list) => list.filter((c) => c.id !== id));
  }, []);

  const take = useCallback(async (mode?: CaptureMode) => {
    try {
      await call(commands.captureStart(mode ?? null));
      const list = await call(commands.capturesPending());
      setPending(list);
      return list;
    } catch (e) {
      setFailure(errorMessage(e));
      return null;
    }
  }, []);

  const refresh = useCallback(async () => {
    setPending(await call(commands.capturesPending()).catch(() => []));
  }, []);
  const dismiss = useCallback(() => setFailure(null), []);
  return { pending, failure, focusTick, remove, take, refresh, dismiss };
}
