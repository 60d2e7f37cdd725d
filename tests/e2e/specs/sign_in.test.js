// Signing in to an MCP server in the real app: a Streamable HTTP server that needs OAuth
// (tests/oauth-mcp, the official TypeScript SDK's authorization server) shows "needs sign-in"
// with a Sign in button in Settings -> MCP; Sign in opens the authorization page in the system
// browser (here `$BROWSER`, a script that approves as a browser would: it loads the page and
// follows the redirect back to Perch's loopback), and the server's tools appear. Sign out
// revokes at the server and the card asks for a sign-in again.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { consentingBrowser, freshDataDir, launch, screenshot, waitFor } from "../lib/harness.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../..");

/** Starts the fixture and resolves with its first stdout line: `{ mcp, issuer }`. */
function startAuthServer() {
  const child = spawn(process.execPath, [join(ROOT, "tests/oauth-mcp/server.mjs")], { stdio: ["pipe", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    createInterface({ input: child.stdout }).once("line", (line) => resolve({ child, ...JSON.parse(line) }));
  });
}

describe("MCP sign-in", () => {
  let server;
  let session;
  const $ = (s) => session.browser.$(s);
  const tmp = freshDataDir();
  const opened = join(tmp, "opened.txt");

  before(async () => {
    server = await startAuthServer();
    const dataDir = freshDataDir();
    writeFileSync(join(dataDir, "mcp_servers.json"), JSON.stringify({ mcpServers: { notes: { type: "http", url: server.mcp } } }));
    session = await launch(dataDir, { PERCH_KEY_STORE: "file", BROWSER: consentingBrowser(tmp, opened) });
  });
  after(async () => {
    await session?.close();
    server?.child.kill();
  });

  it("shows Sign in where a server needs it, signs in through the browser, and the tools appear", async () => {
    await (await $('a[aria-label="Settings"]')).click();
    await (await $('button[role="tab"]=MCP')).click();
    await waitFor(async () => (await (await $('[data-testid="status-notes"]')).getText()) === "needs sign-in", "the server to ask for a sign-in");
    const card = await $('fieldset[aria-label="Server notes"]');
    assert.match(await card.getText(), /perch mcp login notes/);
    await card.scrollIntoView({ block: "end" });
    await screenshot("mcp-needs-sign-in");

    await (await card.$("button=Sign in")).click();
    await waitFor(async () => (await (await $('[data-testid="status-notes"]')).getText()) === "connected", "the server to connect after the sign-in", 30_000);
    const lines = readFileSync(opened, "utf8").trim().split("\n");
    assert.match(lines[0], /^http:\/\/127\.0\.0\.1:\d+\/authorize\?.*code_challenge_method=S256/);
    assert.equal(lines[1], "landed 200 true", "the browser landed on Perch's page saying the tab can be closed");
    const text = await (await $('fieldset[aria-label="Server notes"]')).getText();
    assert.match(text, /Tools\s*2/);
    assert.match(text, new RegExp(`Signed in with ${server.issuer.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}`));
    await (await $('fieldset[aria-label="Server notes"]')).scrollIntoView({ block: "end" });
    await screenshot("mcp-signed-in");
  });

  it("signs out: the server revokes the sign-in and the card asks again", async () => {
    const card = await $('fieldset[aria-label="Server notes"]');
    await (await card.$("button=Sign out")).click();
    await waitFor(async () => (await (await $('[data-testid="status-notes"]')).getText()) === "needs sign-in", "the server to need a sign-in again", 30_000);
    const state = await (await fetch(server.mcp.replace(/\/mcp$/, "/test/state"))).json();
    assert.equal(state.revocation_requests.length, 1);
    assert.equal(state.revocation_requests[0].status, 200);
    assert.ok(existsSync(opened));
  });
});
