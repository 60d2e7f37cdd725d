import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import type {
  CaptureSettings,
  HiddenSettings,
  LocalSettings,
  ModelSettings,
  ProviderSettings,
  ReviewSettings,
  Settings,
  ShortcutStatus,
  TerminalSettings,
  ThemePreference,
  ToolSettings,
  VoiceSettings,
} from "../bindings";
import { call, commands, errorMessage } from "../ipc";

interface SettingsState {
  settings: Settings | null;
  error: string | null;
  setTheme: (theme: ThemePreference) => Promise<void>;
  setReview: (review: ReviewSettings) => Promise<void>;
  setProviders: (providers: ProviderSettings) => Promise<void>;
  setModels: (models: ModelSettings) => Promise<void>;
  setTools: (tools: ToolSettings) => Promise<void>;
  /** Saves the screenshot settings; returns how their shortcuts bound. */
  setCapture: (capture: CaptureSettings) => Promise<ShortcutStatus[]>;
  setVoice: (voice: VoiceSettings) => Promise<void>;
  setTerminal: (terminal: TerminalSettings) => Promise<void>;
  setLocal: (local: LocalSettings) => Promise<void>;
  setHidden: (hidden: HiddenSettings) => Promise<void>;
  /** Reads the settings again, after a command that changed them itself (the terminal's
   * folder chosen on a card), so no form here saves a stale copy over the change. */
  reload: () => Promise<void>;
}

const SettingsContext = createContext<SettingsState>({
  settings: null,
  error: null,
  setTheme: async () => {},
  setReview: async () => {},
  setProviders: async () => {},
  setModels: async () => {},
  setTools: async () => {},
  setCapture: async () => [],
  setVoice: async () => {},
  setTerminal: async () => {},
  setLocal: async () => {},
  setHidden: async () => {},
  reload: async () => {},
});

export function SettingsProvider({ children }: { children: ReactNode }) {
  const [settings, setSettings] = useState<Settings | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    call(commands.getSettings()).then(setSettings, (e) => setError(errorMessage(e)));
  }, []);

  useEffect(() => applyTheme(settings?.theme ?? "system"), [settings?.theme]);

  const save = useCallback(async (pending: Promise<Settings>) => {
    try {
      setSettings(await pending);
      setError(null);
    } catch (e) {
      setError(errorMessage(e));
    }
  }, []);
  const setTheme = useCallback((theme: ThemePreference) => save(call(commands.setTheme(theme))), [save]);
  const setReview = useCallback(
    (review: ReviewSettings) => save(call(commands.setReviewSettings(review))),
    [save],
  );
  const setProviders = useCallback(
    (providers: ProviderSettings) => save(call(commands.setProviderSettings(providers))),
    [save],
  );
  const setModels = useCallback((models: ModelSettings) => save(call(commands.setModelSettings(models))), [save]);
  const setTools = useCallback((tools: ToolSettings) => save(call(commands.setToolSettings(tools))), [save]);
  const setVoice = useCallback((voice: VoiceSettings) => save(call(commands.setVoiceSettings(voice))), [save]);

  const setCapture = useCallback(async (capture: CaptureSettings) => {
    try {
      const statuses = await call(commands.setCaptureSettings(capture));
      setSettings((s) => s && { ...s, capture });
      setError(null);
      return statuses;
    } catch (e) {
      setError(errorMessage(e));
      return [];
    }
  }, []);

  const setTerminal = useCallback(
    (terminal: TerminalSettings) => save(call(commands.setTerminalSettings(terminal))),
    [save],
  );

  const setLocal = useCallback((local: LocalSettings) => save(call(commands.setLocalSettings(local))), [save]);
  const setHidden = useCallback(
    (hidden: HiddenSettings) => save(call(commands.setHiddenSettings(hidden))),
    [save],
  );

  const reload = useCallback(() => save(call(commands.getSettings())), [save]);

  // One value per change of settings or error: a parent's re-render does not re-render every
  // reader of the settings.
  const value = useMemo(
    () => ({
      settings,
      error,
      setTheme,
      setReview,
      setProviders,
      setModels,
      setTools,
      setCapture,
      setVoice,
      setTerminal,
      setLocal,
      setHidden,
      reload,
    }),
    [settings, error, setTheme, setReview, setProviders, setModels, setTools, setCapture, setVoice, setTerminal, setLocal, setHidden, reload],
  );
  return (
    <SettingsContext.Provider value={value}>
      {children}
    </SettingsContext.Provider>
  );
}

export function useSettings() {
  return useContext(SettingsContext);
}

/** "system" follows the OS through CSS `color-scheme`; light and dark pin it. */
export function applyTheme(theme: ThemePreference) {
  const root = document.documentElement;
  if (theme === "system") delete root.dataset.theme;
  else root.dataset.theme = theme;
}
