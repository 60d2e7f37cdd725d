import { useEffect, useState } from "react";
import type { Conversation, SearchHit } from "../bindings";
import { SearchIcon } from "../components/Icons";
import { call, commands, errorMessage } from "../ipc";
import { highlight } from "../lib/highlight";
import { clockTime, groupByDay } from "../lib/time";
import { useDebounced } from "../lib/useDebounced";

const SEARCH_DELAY_MS = 200;

type Load<T> = { state: "loading" } | { state: "ready"; data: T } | { state: "error"; message: string };

export function HistoryPage() {
  const [query, setQuery] = useState("");
  const settled = useDebounced(query.trim(), SEARCH_DELAY_MS);
  const [list, setList] = useState<Load<Conversation[]>>({ state: "loading" });
  const [hits, setHits] = useState<Load<SearchHit[]> | null>(null);

  useEffect(() => {
    call(commands.historyList(500, 0)).then(
      (data) => setList({ state: "ready", data }),
      (e) => setList({ state: "error", message: errorMessage(e) }),
    );
  }, []);

  useEffect(() => {
    if (!settled) return;
    let current = true;
    call(commands.historySearch(settled, 50)).then(
      (data) => current && setHits({ state: "ready", data }),
      (e) => current && setHits({ state: "error", message: errorMessage(e) }),
    );
    return () => {
      current = false;
    };
  }, [settled]);

  const searching = settled.length > 0;
  return (
    <section className="history" aria-label="History">
      <label className="search">
        <SearchIcon />
        <input
          type="search"
          placeholder="Search every conversation"
          aria-label="Search history"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
      </label>
      {searching ? <SearchResults query={settled} hits={hits} /> : <ConversationList list={list} />}
    </section>
  );
}

function ConversationList({ list }: { list: Load<Conversation[]> }) {
  if (list.state === "loading") return <p className="muted center">Loading…</p>;
  if (list.state === "error") return <ErrorCard message={list.message} />;
  if (list.data.length === 0)
    return (
      <div className="empty-state">
        <h1>No conversations yet</h1>
        <p className="muted">Every chat is saved here, on this computer, and can be searched.</p>
      </div>
    );
  return (
    <div className="groups">
      {groupByDay(list.data, (c) => c.updated_at).map((group) => (
        <section key={group.label} aria-label={group.label}>
          <h2 className="group-label">{group.label}</h2>
          <ul className="rows">
            {group.items.map((c) => (
              <li key={c.id} className="row">
                <span className="row-title">{c.title || "Untitled"}</span>
                <span className="row-meta">
                  {c.message_count} msgs · {clockTime(c.updated_at)}
                </span>
              </li>
            ))}
          </ul>
        </section>
      ))}
    </div>
  );
}

function SearchResults({ query, hits }: { query: string; hits: Load<SearchHit[]> | null }) {
  if (!hits || hits.state === "loading") return <p className="muted center">Searching…</p>;
  if (hits.state === "error") return <ErrorCard message={hits.message} />;
  if (hits.data.length === 0) return <p className="muted center">Nothing matches “{query}”.</p>;
  return (
    <ul className="rows">
      {hits.data.map((h) => (
        <li key={h.message_id} className="row hit">
          <span className="row-title">{h.title || "Untitled"}</span>
          <span className="snippet">{highlight(h.snippet)}</span>
        </li>
      ))}
    </ul>
  );
}

function ErrorCard({ message }: { message: string }) {
  return (
    <div className="error-card" role="alert">
      <strong>History could not be loaded</strong>
      <p>{message}</p>
    </div>
  );
}
