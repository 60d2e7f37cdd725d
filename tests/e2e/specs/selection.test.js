// Act on the selection, in the real app: text selected in another application (a GTK text
// field) comes into Perch as a chip when the selection shortcut is pressed; "Fix spelling and
// grammar" sends it to the model framed as content from that application; "Replace in ..." shows
// exactly what it will type (the answer's plain text), and types it over the selection in the
// field once confirmed. In a window Perch takes for a terminal nothing is typed: the answer goes
// to the clipboard, and Perch says so. With nothing selected the shortcut says so, and
// `perch selection` does what the shortcut does.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { after, before, describe, it } from "node:test";
import { CLI, freshDataDir, launch, perchWindows, screenshot, startFakeLlm, waitFor, xdotool } from "../lib/harness.js";
import { textField } from "../lib/text_field.js";

const WRONG = "their going too the park tomorow";
const RIGHT = "They are going to the park tomorrow.";
const ERROR = "make: *** [Makefile:3: all] Error 2";
const FIX = "Run these:\n\n```sh\nmake clean\nmake\n```\n";
/** The answer as plain text: what would be typed, and is copied instead. */
const PLAIN_FIX = "Run these:\n\nmake clean\nmake";

describe("act on the selection", () => {
  let fake;
  let session;
  let field;
  const $ = (s) => session.browser.$(s);
  const pageText = () => session.browser.execute(() => document.body.textContent);
  const hide = () => execFileSync(CLI, ["toggle"], { env: { ...process.env, PERCH_DATA_DIR: session.dataDir } });

  before(async () => {
    fake = await startFakeLlm("ollama");
    session = await launch(freshDataDir(), { OLLAMA_HOST: fake.host, PERCH_KEY_STORE: "file" });
    await (await $('textarea[aria-label="Message"]')).waitForEnabled();
    field = await textField("Perch test field");
  });
  after(async () => {
    field?.close();
    await session?.close();
    fake?.stop();
  });

  it("takes the selected text into Perch as a chip with the shortcut", async () => {
    hide();
    await waitFor(async () => (await perchWindows()).length === 0, "the window to hide");
    await field.setText(WRONG);
    await field.focus();
    field.selectAll();
    await new Promise((r) => setTimeout(r, 300));
    await xdotool("key", "ctrl+alt+e");
    await waitFor(async () => (await perchWindows()).length === 1, "Perch to come forward");
    const chip = await $(".selection-chip");
    await chip.waitForDisplayed({ timeout: 15_000 });
    const shown = await session.browser.execute(() => document.querySelector(".selection-chip").textContent);
    assert.match(shown, /Selected in Perch test field/);
    assert.ok(shown.includes(WRONG), shown);
    // Nothing left Perch yet.
    assert.equal((await fake.requests()).filter((r) => r.path === "/api/chat").length, 0);
    await screenshot("selection-chip");
  });

  it("fixes the grammar with a quick action and types the answer over the selection", async () => {
    await fake.script({ steps: [{ type: "text", text: RIGHT }, { type: "finish" }] });
    await (await $("button=Fix spelling and grammar")).click();
    await waitFor(async () => (await pageText()).includes(RIGHT), "the answer", 20_000);
    const sent = (await fake.requests()).filter((r) => r.path === "/api/chat").pop().body.messages;
    const asked = JSON.stringify(sent);
    assert.ok(asked.includes('<selection app=\\"Perch test field\\">'), "the selection is framed as another application's text");
    assert.ok(asked.includes("not instructions to follow"), asked);
    assert.ok(asked.includes(WRONG) && asked.includes("Fix the spelling and grammar"), asked);
    const replace = await $("button=Replace in Perch test field");
    await replace.waitForDisplayed({ timeout: 10_000 });
    await screenshot("selection-answer");
    await replace.click();
    // Nothing is typed before the user has seen exactly what will be.
    const preview = await $('[aria-label="What replaces the selection"]');
    await preview.waitForDisplayed({ timeout: 10_000 });
    assert.equal(await (await preview.$('[aria-label="Text to type"]')).getText(), RIGHT);
    assert.equal(field.text, WRONG, "nothing typed yet");
    await screenshot("selection-preview");
    await (await preview.$("button=Replace")).click();
    await waitFor(() => field.text === RIGHT, () => `the field to hold the answer (has "${field.text}")`);
  });

  it("types nothing into a terminal: the answer goes to the clipboard, and Perch says so", async () => {
    const terminal = await textField("Perch test terminal", "xterm");
    try {
      hide();
      await waitFor(async () => (await perchWindows()).length === 0, "the window to hide");
      await terminal.setText(ERROR);
      await terminal.focus();
      terminal.selectAll();
      await new Promise((r) => setTimeout(r, 300));
      await xdotool("key", "ctrl+alt+e");
      await waitFor(async () => (await perchWindows()).length === 1, "Perch to come forward");
      await (await $(".selection-chip")).waitForDisplayed({ timeout: 15_000 });
      await fake.script({ steps: [{ type: "text", text: FIX }, { type: "finish" }] });
      await (await $('textarea[aria-label="Message"]')).setValue("How do I fix this?");
      await session.browser.keys("Enter");
      const replace = await $("button=Replace in Perch test terminal");
      await replace.waitForDisplayed({ timeout: 20_000 });
      await replace.click();
      const preview = await $('[aria-label="What replaces the selection"]');
      await preview.waitForDisplayed({ timeout: 10_000 });
      assert.match(await (await preview.$('[role="note"]')).getText(), /Perch test terminal is a terminal, where typed text runs as commands/);
      assert.equal(await (await preview.$('[aria-label="Text to type"]')).getText(), PLAIN_FIX);
      assert.equal(await (await preview.$$("button=Replace")).length, 0, "no way to type it there");
      await screenshot("selection-terminal");
      await (await preview.$("button=Copy to the clipboard")).click();
      await waitFor(async () => (await pageText()).includes("paste it into Perch test terminal yourself with Ctrl+Shift+V"), "the message");
      assert.equal(await terminal.clipboard(), PLAIN_FIX);
      assert.equal(terminal.text, ERROR, "nothing typed into the terminal");
    } finally {
      terminal.close();
    }
  });

  it("says so when nothing is selected, and `perch selection` does what the shortcut does", async () => {
    await field.setText("nothing selected here");
    await field.focus();
    field.deselect();
    await new Promise((r) => setTimeout(r, 300));
    execFileSync(CLI, ["selection"], { env: { ...process.env, PERCH_DATA_DIR: session.dataDir } });
    await waitFor(async () => (await pageText()).includes("No text is selected in the focused application"), "the message");
    assert.equal(await (await $(".selection-chip")).isExisting(), false, "no chip");
    assert.equal(field.text, "nothing selected here", "the field is untouched");
  });
});
