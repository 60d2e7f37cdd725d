import { useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import { plural } from "@lingui/core/macro";
import { Trans, useLingui } from "@lingui/react/macro";
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

/** Commands named in the page: not translated. */
const GIT_COMMIT = "git commit";
const REVIEW_SERVER = "perch-mcp-review";
const PUSH_COMMAND = "perch review push review.md";

/** The review panel: the latest review pushed from the editor, or an earlier version. */
export function ReviewPage() {
  const { t } = useLingui();
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

  if (shown.state === "loading")
    return (
      <p className="muted center">
        <Trans>Loading…</Trans>
      </p>
    );
  if (shown.state === "error") return <ErrorCard title={t`The review could not be loaded`} message={shown.message} />;
  if (shown.state === "empty") return <EmptyReview />;
  const broken = shown.doc.references.filter((r) => r.problem).length;
  const folder = shown.doc.base_uri;
  return (
    <section className="review" aria-label={t`Review`}>
      <ReviewToolbar
        doc={shown.doc}
        versions={versions}
        pinned={pinned}
        onPin={setPinned}
        onNotice={setNotice}
      />
      {notice && <ErrorCard title={t`That did not work`} message={notice} onDismiss={() => setNotice(null)} />}
      {broken > 0 && (
        <p className="muted review-note">
          {t`${plural(broken, {
            one: `# reference cannot be opened (outside ${folder}, or missing).`,
            other: `# references cannot be opened (outside ${folder}, or missing).`,
          })}`}
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
  const { t } = useLingui();
  const [confirming, setConfirming] = useState(false);
  const [outcome, setOutcome] = useState<CommitOutcome | null>(null);
  const [copied, setCopied] = useState(false);
  const folder = doc.base_uri;

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(doc.content);
      setCopied(true);
      setTimeout(() => setCopied(false), 1500);
    } catch (e) {
      const reason = errorMessage(e);
      onNotice(t`Copying failed: ${reason}`);
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
          aria-label={t`Review version`}
          value={pinned ?? "latest"}
          onChange={(e) => onPin(e.target.value === "latest" ? null : Number(e.target.value))}
        >
          <option value="latest">{t`Latest`}</option>
          {versions.map((v) => {
            const day = dayLabel(v.created_at);
            const time = clockTime(v.created_at);
            const title = v.title || t`Untitled`;
            // How the engine filed it ("replace", ...): its own word.
            const mode = v.mode;
            return (
              <option key={v.id} value={v.id}>
                {t({
                  message: `${day} ${time} · ${title} (${mode})`,
                  comment: "a review version: its day and time, its title, and how the engine filed it (an English word)",
                })}
              </option>
            );
          })}
        </select>
        <button type="button" className="button" onClick={() => void copy()}>
          {copied ? t`Copied` : t`Copy`}
        </button>
        <button type="button" className="button" onClick={() => setConfirming(true)}>
          <Trans>Commit…</Trans>
        </button>
      </div>
      {confirming && (
        <div className="confirm" role="dialog" aria-label={t`Confirm commit`}>
          <p>
            <Trans comment="GIT_COMMIT is the command, folder the repository's path">
              Run <code>{GIT_COMMIT}</code> in <code>{folder}</code> with this review as the message?
            </Trans>
          </p>
          <div className="confirm-buttons">
            <button type="button" className="button primary" onClick={() => void commit()}>
              <Trans>Commit</Trans>
            </button>
            <button type="button" className="button" onClick={() => setConfirming(false)}>
              <Trans>Cancel</Trans>
            </button>
          </div>
        </div>
      )}
      {outcome && (
        <div className={outcome.success ? "commit-output ok" : "commit-output failed"} role="status">
          <strong>{outcome.success ? t`Committed` : t({ message: `${GIT_COMMIT} failed`, comment: "GIT_COMMIT is the command: git commit" })}</strong>
          <pre>{outcome.output || t`(no output)`}</pre>
          <button type="button" className="button" onClick={() => setOutcome(null)}>
            <Trans>Close</Trans>
          </button>
        </div>
      )}
    </>
  );
}

function EmptyReview() {
  return (
    <div className="empty-state">
      <h1>
        <Trans>No review yet</Trans>
      </h1>
      <p className="muted">
        <Trans comment="the placeholders are an MCP server's name and a command">
          Reviews from your coding agent or editor appear here, with clickable file references. Add the{" "}
          <code>{REVIEW_SERVER}</code> server to your agent, or run <code>{PUSH_COMMAND}</code>.
        </Trans>
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
          <Trans>Dismiss</Trans>
        </button>
      )}
    </div>
  );
}
