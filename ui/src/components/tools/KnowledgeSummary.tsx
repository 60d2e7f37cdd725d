import { useState } from "react";
import { plural } from "@lingui/core/macro";
import { useLingui } from "@lingui/react/macro";
import type { ToolCallRecord } from "../../bindings";
import { call as invoke, commands, errorMessage } from "../../ipc";
import { formatNumber } from "../../lib/format";

/** The knowledge folders' search, whose card lists the passages found instead of raw JSON. */
export function isKnowledgeCall(call: ToolCallRecord): boolean {
  return call.server === "knowledge" && call.tool === "search_knowledge";
}

interface Passage {
  path: string;
  start: number;
  end: number;
  heading: string;
  citation: string;
  /** A PDF's passage: its place is a page (in `heading`), not a line to open the editor at. */
  pdf?: boolean;
}

function passagesOf(call: ToolCallRecord): Passage[] {
  const found = (call.output?.structured as { passages?: unknown } | null | undefined)?.passages;
  if (!Array.isArray(found)) return [];
  return found.filter((p): p is Passage => typeof p?.path === "string" && typeof p?.citation === "string");
}

/** What a search of the knowledge folders asked and found: each passage's file and lines (and
 * heading), opening the editor there as the answer's own references do. */
export function KnowledgeSummary({ call }: { call: ToolCallRecord }) {
  const { t } = useLingui();
  const [problem, setProblem] = useState<string | null>(null);
  const query = String((call.arguments as { query?: unknown } | null)?.query ?? "");
  const passages = passagesOf(call);
  const count = passages.length;
  const open = (citation: string) =>
    invoke(commands.chatOpenReference(call.message_id, citation)).then(
      () => setProblem(null),
      (e) => setProblem(errorMessage(e)),
    );
  return (
    <div className="web-summary" aria-label={t`Knowledge search summary`}>
      <p>
        {t`Searched your folders for “${query}”`}
        {call.output && !call.output.is_error && ` · ${t`${plural(count, { one: "# passage", other: "# passages" })}`}`}
      </p>
      {passages.length > 0 && (
        <ol>
          {passages.map((p) => {
            const name = p.path.split("/").pop() ?? p.path;
            const lines = p.start === p.end ? formatNumber(p.start) : `${formatNumber(p.start)}-${formatNumber(p.end)}`;
            const place = `${name}:${lines}`;
            return (
              <li key={p.citation}>
                {p.pdf ? (
                  <span title={p.path}>{name}</span>
                ) : (
                  <button type="button" className="file-ref" title={p.citation} aria-label={t`Open ${place} in the editor`} onClick={() => void open(p.citation)}>
                    {place}
                  </button>
                )}
                {p.heading && <span className="muted"> · {p.heading}</span>}
              </li>
            );
          })}
        </ol>
      )}
      {problem && (
        <p className="error small" role="alert">
          {problem}
        </p>
      )}
    </div>
  );
}
