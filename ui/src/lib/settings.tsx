import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import type {
  CaptureSettings,
  HiddenSettings,
  LocalSettings,
  MemorySettings,
  ModelSettings,
  ProviderSettings,
  ReviewSettings,
  Settings,
  ShortcutStatus,
  TerminalSettings,
  ThemePreference,
  ToolSettings,
  VoiceSettings,
  SpeechSettings,
} from "../bindings";
import { call, commands, errorMessage, type CommandResult } from "../ipc";
import { t } from "@lingui/core/macro";
import { activateLanguage, matchLanguage } from "../i18n";

/** The sections saved with a `base`: everything but the theme. */
type Section = "review" | "providers" | "models" | "tools" | "memories" | "capture" | "voice" | "speech" | "terminal" | "local" | "hidden";

interface SettingsState {
  settings: Settings | null;
  error: string | null;
  setTheme: (theme: ThemePreference) => Promise<void>;
  /** Saves the UI's language (`null`: follow the system) and switches the page to it. */
  setLanguage: (language: string | null) => Promise<void>;
  /** Saves the text size (percent, 100 to 200). */
  setTextSize: (percent: number) => Promise<void>;
  setReview: (review: ReviewSettings) => Promise<void>;
  setProviders: (providers: ProviderSettings) => Promise<void>;
  setModels: (models: ModelSettings) => Promise<void>;
  setTools: (tools: ToolSettings) => Promise<void>;
  setMemories: (memories: MemorySettings) => Promise<void>;
  /** Saves the screenshot settings; returns how their shortcuts bound. */
  setCapture: (capture: CaptureSettings) => Promise<ShortcutStatus[]>;
  setVoice: (voice: VoiceSettings) => Promise<void>;
  setSpeech: (speech: SpeechSettings) => Promise<void>;
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
  setLanguage: async () => {},
  setTextSize: async () => {},
  setReview: async () => {},
  setProviders: async () => {},
  setModels: async () => {},
  setTools: async () => {},
  setCapture: async () => [],
  setVoice: async () => {},
  setSpeech: async () => {},
  setTerminal: async () => {},
  setLocal: async () => {},
  setHidden: async () => {},
  setMemories: async () => {},
  reload: async () => {},
});

