import type { AppStatus, CatalogModel, Conversation, LocalOverview, Settings, ToolCallRecord } from "../bindings";
import { onCommand } from "./tauri";

export const STATUS: AppStatus = {
  version: "0.1.0",
  fatal: null,
  data_dir: "/home/me/.local/share/perch",
  data_dir_source: "default",
  schema_version: 2,
  notices: [],
};

export const SETTINGS: Settings = {
  theme: "system",
  language: null,
  text_size: 100,
  providers: {
    ollama_url: "http://127.0.0.1:11434",
    openai_url: "https://api.openai.com/v1",
    anthropic_url: "https://api.anthropic.com",
    gemini_url: "https://generativelanguage.googleapis.com",
    compatible: [],
    ollama_context: 16384,
  },
  models: { enabled: [], default_model: null, thinking: true },
  window: { mode: "normal", bounds: null, mini_origin: null },
  hidden: { release_page_after_secs: 180, reload_grown_page_after_secs: 45 },
  review: {
    socket_enabled: true,
    auto_show: true,
    editor_command: "",
    max_content_chars: 100000,
    max_line_bytes: 1048576,
    idle_timeout_secs: 30,
  },
  tools: {
    enabled: true,
    max_rounds: 30,
    max_result_chars: 20000,
    skip_with_images: true,
    allow_read_only: false,
    rules: [],
    top_k: 8,
    always_on: [],
    retriever: "auto",
    ollama_embedding_model: "all-minilm",
    roots: [],
  },
  memories: { enabled: true, cloud: false },
  capture: {
    mode: "fullscreen",
    all_monitors: false,
    shortcut: "Alt+Period",
    window_shortcut: "Alt+Shift+Period",
    selection_shortcut: "Ctrl+Alt+E",
    auto_screenshot: false,
    max_edge: 1568,
    jpeg_quality: 85,
    keep_hours: 24,
  },
  voice: {
    model: "tiny.en",
    language: "auto",
    device: "",
    push_to_talk: "Ctrl+Alt+Space",
    push_to_talk_mode: "hold",
    dictate_anywhere: "Ctrl+Alt+D",
    send_after_dictation: false,
    partial_results: true,
    max_seconds: 300,
    keep_model_secs: 30,
    use_gpu: true,
    never_type_into: ["KeePassXC"],
    tidy_punctuation: false,
    remove_fillers: true,
    vocabulary: [],
  },
  speech: { voice: "auto", speed_percent: 100, device: "", speak_answers: false },
  terminal: {
    enabled: true,
    ask_level: "on_miss",
    timeout_secs: 120,
    working_folder: "",
    writable_folders: [],
    pass_env: [],
    network: true,
    max_output_mb: 64,
  },
  local: { context_length: 4096, threads: 0, keep_alive_secs: 300, memory_limit_mb: 0, max_answer_tokens: 0, gpu_layers: {} },
  updates: { check_at_start: true },
  // Answered, so chat tests see no offer under their answers; StartAtLogin.test.tsx asks.
  start_at_login_offered: true,
};

export function catalogModel(id: string, title: string, size: number, extra: Partial<CatalogModel> = {}): CatalogModel {
  return {
    id,
    title,
    file: `${title.replace(/ /g, "-")}.gguf`,
    size,
    memory: size + 500_000_000,
    licence: "Apache-2.0",
    licence_url: `https://huggingface.co/${id}`,
    tools: true,
    thinking: false,
    note: "A small model",
    installed: false,
    partial: 0,
    ...extra,
  };
}

/** Settings -> Models -> On this computer with nothing downloaded and nothing running. */
export function localOverview(extra: Partial<LocalOverview> = {}): LocalOverview {
  return {
    catalog: [catalogModel("qwen3-0.6b", "Qwen3 0.6B", 639_446_688, { thinking: true }), catalogModel("gemma3-1b", "Gemma 3 1B", 806_058_240)],
    models: [],
    runtime: {
      state: "stopped",
      pid: null,
      model: null,
      context_length: null,
      threads: null,
      runs_on: null,
      message: null,
      restarts: 0,
    },
    folder: "/home/me/.local/share/perch/models/llm",
    ...extra,
  };
}

export function conversation(id: string, title: string, updated_at: number): Conversation {
  return { id, title, model: null, created_at: updated_at, updated_at, input_tokens: 0, output_tokens: 0, message_count: 2 };
}

/** The commands every page needs, answered as a healthy app would. */
export function healthyApp(overrides: Partial<AppStatus> = {}, settingsOverrides: Partial<Settings> = {}) {
  let settings = { ...SETTINGS, ...settingsOverrides };
  onCommand("app_status", () => ({ ...STATUS, ...overrides }));
  onCommand("desktop_status", () => ({ composited: true, tray: true, on_top: "kept" }));
  // Not GNOME: no custom shortcut offered.
  onCommand("desktop_shortcut", () => null);
  onCommand("get_window_mode", () => "normal");
  onCommand("get_settings", () => settings);
  onCommand("set_theme", ({ theme }) => (settings = { ...settings, theme: theme as Settings["theme"] }));
  onCommand("ui_language", () => ({ chosen: settings.language, system: "en_US.UTF-8" }));
  onCommand("set_language", ({ language }) => (settings = { ...settings, language: language as string | null }));
  onCommand("set_text_size", ({ percent }) => (settings = { ...settings, text_size: percent as number }));
  onCommand("set_window_mode", () => null);
  let atLogin: "off" | "on" = "off";
  const entry = () => ({ state: atLogin, entry: "/home/me/.config/autostart/dev.perch.app.desktop" });
  onCommand("start_at_login", entry);
  onCommand("set_start_at_login", ({ on }) => {
    atLogin = on ? "on" : "off";
    settings = { ...settings, start_at_login_offered: true };
    return entry();
  });
  onCommand("start_at_login_offered", () => (settings = { ...settings, start_at_login_offered: true }));
  onCommand("hide_window", () => null);
  onCommand("page_holds_unsent", () => null);
  onCommand("set_hidden_settings", ({ hidden }) => (settings = { ...settings, hidden: hidden as Settings["hidden"] }));
  onCommand("quit_app", () => null);
  onCommand("ui_ready", () => null);
  onCommand("history_list", () => []);
  onCommand("history_search", () => []);
  onCommand("review_socket_status", () => ({ path: "/run/user/1000/perch/review.sock", error: null }));
  onCommand("captures_pending", () => []);
  onCommand("shortcut_statuses", () => []);
  onCommand("local_overview", () => localOverview());
  onCommand("update_status", () => ({
    current_version: STATUS.version,
    phase: { kind: "idle" },
    offer: null,
    route: { kind: "manual", reason: "This copy of Perch was not installed from a package." },
    last_checked_ms: null,
  }));
}

/** A finished call of demo's `add`, with `overrides`. */
export function toolCall(overrides: Partial<ToolCallRecord> = {}): ToolCallRecord {
  return {
    id: "c1",
    call_id: "p1",
    message_id: 2,
    round: 0,
    text_offset: 0,
    server: "demo",
    tool: "add",
    arguments: { a: 2, b: 3 },
    status: "done",
    output: { text: "5", images: [], is_error: false, truncated_chars: 0 },
    duration_ms: 3,
    created_at: 0,
    ...overrides,
  };
}
