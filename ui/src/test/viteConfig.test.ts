// @vitest-environment node
import { createServer, type ViteDevServer } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileURLToPath } from "node:url";

// The dev server (`make dev`), asked for xterm.js as the page asks for it: with a version query.
// The frozen-prototype rewrite once matched only the bare file name, so the first terminal
// command crashed the page under `make dev` while the built app was fine.
describe("the dev server's xterm.js", () => {
  let server: ViteDevServer;
  beforeAll(async () => {
    const root = fileURLToPath(new URL("../..", import.meta.url));
    server = await createServer({ root, configFile: `${root}/vite.config.ts`, server: { middlewareMode: true }, logLevel: "silent" });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("is rewritten with and without a version query", async () => {
    const file = fileURLToPath(new URL("../../../node_modules/@xterm/xterm/lib/xterm.mjs", import.meta.url));
    for (const url of [`/@fs${file}`, `/@fs${file}?v=1a2b3c4d`]) {
      const result = await server.transformRequest(url);
      expect(result?.code, url).toContain('"toString",{value:');
      expect(result?.code, url).not.toMatch(/\b[A-Za-z_$][\w$]*\.toString=[A-Za-z_$][\w$]*[;,]/);
    }
  }, 60_000);
});
