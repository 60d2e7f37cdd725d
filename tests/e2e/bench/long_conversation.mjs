// Memory around a long conversation, in the real app: 200 messages (100 questions, each answer
// with a Rust code block and display math) written through `perch ask` against the fake Ollama,
// then PSS of the app's process tree idle on a new chat, with the conversation open (the newest
// messages rendered), with every message rendered, after leaving it for a new chat again, and
// after the window's next hide (the shell loads a grown page again 30 s into a hide) and show.
// The issue's target: back within 20 MiB of idle.
// Run by `make bench` (with the release app) or: PERCH_APP=... bench/run.sh long_conversation.mjs
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { CLI, freshDataDir, freshRuntimeDir, launch, perchWindows, sleep, startFakeLlm, waitFor } from "../lib/harness.js";
import { appLog, appPid, pageProcess, treePss } from "../lib/proc.js";

const QUESTIONS = Number(process.env.QUESTIONS ?? 100);
const SETTLE_MS = 10_000;
const mib = (kib) => (kib / 1024).toFixed(1);
const run = promisify(execFile);

function answer(i) {
  const code = Array.from({ length: 30 }, (_, l) => `    let v${l} = values.iter().map(|x| x * ${i + l}).sum::<i64>();`).join("\n");
  return [
    `Step ${i}: here is the function, then the bound it meets.\n\n`,
    "```rust\nfn total(values: &[i64]) -> i64 {\n",
    code,
    "\n    v0\n}\n```\n\n",
    `$$\\sum_{k=1}^{${i + 2}} k^2 = \\frac{n(n+1)(2n+1)}{6}, \\quad \\int_0^1 x^{${i}}\\,dx = \\frac{1}{${i + 1}}$$\n\n`,
    "Inline too: $e^{i\\pi} + 1 = 0$.",
  ].join("");
}

const fake = await startFakeLlm("ollama");
const dataDir = freshDataDir();
const env = { ...process.env, PERCH_DATA_DIR: dataDir, OLLAMA_HOST: fake.host, PERCH_KEY_STORE: "file" };
const model = "ollama:llama3.2:3b";
let id = null;
for (let i = 0; i < QUESTIONS; i++) {
  await fake.script({ steps: [{ type: "text", text: answer(i) }, { type: "finish" }], token_delay_ms: 0 });
  const more = id ? ["--conversation", id] : [];
  await run(CLI, ["ask", "--model", model, "--no-tools", ...more, `Question ${i}: sum the values.`], { env });
  if (!id) {
    const { stdout } = await run("sqlite3", ["-readonly", join(dataDir, "perch.db"), "SELECT id FROM conversations"]);
    id = stdout.trim();
  }
}

const runtime = freshRuntimeDir();
const session = await launch(dataDir, { OLLAMA_HOST: fake.host, PERCH_KEY_STORE: "file", XDG_RUNTIME_DIR: runtime });
const cliEnv = { ...env, PERCH_IPC_PATH: join(runtime, "perch", "review.sock") };
const browser = session.browser;
try {
  await (await browser.$('textarea[aria-label="Message"]')).waitForEnabled();
  await sleep(SETTLE_MS);
  const pid = appPid();
  const idle = treePss(pid);

  await browser.execute((conversation) => (window.location.hash = `#/chat/${conversation}`), id);
  // The page renders the newest messages (a window), then older ones on request.
  const rendered = () => browser.execute(() => [document.querySelectorAll("pre").length, document.querySelectorAll(".katex").length]);
  await waitFor(async () => (await rendered())[0] > 0 && (await browser.$("button.earlier").isExisting()), "the newest messages", 60_000);
  await sleep(SETTLE_MS);
  const open = treePss(pid);
  const windowShown = (await rendered())[0];

  // Scrolled back through all of it.
  while (await (await browser.$("button.earlier")).isExisting()) await (await browser.$("button.earlier")).click();
  await waitFor(async () => (await rendered()).every((n) => n >= QUESTIONS), "every answer rendered", 60_000);
  await sleep(SETTLE_MS);
  const all = treePss(pid);

  await (await browser.$('button[aria-label="New chat"]')).click();
  await waitFor(async () => (await rendered()).every((n) => n === 0), "the new chat");
  await sleep(SETTLE_MS);
  const closed = treePss(pid);

  // Hidden past the grown page's reload (the default settings), then shown again. WebDriver
  // does not follow the page into its new process, so from here on the processes tell.
  const grownPage = pageProcess(pid);
  await run(CLI, ["toggle"], { env: cliEnv });
  await waitFor(async () => (await perchWindows()).length === 0, "the window to hide");
  const reloaded = await waitFor(
    () => pageProcess(pid) !== null && pageProcess(pid) !== grownPage,
    "the grown page to be loaded again while hidden",
    90_000,
  ).then(
    () => true,
    () => false,
  );
  await sleep(SETTLE_MS);
  const hidden = treePss(pid);
  await run(CLI, ["show"], { env: cliEnv });
  await waitFor(async () => (await perchWindows()).length === 1, "the window to show");
  await sleep(SETTLE_MS);
  const shownAgain = treePss(pid);
  const grownBy = appLog(dataDir).match(/grown_mib=(\d+)/)?.[1];

  for (const [what, m] of [
    ["idle on a new chat", idle],
    [`with the ${QUESTIONS * 2}-message conversation open (${windowShown} answers rendered)`, open],
    [`with all ${QUESTIONS} answers rendered`, all],
    ["after leaving it for a new chat", closed],
    [`hidden, ${reloaded ? `the page loaded again (it had grown by ${grownBy} MiB)` : "the page NOT loaded again"}`, hidden],
    ["shown again", shownAgain],
  ]) {
    const parts = Object.entries(m.byName).map(([n, k]) => `${n} ${mib(k)}`).join(", ");
    console.log(`PSS ${what}: ${mib(m.total)} MiB (${parts})`);
  }
  console.log(`after closing: ${mib(closed.total - idle.total)} MiB above idle (target: within 20)`);
  console.log(`after closing, a hide and a show: ${mib(shownAgain.total - idle.total)} MiB above idle`);
} finally {
  // The WebDriver session ended with the first page; end the app as a logout would.
  await run("pkill", ["-TERM", "-f", "-x", `${process.env.PERCH_APP}( .*)?`]).catch(() => {});
  await session.close();
  fake.stop();
}
