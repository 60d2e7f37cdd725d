import { useEffect, useRef, useState } from "react";
import { Terminal } from "@xterm/xterm";
import { FitAddon } from "@xterm/addon-fit";
import "@xterm/xterm/css/xterm.css";
import type { TerminalEvent } from "../../bindings";
import { call, commands } from "../../ipc";
import { formatDuration, useTerminal } from "../../lib/terminal";
import { PanelWriter } from "../../lib/terminalFlow";

// Perch's own notes (the folder, the exit line) in the theme's grey (bright black), not SGR
// dim: xterm draws dim at half opacity, below a readable contrast on either theme.
const DIM = "\x1b[90m";
const BOLD = "\x1b[1m";
const RESET = "\x1b[0m";

function header(command: string, cwd: string): string {
  return `\r\n${DIM}${cwd}${RESET}\r\n${BOLD}$ ${command}${RESET}\r\n`;
}

function footer(e: TerminalEvent): string {
  if (e.blocked) return `\x1b[31m[blocked: ${e.blocked}]${RESET}\r\n`;
  if (e.denied) return `\x1b[33m[declined]${RESET}\r\n`;
  const how = e.timed_out ? "timed out" : e.killed ? "killed" : e.exit_code === null ? "ended by a signal" : `exit ${e.exit_code}`;
  const cut = e.output_bytes > e.output.length ? `, ${e.output_bytes} bytes in all` : "";
  return `\r\n${DIM}[${how} · ${formatDuration(e.duration_ms)}${cut}]${RESET}\r\n`;
}

/** The conversation's terminal: every command with its output, exit code and duration (the
 * saved ones replayed from the database), live output as it arrives, and Kill. */
export function TerminalPanel({ conversationId, onClose }: { conversationId: string | null; onClose: () => void }) {
  const host = useRef<HTMLDivElement>(null);
  const { jobs, listen, runningNow, kill } = useTerminal();
  const [history, setHistory] = useState<TerminalEvent[]>([]);

  useEffect(() => {
    if (!host.current) return;
    const dark = window.matchMedia?.("(prefers-color-scheme: dark)").matches ?? false;
    const term = new Terminal({
      fontSize: 12,
      scrollback: 10000,
      disableStdin: true,
      convertEol: false,
      theme: dark
        ? { background: "#111315", brightBlack: "#9aa3b2" }
        : { background: "#fbfbfc", foreground: "#1d1f22", cursor: "#fbfbfc", brightBlack: "#5b6475" },
      // Programs' own colours are nudged until they read at 4.5:1 against the background.
      minimumContrastRatio: 4.5,
    });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(host.current);
    const refit = () => {
      try {
        fit.fit();
      } catch {
        // Not laid out yet.
      }
    };
    refit();
    const observer = new ResizeObserver(refit);
    observer.observe(host.current);
    let live = true;
    const out = new PanelWriter(term);
    const mine = new Set<number>();
    // Commands already running when the panel opened (the history leaves them out).
    const seeded = new Set<string>();
    for (const { view, output } of runningNow()) {
      if (view.conversation_id === conversationId) {
        mine.add(view.job);
        if (view.call_id) seeded.add(view.call_id);
        out.always(header(view.command, view.cwd) + output);
      }
    }
    setHistory([]);
    if (conversationId) {
      void call(commands.terminalHistory(conversationId)).then(
        (events) => {
          if (!live) return;
          setHistory(events);
          const replay = events
            .filter((e) => !(e.call_id && seeded.has(e.call_id)))
            .map((e) => header(e.command, e.cwd) + e.output + footer(e))
            .join("");
          if (replay) out.always(replay);
        },
        () => {},
      );
    }
    const off = listen((u) => {
      switch (u.event) {
        case "started":
          if (u.data.conversation_id === conversationId) {
            mine.add(u.data.job);
            out.always(header(u.data.command, u.data.cwd));
          }
          break;
        case "output":
          if (mine.has(u.data.job)) out.output(u.data.data);
          break;
        case "finished": {
          const { job, event } = u.data;
          if (event.conversation_id !== conversationId) break;
          if (job === 0) out.always(header(event.command, event.cwd));
          if (job === 0 || mine.has(job)) out.always(footer(event));
          setHistory((h) => (h.some((e) => e.id === event.id) ? h : [...h, event]));
          break;
        }
        default:
          break;
      }
    });
    return () => {
      live = false;
      off();
      out.close();
      observer.disconnect();
      term.dispose();
    };
  }, [conversationId, listen, runningNow]);

  const running = Object.values(jobs).filter((j) => j.view.conversation_id === conversationId && !j.event);
  return (
    <aside className="terminal-panel" aria-label="Terminal">
      <header>
        <strong>Terminal</strong>
        <span className="muted">
          {history.length} command{history.length === 1 ? "" : "s"}
        </span>
        <button type="button" className="icon" aria-label="Close the terminal" onClick={onClose}>
          ×
        </button>
      </header>
      <ol className="terminal-commands" aria-label="Commands">
        {history.map((e) => (
          <li key={e.id} className={e.blocked ? "blocked" : e.denied ? "denied" : e.exit_code === 0 ? "ok" : "failed"}>
            <code>{e.command}</code>
            <span className="muted">
              {e.blocked ? "blocked" : e.denied ? "declined" : e.exit_code === null ? (e.timed_out ? "timed out" : "killed") : `exit ${e.exit_code}`}
              {!e.blocked && !e.denied && ` · ${formatDuration(e.duration_ms)}`}
            </span>
          </li>
        ))}
        {running.map((j) => (
          <li key={`run-${j.view.job}`} className="running">
            <code>{j.view.command}</code>
            <span className="muted">running{j.runningFor ? ` ${j.runningFor} s` : ""}</span>
            <button type="button" className="danger" onClick={() => void kill(j.view.job)}>
              Kill
            </button>
          </li>
        ))}
      </ol>
      <div className="xterm-host" ref={host} data-testid="terminal-screen" />
    </aside>
  );
}
