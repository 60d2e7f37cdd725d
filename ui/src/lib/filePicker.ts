// The composer's `@` picker: the `@query` at the cursor, and the search for it streamed from
// the engine (a new query cancels the old search there; closing the picker cancels it too).
import { useEffect, useState } from "react";
import { Channel } from "@tauri-apps/api/core";
import type { Hit, SearchUpdate } from "../bindings";
import { call, commands, errorMessage } from "../ipc";

/** The `@query` that ends at the cursor: an `@` at the start or after whitespace, then no
 * whitespace up to the cursor. `start` is where the `@` is. */
export function atQuery(text: string, caret: number): { start: number; query: string } | null {
  const before = text.slice(0, caret);
  const at = before.lastIndexOf("@");
  if (at < 0 || (at > 0 && !/\s/.test(before[at - 1]))) return null;
  const query = before.slice(at + 1);
  return /\s/.test(query) ? null : { start: at, query };
}

/** `text` without the `@query` from `start` to `caret`; the cursor goes where the `@` was. */
export function removeQuery(text: string, start: number, caret: number): { value: string; caret: number } {
  let rest = text.slice(caret);
  // "see @foo bar" becomes "see bar", not "see  bar".
  if (/\s$/.test(text.slice(0, start)) && /^\s/.test(rest)) rest = rest.slice(1);
  return { value: text.slice(0, start) + rest, caret: start };
}

/** The last part of a path, whichever separator it uses. */
export function fileName(path: string): string {
  const parts = path.split(/[\\/]/).filter(Boolean);
  return parts.at(-1) ?? path;
}

/** The folder part of a relative path ("" at the top). */
export function folderOf(path: string): string {
  const cut = Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\"));
  return cut > 0 ? path.slice(0, cut) : "";
}

export interface FileSearch {
  hits: Hit[];
  /** Files looked at so far. */
  visited: number;
  /** This query's walk is over. */
  done: boolean;
  /** The walk stopped at its cap. */
  capped: boolean;
  error: string | null;
}

interface Result extends FileSearch {
  query: string;
}

/** Searches while `query` is not null (the picker is open). Results of an older query stay on
 * screen until the new one's first arrive, so the list does not flicker while typing. */
export function useFileSearch(query: string | null, root: string | null = null): FileSearch {
  const [result, setResult] = useState<Result>({ query: "", hits: [], visited: 0, done: false, capped: false, error: null });
  const open = query !== null;

  useEffect(() => {
    if (query === null) return;
    let live = true;
    let over = false;
    const apply = (u: SearchUpdate) => {
      // Updates may arrive after the command's own return: never go back from a finished list.
      if (!live || over) return;
      over = u.done;
      setResult({ query, hits: u.hits, visited: u.visited, done: u.done, capped: u.capped, error: null });
    };
    const channel = new Channel<SearchUpdate>();
    channel.onmessage = apply;
    call(commands.filesSearch(query, root, channel)).then(apply, (e) => {
      if (live) setResult({ query, hits: [], visited: 0, done: true, capped: false, error: errorMessage(e) });
    });
    return () => {
      live = false;
    };
  }, [query, root]);

  // The picker closed (or the composer went away): the walk stops.
  useEffect(() => {
    if (!open) return;
    return () => {
      commands.filesCancel().catch(() => {});
    };
  }, [open]);

  const current = result.query === query;
  return { ...result, done: current && result.done, error: current ? result.error : null };
}
