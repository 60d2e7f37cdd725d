import { formatBytes } from "./format";
import { useCallback, useEffect, useRef, useState } from "react";
import { Channel } from "@tauri-apps/api/core";
import type { DownloadProgress, LocalOverview } from "../bindings";
import { call, commands, errorMessage } from "../ipc";

/** Fired on `window` when models were added, downloaded or deleted, so pickers reload. */
export const MODELS_CHANGED = "perch:models-changed";

export function notifyModelsChanged() {
  window.dispatchEvent(new Event(MODELS_CHANGED));
}

/** A model's size: whole megabytes, or gigabytes with one decimal. */
export const megabytes = (bytes: number) => formatBytes(bytes, { wholeMegabytes: true });

/** The local-model overview with downloads: progress per catalogue id, Stop, and the last error. */
export function useLocalModels() {
  const [overview, setOverview] = useState<LocalOverview | null>(null);
  const [progress, setProgress] = useState<Record<string, DownloadProgress>>({});
  const [error, setError] = useState<string | null>(null);
  // A reload that started earlier must not overwrite one that started later.
  const generation = useRef(0);
  const refresh = useCallback(() => {
    const mine = ++generation.current;
    return call(commands.localOverview()).then(
      (o) => mine === generation.current && setOverview(o),
      (e) => mine === generation.current && setError(errorMessage(e)),
    );
  }, []);
  useEffect(() => void refresh(), [refresh]);

  /** Downloads a catalogue model; resolves true when it arrived. */
  const download = useCallback(
    async (id: string) => {
      const channel = new Channel<DownloadProgress>();
      channel.onmessage = (p) => setProgress((all) => ({ ...all, [id]: p }));
      setProgress((all) => ({ ...all, [id]: all[id] ?? { done: 0, total: 0 } }));
      setError(null);
      let done = false;
      try {
        await call(commands.localModelDownload(id, channel));
        done = true;
        notifyModelsChanged();
      } catch (e) {
        setError(errorMessage(e));
      }
      setProgress(({ [id]: _, ...rest }) => rest);
      await refresh();
      return done;
    },
    [refresh],
  );
  const cancel = useCallback((id: string) => {
    call(commands.localModelCancel(id)).catch((e) => setError(errorMessage(e)));
  }, []);
  /** Runs a change (delete, add, unload), then reloads; failures land in `error`. */
  const change = useCallback(
    async (pending: Parameters<typeof call>[0]) => {
      setError(null);
      try {
        await call(pending);
        notifyModelsChanged();
        await refresh();
        return true;
      } catch (e) {
        setError(errorMessage(e));
        return false;
      }
    },
    [refresh],
  );
  return { overview, progress, error, download, cancel, change, refresh };
}
