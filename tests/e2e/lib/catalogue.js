// The UI's message catalogues (ui/src/locales/*.po), read so a spec can find a control by the
// words a locale really shows instead of repeating a translation.
import { readFileSync } from "node:fs";

const LOCALES = new URL("../../../ui/src/locales/", import.meta.url);

/** Reads a PO string (`"..."` lines joined, escapes undone). */
function unquote(lines) {
  return lines.map((l) => JSON.parse(l)).join("");
}

/** English source text -> the locale's text, for every message of `tag`'s catalogue. */
export function catalogue(tag) {
  const text = readFileSync(new URL(`${tag}.po`, LOCALES), "utf8");
  const messages = new Map();
  for (const entry of text.split(/\n\s*\n/)) {
    const id = entry.match(/^msgid ((?:".*"\n?)+)/m);
    const str = entry.match(/^msgstr ((?:".*"\n?)+)/m);
    if (!id || !str) continue;
    const source = unquote(id[1].trim().split("\n"));
    if (source) messages.set(source, unquote(str[1].trim().split("\n")));
  }
  return (english) => {
    const translated = messages.get(english);
    if (!translated) throw new Error(`${tag}.po has no translation of ${JSON.stringify(english)}`);
    return translated;
  };
}
