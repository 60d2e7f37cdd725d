import type { MouseEvent } from "react";
import { Trans, useLingui } from "@lingui/react/macro";
import { commands, type ToolCallRecord } from "../../bindings";
import { attempt } from "../../lib/failures";
import { formatNumber } from "../../lib/format";

/** The bundled web server's tools, whose cards show a summary instead of raw JSON. */
export function isWebCall(call: ToolCallRecord): boolean {
  return call.server === "web" && (call.tool === "search_web" || call.tool === "read_page");
}

export interface WebLinkItem {
  title: string;
  url: string;
}

const HTTP = /^https?:\/\//i;

/** The results in search_web's answer: lines like `1. [Title](<https://…>)`. */
export function searchResults(text: string): WebLinkItem[] {
  const found: WebLinkItem[] = [];
  for (const m of text.matchAll(/^\d+\. \[(.*)\]\(<([^>\s]+)>\)$/gm)) {
    if (HTTP.test(m[2])) found.push({ title: m[1] || m[2], url: m[2] });
  }
  return found;
}

/** read_page's `# Title` and `URL: …` lines (the title is absent for plain text and JSON). */
export function pageHeading(text: string): { title: string | null; url: string | null } {
  // Only a heading above the URL line is the page's title; the article's own headings follow it.
  const at = text.search(/^URL: /m);
  const title = at < 0 ? null : (/^# (.+)$/m.exec(text.slice(0, at))?.[1] ?? null);
  const url = /^URL: (\S+)$/m.exec(text)?.[1] ?? null;
  return { title, url: url && HTTP.test(url) ? url : null };
}

function stringArg(call: ToolCallRecord, name: string): string {
  const args = call.arguments as Record<string, unknown> | null;
  const value = args?.[name];
  return typeof value === "string" ? value : "";
}

/** A link that opens in the system browser, never in Perch's window. */
function BrowserLink({ url, children }: { url: string; children: string }) {
  const { t } = useLingui();
  const open = (e: MouseEvent) => {
    e.preventDefault();
    void attempt(t`Could not open the link`, commands.openUrl(url));
  };
  return (
    <a href={url} onClick={open} title={url} rel="noreferrer">
      {children}
    </a>
  );
}

const TOP = 5;

/** What a web call asked and found: the query and the top results, or the page read. */
export function WebSummary({ call }: { call: ToolCallRecord }) {
  const { t } = useLingui();
  const text = call.output && !call.output.is_error ? call.output.text : "";
  if (call.tool === "search_web") {
    const results = searchResults(text);
    const query = stringArg(call, "query");
    const count = formatNumber(results.length);
    return (
      <div className="web-summary" aria-label={t`Web search summary`}>
        <p>
          {!call.output || call.output.is_error
            ? t`Searched for “${query}”`
            : results.length === 0
              ? t`Searched for “${query}” · no results`
              : t`Searched for “${query}” · ${count} results`}
        </p>
        {results.length > 0 && (
          <ol>
            {results.slice(0, TOP).map((r) => (
              <li key={r.url}>
                <BrowserLink url={r.url}>{r.title}</BrowserLink>
              </li>
            ))}
          </ol>
        )}
      </div>
    );
  }
  const asked = stringArg(call, "url");
  const { title, url } = pageHeading(text);
  const shown = url ?? (HTTP.test(asked) ? asked : null);
  const page = shown ? <BrowserLink url={shown}>{title ?? shown}</BrowserLink> : <span>{asked}</span>;
  return (
    <div className="web-summary" aria-label={t`Page read summary`}>
      <p>{text ? <Trans comment="a web page read: its link follows">Read {page}</Trans> : <Trans comment="a web page being read: its link follows">Reading {page}</Trans>}</p>
    </div>
  );
}
