// Which tools come with their own interface (MCP Apps), from the servers' lists: one read for
// the whole page, read again when a server's list changes.
import { useEffect, useState } from "react";
import { call, commands, events } from "../../ipc";

const key = (server: string, tool: string) => `${server}\u0000${tool}`;
let known = new Set<string>();
let loaded = false;
const listeners = new Set<() => void>();

async function refresh() {
  try {
    const overview = await call(commands.mcpOverview());
    known = new Set(overview.servers.flatMap((s) => s.tools.filter((t) => t.ui?.resource_uri).map((t) => key(s.config.name, t.name))));
  } catch {
    // Keep what was known: a card shows text until the list can be read.
  }
  listeners.forEach((f) => f());
}

let unlisten: Promise<() => void> | null = null;
function start() {
  if (loaded) return;
  loaded = true;
  void refresh();
  unlisten = events.mcpChanged.listen((e) => {
    if (e.payload.event.event === "changed") void refresh();
  });
}

/** Whether `server`'s `tool` has an interface (and so its card may show it). */
export function useHasApp(server: string, tool: string): boolean {
  const [, setTick] = useState(0);
  useEffect(() => {
    start();
    const listener = () => setTick((n) => n + 1);
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  }, []);
  return known.has(key(server, tool));
}

/** For tests: forget what was read. */
export function resetAppTools() {
  known = new Set();
  loaded = false;
  void unlisten?.then((f) => f());
  unlisten = null;
}
