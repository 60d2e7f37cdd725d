// The layout guard, at the sizes users get: the default 450x450 (also with text at 200%), the
// minimum 320x360 and the 52x52 bubble. On every page and in the main states (a long model name in the picker, an
// answer streaming, an approval card waiting, each Settings tab, a voice error) every visible control is
// inside the window and not covered, no text is cut or spilling, and nothing scrolls sideways
// (lib/layout.js). A screenshot of each state is saved.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { freshDataDir, geometry, launch, screenshot, startFakeLlm, waitFor, waitForGeometry, xdotool } from "../lib/harness.js";
import { layoutProblems } from "../lib/layout.js";

const TABS = ["General", "Models", "Voice", "Tools", "Terminal", "Permissions", "MCP", "Connections", "Reviews", "Logs"];

describe("layout at the real window sizes", () => {
  let fake;
  let session;
  const $ = (s) => session.browser.$(s);

  // Every state's problems, asserted at the end of each step so one run names them all.
  let found = [];
  /** Checks the layout now, after a screenshot named for the state. */
  async function sound(state) {
    await screenshot(`layout-${state}`);
    for (const problem of await layoutProblems(session.browser)) found.push(`${state}: ${problem}`);
  }
  function assertSound() {
    const problems = found;
    found = [];
    assert.deepEqual(problems, [], `layout problems:\n  ${problems.join("\n  ")}`);
  }

  async function everyPage(size) {
    await (await $('a[aria-label="Chat"]')).click();
    await (await $('textarea[aria-label="Message"]')).waitForEnabled();
    // The default model's name is long (ollama:qwen3-vl:8b-instruct): it gives way, not Send.
    await waitFor(async () => (await (await $('select[aria-label="Model"]')).getValue()) === "ollama:qwen3-vl:8b-instruct", "the default model");
    await sound(`${size}-chat`);
    await (await $('a[aria-label="History"]')).click();
    await sound(`${size}-history`);
    await (await $('a[aria-label="Settings"]')).click();
    for (const tab of TABS) {
      const button = await $(`button[role="tab"]=${tab}`);
      await button.click();
      await waitFor(async () => (await button.getAttribute("aria-selected")) === "true", `the ${tab} tab`);
      await sound(`${size}-settings-${tab.toLowerCase()}`);
    }
    await (await $('a[aria-label="Chat"]')).click();
  }

  before(async () => {
    fake = await startFakeLlm("ollama");
    session = await launch(freshDataDir(), { OLLAMA_HOST: fake.host, PERCH_KEY_STORE: "file" });
    await waitForGeometry({ width: 450, height: 450 }, "the default size");
  });
  after(async () => {
    await session?.close();
    fake?.stop();
  });

  it("at 450x450: every page, an answer streaming and an approval card", async () => {
    await everyPage("450");

    const words = Array.from({ length: 60 }, (_, i) => ({ type: "text", text: `word${i} ` }));
    await fake.script({ steps: [...words, { type: "finish" }], token_delay_ms: 100 });
    const box = await $('textarea[aria-label="Message"]');
    await box.setValue("Tell me something long");
    await session.browser.keys("Enter");
    await (await $('button[aria-label="Stop"]')).waitForExist({ timeout: 20000 });
    await waitFor(async () => (await (await $(".message.assistant:last-of-type")).getText()).includes("word3"), "the answer to stream");
    await sound("450-streaming");
    await (await $('button[aria-label="Stop"]')).click();
    await waitFor(async () => !(await (await $('button[aria-label="Stop"]')).isExisting()), "the answer to stop");

    await fake.script({ steps: [{ type: "text", text: "Let me add. " }, { type: "tool_call", name: "demo__add", arguments: { a: 2, b: 3 } }, { type: "finish" }] });
    await fake.script({ steps: [{ type: "text", text: "The sum is 5." }, { type: "finish" }] });
    await box.setValue("What is 2 + 3?");
    await session.browser.keys("Enter");
    await (await $('[aria-label="Approve this tool call"]')).waitForDisplayed({ timeout: 20000 });
    await sound("450-approval");
    await (await $("button=Allow once")).click();
    await waitFor(async () => (await (await $(".message.assistant:last-of-type")).getText()).includes("The sum is 5."), "the answer after the tool");

    // One long unbroken line in a code block and a long address in the text: the code block
    // scrolls, nothing else does (the 200% pass below sees this chat again).
    const line = `const table = [${Array.from({ length: 40 }, (_, i) => `"entry${i}"`).join(",")}];`;
    const url = `https://example.com/${"very-long-path-segment/".repeat(12)}end`;
    await fake.script({ steps: [{ type: "text", text: `Here:\n\n\`\`\`js\n${line}\n\`\`\`\n\nSee ${url} for more.` }, { type: "finish" }] });
    await box.setValue("Show me the table");
    await session.browser.keys("Enter");
    await waitFor(async () => (await (await $(".message.assistant:last-of-type")).getText()).includes("for more."), "the answer with a long line");
    await (await $(".message.assistant:last-of-type")).moveTo();
    await sound("450-long-line");
    assertSound();
  });

  it("at 450x450: dictation that cannot start", async () => {
    // No whisper model in this data folder (and no sound card on this machine): dictating
    // says why in a note over the composer, with the command to fix it.
    await (await $('button[aria-label="Dictate"]')).click();
    const note = await $(".composer .composer-note.warn");
    await note.waitForDisplayed({ timeout: 15000 });
    assert.match(await note.getText(), /whisper model|No microphone found/);
    await sound("450-voice-error");
    assertSound();
  });

  it("at 450x450 with text at 200%: every page, an answer and the keyboard's sizes", async () => {
    // Ctrl+= steps the text size up to its largest (Settings shows it), Ctrl+0 sets it back.
    await (await $('a[aria-label="Chat"]')).click();
    for (let i = 0; i < 5; i += 1) await session.browser.keys(["Control", "="]);
    const scale = () => session.browser.execute(() => getComputedStyle(document.documentElement).getPropertyValue("--text-scale").trim());
    await waitFor(async () => (await scale()) === "2", "the text at 200%");
    try {
      await everyPage("450-text200");
      assertSound();
    } finally {
      await session.browser.keys(["Control", "0"]);
      await waitFor(async () => (await scale()) === "1", "the text back at 100%");
    }
  });

  it("at the minimum size, 320x360: every page", async () => {
    const { id } = await geometry();
    await xdotool("windowsize", id, "320", "360");
    await waitForGeometry({ width: 320, height: 360 }, "the minimum size");
    await everyPage("320");
    assertSound();
  });

  it("as the 52x52 bubble", async () => {
    await (await $('button[aria-label="Mini mode"]')).click();
    await waitForGeometry({ width: 52, height: 52 }, "the bubble");
    await (await $('button[aria-label^="Open Perch"]')).waitForExist();
    await sound("bubble");
    assertSound();
  });
});
