// The terminal's live state: one subscription for the app, fanned out to the tool cards (a
// short tail of each command's output), the panel (the output as the app paces it, written
// into xterm through PanelWriter without React in between) and the session banner. Output
// can arrive at several MB/s, so React state is touched at most once per animation frame.
import { createContext, useCallback, useContext, useEffect, useRef, useState, type ReactNode } from "react";
import { Channel } from "@tauri-apps/api/core";
import type { JobView, TerminalEvent, TerminalUpdate } from "../bindings";
import { call, commands } from "../ipc";
import { TailBuffer } from "./terminalFlow";

/** What a card shows of a command's output: its last characters. */
const CARD_TAIL = 4000;
/** What a panel opened mid-command replays of it. */
const PANEL_TAIL = 256 * 1024;

export interface Job {
  view: JobView;
  tail: string;
  /** Seconds it has been running, from the 10 s notices. */
  runningFor: number | null;
  event: TerminalEvent | null;
}

export interface Session {
  folder: string;
  reason: string | null;
}

interface TerminalState {
  jobs: Record<number, Job>;
  /** Commands refused or denied before they ran, by tool call. */
  refused: Record<string, TerminalEvent>;
  sessions: Record<string, Session>;
  panelOpen: boolean;
  setPanelOpen: (open: boolean) => void;
  /** Every update as it arrives (the panel writes output from here). */
  listen: (fn: (u: TerminalUpdate) => void) => () => void;
  /** The commands running now and their output so far (the last 256 KB), read at the moment
   * of the call rather than at the last render, for a panel opening mid-command. */
  runningNow: () => { view: JobView; output: string }[];
  kill: (job: number) => Promise<void>;
  endSession: (conversationId: string) => Promise<void>;
}

const Context = createContext<TerminalState>({
  jobs: {},
  refused: {},
  sessions: {},
  panelOpen: false,
  setPanelOpen: () => {},
  listen: () => () => {},
  runningNow: () => [],
  kill: async () => {},
  endSession: async () => {},
});

function tailOf(tails: Map<number, TailBuffer>, job: number, limit: number): TailBuffer {
  let tail = tails.get(job);
  if (!tail) tails.set(job, (tail = new TailBuffer(limit)));
  return tail;
}

