// Tools in the real app: the bundled demo MCP server shows as connected in Settings -> MCP,
// the fake Ollama asks for demo__add, the approval appears on the tool card in the chat, and
// once allowed the card shows the result and the answer streams on.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { freshDataDir, launch, screenshot, startFakeLlm, waitFor } from "../lib/harness.js";

describe("tools", () => {
  let fake;
  let session;
  const $ = (s) => session.browser.$(s);

  before(async () => {
    fake = await startFakeLlm("ollama");
    session = await launch(freshDataDir(), { OLLAMA_HOST: fake.host, PERCH_KEY_STORE: "file" });
  });
  after(async () => {
    await session?.close();
    fake?.stop();
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
});
