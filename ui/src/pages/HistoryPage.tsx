import { useCallback, useEffect, useState } from "react";
import { useNavigate } from "react-router";
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
  const [notice, setNotice] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  const refresh = useCallback(() => setVersion((v) => v + 1), []);

  useEffect(() => {
    call(commands.historyList(500, 0)).then(
      (data) => setList({ state: "ready", data }),
      (e) => setList({ state: "error", message: errorMessage(e) }),
    );
  }, [version]);

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
      {notice && (
        <p className="muted small" role="status">
          {notice}
        </p>
      )}
      {searching ? (
        <SearchResults query={settled} hits={hits} />
      ) : (
        <ConversationList list={list} onChanged={refresh} onNotice={setNotice} />
      )}
    </section>
  );
}

function ConversationList(props: {
  list: Load<Conversation[]>;
  onChanged: () => void;
  onNotice: (message: string | null) => void;
}) {
  const { list, onChanged, onNotice } = props;
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
              <ConversationRow key={c.id} conversation={c} onChanged={onChanged} onNotice={onNotice} />
            ))}
          </ul>
        </section>
      ))}
    </div>
  );
}

function ConversationRow(props: { conversation: Conversation; onChanged: () => void; onNotice: (m: string | null) => void }) {
  const { conversation: c, onChanged, onNotice } = props;
  const navigate = useNavigate();
  const [renaming, setRenaming] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const run = async (action: Promise<unknown>, done?: string) => {
    try {
      await action;
      onNotice(done ?? null);
      onChanged();
    } catch (e) {
      onNotice(errorMessage(e));
    }
  };
  if (renaming !== null) {
    const save = () => {
      setRenaming(null);
      if (renaming.trim() && renaming !== c.title) void run(call(commands.historyRename(c.id, renaming)));
    };
    return (
      <li className="row">
        <input
          className="rename"
          aria-label="New title"
          autoFocus
          value={renaming}
          onChange={(e) => setRenaming(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter") save();
            if (e.key === "Escape") setRenaming(null);
          }}
          onBlur={save}
        />
      </li>
    );
  }
  return (
    <li className="row">
      <button type="button" className="row-open" onClick={() => navigate(`/chat/${c.id}`)}>
        <span className="row-title">{c.title || "Untitled"}</span>
        <span className="row-meta">
          {c.message_count} msgs · {clockTime(c.updated_at)}
        </span>
      </button>
      <span className="row-actions">
        {confirming ? (
          <>
            <button type="button" className="danger" onClick={() => void run(call(commands.historyDelete(c.id)), "Deleted.")}>
              Delete
            </button>
            <button type="button" onClick={() => setConfirming(false)}>
              Keep
            </button>
          </>
        ) : (
          <>
            <button type="button" aria-label={`Rename ${c.title}`} onClick={() => setRenaming(c.title)}>
              Rename
            </button>
            <button
              type="button"
              aria-label={`Export ${c.title}`}
              onClick={() =>
                void call(commands.conversationExport(c.id)).then(
                  (path) => onNotice(path ? `Saved as ${path}` : null),
                  (e) => onNotice(errorMessage(e)),
                )
              }
            >
              Export
            </button>
            <button type="button" aria-label={`Delete ${c.title}`} onClick={() => setConfirming(true)}>
              Delete
            </button>
          </>
        )}
      </span>
    </li>
  );
}

function SearchResults({ query, hits }: { query: string; hits: Load<SearchHit[]> | null }) {
  const navigate = useNavigate();
  if (!hits || hits.state === "loading") return <p className="muted center">Searching…</p>;
  if (hits.state === "error") return <ErrorCard message={hits.message} />;
  if (hits.data.length === 0) return <p className="muted center">Nothing matches “{query}”.</p>;
  return (
    <ul className="rows">
      {hits.data.map((h) => (
        <li key={h.message_id} className="row hit">
          <button type="button" className="row-open" onClick={() => navigate(`/chat/${h.conversation_id}`)}>
            <span className="row-title">{h.title || "Untitled"}</span>
            <span className="snippet">{highlight(h.snippet)}</span>
          </button>
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
