// @vitest-environment node
// The catalogues against the source: every message the UI's code has is in every locale,
// translated, with the same placeholders and valid ICU; none is kept that the code no longer
// has. (Run `npm run extract -w ui` after changing the UI's words, then translate what is new.)
import { describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";
import { getConfig } from "@lingui/conf";
import { getCatalogs } from "@lingui/cli/api";
import { parse, type Token } from "@messageformat/parser";
import { LOCALE_TAGS, SOURCE_LOCALE } from "./list";

const uiDir = fileURLToPath(new URL("../..", import.meta.url));

/** The argument names of an ICU message, and which of them are plurals or selects. */
function shape(message: string): string[] {
  const names = new Set<string>();
  const walk = (tokens: Token[]) => {
    for (const token of tokens) {
      if (token.type === "argument") names.add(`{${token.arg}}`);
      else if (token.type === "plural" || token.type === "select" || token.type === "selectordinal") {
        names.add(`{${token.arg}, ${token.type}}`);
        for (const c of token.cases) walk(c.tokens);
      }
    }
  };
  walk(parse(message));
  return [...names].sort();
}

/** Tags such as `<0>` … `</0>` that `<Trans>` puts around elements. */
function tags(message: string): string[] {
  return (message.match(/<\/?\d+\/?>/g) ?? []).sort();
}

describe("message catalogues", async () => {
  const config = getConfig({ cwd: uiDir, skipValidation: true });
  const [catalog] = await getCatalogs(config);
  const extracted = (await catalog.collect())!;
  const source = new Map(Object.entries(extracted).map(([id, m]) => [id, m.message ?? id]));
  const all = await catalog.readAll();

  it("has messages at all (the extractor found the UI's words)", () => {
    expect(source.size).toBeGreaterThan(500);
  });

  it.each(LOCALE_TAGS)("%s has exactly the source's messages", (locale) => {
    const live = Object.entries(all[locale] ?? {}).filter(([, m]) => !m.obsolete).map(([id]) => id);
    const missing = [...source.keys()].filter((id) => !live.includes(id)).map((id) => source.get(id));
    const unused = live.filter((id) => !source.has(id)).map((id) => all[locale][id].message);
    expect({ missing, unused }, `run \`npm run extract -w ui\`, then translate`).toEqual({ missing: [], unused: [] });
  });

  it.each(LOCALE_TAGS.filter((l) => l !== SOURCE_LOCALE))("%s translates every message, keeping its placeholders", (locale) => {
    const problems: string[] = [];
    for (const [id, english] of source) {
      const translation = all[locale]?.[id]?.translation;
      if (!translation) {
        problems.push(`untranslated: ${english}`);
        continue;
      }
      try {
        if (shape(translation).join() !== shape(english).join()) problems.push(`placeholders differ: ${english} -> ${translation}`);
      } catch (e) {
        problems.push(`not valid ICU (${String(e)}): ${translation}`);
      }
      if (tags(translation).join() !== tags(english).join()) problems.push(`element tags differ: ${english} -> ${translation}`);
    }
    expect(problems).toEqual([]);
  });
});
