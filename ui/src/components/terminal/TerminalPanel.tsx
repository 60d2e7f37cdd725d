import { useEffect, useRef, useState } from "react";
import { msg, plural } from "@lingui/core/macro";
import { Trans, useLingui } from "@lingui/react/macro";
import { Terminal } from "@xterm/xterm";
import { FitAddon } from "@xterm/addon-fit";
import "@xterm/xterm/css/xterm.css";
import type { TerminalEvent } from "../../bindings";
import { call, commands } from "../../ipc";
import { i18n } from "../../i18n";
import { formatNumber } from "../../lib/format";
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

// The lines Perch writes into the terminal are translated when written (not at module load).
function footer(e: TerminalEvent): string {
  const { blocked, exit_code: code } = e;
  if (blocked) return `\x1b[31m${i18n._(msg({ message: `[blocked: ${blocked}]`, comment: "terminal: why Perch refused the command" }))}${RESET}\r\n`;
  if (e.denied) return `\x1b[33m${i18n._(msg({ message: "[declined]", comment: "terminal: the user declined the command" }))}${RESET}\r\n`;
  const how = i18n._(
    e.timed_out
      ? msg({ message: "timed out", comment: "terminal: how the command ended" })
      : e.killed
        ? msg({ message: "killed", comment: "terminal: how the command ended" })
        : e.exit_code === null
          ? msg({ message: "ended by a signal", comment: "terminal: how the command ended" })
          : msg({ message: `exit ${code}`, comment: "terminal: how the command ended, its exit code" }),
  );
  const duration = formatDuration(e.duration_ms);
  const bytes = formatNumber(e.output_bytes);
  const line =
    e.output_bytes > e.output.length
      ? i18n._(msg({ message: `[${how} · ${duration}, ${bytes} bytes in all]`, comment: "terminal: how it ended, how long it took, output kept in part" }))
      : `[${how} · ${duration}]`;
  return `\r\n${DIM}${line}${RESET}\r\n`;
}

/** The conversation's terminal: every command with its output, exit code and duration (the
 * saved ones replayed from the database), live output as it arrives, and Kill. */
export function TerminalPanel({ conversationId, onClose }: { conversationId: string | null; onClose: () => void }) {
  const { t } = useLingui();
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
  const commandCount = history.length;
  return (
    <aside className="terminal-panel" aria-label={t({ message: "Terminal", comment: "the terminal panel" })}>
      <header>
        <strong>
          <Trans comment="the terminal panel's title">Terminal</Trans>
        </strong>
        <span className="muted">{t`${plural(commandCount, { one: "# command", other: "# commands" })}`}</span>
        <button type="button" className="icon" aria-label={t`Close the terminal`} onClick={onClose}>
          ×
        </button>
      </header>
      <ol className="terminal-commands" aria-label={t({ message: "Commands", comment: "the terminal commands of this conversation" })}>
        {history.map((e) => {
          const code = e.exit_code;
          return (
          <li key={e.id} className={e.blocked ? "blocked" : e.denied ? "denied" : e.exit_code === 0 ? "ok" : "failed"}>
            <code>{e.command}</code>
            <span className="muted">
              {e.blocked
                ? t({ message: "blocked", comment: "a terminal command's status" })
                : e.denied
                  ? t({ message: "declined", comment: "a terminal command's status" })
                  : e.exit_code === null
                    ? e.timed_out
                      ? t({ message: "timed out", comment: "a terminal command's status" })
                      : t({ message: "killed", comment: "a terminal command's status" })
                    : t({ message: `exit ${code}`, comment: "a terminal command's status: its exit code" })}
              {!e.blocked && !e.denied && ` · ${formatDuration(e.duration_ms)}`}
            </span>
          </li>
          );
        })}
        {running.map((j) => {
          const seconds = j.runningFor ? formatNumber(j.runningFor) : "";
          return (
            <li key={`run-${j.view.job}`} className="running">
              <code>{j.view.command}</code>
              <span className="muted">
                {j.runningFor
                  ? t({ message: `running ${seconds} s`, comment: "a terminal command's status; s: seconds" })
                  : t({ message: "running", comment: "a terminal command's status" })}
              </span>
              <button type="button" className="danger" onClick={() => void kill(j.view.job)}>
                <Trans comment="button: kill the running command">Kill</Trans>
              </button>
            </li>
          );
        })}
      </ol>
      <div className="xterm-host" ref={host} data-testid="terminal-screen" />
    </aside>
  );
}
