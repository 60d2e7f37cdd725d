// The engine's side of the `@` picker for component tests: a small tree searched by subsequence
// (results streamed in two updates, as the walk does), and `files_attach` answering per file.
import type { Attachable, Hit, SearchUpdate } from "../bindings";
import { onCommand } from "./tauri";

export const ROOT = "/home/me/proj";

export const TREE: Hit[] = ["src/main.rs", "README.md", "logs/big.log", "docs/shot.png", "src/lib.rs"].map((relative, i) => ({
  path: `${ROOT}/${relative}`,
  relative,
  score: 100 - i,
}));

/** What `files_attach` says about each file of the tree. */
export function attachable(path: string, firstLines: number | null): Attachable {
  const name = path.slice(path.lastIndexOf("/") + 1);
  if (name === "big.log" && firstLines === null) {
    return { kind: "too_large", path, message: "big.log is 3.1 MB; a file may add at most 256 KB.", lines_that_fit: 2000 };
  }
  if (name === "shot.png") return { kind: "image", image: { name, mime: "image/png", base64: "iVBORw0K", capture: null } };
  return { kind: "text", path, name, bytes: 4800, tokens: name === "big.log" ? 9000 : 1200, first_lines: firstLines };
}

function matches(query: string, relative: string): boolean {
  let at = 0;
  for (const ch of query.toLowerCase()) {
    at = relative.toLowerCase().indexOf(ch, at);
    if (at < 0) return false;
    at += 1;
  }
  return true;
}

/** Answers the picker's commands. `gate`, when given, holds each search after its first update
 * until it resolves. */
export function filesBackend(gate?: () => Promise<void>) {
  onCommand("files_cancel", () => null);
  onCommand("files_search", async (args) => {
    const channel = args.onUpdate as { onmessage: (u: SearchUpdate) => void };
    const hits = TREE.filter((h) => matches(String(args.query), h.relative));
    channel.onmessage({ hits: hits.slice(0, 1), visited: 120, done: false, capped: false });
    await (gate ? gate() : Promise.resolve());
    const last: SearchUpdate = { hits, visited: 240, done: true, capped: false };
    channel.onmessage(last);
    return last;
  });
  onCommand("files_attach", (args) => attachable(String(args.path), (args.firstLines as number | null) ?? null));
}
