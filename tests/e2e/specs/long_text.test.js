// The layout guard over long text in every list that shows some: a chat with one long unbroken
// code line and a long address, History with a conversation titled by an address, Settings ->
// Permissions with a long command, its folder and a conversation's folder, Settings -> MCP with
// servers whose address and command line are long (and their errors), and its catalogue open.
// Each is judged (lib/layout.js) at 450x450 with text at 100% and 200%, in the light and dark
// themes, in English, Japanese and Arabic: nothing scrolls sideways but code, every control is in
// reach, no text is cut. A screenshot of each state is saved.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { freshDataDir, launch, screenshot, startFakeLlm, waitFor, waitForGeometry } from "../lib/harness.js";
import { layoutProblems } from "../lib/layout.js";

const address = `https://example.com/${"very-long-path-segment/".repeat(12)}end`;
const codeLine = `const table = [${Array.from({ length: 40 }, (_, i) => `"entry${i}"`).join(",")}];`;
const deepFolder = `/home/user/projects/${"a-folder-with-a-long-name/".repeat(8)}src`;

describe("long lines in every list", () => {
  let fake;
  let session;
  let dataDir;
  const $ = (s) => session.browser.$(s);
  /** The text of the first element `selector` finds, read in the page ("" when there is none). */
  const textOf = (selector) => session.browser.execute((s) => document.querySelector(s)?.textContent ?? "", selector);

  let found = [];
  async function sound(state) {
    await screenshot(`long-${state}`);
    for (const problem of await layoutProblems(session.browser)) found.push(`${state}: ${problem}`);
  }
  function assertSound() {
    const problems = found;
    found = [];
    assert.deepEqual(problems, [], `layout problems:\n  ${problems.join("\n  ")}`);
  }

  const settingsTab = async (tab) => {
    await (await $('nav.tabs a[href="#/settings"]')).click();
    const button = await $(`#settings-tab-${tab}`);
    await button.click();
    await waitFor(async () => (await button.getAttribute("aria-selected")) === "true", `the ${tab} tab`);
  };
  const scale = () => session.browser.execute(() => getComputedStyle(document.documentElement).getPropertyValue("--text-scale").trim());

  /** Chooses the language, the theme and the text size, through Settings and the keyboard. */
  async function choose(lang, theme, text) {
    await settingsTab("General");
    await (await $('select:has(option[value="ar"])')).selectByAttribute("value", lang);
    await waitFor(async () => (await session.browser.execute(() => document.documentElement.lang)) === lang, `the page in ${lang}`);
    await (await $(`label:has(input[name="theme"][value="${theme}"])`)).click();
    await waitFor(async () => (await session.browser.execute(() => document.documentElement.dataset.theme ?? null)) === theme, `the ${theme} theme`);
    if (text === 2) for (let i = 0; i < 5; i += 1) await session.browser.keys(["Control", "="]);
    else await session.browser.keys(["Control", "0"]);
    await waitFor(async () => (await scale()) === String(text), `the text at ${text * 100}%`);
  }

  /** History, the long chat, Permissions, the MCP servers and the catalogue: each judged. */
  async function everyList(tag) {
    await (await $('nav.tabs a[href="#/history"]')).click();
    const row = await $(".row-open");
    await row.waitForDisplayed();
    await sound(`${tag}-history`);
    await row.click();
    await waitFor(async () => (await textOf(".message.assistant:last-of-type")).includes("example.com"), "the long chat");
    await (await $(".message.assistant:last-of-type")).moveTo();
    await sound(`${tag}-chat`);
    await settingsTab("Permissions");
    await waitFor(async () => (await textOf("main")).includes("a-folder-with-a-long-name"), "the long command under Permissions");
    await sound(`${tag}-permissions`);
    await settingsTab("MCP");
    await (await $('fieldset[aria-label*="remote-long"]')).waitForDisplayed({ timeout: 15_000 });
    await sound(`${tag}-mcp`);
    const summary = await $("details.catalog > summary");
    await summary.scrollIntoView({ block: "center" });
    await summary.click();
    await (await $("ul.catalog-list")).waitForDisplayed();
    await sound(`${tag}-catalogue`);
    await summary.click();
  }

  before(async () => {
    fake = await startFakeLlm("ollama");
    dataDir = freshDataDir();
    writeFileSync(
      join(dataDir, "mcp_servers.json"),
      JSON.stringify({
        mcpServers: {
          // No network here: its card shows the address and why it cannot be reached.
          "remote-long": { url: `https://mcp.example.com/${"segment-of-a-long-address/".repeat(10)}mcp` },
          // A program that is not there: its card shows the command line and the error.
          "local-long": { command: `/opt/tools/${"nested-folder/".repeat(12)}server`, args: ["--config", `${deepFolder}/config.json`] },
        },
      }),
    );
    session = await launch(dataDir, { OLLAMA_HOST: fake.host, PERCH_KEY_STORE: "file" });
    await waitForGeometry({ width: 450, height: 450 }, "the default size");

    // The chat: an address as the question (and so as its title in History), a long code line
    // and the address again in the answer.
    await fake.script({ steps: [{ type: "text", text: `Here:\n\n\`\`\`js\n${codeLine}\n\`\`\`\n\nSee ${address} for more.` }, { type: "finish" }] });
    const box = await $('textarea[aria-label="Message"]');
    await box.waitForEnabled();
    await box.setValue(`What is at ${address}?`);
    await session.browser.keys("Enter");
    await waitFor(async () => (await textOf(".message.assistant:last-of-type")).includes("for more."), "the answer with a long line");
    const id = await session.browser.execute(() => location.hash.replace(/^#\/chat\//, ""));
    assert.match(id, /^[0-9a-f-]{36}$/);
    // What Permissions lists, written to the app's store as "Always allow", "Allow in this chat"
    // and a chat's own folder would write it.
    execFileSync("sqlite3", [
      join(dataDir, "perch.db"),
      ".timeout 5000",
      `INSERT INTO terminal_approvals (hash, label, created_at) VALUES ('e2e-long', 'grep -rn "${"x".repeat(120)}" ./src, in ${deepFolder}', 1);` +
        `INSERT INTO tool_grants (conversation_id, server, tool, created_at) VALUES ('${id}', 'local-long', 'a_tool_with_a_rather_long_name_too', 1);` +
        `UPDATE conversations SET working_folder = '${deepFolder}' WHERE id = '${id}';`,
    ]);
  });
  after(async () => {
    await session?.close();
    fake?.stop();
  });

  for (const lang of ["en", "ja", "ar"]) {
    it(`in ${lang}: light and dark, text at 100% and 200%`, async () => {
      try {
        for (const theme of ["light", "dark"]) {
          for (const text of [1, 2]) {
            await choose(lang, theme, text);
            await everyList(`${lang}-${theme}-${text * 100}`);
          }
        }
      } finally {
        await session.browser.keys(["Control", "0"]);
      }
      assertSound();
    });
  }
});
