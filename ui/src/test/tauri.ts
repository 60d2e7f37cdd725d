// A stand-in for the Tauri IPC in component tests. The generated bindings call `invoke` with
// the real command names, so tests exercise the same calls the app makes.
import { vi } from "vitest";

type Handler = (args: Record<string, unknown>) => unknown;

const handlers = new Map<string, Handler>();
const listeners = new Map<string, Set<(event: { payload: unknown }) => void>>();
export const calls: { cmd: string; args: Record<string, unknown> }[] = [];
const dropListeners = new Set<(event: { payload: unknown }) => void>();

/** Answers `cmd` with `handler`; a thrown value becomes a rejected invoke, as Tauri does. */
export function onCommand(cmd: string, handler: Handler) {
  handlers.set(cmd, handler);
}

export function emitEvent(name: string, payload: unknown) {
  listeners.get(name)?.forEach((cb) => cb({ payload }));
}

/** Plays a drag-and-drop on the window, as Tauri reports it (`{ type: "drop", paths }`...). */
export function dragDrop(payload: { type: "enter" | "over" | "drop" | "leave"; paths?: string[] }) {
  dropListeners.forEach((cb) => cb({ payload }));
}

export function clearMocks() {
  handlers.clear();
  listeners.clear();
  dropListeners.clear();
  calls.length = 0;
}

vi.mock("@tauri-apps/api/core", () => ({
  // Streams arrive through a channel's onmessage; handlers call it to play events.
  Channel: class<T> {
    onmessage: (message: T) => void = () => {};
  },
  invoke: async (cmd: string, args: Record<string, unknown> = {}) => {
    calls.push({ cmd, args });
    const handler = handlers.get(cmd);
    if (!handler) throw { kind: "unavailable", message: `no mock for ${cmd}` };
    return handler(args);
  },
}));

vi.mock("@tauri-apps/api/event", () => ({
  listen: async (name: string, cb: (event: { payload: unknown }) => void) => {
    if (!listeners.has(name)) listeners.set(name, new Set());
    listeners.get(name)!.add(cb);
    return () => listeners.get(name)?.delete(cb);
  },
  once: async () => () => {},
  emit: async () => {},
  emitTo: async () => {},
}));

vi.mock("@tauri-apps/api/window", () => ({
  getCurrentWindow: () => ({ startDragging: async () => calls.push({ cmd: "startDragging", args: {} }) }),
}));

vi.mock("@tauri-apps/api/webview", () => ({
  getCurrentWebview: () => ({
    onDragDropEvent: async (cb: (event: { payload: unknown }) => void) => {
      dropListeners.add(cb);
      return () => dropListeners.delete(cb);
    },
  }),
}));
