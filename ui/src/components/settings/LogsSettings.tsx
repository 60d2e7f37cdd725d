import { useEffect, useLayoutEffect, useRef, useState } from "react";
import type { MessageDescriptor } from "@lingui/core";
import { msg, plural } from "@lingui/core/macro";
import { Plural, Trans, useLingui } from "@lingui/react/macro";
import type { Component, CrashSummary, Cursor, DiagnosticsSaved, Level, LogEntry } from "../../bindings";
import { call, commands, errorMessage } from "../../ipc";
import { formatBytes, formatNumber } from "../../lib/format";
import { dateTime } from "../../lib/time";
import { useAction } from "../../lib/useAction";
import { useLoad } from "../../lib/useLoad";

/** What the page keeps of the log (the engine sends at most as many at a time). */
const KEEP = 1000;
const POLL_MS = 1000;

const LEVELS: { value: Level; label: MessageDescriptor }[] = [
  { value: "error", label: msg({ message: "Errors", comment: "log level filter: errors only" }) },
  { value: "warn", label: msg({ message: "Warnings", comment: "log level filter: warnings and errors" }) },
  { value: "info", label: msg({ message: "Info", comment: "log level filter" }) },
  { value: "debug", label: msg({ message: "Debug", comment: "log level filter: everything" }) },
];
/** A level shows itself and everything more severe. */
const SEVERITY: Record<Level, number> = { error: 0, warn: 1, info: 2, debug: 3, trace: 4 };

const COMPONENTS: { value: Component | "all"; label: MessageDescriptor }[] = [
  { value: "all", label: msg({ message: "All", comment: "log filter: lines from every part of Perch" }) },
  { value: "engine", label: msg({ message: "Engine", comment: "log filter: a part of Perch" }) },
  { value: "mcp", label: msg`MCP servers` },
  { value: "terminal", label: msg({ message: "Terminal", comment: "log filter: a part of Perch" }) },
  { value: "local", label: msg`Local models` },
  { value: "voice", label: msg({ message: "Voice", comment: "log filter: a part of Perch" }) },
  { value: "capture", label: msg({ message: "Capture", comment: "log filter: screenshots, a part of Perch" }) },
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
  const { t } = useLingui();
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
  const total = entries.length;
  const matching = formatNumber(shown.length);

  return (
    <fieldset className="card logs">
      <legend>
        <Trans>Log</Trans>
      </legend>
      <div className="segmented" role="radiogroup" aria-label={t({ message: "Level", comment: "log level" })}>
        {LEVELS.map((l) => (
          <label key={l.value} className={level === l.value ? "selected" : undefined}>
            <input
              type="radio"
              name="log-level"
              value={l.value}
              checked={level === l.value}
              onChange={() => setLevel(l.value)}
            />
            {t(l.label)}
          </label>
        ))}
      </div>
      <div className="chips log-components" role="group" aria-label={t({ message: "Component", comment: "the part of Perch a log line comes from" })}>
        {COMPONENTS.map((c) => (
          <button
            key={c.value}
            type="button"
            className={component === c.value ? "chip selected" : "chip"}
            aria-pressed={component === c.value}
            onClick={() => setComponent(c.value)}
          >
            {t(c.label)}
          </button>
        ))}
      </div>
      <label className="search log-search">
        <input
          type="search"
          placeholder={t`Search the log`}
          aria-label={t`Search the log`}
          value={search}
          onChange={(e) => setSearch(e.target.value)}
        />
      </label>
      {failure && (
        <p className="error small" role="alert">
          <Trans>The log could not be read: {failure}</Trans>
        </p>
      )}
      {/* A list read on demand: a live log would talk over the page once a second. */}
      <ol className="log-lines" aria-label={t`Log entries`} ref={list} onScroll={onScroll} tabIndex={0}>
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
        {shown.length === total
          ? t`${plural(total, { one: "# entry", other: "# entries" })}`
          : t`${matching} of ${plural(total, { one: "# entry matches", other: "# entries match" })}`}
      </p>
      <div className="buttons">
        <button type="button" onClick={() => void act(call(commands.logsOpenFolder()))}>
          <Trans>Open log folder</Trans>
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
  const { t } = useLingui();
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
    <fieldset className="card crash-reports" aria-label={t`Crash reports`}>
      <legend>
        <Trans>Crash reports</Trans>
      </legend>
      <p className="small muted">
        <Trans>
          Written on this computer when a part of Perch hit an internal error, and never sent anywhere. Save diagnostics
          below adds them to the zip.
        </Trans>
      </p>
      <ul className="crash-list">
        {reports.map((r) => (
          <li key={r.name}>
            <div>
              <strong>{r.component}</strong>{" "}
              <time dateTime={r.at} className="muted small">
                {dateTime(Date.parse(r.at))}
              </time>
              <p className="small">{r.summary}</p>
            </div>
            <button
              type="button"
              className="link-button"
              aria-expanded={open?.name === r.name}
              onClick={() => show(r.name)}
            >
              {open?.name === r.name
                ? t({ message: "Hide", comment: "a crash report's text" })
                : t({ message: "Show", comment: "a crash report's text" })}
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
  const { t } = useLingui();
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
  const path = saved?.path;
  const size = saved ? formatBytes(saved.size_bytes) : "";
  const removed = saved?.removed;
  const unreadable = saved?.unreadable_keys ?? 0;
  const revealError = reveal.error;

  return (
    <fieldset className="card">
      <legend>
        <Trans>Copy diagnostics</Trans>
      </legend>
      <p className="small muted">
        <Trans>
          One zip file for a bug report: Perch&apos;s checks, versions, settings, your MCP servers&apos; setup and recent
          logs, with keys, tokens and passwords removed. Nothing is sent anywhere.
        </Trans>
      </p>
      <label className="check">
        <input type="checkbox" checked={hideHome} onChange={(e) => setHideHome(e.target.checked)} />
        <Trans>Hide my home folder path</Trans>
      </label>
      <div className="buttons">
        <button type="button" className="primary" disabled={saving} onClick={() => void save()}>
          {saving ? t`Saving…` : t`Save diagnostics`}
        </button>
      </div>
      {saving && (
        <p className="small muted" role="status">
          <Trans>Running the checks and gathering the logs…</Trans>
        </p>
      )}
      {saved && !saving && (
        <div className="small" role="status" aria-label={t`Diagnostics saved`}>
          <p className="small">
            <Trans>
              Saved to <span className="path-inline">{path}</span> ({size}).
            </Trans>
          </p>
          <p className="small">
            <Trans>Removed: {removed}.</Trans>
          </p>
          {saved.logs_cut && (
            <p className="small muted">
              <Trans>Only the newest logs are in it, to keep it small.</Trans>
            </p>
          )}
          {unreadable > 0 && (
            <p className="small muted">
              <Plural
                value={unreadable}
                one="# stored key could not be read, so it was looked for by its shape only."
                other="# stored keys could not be read, so they were looked for by their shape only."
              />
            </p>
          )}
          <p className="small muted">
            <Trans>Look it over before you attach it to a bug report.</Trans>
          </p>
          <div className="buttons">
            <button type="button" onClick={() => void reveal.act(call(commands.diagnosticsReveal(saved.path)))}>
              <Trans>Show in folder</Trans>
            </button>
          </div>
          {reveal.error && (
            <p className="error small" role="alert">
              <Trans>The folder could not be shown: {revealError}</Trans>
            </p>
          )}
        </div>
      )}
      {error && (
        <p className="error small" role="alert">
          <Trans>The diagnostics could not be saved: {error}</Trans>
        </p>
      )}
    </fieldset>
  );
}
