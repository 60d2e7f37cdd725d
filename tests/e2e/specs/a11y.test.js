// Accessibility in the real app: axe-core (WCAG 2.2 A and AA) run in the webview on every page
// and in the states a person meets (an answer with its thinking, a tool's approval card and its
// result, the terminal's card and panel, a screenshot chip, history, each Settings tab, a review,
// the keyboard sheet, mini mode), failing on any serious or critical
// violation; and one path through the app with the keyboard alone: ask, approve a tool, read
// the answer, open History, with no pointer.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { axeViolations } from "../lib/axe.js";
import { paintRoot } from "../lib/screen.js";
import {
  CLI,
  freshDataDir,
  freshRuntimeDir,
  launch,
  screenshot,
  startFakeLlm,
  waitFor,
  waitForGeometry,
} from "../lib/harness.js";

const run = promisify(execFile);
const SETTINGS_TABS = ["General", "Models", "Voice", "Tools", "Terminal", "Permissions", "MCP", "Connections", "Reviews", "Logs"];

describe("accessibility", () => {
  let fake;
  let session;
  let env;
  const $ = (s) => session.browser.$(s);
  const checked = [];
  /** Runs axe on the page as it is now; `state` names it in the failure. */
  const judge = async (state) => {
    const violations = await axeViolations(session.browser);
    checked.push(state);
    assert.deepEqual(violations, [], `${state}: ${violations.length} serious or critical violations`);
  };

  before(async () => {
    fake = await startFakeLlm("ollama");
    const runtime = freshRuntimeDir();
    env = { ...process.env, PERCH_IPC_PATH: join(runtime, "perch", "review.sock") };
    session = await launch(freshDataDir(), { OLLAMA_HOST: fake.host, PERCH_KEY_STORE: "file", XDG_RUNTIME_DIR: runtime });
  });
  after(async () => {
    await session?.close();
    fake?.stop();
  });

  it("has no serious violations on the empty chat", async () => {
    await (await $('textarea[aria-label="Message"]')).waitForEnabled();
    await judge("the empty chat");
  });

  it("has none with an answer and its thinking, open and closed", async () => {
    await fake.script({
      steps: [
        { type: "thinking", text: "The user wants a short list." },
        { type: "text", text: "Three things:\n\n1. **Water**\n2. `Light`\n3. [Soil](https://example.org)\n" },
        { type: "finish" },
      ],
    });
    await waitFor(
      async () => (await (await $('select[aria-label="Model"]')).getValue()) === "ollama:qwen3-vl:8b-instruct",
      "the default model",
    );
    await (await $('textarea[aria-label="Message"]')).setValue("What do plants need?");
    await session.browser.keys("Enter");
    await waitFor(
      async () => (await session.browser.$$(".message.assistant:not([aria-busy])")).length > 0,
      "the answer to be saved",
      20_000,
    );
    await judge("a chat with an answer");
    const thinking = await $(".thinking summary");
    assert.ok(await thinking.isExisting(), "the thinking section is there, folded");
    await thinking.click();
    // The answer's buttons fade in under the pointer: judged once they have.
    await session.browser.pause(300);
    await judge("a chat with the thinking open");
  });

  it("has none on a tool's approval card and on its result", async () => {
    await fake.script({
      steps: [{ type: "text", text: "Let me add. " }, { type: "tool_call", name: "demo__add", arguments: { a: 2, b: 3 } }, { type: "finish" }],
    });
    await fake.script({ steps: [{ type: "text", text: "The sum is 5." }, { type: "finish" }] });
    await (await $('textarea[aria-label="Message"]')).setValue("What is 2 + 3?");
    await session.browser.keys("Enter");
    await (await $('[aria-label="Approve this tool call"]')).waitForDisplayed({ timeout: 20_000 });
    await judge("a tool's approval card");
    await (await $("button=Allow once")).click();
    await waitFor(async () => (await (await $(".message.assistant:last-of-type")).getText()).includes("The sum is 5."), "the answer");
    await (await $("button=Show result")).click();
    await judge("a tool card with its result");
  });

  it("has none in History", async () => {
    await (await $('a[aria-label="History"]')).click();
    await waitFor(async () => (await session.browser.$$(".row")).length > 0, "the history list");
    await judge("History");
  });

  it("has none on any Settings tab", async () => {
    await (await $('a[aria-label="Settings"]')).click();
    for (const tab of SETTINGS_TABS) {
      await (await $(`button[role="tab"]=${tab}`)).click();
      await waitFor(async () => (await (await $(`button[role="tab"]=${tab}`)).getAttribute("aria-selected")) === "true", tab);
      // Each tab loads its data; the check judges what the person sees once it is there.
      await session.browser.pause(300);
      await judge(`Settings -> ${tab}`);
    }
  });

  it("has none on a review", async () => {
    const file = join(freshDataDir(), "review.md");
    writeFileSync(file, "# Review\n\nThe handler in [`src/auth.rs:12`][] leaks the token.\n\n```rust\nfn main() {}\n```\n");
    await run(CLI, ["review", "push", file], { env });
    await (await $(".review")).waitForDisplayed({ timeout: 10_000 });
    await judge("a review");
  });

  it("has none on the terminal's approval card and its panel", async () => {
    const work = freshDataDir();
    await fake.script({
      steps: [{ type: "tool_call", name: "terminal__run_command", arguments: { command: "echo one; echo two", reason: "to look" } }, { type: "finish" }],
    });
    await fake.script({ steps: [{ type: "text", text: "Done." }, { type: "finish" }] });
    await (await $('a[aria-label="Chat"]')).click();
    await (await $('textarea[aria-label="Message"]')).setValue("Run something");
    await session.browser.keys("Enter");
    // Looked up afresh at each step: the card re-renders as the question changes, and a handle
    // kept across that goes stale under a slow machine's timing.
    const approval = () => $('[aria-label="Approve this command"]');
    await (await approval()).waitForDisplayed({ timeout: 20_000 });
    await judge("the terminal's approval card, asking for a folder");
    const folder = 'form[aria-label="Working folder"]';
    await (await $(`${folder} input[aria-label="Folder for commands"]`)).setValue(work);
    // "Use" is enabled by React's next render of the typed value, not by the typing itself.
    const use = await $(`${folder} button[type="submit"]`);
    await use.waitForEnabled();
    await use.click();
    await waitFor(
      async () => (await (await approval()).getProperty("textContent")).includes(`Commands will run in ${work}`),
      "the folder",
    );
    await (await $("button=Run")).click();
    await (await $('[data-testid="terminal-screen"]')).waitForDisplayed({ timeout: 15_000 });
    await waitFor(async () => (await (await $(".message.assistant:last-of-type")).getText()).includes("Done."), "the answer");
    await judge("the terminal panel");
    await (await $('button[aria-label="Close the terminal"]')).click();
  });

  it("has none with a screenshot waiting as a chip", async () => {
    // Something on the screen to capture (an all-black capture is refused).
    await paintRoot(freshDataDir());
    await run(CLI, ["screenshot", "--mode", "fullscreen"], { env });
    await (await $('button[aria-label^="Remove"]')).waitForDisplayed({ timeout: 15_000 });
    await judge("a capture chip in the composer");
    await (await $('button[aria-label^="Remove"]')).click();
  });

  it("goes from a question to History with the keyboard alone", async () => {
    await fake.script({
      steps: [{ type: "text", text: "Adding now. " }, { type: "tool_call", name: "demo__add", arguments: { a: 20, b: 22 } }, { type: "finish" }],
    });
    await fake.script({ steps: [{ type: "text", text: "The total is 42. That is the answer." }, { type: "finish" }] });
    const active = () => session.browser.execute(() => document.activeElement?.getAttribute("aria-label") ?? document.activeElement?.textContent ?? "");
    const spoken = () => session.browser.execute(() => document.querySelector('.sr-only[role="status"]')?.textContent ?? "");
    // Ctrl+N: a new chat, its box focused.
    await session.browser.keys(["Control", "n"]);
    await waitFor(async () => (await active()) === "Message", "the message box focused");
    // A key at a time: WebKit's driver drops keys sent in one burst to a React textarea.
    for (const key of "What is 20 + 22?") await session.browser.keys(key);
    assert.equal(await (await $('textarea[aria-label="Message"]')).getValue(), "What is 20 + 22?");
    await session.browser.keys("Enter");
    // The approval takes the focus, but no button has it: Enter there approves nothing.
    await waitFor(async () => (await active()) === "Approve this tool call", "the approval focused", 20_000);
    assert.match(await spoken(), /Perch asks to run Add from demo/);
    await session.browser.keys("Enter");
    await session.browser.pause(300);
    assert.ok(await (await $('[aria-label="Approve this tool call"]')).isExisting(), "Enter on the group approved nothing");
    await session.browser.keys("Tab");
    assert.equal(await active(), "Allow once");
    await session.browser.keys("Enter");
    await waitFor(async () => /That is the answer\./.test(await spoken()), "the answer read out, a sentence at a time", 20_000).catch(
      async (e) => {
        throw new Error(`${e.message}; said: ${await spoken()}; page: ${await (await $("main")).getText()}`);
      },
    );
    assert.match(await spoken(), /The total is 42\./);
    // The keyboard sheet, and back.
    await session.browser.keys("?");
    const sheet = await $('[role="dialog"][aria-labelledby="shortcut-sheet-title"]');
    await sheet.waitForDisplayed();
    await screenshot("a11y-shortcut-sheet");
    const sheetText = await session.browser.execute(
      () => document.querySelector('[role="dialog"]')?.textContent ?? "",
    );
    assert.match(sheetText, /Ctrl\+NNew chat/);
    await judge("the keyboard sheet");
    await session.browser.keys("Escape");
    await sheet.waitForDisplayed({ reverse: true });
    // To History by Tab alone: the title bar's links come first.
    for (let i = 0; i < 40 && (await active()) !== "History"; i++) await session.browser.keys("Tab");
    assert.equal(await active(), "History");
    await session.browser.keys("Enter");
    const titles = () => session.browser.execute(() => [...document.querySelectorAll(".row-title")].map((t) => t.textContent).join(" | "));
    await waitFor(async () => /What is 20 \+ 22\?/.test(await titles()), "the conversation in History").catch(
      async (e) => {
        throw new Error(`${e.message}; at ${await session.browser.execute(() => location.hash)}: ${await titles()}`);
      },
    );
  });

  it("has none in the dark theme", async () => {
    // The theme's own colours: white on the dark accent (#8b8cf8) was 2.9:1 in the user's
    // bubbles, the selected tab and the primary buttons, where the light theme passed.
    const theme = async (name) => {
      await (await $('a[aria-label="Settings"]')).click();
      await (await $('button[role="tab"]=General')).click();
      await (await (await $('[role="radiogroup"][aria-label="Theme"]')).$(`label=${name}`)).click();
      const want = name === "Dark" ? "dark" : name === "Light" ? "light" : null;
      await waitFor(async () => (await session.browser.execute(() => document.documentElement.dataset.theme ?? null)) === want, `the ${name} theme`);
    };
    await theme("Dark");
    try {
      await judge("Settings -> General, dark");
      await (await $('a[aria-label="Chat"]')).click();
      await (await $('textarea[aria-label="Message"]')).waitForEnabled();
      // The last chat, with the user's bubbles and an answer's buttons shown.
      await (await $('a[aria-label="History"]')).click();
      await (await $(".row")).click();
      await (await $(".message.user .bubble")).waitForDisplayed();
      await (await $(".message.assistant:last-of-type")).moveTo();
      await screenshot("a11y-dark-chat");
      await judge("a chat, dark");
    } finally {
      await theme("System");
    }
  });

  it("has none in mini mode", async () => {
    await (await $('button[aria-label="Mini mode"]')).click();
    await waitForGeometry({ width: 52, height: 52 }, "mini mode");
    await judge("mini mode");
    await session.browser.keys(["Control", "Shift", "m"]);
    await waitFor(async () => (await (await $('a[aria-label="Chat"]')).isExisting()), "normal mode");
    await screenshot("a11y-checked");
    assert.ok(checked.length >= 23, `judged ${checked.length} states`);
  });
});
