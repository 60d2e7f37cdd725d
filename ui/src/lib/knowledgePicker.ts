// The composer's `#` picker: the `#words` at the cursor, and the passages of the knowledge
// folders that answer them (the same search as the model's `search_knowledge`).
import { useEffect, useState } from "react";
import type { FileInput, FoundPassage } from "../bindings";
import { call, commands, errorMessage } from "../ipc";

/** Longer than this after the `#`, the words are a sentence being typed, not a search. */
const MOST_CHARS = 80;
/** Passages offered at once. */
const OFFERED = 8;
/** A search waits for a pause in the typing this long. */
const PAUSE_MS = 150;

/** The `#words` that end at the cursor: a `#` at the start or after whitespace, then a letter
 * right after it (so a Markdown heading's "# " and an issue's "#12" open nothing), and words up
 * to the cursor on the same line. `start` is where the `#` is. */
export function hashQuery(text: string, caret: number): { start: number; query: string } | null {
  const before = text.slice(0, caret);
  const line = before.slice(before.lastIndexOf("\n") + 1);
  for (let at = line.lastIndexOf("#"); at >= 0; at = at > 0 ? line.lastIndexOf("#", at - 1) : -1) {
    if (at > 0 && !/\s/.test(line[at - 1])) continue;
    const query = line.slice(at + 1);
    if (!/^\p{L}/u.test(query) || query.length > MOST_CHARS) return null;
    return { start: before.length - line.length + at, query };
  }
  return null;
}

/** A picked passage as the question carries it: its file and lines, read from the index. */
export function passageInput(p: FoundPassage): FileInput {
  return { path: p.path, first_lines: null, lines: [p.start, p.end] };
}

/** How a question's file shows while its answer is written, as the engine will name it once
 * saved: a passage by its lines (a PDF's by its page). */
export function fileInputName(f: FileInput): string {
  if (!f.lines) return f.path;
  const [start, end] = f.lines;
  // The engine's own name for it (what the saved question shows), not a sentence of the UI.
  // eslint-disable-next-line lingui/no-unlocalized-strings -- mirrors the stored attachment name
  if (/\.pdf$/i.test(f.path)) return `${f.path}, page ${start}`;
  return start === end ? `${f.path}:${start}` : `${f.path}:${start}-${end}`;
}

export interface PassageSearch {
  /** `null`: no folder is indexed, so there is nothing to offer (the picker stays closed). */
  passages: FoundPassage[] | null;
  done: boolean;
  error: string | null;
}

/** Searches while `query` is not null, after a pause in the typing. The last list stays on
 * screen until the next arrives, so it does not flicker. */
export function usePassageSearch(query: string | null): PassageSearch {
  const [result, setResult] = useState<PassageSearch & { query: string | null }>({ query: null, passages: null, done: false, error: null });
  useEffect(() => {
    if (query === null) return;
    let live = true;
    const timer = setTimeout(() => {
      call(commands.knowledgePick(query, OFFERED)).then(
        (passages) => live && setResult({ query, passages, done: true, error: null }),
        (e) => live && setResult({ query, passages: [], done: true, error: errorMessage(e) }),
      );
    }, PAUSE_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [query]);
  const current = result.query === query;
  return { passages: result.passages, done: current && result.done, error: current ? result.error : null };
}
