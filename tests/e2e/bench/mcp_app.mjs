// MCP Apps figures in the real app, with the official SDK's example server (server-basic-
// vanillajs: its get-time tool and its 218 KB single-file page):
// - from the tool's result reaching its card to the app's first paint in its frame: the first
//   `ui/notifications/size-changed` the app sends (the SDK sends it from a ResizeObserver once
//   the page has laid out), and, for reference, the frame's `load` event. The app starts once
//   the answer is saved; the fake model answers at once, so that wait is a few milliseconds.
// - memory: PSS over the app's whole process tree (WebKit's processes and the MCP servers
//   included) with no app, one app, four apps in one answer, then just after leaving the
//   conversation and 10 s later.
// Run by `make bench` (release app): PERCH_APP=.../release/perch-desktop bench/run.sh mcp_app.mjs
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { freshDataDir, launch, sleep, startFakeLlm, waitFor } from "../lib/harness.js";
import { appPid, treePss } from "../lib/proc.js";

const RUNS = Number(process.env.RUNS ?? 10);
const here = dirname(fileURLToPath(import.meta.url));
const VANILLA = join(here, "..", "..", "..", "node_modules", "@modelcontextprotocol", "server-basic-vanillajs", "dist", "index.js");
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mib = (root) => treePss(root).total / 1024;

const fake = await startFakeLlm("ollama");
const dataDir = freshDataDir();
writeFileSync(join(dataDir, "mcp_servers.json"), JSON.stringify({ mcpServers: { clock: { command: process.execPath, args: [VANILLA, "--stdio"] } } }));
const session = await launch(dataDir, { OLLAMA_HOST: fake.host, PERCH_KEY_STORE: "file" });
const $ = (s) => session.browser.$(s);
const $$ = (s) => session.browser.$$(s);
const pid = appPid();

try {
  await (await $('a[aria-label="Settings"]')).click();
  await (await $('button[role="tab"]=MCP')).click();
  await waitFor(async () => (await (await $('[data-testid="status-clock"]')).getText()) === "connected", "clock to connect", 30_000);
  await (await $('a[aria-label="Chat"]')).click();

  /** Asks for `n` get-time calls in one answer; the first question is answered "Always allow". */
  async function ask(n) {
    await fake.script({ steps: [...Array.from({ length: n }, () => ({ type: "tool_call", name: "clock__get-time", arguments: {} })), { type: "finish" }], token_delay_ms: 0 });
    await fake.script({ steps: [{ type: "text", text: "Here." }, { type: "finish" }], token_delay_ms: 0 });
    const box = await $('textarea[aria-label="Message"]');
    await box.waitForEnabled();
    await box.setValue("What time is it on the server?");
    await session.browser.keys("Enter");
  }

  async function newChat() {
    await (await $('textarea[aria-label="Message"]')).click();
    await session.browser.keys(["Control", "n"]);
    await waitFor(async () => (await $$("section.tool-card")).length === 0, "an empty chat");
  }

  // The page records, for the next card: when its status turns done, when its frame loads, and
  // the first size change its app sends.
  const watch = () =>
    session.browser.execute(() => {
      const marks = (window.__appMarks = { done: null, load: null, size: null });
      const seen = new WeakSet();
      const look = () => {
        const status = document.querySelector('section.tool-card .tool-status[data-status="done"]');
        if (status && marks.done === null) marks.done = performance.now();
        const frame = document.querySelector(".app-frame iframe");
        if (frame && !seen.has(frame)) {
          seen.add(frame);
          frame.addEventListener("load", () => (marks.load ??= performance.now()));
        }
      };
      new MutationObserver(look).observe(document.body, { subtree: true, childList: true, attributes: true });
      window.addEventListener("message", (e) => {
        if (e.origin === "null" && e.data?.method === "ui/notifications/size-changed") marks.size ??= performance.now();
      });
    });

  // The first question: approve for good, so later runs do not wait for a click.
  await ask(1);
  await waitFor(async () => {
    const group = await $('[aria-label="Approve this tool call"]');
    if (!(await group.isExisting())) return false;
    await (await group.$("button=Always allow")).click();
    return true;
  }, "the approval");
  await (await $(".app-frame iframe")).waitForExist({ timeout: 30_000 });

  const toSize = [];
  const toLoad = [];
  for (let i = 0; i < RUNS; i++) {
    await newChat();
    await watch();
    await ask(1);
    await waitFor(async () => (await session.browser.execute(() => window.__appMarks.size)) !== null, "the app's first paint", 30_000);
    const marks = await session.browser.execute(() => window.__appMarks);
    toSize.push(marks.size - marks.done);
    toLoad.push(marks.load - marks.done);
  }

  await newChat();
  await sleep(3000);
  const none = mib(pid);
  await ask(1);
  await (await $(".app-frame iframe")).waitForExist({ timeout: 30_000 });
  await sleep(3000);
  const one = mib(pid);
  await newChat();
  await ask(4);
  await waitFor(async () => (await $$(".app-frame iframe")).length === 4, "four apps", 30_000);
  await sleep(3000);
  const four = mib(pid);
  await newChat();
  const leftNow = mib(pid);
  await sleep(10_000);
  const leftLater = mib(pid);

  const f = (x) => x.toFixed(1);
  console.log(`MCP app, tool result to the app's first paint (first size-changed), median of ${RUNS}: ${f(median(toSize))} ms (${f(Math.min(...toSize))}-${f(Math.max(...toSize))})`);
  console.log(`MCP app, tool result to its frame's load event, median of ${RUNS}: ${f(median(toLoad))} ms (${f(Math.min(...toLoad))}-${f(Math.max(...toLoad))})`);
  console.log(`MCP app memory (PSS, app tree): no app ${f(none)} MiB; one app ${f(one)} (+${f(one - none)}); four apps ${f(four)} (+${f((four - none) / 4)} each); conversation left: at once ${f(leftNow)}, after 10 s ${f(leftLater)}`);
} finally {
  await session.close();
  fake.stop();
}
