import { useEffect } from "react";
import type { ModelInfo, ModelsOverview } from "../bindings";
import { call, commands, errorMessage } from "../ipc";
import { MODELS_CHANGED } from "./localModels";
import { useSettings } from "./settings";
import { useLoad } from "./useLoad";

export interface Models {
  /** Models to offer: the enabled ones, or every available one when none is chosen. */
  offered: ModelInfo[];
  defaultModel: string | null;
  /** Provider problems worth showing (unreachable, key rejected). */
  problems: string[];
  loading: boolean;
}

export function useModels(): Models {
  const enabled = useSettings().settings?.models.enabled;
  // Listed again when the choice of models changes, not whenever any setting is saved (a
  // theme change brings a new settings object with an equal list).
  const { value, error, loading, reload } = useLoad<ModelsOverview>(
    () => call(commands.modelsList(false)),
    JSON.stringify(enabled ?? []),
  );
  // Read again when models were downloaded, added or deleted.
  useEffect(() => {
    window.addEventListener(MODELS_CHANGED, reload);
    return () => window.removeEventListener(MODELS_CHANGED, reload);
  }, [reload]);
  if (error) return { offered: [], defaultModel: null, problems: [errorMessage(error)], loading };
  if (!value) return { offered: [], defaultModel: null, problems: [], loading };
  const all = value.providers.flatMap((p) => p.models);
  const offered = enabled && enabled.length > 0 ? all.filter((m) => enabled.includes(m.id)) : all;
  const problems = value.providers.filter((p) => p.error).map((p) => p.error!);
  return { offered, defaultModel: value.default_model, problems, loading };
}


