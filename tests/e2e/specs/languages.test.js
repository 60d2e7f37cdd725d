// Perch in another language, in the real window: it starts in the system's language (German
// here), dates come from Intl, and every page and Settings tab passes the layout guard at
// 450x450 with German's long words; then Arabic, chosen in Settings, mirrors the layout right to
// left while code and the model's English stay left to right; the choice outlives a restart.
// A tool card showing its app (MCP Apps, the official SDK's example clock) is judged in both.
// Screenshots of each state are saved.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { catalogue } from "../lib/catalogue.js";
import { freshDataDir, launch, screenshot, startFakeLlm, waitFor, waitForGeometry } from "../lib/harness.js";
import { layoutProblems } from "../lib/layout.js";
import { appLog } from "../lib/proc.js";

const VANILLA = new URL("../../../node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js", import.meta.url).pathname;

const TABS = ["General", "Models", "Voice", "Tools", "Memories", "Terminal", "Permissions", "MCP", "Connections", "Reviews", "Logs"];
const de = catalogue("de");
const ar = catalogue("ar");

describe("languages", () => {
  let fake;
  let session;
  let dataDir;
  const $ = (s) => session.browser.$(s);
  const page = () => session.browser.execute(() => ({ lang: document.documentElement.lang, dir: document.documentElement.dir }));
  const env = () => ({ OLLAMA_HOST: fake.host, PERCH_KEY_STORE: "file", LANG: "de_DE.UTF-8" });

  let found = [];
  async function sound(state) {
    await screenshot(`languages-${state}`);
    for (const problem of await layoutProblems(session.browser)) found.push(`${state}: ${problem}`);
  }
  function assertSound() {
    const problems = found;
    found = [];
    assert.deepEqual(problems, [], `layout problems:\n  ${problems.join("\n  ")}`);
  }

  /** Chat (with a question answered), History, then every Settings tab: each judged. */
  async function everyPage(tag, tr) {
    await (await $('nav.tabs a[href="#/history"]')).click();
    await sound(`${tag}-history`);
    await (await $('nav.tabs a[href="#/settings"]')).click();
    for (const tab of TABS) {
      const button = await $(`#settings-tab-${tab}`);
      await button.click();
      await waitFor(async () => (await button.getAttribute("aria-selected")) === "true", `the ${tab} tab`);
      await sound(`${tag}-settings-${tab.toLowerCase()}`);
    }
    assert.equal(await (await $("#settings-tab-General")).getText(), tr("General"));
  }

  /** Sends `question`; `answer` is the model's Markdown, `shown` what the page draws of it. */
  async function ask(question, answer, tr, shown = answer) {
    await fake.script({ steps: [{ type: "text", text: answer }, { type: "finish" }] });
    const box = await $(`textarea[aria-label="${tr("Message")}"]`);
    await box.waitForEnabled();
    await box.setValue(question);
    await session.browser.keys("Enter");
    await waitFor(
      async () => (await session.browser.execute(() => document.querySelector(".message.assistant:last-of-type")?.textContent ?? "")).includes(shown),
      "the answer",
      20_000,
    );
  }

  /** Has the model call the clock's tool, allows it, and waits for its app to show. */
  async function clockApp(tr) {
    await waitFor(() => /MCP server connected server="?clock/.test(appLog(dataDir)), "the clock server", 30_000);
    const cards = (await session.browser.$$("section.tool-card")).length + 1;
    await fake.script({ steps: [{ type: "tool_call", name: "clock__get-time", arguments: {} }, { type: "finish" }] });
    await fake.script({ steps: [{ type: "text", text: "Done." }, { type: "finish" }] });
    const box = await $(`textarea[aria-label="${tr("Message")}"]`);
    await box.waitForEnabled();
    await box.setValue("?");
    await session.browser.keys("Enter");
    await waitFor(async () => {
      // The newest card: the conversation may hold an earlier one.
      const all = await session.browser.$$("section.tool-card");
      const card = all[all.length - 1];
      if (!card) return false;
      const allow = await card.$(`button=${tr("Allow once")}`);
      if (!(await allow.isExisting())) return false;
      await allow.click();
      return true;
    }, "the approval", 20_000);
    await waitFor(async () => (await session.browser.$$("section.tool-card .app-frame iframe")).length >= cards, "the app's frame", 30_000);
    const frames = await session.browser.$$("section.tool-card .app-frame iframe");
    const frame = frames[frames.length - 1];
    // The app has drawn the server's time in place of "Loading...".
    await session.browser.switchFrame(frame);
    try {
      await waitFor(async () => /\d{4}-\d{2}-\d{2}T/.test(await (await $("#server-time")).getText()), "the app to show the time", 30_000);
    } finally {
      await session.browser.switchFrame(null);
    }
  }

  before(async () => {
    fake = await startFakeLlm("ollama");
    dataDir = freshDataDir();
    writeFileSync(join(dataDir, "mcp_servers.json"), JSON.stringify({ mcpServers: { clock: { command: process.execPath, args: [VANILLA, "--stdio"] } } }));
    session = await launch(dataDir, env());
    await waitForGeometry({ width: 450, height: 450 }, "the default size");
  });
  after(async () => {
    await session?.close();
    fake?.stop();
  });

  it("starts in the system's language, with its words and its dates", async () => {
    await waitFor(async () => (await page()).lang === "de", "the page to be in German");
    assert.equal((await page()).dir, "ltr");
    await ask("Wie viele Beine hat eine Spinne?", "Acht.", de);
    // The model was told the language too (the same locale the page started in).
    const system = (await fake.requests()).filter((r) => r.path === "/api/chat").pop().body.messages[0].content;
    assert.match(system, /The user's language is German \(DE\)/);
    await sound("de-chat");
    await clockApp(de);
    await sound("de-chat-app");

    await (await $('nav.tabs a[href="#/history"]')).click();
    const today = new Intl.RelativeTimeFormat("de", { numeric: "auto" }).format(0, "day");
    await waitFor(
      async () => (await session.browser.execute(() => document.body.textContent)).includes(today.charAt(0).toUpperCase() + today.slice(1)),
      `History's day heading "${today}" in German`,
    );
    await everyPage("de", de);
    assertSound();
  });

  it("switches to Arabic in Settings: right to left, mirrored, code and English still left to right", async () => {
    await (await $("#settings-tab-General")).click();
    const select = await $('select:has(option[value="ar"])');
    await select.selectByAttribute("value", "ar");
    await waitFor(async () => (await page()).dir === "rtl", "the page to turn right to left");
    assert.equal((await page()).lang, "ar");
    assert.equal(await (await $("#settings-tab-General")).getText(), ar("General"));
    await sound("ar-settings-general");

    await (await $('nav.tabs a[href^="#/chat/"]')).click();
    await ask("What is `ls -la`?", "It lists files: `ls -la /tmp`.", ar, "It lists files: ls -la /tmp.");
    const sides = await session.browser.execute(() => {
      const width = document.documentElement.clientWidth;
      const bubble = document.querySelector(".message.user .bubble").getBoundingClientRect();
      const code = document.querySelector(".message.assistant:last-of-type code");
      const answer = document.querySelector(".message.assistant:last-of-type .markdown p");
      return {
        bubbleLeft: bubble.left,
        bubbleRight: bubble.right,
        width,
        code: getComputedStyle(code).direction,
        // An English paragraph takes its own direction (unicode-bidi: plaintext): it starts at the left.
        answerStartsLeft: answer.getBoundingClientRect().left < 40,
      };
    });
    assert.ok(sides.bubbleLeft < 20 && sides.bubbleRight < sides.width - 40, `the question sits on the left: ${JSON.stringify(sides)}`);
    assert.equal(sides.code, "ltr");
    assert.ok(sides.answerStartsLeft, "the English answer reads left to right");
    await sound("ar-chat");
    await clockApp(ar);
    // A tool's arguments (JSON) and the terminal's `>_` are not language: left to right, unmirrored.
    const notLanguage = await session.browser.execute(() =>
      [...document.querySelectorAll(".tool-args, .terminal-toggle")].map((e) => `${e.className}: ${getComputedStyle(e).direction}`),
    );
    assert.ok(notLanguage.length > 0 && notLanguage.every((d) => d.endsWith(": ltr")), notLanguage.join(", "));
    await sound("ar-chat-app");
    await everyPage("ar", ar);
    assertSound();
  });

  it("keeps the chosen language after a restart, and can follow the system again", async () => {
    await session.close();
    session = await launch(dataDir, env());
    await waitFor(async () => (await page()).dir === "rtl", "Arabic again at start");
    await (await $('nav.tabs a[href="#/settings"]')).click();
    await (await $("#settings-tab-General")).click();
    await (await $('select:has(option[value="ar"])')).selectByAttribute("value", "");
    await waitFor(async () => (await page()).lang === "de", "back to the system's German");
    assert.equal((await page()).dir, "ltr");
  });
});
