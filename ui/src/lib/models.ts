import { useEffect, useState } from "react";
import type { ModelInfo } from "../bindings";
import { call, commands } from "../ipc";
import { MODELS_CHANGED } from "./localModels";
import { useSettings } from "./settings";

export interface Models {
  /** Models to offer: the enabled ones, or every available one when none is chosen. */
  offered: ModelInfo[];
  defaultModel: string | null;
  /** Provider problems worth showing (unreachable, key rejected). */
  problems: string[];
  loading: boolean;
}

export function useModels(): Models {
  const { settings } = useSettings();
  const [state, setState] = useState<Models>({ offered: [], defaultModel: null, problems: [], loading: true });
  const enabled = settings?.models.enabled;
  // Bumped when models were downloaded, added or deleted, so the list is read again.
  const [changes, setChanges] = useState(0);
  useEffect(() => {
    const changed = () => setChanges((n) => n + 1);
    window.addEventListener(MODELS_CHANGED, changed);
    return () => window.removeEventListener(MODELS_CHANGED, changed);
  }, []);
  useEffect(() => {
    let live = true;
    call(commands.modelsList(false)).then(
      (overview) => {
        if (!live) return;
        const all = overview.providers.flatMap((p) => p.models);
        const offered = enabled && enabled.length > 0 ? all.filter((m) => enabled.includes(m.id)) : all;
        const problems = overview.providers.filter((p) => p.error).map((p) => p.error!);
        setState({ offered, defaultModel: overview.default_model, problems, loading: false });
      },
      (e) => live && setState({ offered: [], defaultModel: null, problems: [String(e?.message ?? e)], loading: false }),
    );
    return () => {
      live = false;
    };
  }, [enabled, changes]);
  return state;
}

export function formatCost(usd: number): string {
  if (usd === 0) return "$0";
  if (usd < 0.01) return `$${usd.toFixed(4)}`;
  return `$${usd.toFixed(2)}`;
}

/** 1234 -> "1.2k"; context sizes that are powers of two read as models describe them (32768 -> "32k"). */
export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n % 1024 === 0) return `${n / 1024}k`;
  return `${(n / 1000).toFixed(n >= 10_000 ? 0 : 1)}k`;
}
