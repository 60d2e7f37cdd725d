// What a screen reader hears without looking: one polite live region for the whole window
// (`Announcer`), fed by `announce`. A streamed answer is told a finished sentence at a time,
// not every token (`useAnnouncedSentences`); tool calls, approvals and errors say themselves.
import { useEffect, useRef, useSyncExternalStore } from "react";

interface Said {
  id: number;
  text: string;
}

/** The last few announcements: new ones are added as their own nodes, so two in quick
 * succession are both read (replacing one text would drop the first). */
const KEEP = 4;
let said: Said[] = [];
let next = 0;
const listeners = new Set<() => void>();

export function announce(text: string) {
  const clean = text.replace(/\s+/g, " ").trim();
  if (!clean) return;
  said = [...said, { id: next++, text: clean }].slice(-KEEP);
  listeners.forEach((l) => l());
}

export function useAnnouncements(): Said[] {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => said,
  );
}

/** Markdown read aloud as words: no emphasis marks, code fences, heading marks or link targets. */
export function spoken(markdown: string): string {
  return markdown
    .replace(/```[^\n]*\n?/g, " ")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[*_`#>|~]+/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

/** Where the last finished sentence in `text` ends, looking from `from`: after `.`, `!`, `?`
 * or `…` followed by white space, or a line break. `from` when there is none yet. */
export function sentenceEnd(text: string, from: number): number {
  const re = /[.!?…](?=\s)|\n/g;
  re.lastIndex = from;
  let end = from;
  for (let m = re.exec(text); m; m = re.exec(text)) end = m.index + m[0].length;
  return end;
}

/**
 * Announces an answer a sentence at a time while `streamText` grows, then, once the stream has
 * ended (`streamText` null) and a new saved answer has arrived (`saved` is another message than
 * when the stream began), whatever of it was not said yet. A fast answer can be saved before
 * its stream is ever drawn: it is still read.
 */
export function useAnnouncedAnswer(streamText: string | null, saved: { id: number; text: string } | null) {
  const told = useRef(0);
  /** The saved answer's id when the stream began; undefined while no stream is being told. */
  const savedBefore = useRef<number | null | undefined>(undefined);
  const savedId = saved?.id ?? null;
  const savedText = saved?.text ?? "";
  useEffect(() => {
    if (streamText !== null) {
      if (savedBefore.current === undefined) {
        savedBefore.current = savedId;
        told.current = 0;
      }
      // A regenerated answer starts from its beginning.
      if (streamText.length < told.current) told.current = 0;
      const end = sentenceEnd(streamText, told.current);
      if (end > told.current) {
        announce(spoken(streamText.slice(told.current, end)));
        told.current = end;
      }
      return;
    }
    if (savedBefore.current === undefined || savedId === savedBefore.current) return;
    savedBefore.current = undefined;
    const rest = savedText.slice(told.current);
    if (rest.trim()) announce(spoken(rest));
    told.current = 0;
  }, [streamText, savedId, savedText]);
}
