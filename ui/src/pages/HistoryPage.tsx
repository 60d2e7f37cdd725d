import { useCallback, useEffect, useState } from "react";
import { useNavigate } from "react-router";
import { plural } from "@lingui/core/macro";
import { Trans, useLingui } from "@lingui/react/macro";
import type { Conversation, SearchHit } from "../bindings";
import { ConfirmInPlace } from "../components/ConfirmInPlace";
import { SearchIcon } from "../components/Icons";
import { call, commands, errorMessage } from "../ipc";
import { highlight } from "../lib/highlight";
import { clockTime, groupByDay } from "../lib/time";
import { useDebounced } from "../lib/useDebounced";

const SEARCH_DELAY_MS = 200;

type Load<T> = { state: "loading" } | { state: "ready"; data: T } | { state: "error"; message: string };

export function HistoryPage() {
  const { t } = useLingui();
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
    <section className="history" aria-label={t`History`}>
      <label className="search">
        <SearchIcon />
        <input
          type="search"
          placeholder={t`Search every conversation`}
          aria-label={t`Search history`}
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
  if (list.state === "loading")
    return (
      <p className="muted center">
        <Trans>Loading…</Trans>
      </p>
    );
  if (list.state === "error") return <ErrorCard message={list.message} />;
  if (list.data.length === 0)
    return (
      <div className="empty-state">
        <h1>
          <Trans>No conversations yet</Trans>
        </h1>
        <p className="muted">
          <Trans>Every chat is saved here, on this computer, and can be searched.</Trans>
        </p>
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
  const { t } = useLingui();
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
          aria-label={t`New title`}
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
  const title = c.title;
  const count = c.message_count;
  const time = clockTime(c.updated_at);
  return (
    <li className="row">
      <button type="button" className="row-open" onClick={() => navigate(`/chat/${c.id}`)}>
        <span className="row-title">{c.title || t`Untitled`}</span>
        <span className="row-meta">
          {t({
            message: plural(count, { one: `# msg · ${time}`, other: `# msgs · ${time}` }),
            comment: "a conversation's number of messages, then the time of its last one",
          })}
        </span>
      </button>
      <span className="row-actions">
        {!confirming && (
          <>
            <button type="button" aria-label={t`Rename ${title}`} onClick={() => setRenaming(c.title)}>
              <Trans>Rename</Trans>
            </button>
            <button
              type="button"
              aria-label={t`Export ${title}`}
              onClick={() =>
                void call(commands.conversationExport(c.id)).then(
                  (path) => onNotice(path ? t`Saved as ${path}` : null),
                  (e) => onNotice(errorMessage(e)),
                )
              }
            >
              <Trans>Export</Trans>
            </button>
          </>
        )}
        <ConfirmInPlace
          asking={confirming}
          onAsk={() => setConfirming(true)}
          onConfirm={() => void run(call(commands.historyDelete(c.id)), t`Deleted.`)}
          onKeep={() => setConfirming(false)}
          action={<Trans>Delete</Trans>}
          actionLabel={t`Delete ${title}`}
          confirm={<Trans>Delete</Trans>}
        />
      </span>
    </li>
  );
}

function SearchResults({ query, hits }: { query: string; hits: Load<SearchHit[]> | null }) {
  const { t } = useLingui();
  const navigate = useNavigate();
  if (!hits || hits.state === "loading")
    return (
      <p className="muted center">
        <Trans>Searching…</Trans>
      </p>
    );
  if (hits.state === "error") return <ErrorCard message={hits.message} />;
  if (hits.data.length === 0)
    return (
      <p className="muted center">
        <Trans>Nothing matches “{query}”.</Trans>
      </p>
    );
  return (
    <ul className="rows">
      {hits.data.map((h) => (
        <li key={h.message_id} className="row hit">
          <button type="button" className="row-open" onClick={() => navigate(`/chat/${h.conversation_id}`)}>
            <span className="row-title">{h.title || t`Untitled`}</span>
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
      <strong>
        <Trans>History could not be loaded</Trans>
      </strong>
      <p>{message}</p>
    </div>
  );
}
