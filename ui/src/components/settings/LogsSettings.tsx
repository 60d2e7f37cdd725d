import { useEffect, useLayoutEffect, useRef, useState } from "react";
import type { Component, CrashSummary, Cursor, DiagnosticsSaved, Level, LogEntry } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";
import { formatBytes } from "../../lib/format";
import { useAction } from "../../lib/useAction";
import { useLoad } from "../../lib/useLoad";

/** What the page keeps of the log (the engine sends at most as many at a time). */
const KEEP = 1000;
const POLL_MS = 1000;

const LEVELS: { value: Level; label: string }[] = [
  { value: "error", label: "Errors" },
  { value: "warn", label: "Warnings" },
  { value: "info", label: "Info" },
  { value: "debug", label: "Debug" },
];
/** A level shows itself and everything more severe. */
const SEVERITY: Record<Level, number> = { error: 0, warn: 1, info: 2, debug: 3, trace: 4 };

const COMPONENTS: { value: Component | "all"; label: string }[] = [
  { value: "all", label: "All" },
  { value: "engine", label: "Engine" },
  { value: "mcp", label: "MCP servers" },
  { value: "terminal", label: "Terminal" },
  { value: "local", label: "Local models" },
  { value: "voice", label: "Voice" },
  { value: "capture", label: "Capture" },
];

/** Settings -> Logs: Perch's own log and the MCP servers' stderr as they are written, and a
 * diagnostics bundle to attach to a bug report. */
export function LogsSettings() {
  return (
    <>
      <LogTail />
      <CrashReports />
      <DiagnosticsCard />
    </>
  );
}

