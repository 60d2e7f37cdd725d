// Tools in the real app: the bundled demo MCP server shows as connected in Settings -> MCP,
// the fake Ollama asks for demo__add, the approval appears on the tool card in the chat, and
// once allowed the card shows the result and the answer streams on. The bundled web server
// searches a SearXNG stand-in on loopback, and its card shows the query and the top results as
// links that open in the system browser. A rule granted on a card survives a later Tools edit
// in Settings (read before the rule existed), and is revoked under Settings -> Permissions.
import assert from "node:assert/strict";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { freshDataDir, launch, screenshot, startFakeLlm, waitFor } from "../lib/harness.js";

// SearXNG's JSON answer to /search?q=...&format=json, in the shape the real service returns.
const SEARX_RESULTS = {
  query: "kestrel",
  number_of_results: 2,
  results: [
    { url: "https://birds.example.org/kestrel", title: "Kestrels hover in the wind", content: "How the kestrel hunts.", engine: "duckduckgo", score: 1.2 },
    { url: "https://wiki.example.org/Common_kestrel", title: "Common kestrel", content: "A bird of prey.", engine: "wikipedia", score: 0.9 },
  ],
  answers: [],
  suggestions: [],
};

describe("tools", () => {
  let fake;
  let session;
  const $ = (s) => session.browser.$(s);

  const searches = [];
  const searx = createServer((req, res) => {
    const url = new URL(req.url, "http://searx");
    searches.push(url.searchParams.get("q"));
    res.writeHead(url.pathname === "/search" && url.searchParams.get("format") === "json" ? 200 : 404, { "content-type": "application/json" });
    res.end(JSON.stringify(SEARX_RESULTS));
  });
  const tmp = freshDataDir();
  const browserLog = join(tmp, "browser-url.txt");

  before(async () => {
    fake = await startFakeLlm("ollama");
    await new Promise((resolve) => searx.listen(0, "127.0.0.1", resolve));
    // The user's server file changes only the web server's arguments (merged field by field).
    const dataDir = freshDataDir();
    const endpoint = `http://127.0.0.1:${searx.address().port}/`;
    writeFileSync(join(dataDir, "mcp_servers.json"), JSON.stringify({ mcpServers: { web: { args: ["--backend", "searxng", "--endpoint", endpoint] } } }));
    // The system browser's stand-in.
    mkdirSync(join(tmp, "bin"));
    writeFileSync(join(tmp, "bin", "xdg-open"), `#!/bin/sh\nprintf '%s' "$1" > '${browserLog}'\n`);
    chmodSync(join(tmp, "bin", "xdg-open"), 0o755);
    session = await launch(dataDir, { OLLAMA_HOST: fake.host, PERCH_KEY_STORE: "file", PATH: `${join(tmp, "bin")}:${process.env.PATH}` });
  });
  after(async () => {
    await session?.close();
    fake?.stop();
    searx.close();
  });

  it("lists the bundled servers as connected in Settings -> MCP", async () => {
    await (await $('a[aria-label="Settings"]')).click();
    await (await $('button[role="tab"]=MCP')).click();
    await waitFor(async () => (await (await $('[data-testid="status-demo"]')).getText()) === "connected", "the demo server to connect");
    const demo = await (await $('fieldset[aria-label="Server demo"]')).getText();
    assert.match(demo, /PID\s*\d+/);
    assert.match(demo, /Tools\s*2/);
    await screenshot("mcp-dashboard");
  });

  it("asks on the tool card, runs the tool once allowed, and shows its result", async () => {
    await fake.script({ steps: [{ type: "text", text: "Let me add. " }, { type: "tool_call", name: "demo__add", arguments: { a: 2, b: 3 } }, { type: "finish" }] });
    await fake.script({ steps: [{ type: "text", text: "The sum is 5." }, { type: "finish" }] });
    await (await $('a[aria-label="Chat"]')).click();
    const box = await $('textarea[aria-label="Message"]');
    await box.waitForEnabled();
    await waitFor(async () => (await (await $('select[aria-label="Model"]')).getValue()) === "ollama:qwen3-vl:8b-instruct", "the default model");
    await box.setValue("What is 2 + 3?");
    await session.browser.keys("Enter");

    const approval = await $('[aria-label="Approve this tool call"]');
    await approval.waitForDisplayed({ timeout: 20000 });
    assert.match(await approval.getText(), /Run add from demo with these arguments\?/);
    assert.match(await (await $(".tool-card .tool-args")).getText(), /"a": 2/);
    await screenshot("tool-approval");
    // Leaving the chat with the card waiting, and coming back: the card, the text before it and
    // Stop are all still there, and the turn goes on once answered.
    await (await $('a[aria-label="Settings"]')).click();
    await (await $('button[role="tab"]=General')).waitForDisplayed();
    await (await $('a[aria-label="Chat"]')).click();
    await (await $('[aria-label="Approve this tool call"]')).waitForDisplayed({ timeout: 10000 });
    assert.match(await (await $(".message.assistant:last-of-type")).getText(), /Let me add\./);
    assert.ok(await (await $('button[aria-label="Stop"]')).isExisting(), "Stop after coming back");
    await (await $("button=Allow once")).click();

    await waitFor(async () => (await (await $(".message.assistant")).getText()).includes("The sum is 5."), "the answer after the tool");
    await waitFor(async () => (await (await $(".tool-card .tool-status")).getText()).startsWith("done"), "the card to say done");
    await (await $("button=Show result")).click();
    assert.equal(await (await $(".tool-result pre")).getText(), "5");
    await screenshot("tool-result");

    const chats = (await fake.requests()).filter((r) => r.path === "/api/chat");
    assert.ok(chats[0].body.tools.some((t) => t.function.name === "demo__add"), "the model was offered the demo tools");
    assert.equal(chats[1].body.messages.find((m) => m.role === "tool").content, "5");
  });

  it("keeps a rule granted on a card when a Tools setting changes, and revokes it under Permissions", async () => {
    // Settings was read at start-up, before this rule existed: a form there must not save over it.
    await fake.script({ steps: [{ type: "tool_call", name: "demo__add", arguments: { a: 4, b: 4 } }, { type: "finish" }] });
    await fake.script({ steps: [{ type: "text", text: "It is 8." }, { type: "finish" }] });
    const box = await $('textarea[aria-label="Message"]');
    await box.setValue("What is 4 + 4?");
    await session.browser.keys("Enter");
    const approval = await $('[aria-label="Approve this tool call"]');
    await approval.waitForDisplayed({ timeout: 20000 });
    await (await $("button=Always allow")).click();
    await waitFor(async () => (await ((await session.browser.$$(".message.assistant")).at(-1)).getText()).includes("It is 8."), "the answer after the tool");

    await (await $('a[aria-label="Settings"]')).click();
    await (await $('button[role="tab"]=Tools')).click();
    // Any Tools setting will do; this one leaves the later steps' tools as they were.
    const withImages = await (await $("label*=Offer no tools when an image is attached")).$("input");
    assert.equal(await withImages.isSelected(), true, "on by default");
    await withImages.click();
    // The box is drawn from the saved settings: unticked once the engine has saved the edit.
    await waitFor(async () => !(await withImages.isSelected()), "the Tools edit to be saved");
    await (await $('button[role="tab"]=Permissions')).click();
    const rules = await $('ul[aria-label="Tool rules"]');
    await waitFor(async () => (await rules.getText()).includes("allow demo:add"), "the card's rule under Permissions");
    await screenshot("permissions");
    await (await rules.$('button[aria-label="Revoke allow demo:add"]')).click();
    await waitFor(async () => (await rules.getText()).includes("No rules"), "the rule to be revoked");
    // The checkbox's change was saved too, and survives the revoke.
    await (await $('button[role="tab"]=Tools')).click();
    assert.equal(await (await $("label*=Offer no tools when an image is attached")).$("input").isSelected(), false);
    await (await $('a[aria-label="Chat"]')).click();
  });

  it("shows a web search as its query and top results, with links to the system browser", async () => {
    await fake.script({ steps: [{ type: "tool_call", name: "web__search_web", arguments: { query: "kestrel" } }, { type: "finish" }] });
    await fake.script({ steps: [{ type: "text", text: "Kestrels hover while they hunt." }, { type: "finish" }] });
    const box = await $('textarea[aria-label="Message"]');
    await box.setValue("Search the web: how do kestrels hunt?");
    await session.browser.keys("Enter");

    const approval = await $('[aria-label="Approve this tool call"]');
    await approval.waitForDisplayed({ timeout: 20000 });
    assert.match(await approval.getText(), /Run search_web from web/);
    await (await $("button=Allow once")).click();

    // Read whole and afresh on each try (waitFor retries a throw): the card is redrawn as the call
    // runs, is answered and as the answer after it streams, and WebKit's driver fails ("stale
    // element") on a node React is just replacing, at the lookup as well as at a later read.
    const readSummary = async () => {
      const summary = await $('[aria-label="Web search summary"]');
      const text = await summary.getText();
      const titles = [];
      for (const link of await summary.$$("a")) titles.push(await link.getText());
      return { text, titles };
    };
    await waitFor(async () => (await readSummary()).text.includes("2 results"), "the search summary");
    // The turn's answer comes after the result; once it is in, nothing redraws the card.
    await waitFor(async () => (await ((await session.browser.$$(".message.assistant")).at(-1)).getText()).includes("Kestrels hover while they hunt."), "the answer after the search");
    const { text, titles } = await waitFor(readSummary, "the search summary, read whole");
    assert.match(text, /Searched for “kestrel”/);
    assert.deepEqual(titles, ["Kestrels hover in the wind", "Common kestrel"]);
    assert.deepEqual(searches, ["kestrel"], "the search went to the configured SearXNG");
    await screenshot("web-search-card");

    await (await $('[aria-label="Web search summary"] a')).click();
    await waitFor(async () => {
      try {
        return readFileSync(browserLog, "utf8") === "https://birds.example.org/kestrel";
      } catch {
        return false;
      }
    }, "the result to open in the system browser");
  });
});