export function SettingsProvider({ children }: { children: ReactNode }) {
  const [settings, setSettings] = useState<Settings | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    call(commands.getSettings()).then(setSettings, (e) => setError(errorMessage(e)));
  }, []);

  useEffect(() => applyTheme(settings?.theme ?? "system"), [settings?.theme]);
  useEffect(() => applyTextSize(settings?.text_size ?? 100), [settings?.text_size]);

  const save = useCallback(async (pending: Promise<Settings>) => {
    try {
      setSettings(await pending);
      setError(null);
    } catch (e) {
      setError(savingError(e));
    }
  }, []);
  /** Saves one section as edited, with the copy the forms were drawn from as its `base`: the
   * engine saves only what the form changed and keeps what changed elsewhere meanwhile (a rule
   * granted on a card, the folder chosen on one, a model picked in the chat). */
  const edit = useCallback(
    <K extends Section>(key: K, edited: Settings[K], send: (base: Settings[K], edited: Settings[K]) => Promise<CommandResult<Settings>>) =>
      save(call(send(settings?.[key] ?? edited, edited))),
    [save, settings],
  );
  const setTheme = useCallback((theme: ThemePreference) => save(call(commands.setTheme(theme))), [save]);
  const setTextSize = useCallback((percent: number) => save(call(commands.setTextSize(clampTextSize(percent)))), [save]);

  // Ctrl+= (or Ctrl++) and Ctrl+- step the text size by a quarter, Ctrl+0 sets it back, on
  // every page, as in a browser.
  const textSize = settings?.text_size;
  useEffect(() => {
    if (textSize === undefined) return;
    const onKey = (e: KeyboardEvent) => {
      if (!e.ctrlKey || e.altKey || e.metaKey) return;
      const next = e.key === "=" || e.key === "+" ? textSize + 25 : e.key === "-" ? textSize - 25 : e.key === "0" ? 100 : null;
      if (next === null) return;
      e.preventDefault();
      if (clampTextSize(next) !== textSize) void setTextSize(next);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [textSize, setTextSize]);
  const setLanguage = useCallback(
    async (language: string | null) => {
      await save(call(commands.setLanguage(language)));
      const asked = await call(commands.uiLanguage()).catch(() => null);
      await activateLanguage(matchLanguage([language, asked?.system, navigator.language]));
    },
    [save],
  );
  const setReview = useCallback((review: ReviewSettings) => edit("review", review, commands.setReviewSettings), [edit]);
  const setProviders = useCallback(
    (providers: ProviderSettings) => edit("providers", providers, commands.setProviderSettings),
    [edit],
  );
  const setModels = useCallback((models: ModelSettings) => edit("models", models, commands.setModelSettings), [edit]);
  const setTools = useCallback((tools: ToolSettings) => edit("tools", tools, commands.setToolSettings), [edit]);
  const setVoice = useCallback((voice: VoiceSettings) => edit("voice", voice, commands.setVoiceSettings), [edit]);
  const setSpeech = useCallback((speech: SpeechSettings) => edit("speech", speech, commands.setSpeechSettings), [edit]);
  const setMemories = useCallback(
    (memories: MemorySettings) => edit("memories", memories, commands.setMemorySettings),
    [edit],
  );

  const setCapture = useCallback(async (capture: CaptureSettings) => {
    try {
      const base = settings?.capture ?? capture;
      const statuses = await call(commands.setCaptureSettings(base, capture));
      // The engine merged the edit with anything changed meanwhile: read back what it saved.
      setSettings(await call(commands.getSettings()));
      setError(null);
      return statuses;
    } catch (e) {
      setError(errorMessage(e));
      return [];
    }
  }, [settings]);

  const setTerminal = useCallback(
    (terminal: TerminalSettings) => edit("terminal", terminal, commands.setTerminalSettings),
    [edit],
  );
  const setLocal = useCallback((local: LocalSettings) => edit("local", local, commands.setLocalSettings), [edit]);
  const setHidden = useCallback((hidden: HiddenSettings) => edit("hidden", hidden, commands.setHiddenSettings), [edit]);

  const reload = useCallback(() => save(call(commands.getSettings())), [save]);

  // One value per change of settings or error: a parent's re-render does not re-render every
  // reader of the settings.
  const value = useMemo(
    () => ({
      settings,
      error,
      setTheme,
      setLanguage,
      setTextSize,
      setReview,
      setProviders,
      setModels,
      setTools,
      setCapture,
      setVoice,
      setSpeech,
      setTerminal,
      setLocal,
      setHidden,
      setMemories,
      reload,
    }),
    [settings, error, setTheme, setLanguage, setTextSize, setReview, setProviders, setModels, setTools, setCapture, setVoice, setSpeech, setTerminal, setLocal, setHidden, setMemories, reload],
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

/** Why a save failed, in the user's words: a value the engine could not read arrives as
 * "invalid args `providers` for command `set_provider_settings`: <why>", of which only the why
 * means anything to them. */
export function savingError(e: unknown): string {
  const message = errorMessage(e);
  const invalid = /^invalid args `[^`]*` for command `[^`]*`: (.*)$/s.exec(message);
  const reason = invalid?.[1];
  return reason ? t`That value cannot be used: ${reason}` : message;
}

/** "system" follows the OS through CSS `color-scheme`; light and dark pin it. */
export function applyTheme(theme: ThemePreference) {
  const root = document.documentElement;
  if (theme === "system") delete root.dataset.theme;
  else root.dataset.theme = theme;
}

/** The text sizes offered (percent): 200 is the most every page is checked at. */
export const TEXT_SIZES = [100, 125, 150, 175, 200] as const;

export function clampTextSize(percent: number): number {
  return Math.min(200, Math.max(100, Math.round(percent)));
}

/** Every font size in the CSS is a multiple of `--text-scale`. */
function applyTextSize(percent: number) {
  document.documentElement.style.setProperty("--text-scale", String(clampTextSize(percent) / 100));
}