function LogTail() {
  const [entries, setEntries] = useState<LogEntry[]>([]);
  const [failure, setFailure] = useState<string | null>(null);
  const [level, setLevel] = useState<Level>("info");
  const [component, setComponent] = useState<Component | "all">("all");
  const [search, setSearch] = useState("");
  const { error, act } = useAction(() => {});

  // One request at a time, each from where the last one ended; paused while the window is
  // hidden (nobody reads it, and the page may be freed).
  useEffect(() => {
    let cursor: Cursor | null = null;
    let live = true;
    let busy = false;
    const poll = async () => {
      if (busy || document.hidden) return;
      busy = true;
      try {
        const tail = await call(commands.logsTail(cursor));
        if (!live) return;
        cursor = tail.cursor;
        setFailure(null);
        if (tail.entries.length > 0) setEntries((was) => [...was, ...tail.entries].slice(-KEEP));
      } catch (e) {
        if (live) setFailure(errorMessage(e));
      } finally {
        busy = false;
      }
    };
    void poll();
    const timer = setInterval(() => void poll(), POLL_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, []);

  const needle = search.trim().toLowerCase();
  const shown = entries.filter(
    (e) =>
      SEVERITY[e.level] <= SEVERITY[level] &&
      (component === "all" || e.component === component) &&
      (!needle || `${e.text} ${e.target} ${e.server ?? ""}`.toLowerCase().includes(needle)),
  );

  // Follows new lines unless the reader scrolled up to look at older ones.
  const list = useRef<HTMLOListElement>(null);
  const pinned = useRef(true);
  useLayoutEffect(() => {
    const el = list.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  }, [shown.length, level, component, needle]);
  const onScroll = () => {
    const el = list.current;
    if (el) pinned.current = el.scrollTop + el.clientHeight >= el.scrollHeight - 8;
  };

  return (
    <fieldset className="card logs">
      <legend>Log</legend>
      <div className="segmented" role="radiogroup" aria-label="Level">
        {LEVELS.map((l) => (
          <label key={l.value} className={level === l.value ? "selected" : undefined}>
            <input
              type="radio"
              name="log-level"
              value={l.value}
              checked={level === l.value}
              onChange={() => setLevel(l.value)}
            />
            {l.label}
          </label>
        ))}
      </div>
      <div className="chips log-components" role="group" aria-label="Component">
        {COMPONENTS.map((c) => (
          <button
            key={c.value}
            type="button"
            className={component === c.value ? "chip selected" : "chip"}
            aria-pressed={component === c.value}
            onClick={() => setComponent(c.value)}
          >
            {c.label}
          </button>
        ))}
      </div>
      <label className="search log-search">
        <input
          type="search"
          placeholder="Search the log"
          aria-label="Search the log"
          value={search}
          onChange={(e) => setSearch(e.target.value)}
        />
      </label>
      {failure && (
        <p className="error small" role="alert">
          The log could not be read: {failure}
        </p>
      )}
      {/* A list read on demand: a live log would talk over the page once a second. */}
      <ol className="log-lines" aria-label="Log entries" ref={list} onScroll={onScroll} tabIndex={0}>
        {shown.map((e, i) => (
          <li key={`${e.at}-${i}`} className={`log-${e.level}`}>
            <time dateTime={e.at} title={e.at}>
              {e.at.slice(11, 19)}
            </time>{" "}
            <span className="tag">{e.level}</span> <span className="log-source">{e.server ?? shortTarget(e.target)}</span>{" "}
            {e.text}
          </li>
        ))}
      </ol>
      <p className="small muted" aria-live="polite">
        {shown.length === entries.length
          ? `${entries.length} entries`
          : `${shown.length} of ${entries.length} entries match`}
      </p>
      <div className="buttons">
        <button type="button" onClick={() => void act(call(commands.logsOpenFolder()))}>
          Open log folder
        </button>
      </div>
      {error && (
        <p className="error small" role="alert">
          {error}
        </p>
      )}
    </fieldset>
  );
}

/** `perch_core::mcp::manager` -> `mcp::manager`: the crate says little in a narrow window. */
function shortTarget(target: string): string {
  const parts = target.split("::");
  return parts.length > 2 ? parts.slice(1).join("::") : target;
}

/** The parts of Perch that panicked, as their reports say (nothing of a conversation in them). */
function CrashReports() {
  const loaded = useLoad<CrashSummary[]>(() => call(commands.crashReports()), "crashes");
  const [open, setOpen] = useState<{ name: string; text: string } | null>(null);
  const { error, act } = useAction(() => {});
  const reports = loaded.value ?? [];
  if (reports.length === 0) return null;
  const show = (name: string) =>
    open?.name === name
      ? setOpen(null)
      : void act(call(commands.crashReportText(name)).then((text) => setOpen({ name, text })));
  return (
    <fieldset className="card crash-reports" aria-label="Crash reports">
      <legend>Crash reports</legend>
      <p className="small muted">
        Written on this computer when a part of Perch hit an internal error, and never sent anywhere. Save diagnostics
        below adds them to the zip.
      </p>
      <ul className="crash-list">
        {reports.map((r) => (
          <li key={r.name}>
            <div>
              <strong>{r.component}</strong>{" "}
              <time dateTime={r.at} className="muted small">
                {new Date(r.at).toLocaleString()}
              </time>
              <p className="small">{r.summary}</p>
            </div>
            <button
              type="button"
              className="link-button"
              aria-expanded={open?.name === r.name}
              onClick={() => show(r.name)}
            >
              {open?.name === r.name ? "Hide" : "Show"}
            </button>
            {open?.name === r.name && <pre className="crash-text">{open.text}</pre>}
          </li>
        ))}
      </ul>
      {error && (
        <p className="error small" role="alert">
          {error}
        </p>
      )}
    </fieldset>
  );
}

function DiagnosticsCard() {
  const [hideHome, setHideHome] = useState(false);
  const [saving, setSaving] = useState(false);
  const [saved, setSaved] = useState<DiagnosticsSaved | null>(null);
  const { error, act } = useAction(() => {});
  const reveal = useAction(() => {});

  const save = async () => {
    setSaving(true);
    setSaved(null);
    await act(call(commands.diagnosticsSave(hideHome)).then(setSaved));
    setSaving(false);
  };

  return (
    <fieldset className="card">
      <legend>Copy diagnostics</legend>
      <p className="small muted">
        One zip file for a bug report: Perch&apos;s checks, versions, settings, your MCP servers&apos; setup and recent
        logs, with keys, tokens and passwords removed. Nothing is sent anywhere.
      </p>
      <label className="check">
        <input type="checkbox" checked={hideHome} onChange={(e) => setHideHome(e.target.checked)} />
        Hide my home folder path
      </label>
      <div className="buttons">
        <button type="button" className="primary" disabled={saving} onClick={() => void save()}>
          {saving ? "Saving…" : "Save diagnostics"}
        </button>
      </div>
      {saving && (
        <p className="small muted" role="status">
          Running the checks and gathering the logs…
        </p>
      )}
      {saved && !saving && (
        <div className="small" role="status" aria-label="Diagnostics saved">
          <p className="small">
            Saved to <span className="path-inline">{saved.path}</span> ({formatBytes(saved.size_bytes)}).
          </p>
          <p className="small">Removed: {saved.removed}.</p>
          {saved.logs_cut && <p className="small muted">Only the newest logs are in it, to keep it small.</p>}
          {saved.unreadable_keys > 0 && (
            <p className="small muted">
              {saved.unreadable_keys} stored keys could not be read, so they were looked for by their shape only.
            </p>
          )}
          <p className="small muted">Look it over before you attach it to a bug report.</p>
          <div className="buttons">
            <button type="button" onClick={() => void reveal.act(call(commands.diagnosticsReveal(saved.path)))}>
              Show in folder
            </button>
          </div>
          {reveal.error && (
            <p className="error small" role="alert">
              The folder could not be shown: {reveal.error}
            </p>
          )}
        </div>
      )}
      {error && (
        <p className="error small" role="alert">
          The diagnostics could not be saved: {error}
        </p>
      )}
    </fieldset>
  );
}
