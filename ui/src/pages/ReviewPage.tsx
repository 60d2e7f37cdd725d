import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import type { CommitOutcome, FileReference, ReviewDocument, ReviewVersion } from "../bindings";
import { Markdown } from "../components/LazyMarkdown";
import { call, commands, errorMessage, events } from "../ipc";
import { clockTime, dayLabel } from "../lib/time";
import { useSelectionReporter } from "../lib/useSelectionReporter";

type Shown = { state: "loading" } | { state: "empty" } | { state: "ready"; doc: ReviewDocument } | { state: "error"; message: string };

async function fetchReview(id: number | null): Promise<{ shown: Shown; versions?: ReviewVersion[] }> {
  try {
    const doc = id === null ? await call(commands.reviewLatest()) : await call(commands.reviewGet(id));
    const versions = await call(commands.reviewVersions(100));
    return { shown: doc ? { state: "ready", doc } : { state: "empty" }, versions };
  } catch (e) {
    return { shown: { state: "error", message: errorMessage(e) } };
  }
}

/** The review panel: the latest review pushed from the editor, or an earlier version. */
export function ReviewPage() {
  const [shown, setShown] = useState<Shown>({ state: "loading" });
  const [versions, setVersions] = useState<ReviewVersion[]>([]);
  const [pinned, setPinned] = useState<number | null>(null); // null follows the latest
  const [notice, setNotice] = useState<string | null>(null);
  const loadStarted = useRef(0);
  const body = useRef<HTMLDivElement>(null);
  useSelectionReporter(body);

  // `arrivals` counts new versions; following the latest means reloading on each.
  const [arrivals, setArrivals] = useState(0);
  useEffect(() => {
    const unlisten = events.reviewArrived.listen(() => setArrivals((n) => n + 1));
    return () => void unlisten.then((off) => off());
  }, []);

  useEffect(() => {
    let live = true;
    loadStarted.current = performance.now();
    fetchReview(pinned).then((result) => {
      if (!live) return;
      setShown(result.shown);
      if (result.versions) setVersions(result.versions);
    });
    return () => {
      live = false;
    };
  }, [pinned, arrivals]);

  // How long loading and rendering took, for the render benchmark (read from the DOM).
  useLayoutEffect(() => {
    if (shown.state === "ready" && body.current) {
      body.current.dataset.renderMs = String(Math.round(performance.now() - loadStarted.current));
    }
  }, [shown]);

  const doc = shown.state === "ready" ? shown.doc : null;
  const references = useMemo(
    () => new Map<string, FileReference>((doc?.references ?? []).map((r) => [r.target, r])),
    [doc],
  );
  const open = useCallback(
    (target: string) => {
      if (!doc) return;
      call(commands.reviewOpenReference(doc.id, target)).then(
        () => setNotice(null),
        (e) => setNotice(errorMessage(e)),
      );
    },
    [doc],
  );

  if (shown.state === "loading") return <p className="muted center">Loading…</p>;
  if (shown.state === "error") return <ErrorCard title="The review could not be loaded" message={shown.message} />;
  if (shown.state === "empty") return <EmptyReview />;
  const broken = shown.doc.references.filter((r) => r.problem).length;
  return (
    <section className="review" aria-label="Review">
      <ReviewToolbar
        doc={shown.doc}
        versions={versions}
        pinned={pinned}
        onPin={setPinned}
        onNotice={setNotice}
      />
      {notice && <ErrorCard title="That did not work" message={notice} onDismiss={() => setNotice(null)} />}
      {broken > 0 && (
        <p className="muted review-note">
          {broken} reference{broken === 1 ? "" : "s"} cannot be opened (outside {shown.doc.base_uri}, or missing).
        </p>
      )}
      <div className="review-body" ref={body}>
        <Markdown markdown={shown.doc.content} references={references} onOpenReference={open} />
      </div>
    </section>
  );
}

function ReviewToolbar(props: {
  doc: ReviewDocument;
  versions: ReviewVersion[];
  pinned: number | null;
  onPin: (id: number | null) => void;
  onNotice: (message: string | null) => void;
}) {
  const { doc, versions, pinned, onPin, onNotice } = props;
  const [confirming, setConfirming] = useState(false);
  const [outcome, setOutcome] = useState<CommitOutcome | null>(null);
  const [copied, setCopied] = useState(false);

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(doc.content);
      setCopied(true);
      setTimeout(() => setCopied(false), 1500);
    } catch (e) {
      onNotice(`Copying failed: ${errorMessage(e)}`);
    }
  };
  const commit = async () => {
    setConfirming(false);
    try {
      setOutcome(await call(commands.reviewCommit(doc.id)));
    } catch (e) {
      onNotice(errorMessage(e));
    }
  };

  return (
    <>
      <div className="review-toolbar">
        <select
          aria-label="Review version"
          value={pinned ?? "latest"}
          onChange={(e) => onPin(e.target.value === "latest" ? null : Number(e.target.value))}
        >
          <option value="latest">Latest</option>
          {versions.map((v) => (
            <option key={v.id} value={v.id}>
              {`${dayLabel(v.created_at)} ${clockTime(v.created_at)} · ${v.title || "Untitled"} (${v.mode})`}
            </option>
          ))}
        </select>
        <button type="button" className="button" onClick={() => void copy()}>
          {copied ? "Copied" : "Copy"}
        </button>
        <button type="button" className="button" onClick={() => setConfirming(true)}>
          Commit…
        </button>
      </div>
      {confirming && (
        <div className="confirm" role="dialog" aria-label="Confirm commit">
          <p>
            Run <code>git commit</code> in <code>{doc.base_uri}</code> with this review as the message?
          </p>
          <div className="confirm-buttons">
            <button type="button" className="button primary" onClick={() => void commit()}>
              Commit
            </button>
            <button type="button" className="button" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        </div>
      )}
      {outcome && (
        <div className={outcome.success ? "commit-output ok" : "commit-output failed"} role="status">
          <strong>{outcome.success ? "Committed" : "git commit failed"}</strong>
          <pre>{outcome.output || "(no output)"}</pre>
          <button type="button" className="button" onClick={() => setOutcome(null)}>
            Close
          </button>
        </div>
      )}
    </>
  );
}

function EmptyReview() {
  return (
    <div className="empty-state">
      <h1>No review yet</h1>
      <p className="muted">
        Reviews from your coding agent or editor appear here, with clickable file references. Add the{" "}
        <code>perch-mcp-review</code> server to your agent, or run <code>perch review push review.md</code>.
      </p>
    </div>
  );
}

function ErrorCard({ title, message, onDismiss }: { title: string; message: string; onDismiss?: () => void }) {
  return (
    <div className="error-card" role="alert">
      <strong>{title}</strong>
      <p>{message}</p>
      {onDismiss && (
        <button type="button" className="button" onClick={onDismiss}>
          Dismiss
        </button>
      )}
    </div>
  );
}