export function TerminalProvider({ children }: { children: ReactNode }) {
  const [jobs, setJobs] = useState<Record<number, Job>>({});
  const [refused, setRefused] = useState<Record<string, TerminalEvent>>({});
  const [sessions, setSessions] = useState<Record<string, Session>>({});
  const [panelOpen, setPanelOpen] = useState(false);
  const listeners = useRef(new Set<(u: TerminalUpdate) => void>());
  // Per job: what arrived since the last frame (only a card's worth of it), and the panel's tail.
  const pending = useRef(new Map<number, TailBuffer>());
  const soFar = useRef(new Map<number, TailBuffer>());
  const live = useRef(new Map<number, JobView>());
  const frame = useRef<number | null>(null);

  const flush = useCallback(() => {
    frame.current = null;
    const chunks = [...pending.current].map(([id, tail]) => [id, tail.text()] as const);
    pending.current.clear();
    if (chunks.length === 0) return;
    setJobs((all) => {
      const next = { ...all };
      for (const [id, text] of chunks) {
        const job = next[id];
        if (job) next[id] = { ...job, tail: (job.tail + text).slice(-CARD_TAIL) };
      }
      return next;
    });
  }, []);

  useEffect(() => {
    const channel = new Channel<TerminalUpdate>();
    channel.onmessage = (u) => {
      listeners.current.forEach((fn) => fn(u));
      switch (u.event) {
        case "started":
          live.current.set(u.data.job, u.data);
          setJobs((all) => ({ ...all, [u.data.job]: { view: u.data, tail: "", runningFor: null, event: null } }));
          setPanelOpen(true);
          break;
        case "output":
          tailOf(soFar.current, u.data.job, PANEL_TAIL).push(u.data.data);
          tailOf(pending.current, u.data.job, CARD_TAIL).push(u.data.data);
          frame.current ??= requestAnimationFrame(flush);
          break;
        case "running":
          setJobs((all) => (all[u.data.job] ? { ...all, [u.data.job]: { ...all[u.data.job], runningFor: u.data.secs } } : all));
          break;
        case "finished": {
          const { job, event } = u.data;
          flush();
          soFar.current.delete(job);
          live.current.delete(job);
          if (job === 0 && event.call_id) setRefused((r) => ({ ...r, [event.call_id!]: event }));
          else setJobs((all) => (all[job] ? { ...all, [job]: { ...all[job], event } } : all));
          break;
        }
        case "session": {
          const { conversation_id, folder, reason } = u.data;
          setSessions((s) => {
            const next = { ...s };
            if (folder) next[conversation_id] = { folder, reason };
            else delete next[conversation_id];
            return next;
          });
          break;
        }
      }
    };
    void call(commands.terminalSubscribe(channel)).catch(() => {});
    return () => {
      channel.onmessage = () => {};
    };
  }, [flush]);

  const listen = useCallback((fn: (u: TerminalUpdate) => void) => {
    listeners.current.add(fn);
    return () => void listeners.current.delete(fn);
  }, []);
  const runningNow = useCallback(
    () => [...live.current.values()].map((view) => ({ view, output: soFar.current.get(view.job)?.text() ?? "" })),
    [],
  );
  const kill = useCallback(async (job: number) => void (await call(commands.terminalKill(job))), []);
  const endSession = useCallback(
    async (conversationId: string) => void (await call(commands.terminalEndSession(conversationId))),
    [],
  );
  return (
    <Context.Provider value={{ jobs, refused, sessions, panelOpen, setPanelOpen, listen, runningNow, kill, endSession }}>
      {children}
    </Context.Provider>
  );
}

export function useTerminal(): TerminalState {
  return useContext(Context);
}

/** The command a tool call started, if any. */
export function jobOfCall(jobs: Record<number, Job>, callId: string): Job | undefined {
  return Object.values(jobs).find((j) => j.view.call_id === callId);
}

/** Terminal output as plain text for a card: escapes removed, carriage returns resolved. */
export function plainOutput(text: string): string {
  // eslint-disable-next-line no-control-regex
  const stripped = text.replace(/\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)|\x1b[@-Z\\-_]/g, "");
  return stripped
    .split("\n")
    .map((line) => line.replace(/\r$/, "").split("\r").pop() ?? "")
    .join("\n");
}

export { formatDuration } from "./format";

type Token = { text: string; kind: "program" | "option" | "string" | "operator" | "variable" | "word" | "space" };

/** Splits a command line into tokens for highlighting (display only; the engine parses for real). */
export function shellTokens(command: string): Token[] {
  const re = /(\s+)|('[^']*'?|"(?:\\.|[^"\\])*"?)|(&&|\|\||[|;&<>]+)|(\$\{[^}]*\}?|\$\(|\$[A-Za-z_][A-Za-z0-9_]*)|([^\s'"|;&<>$]+|\$)/g;
  const tokens: Token[] = [];
  let expectProgram = true;
  for (const m of command.matchAll(re)) {
    const [text, space, str, op, variable] = m;
    if (space) tokens.push({ text, kind: "space" });
    else if (str) tokens.push({ text, kind: "string" });
    else if (op) {
      tokens.push({ text, kind: "operator" });
      expectProgram = !/[<>]/.test(text);
      continue;
    } else if (variable) tokens.push({ text, kind: "variable" });
    else if (expectProgram && !/=/.test(text)) tokens.push({ text, kind: "program" });
    else tokens.push({ text, kind: text.startsWith("-") ? "option" : "word" });
    if (!space && !(expectProgram && /=/.test(text))) expectProgram = false;
  }
  return tokens;
}
