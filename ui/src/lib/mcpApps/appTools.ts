// Which tools come with their own interface (MCP Apps), from the servers' lists, and which
// servers are missing because the servers file has a problem: one read for the whole page, read
// again when a server's list changes (the file being read again included).
import { useEffect, useState } from "react";
import type { ConfigProblem } from "../../bindings";
import { call, commands, events } from "../../ipc";

const key = (server: string, tool: string) => `${server}\u0000${tool}`;
let known = new Set<string>();
let servers: Set<string> | null = null;
let problems: ConfigProblem[] = [];
let loaded = false;
const listeners = new Set<() => void>();

async function refresh() {
  try {
    const overview = await call(commands.mcpOverview());
    known = new Set(overview.servers.flatMap((s) => s.tools.filter((t) => t.ui?.resource_uri).map((t) => key(s.config.name, t.name))));
    servers = new Set(overview.servers.map((s) => s.config.name));
    problems = overview.problems;
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

function useOverview() {
  const [, setTick] = useState(0);
  useEffect(() => {
    start();
    const listener = () => setTick((n) => n + 1);
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  }, []);
}

/** Whether `server`'s `tool` has an interface (and so its card may show it). */
export function useHasApp(server: string, tool: string): boolean {
  useOverview();
  return known.has(key(server, tool));
}

/** Why `server` is not loaded, when the servers file has a problem that explains it (one naming
 * it, or one with the whole file); null when it is loaded, or gone for another reason. */
export function useMissingServer(server: string): ConfigProblem | null {
  useOverview();
  if (!server || !servers || servers.has(server)) return null;
  return problems.find((p) => p.server === server) ?? problems.find((p) => p.server === null) ?? null;
}

/** For tests: forget what was read. */
export function resetAppTools() {
  known = new Set();
  servers = null;
  problems = [];
  loaded = false;
  void unlisten?.then((f) => f());
  unlisten = null;
}
