// A day in minutes (issue 45): one session of the real app driven through a working day's mix,
// interleaved as a day is: chat turns with long answers (thinking, code, math) from the fake
// model service, dictations into Perch and into another application's text field from a
// microphone that speaks in real time, screenshots whose chips are sent or discarded, hide and
// summon, trips to mini mode, tool calls and terminal commands with their approvals, MCP Apps
// opened and closed, Settings edits, history searches and exports. A sampler notes the app's
// whole process tree all along (PSS by process, descriptors, threads, children, zombies); after
// the day the window is hidden and left idle, and a last sample taken. The report goes to
// $E2E_ARTIFACTS/soak: soak.json, soak.md and soak.png (memory over the day above what was
// done when). Exits non-zero when an action fails; judging the growth is the report's reader's.
//
//   PERCH_APP=... bench/run.sh soak.mjs
// SOAK_SCALE (1: the counts, some 500 actions), SOAK_SAMPLE_MS (2000), SOAK_IDLE_MS
// (60000), SOAK_TOKEN_MS (the fake model's pause before each token, 2), SOAK_KINDS (a comma-
// separated subset of the kinds in lib/soak_day.js, for working on one).
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { ARTIFACTS, CLI, freshDataDir, freshRuntimeDir, geometry, launch, perchWindows, sleep, startFakeLlm, visibleWindows, waitFor, waitForGeometry, xdotool } from "../lib/harness.js";
import { pacedMicrophone } from "../lib/paced_microphone.js";
import { appLog, appPid } from "../lib/proc.js";
import { FULL_DAY, TOPICS, longAnswer, schedule, seeded } from "../lib/soak_day.js";
import { writeReport } from "../lib/soak_report.js";
import { startSampler } from "../lib/soak_sampler.js";
import { textField } from "../lib/text_field.js";
import { MODEL, chooseMicrophoneAndModel } from "../lib/voice.js";

const SCALE = Number(process.env.SOAK_SCALE ?? 1);
const SAMPLE_MS = Number(process.env.SOAK_SAMPLE_MS ?? 2000);
const IDLE_MS = Number(process.env.SOAK_IDLE_MS ?? 60_000);
const TOKEN_MS = Number(process.env.SOAK_TOKEN_MS ?? 2);
// The guard `make test` runs (memory, never time): the app process may grow at most this many
// MiB from the day's midpoint to its end, hidden and idle. Glibc's arenas kept 40-60 MiB of
// every dictation there before main.rs set the allocator's parameters.
const APP_GROWTH_MIB = process.env.SOAK_APP_GROWTH_MIB ? Number(process.env.SOAK_APP_GROWTH_MIB) : null;
const KINDS = process.env.SOAK_KINDS ? process.env.SOAK_KINDS.split(",").map((k) => k.trim()) : Object.keys(FULL_DAY);
// Some 4 s of speech at espeak-ng's 150 words a minute; tiny.en gets these words right.
const SENTENCE = "Please take a screenshot of my editor and explain the error.";
const HEARD = ["screenshot", "editor", "error"];
const OUT = join(ARTIFACTS, "soak");
const run = promisify(execFile);

for (const kind of KINDS) if (!(kind in FULL_DAY)) throw new Error(`SOAK_KINDS: no kind "${kind}" (kinds: ${Object.keys(FULL_DAY).join(", ")})`);
if (!existsSync(MODEL)) throw new Error(`${MODEL} is missing: run make deps`);

const random = seeded(7);
const day = schedule(SCALE, KINDS);
const tmp = mkdtempSync(join(tmpdir(), "perch-soak-"));
const work = mkdtempSync(join(tmpdir(), "perch-soak-work-"));
const exports = mkdtempSync(join(tmpdir(), "perch-soak-exports-"));
const VANILLA = new URL("../../../node_modules/@modelcontextprotocol/server-basic-vanillajs/dist/index.js", import.meta.url).pathname;

// A desktop behind the windows with detail in it, so captures weigh what a real screen's do.
await run("convert", ["-seed", "45", "-size", "1280x800", "plasma:fractal", join(tmp, "desktop.png")]);
await run("display", ["-window", "root", join(tmp, "desktop.png")]).catch(() => {});

const mic = pacedMicrophone(SENTENCE);
const fake = await startFakeLlm("ollama");
const dataDir = freshDataDir();
writeFileSync(join(dataDir, "mcp_servers.json"), JSON.stringify({ mcpServers: { clock: { command: process.execPath, args: [VANILLA, "--stdio"] } } }));
const runtime = freshRuntimeDir();
const cliEnv = { ...process.env, PERCH_IPC_PATH: join(runtime, "perch", "review.sock") };
const session = await launch(dataDir, { OLLAMA_HOST: fake.host, PERCH_KEY_STORE: "file", ALSA_CONFIG_PATH: mic.alsaConfig, XDG_RUNTIME_DIR: runtime });
const browser = session.browser;
const $ = (s) => browser.$(s);
const perch = (...args) => run(CLI, args, { env: cliEnv });

// ---- the user's moves, each waiting for what a person would see before the next ----

async function ensureShown() {
  if ((await perchWindows()).length > 0) return;
  await perch("show");
  await waitFor(async () => (await perchWindows()).length === 1, "the window to show");
}

async function ensureHidden() {
  if ((await perchWindows()).length === 0) return;
  // `toggle` hides the window when it is in front; `show` first puts it there.
  await perch("show");
  await perch("toggle");
  await waitFor(async () => (await perchWindows()).length === 0, "the window to hide");
}

async function openPage(name) {
  await ensureShown();
  await (await $(`a[aria-label="${name}"]`)).click();
}

async function ensureChat() {
  await ensureShown();
  if (!(await (await $('textarea[aria-label="Message"]')).isExisting())) await openPage("Chat");
  const box = await $('textarea[aria-label="Message"]');
  await box.waitForEnabled({ timeout: 15_000 });
  return box;
}

/** Empties the message box as a user does (WebDriver's clear fires no input event). */
async function emptyBox(box) {
  await box.click();
  await browser.keys(["Control", "a"]);
  await browser.keys("Backspace");
  await waitFor(async () => (await box.getValue()) === "", "the message box to be empty");
}

/** The newest answer's text once it is saved (no longer streaming), else null. */
const savedAnswer = () =>
  browser.execute(() => {
    const answers = document.querySelectorAll(".message.assistant");
    const last = answers[answers.length - 1];
    return last && !last.hasAttribute("aria-busy") && !document.querySelector('button[aria-label="Stop"]') ? last.textContent : null;
  });

async function answerSaved(marker, timeoutMs = 60_000) {
  await waitFor(async () => (await savedAnswer())?.includes(marker), `the answer ending "${marker}"`, timeoutMs);
}

/** Sends `question` (or what the box holds) with the fake model's `script` queued for it. */
async function ask(question, script) {
  const box = await ensureChat();
  if (script) await fake.script(script);
  if (question !== null) await box.setValue(question);
  await browser.keys("Enter");
}

let chatTurns = 0;
/** Dictations whose text landed with other words than the sentence's. */
const misheard = [];
let topicsUsed = 0;

async function newChat() {
  await ensureChat();
  await (await $('button[aria-label="New chat"]')).click();
  await waitFor(async () => (await browser.$$(".message")).length === 0, "an empty chat");
}

/** Allows the pending tool call once, on its card (looked up afresh: the card re-renders). */
async function allowOnce(within = "") {
  await waitFor(async () => {
    const group = await $(`${within} [aria-label="Approve this tool call"]`);
    if (!(await group.isExisting())) return false;
    const button = await group.$("button=Allow once");
    if (!(await button.isExisting()) || !(await button.isEnabled())) return false;
    await button.click();
    return true;
  }, "the approval", 30_000);
}

const actions = {
  async chat({ n }) {
    // A conversation runs some eight turns; then a new one, as the day's subjects change.
    if (chatTurns > 0 && chatTurns % 8 === 0) await newChat();
    const topic = TOPICS[topicsUsed++ % TOPICS.length];
    const { script, marker } = longAnswer(n, topic, TOKEN_MS);
    await ask(`Question ${n}: what should I know about the ${topic} case?`, script);
    await answerSaved(marker, 120_000);
    chatTurns += 1;
    return `${topic}, ${script.steps.length} tokens${script.steps[0].type === "thinking" ? ", thinking" : ""}`;
  },

  async "dictation (Perch)"({ n }) {
    const box = await ensureChat();
    await emptyBox(box);
    await (await $('button[aria-label="Dictate"]')).click();
    const stop = await $('button[aria-label="Stop dictation"]');
    await stop.waitForDisplayed({ timeout: 15_000 });
    // The microphone speaks in real time: stop once the whole sentence has been heard.
    await waitFor(async () => Number((await (await $(".mic-time")).getText()).replace("s", "")) >= mic.seconds + 0.4, "the sentence to be heard", 30_000);
    await stop.click();
    // The dictation is over (its final text landed) once the button is back.
    await (await $('button[aria-label="Dictate"]')).waitForDisplayed({ timeout: 60_000 });
    let heard = "";
    const understood = await waitFor(async () => {
      heard = await box.getValue();
      return HEARD.every((w) => heard.toLowerCase().includes(w));
    }, "the dictated words in the box", 3_000).then(() => true, () => false);
    if (!heard.trim()) throw new Error("the dictation ended with nothing in the box");
    // Text that landed but with other words is whisper tiny mishearing a sentence it was given
    // at another offset, not memory: noted, and the day goes on.
    if (!understood) {
      misheard.push(`dictation (Perch) ${n}: "${heard}"`);
      await emptyBox(box);
      return `misheard: ${heard}`;
    }
    // Every other dictation is sent as the question; the rest are thought better of.
    if (n % 2 === 0) {
      const marker = `(dictated ${n})`;
      await ask(null, { steps: [{ type: "text", text: `Here is what I see in your editor ${marker}` }, { type: "finish" }], token_delay_ms: TOKEN_MS });
      await answerSaved(marker);
      return `sent: ${heard}`;
    }
    await emptyBox(box);
    return `discarded: ${heard}`;
  },

  async "dictation (other app)"() {
    await ensureHidden();
    await field.setText("");
    await field.focus();
    await xdotool("keydown", "ctrl+alt+d");
    try {
      await waitFor(async () => (await visibleWindows("^Perch dictation$")).length > 0, "the dictation indicator");
      await sleep(mic.seconds * 1000 + 400);
    } finally {
      await xdotool("keyup", "ctrl+alt+d");
    }
    await waitFor(() => HEARD.every((w) => field.text.toLowerCase().includes(w)), () => `the words in the other app's field (has "${field.text}")`, 60_000);
    await waitFor(async () => (await visibleWindows("^Perch dictation$")).length === 0, "the indicator to go");
    const typed = field.text;
    // Back to Perch: a hide of the window much over 30 s may load its page in a new process,
    // which WebDriver cannot follow.
    await ensureShown();
    return typed;
  },

  async screenshot({ n }) {
    await ensureChat();
    const chips = async () => (await browser.$$(".capture-chip")).length;
    const before = await chips();
    await xdotool("key", "alt+period");
    await waitFor(async () => (await chips()) > before, "the capture's chip", 30_000);
    await waitFor(async () => (await perchWindows()).length === 1, "the window back after the capture");
    if (n % 2 === 0) {
      const marker = `(picture ${n})`;
      await ask(`What is wrong on my screen? (${n})`, { steps: [...longAnswer(n, "screen", TOKEN_MS).script.steps.slice(0, 120), { type: "text", text: ` ${marker}` }, { type: "finish" }], token_delay_ms: TOKEN_MS });
      await answerSaved(marker, 120_000);
      await waitFor(async () => (await chips()) === 0, "the chip to go with the question");
      return "sent with a question";
    }
    await (await $('.capture-chip button[aria-label^="Remove"]')).click();
    await waitFor(async () => (await chips()) === 0, "the chip to be removed");
    return "discarded";
  },

  async "hide/summon"() {
    await ensureHidden();
    const away = 300 + Math.floor(random() * 2700);
    await sleep(away);
    await perch("show");
    await waitFor(async () => (await perchWindows()).length === 1, "the window to show");
    await waitFor(() => browser.execute(() => document.visibilityState === "visible"), "the page to be visible");
    return `hidden ${away} ms`;
  },

  async "mini mode"() {
    await ensureShown();
    const normal = await geometry();
    await (await $('button[aria-label="Mini mode"]')).click();
    await waitForGeometry({ width: 52, height: 52 }, "mini mode");
    const stay = 500 + Math.floor(random() * 2500);
    await sleep(stay);
    await (await $('button[aria-label^="Open Perch"]')).click();
    await waitForGeometry({ x: normal.x, y: normal.y, width: normal.width, height: normal.height }, "the bounds restored");
    return `mini for ${stay} ms`;
  },

  async "tool call"({ n }) {
    const [a, b] = [n + 2, 3 * n + 1];
    await ask(`What is ${a} + ${b}?`, { steps: [{ type: "text", text: "Let me add. " }, { type: "tool_call", name: "demo__add", arguments: { a, b } }, { type: "finish" }] });
    await fake.script({ steps: [{ type: "text", text: `The sum is ${a + b}.` }, { type: "finish" }] });
    await allowOnce();
    await answerSaved(`The sum is ${a + b}.`);
    return `demo add(${a}, ${b})`;
  },

  async terminal({ n }) {
    const commands = ["ls -la", "seq 1 3000", "cat /etc/os-release", "find . -maxdepth 2 | head -50", "df -h .", "uname -a", "env | sort | head -40", "date; sleep 1; date"];
    const mark = `term-${n}done`;
    // The marker is printed from parts, so the command line the panel shows first lacks it.
    const command = `${commands[n % commands.length]}; printf 'term-%s\\n' ${n}done`;
    await ask(`Run this for me: ${commands[n % commands.length]}`, { steps: [{ type: "tool_call", name: "terminal__run_command", arguments: { command, reason: "as asked" } }, { type: "finish" }] });
    await fake.script({ steps: [{ type: "text", text: `Ran it (${mark}).` }, { type: "finish" }] });
    const approval = await $('[aria-label="Approve this command"]');
    await approval.waitForDisplayed({ timeout: 20_000 });
    // The first command asks for a working folder; none is assumed.
    const folder = '[aria-label="Approve this command"] form[aria-label="Working folder"]';
    if (await (await $(folder)).isExisting()) {
      await (await $(`${folder} input[aria-label="Folder for commands"]`)).setValue(work);
      const use = await $(`${folder} button[type="submit"]`);
      await use.waitForEnabled();
      await use.click();
      await waitFor(async () => (await approval.getProperty("textContent")).includes(`Commands will run in ${work}`), "the working folder on the card");
    }
    const runButton = await approval.$("button=Run");
    await runButton.waitForEnabled();
    await runButton.click();
    await waitFor(async () => (await (await $('[data-testid="terminal-screen"] .xterm-rows')).getText()).includes(mark), "the output in the panel", 30_000);
    await answerSaved(`(${mark})`);
    await (await $('button[aria-label="Close the terminal"]')).click();
    await waitFor(async () => !(await (await $('[data-testid="terminal-screen"]')).isExisting()), "the panel to close");
    return command;
  },

  async "MCP app"({ n }) {
    const marker = `(app ${n})`;
    await ask("What time is it on the server?", { steps: [{ type: "tool_call", name: "clock__get-time", arguments: {} }, { type: "finish" }] });
    await fake.script({ steps: [{ type: "text", text: `Here it is ${marker}` }, { type: "finish" }] });
    await allowOnce('section.tool-card[aria-label="Tool clock:get-time"]');
    const frame = await $('section.tool-card[aria-label="Tool clock:get-time"] .app-frame iframe');
    await frame.waitForExist({ timeout: 30_000 });
    await browser.switchFrame(frame);
    let shown = "";
    try {
      await waitFor(async () => /\d{4}-\d{2}-\d{2}T/.test((shown = await (await $("#server-time")).getText())), "the time in the app");
    } finally {
      await browser.switchFrame(null);
    }
    await answerSaved(marker);
    // Leaving the conversation closes its apps.
    await newChat();
    return `the clock's app showed ${shown}`;
  },

  async "settings edit"({ n }) {
    const edits = [
      ["theme dark", () => theme("Dark")],
      ["offer no tools with an image: toggled", toggleNoToolsWithImage],
      ["theme system", () => theme("System")],
      ["offer no tools with an image: toggled back", toggleNoToolsWithImage],
    ];
    const [what, edit] = edits[n % edits.length];
    await openPage("Settings");
    await edit();
    await openPage("Chat");
    return what;
  },

  async "history search"({ n }) {
    const word = TOPICS[n % Math.min(topicsUsed, TOPICS.length)];
    await openPage("History");
    const search = await $('input[aria-label="Search history"]');
    await search.setValue(word);
    const hit = await $(".row.hit .row-open");
    await hit.waitForDisplayed({ timeout: 15_000 });
    const hits = (await browser.$$(".row.hit")).length;
    // Every other search goes on to resume what it found; chat turns then continue there.
    if (n % 2 === 0) {
      await hit.click();
      await waitFor(async () => (await browser.$$(".message.assistant")).length > 0, "the found conversation to open");
      await ensureChat();
      return `"${word}": ${hits} hits, resumed the first`;
    }
    await openPage("Chat");
    return `"${word}": ${hits} hits`;
  },

  async "history export"({ n }) {
    await openPage("History");
    const row = await $("li.row");
    await row.waitForExist({ timeout: 15_000 });
    // The row's actions show under the pointer.
    await row.moveTo();
    await (await row.$('button[aria-label^="Export"]')).click();
    const file = join(exports, `export-${n}.md`);
    const dialog = await waitFor(async () => (await visibleWindows("^Save File$"))[0], "the save dialog", 30_000);
    await xdotool("windowactivate", "--sync", dialog);
    await xdotool("key", "--clearmodifiers", "ctrl+a");
    await xdotool("type", "--delay", "5", file);
    await xdotool("key", "Return");
    await waitFor(() => existsSync(file) && statSync(file).size > 0, `the export at ${file}`, 30_000);
    await waitFor(async () => (await (await $('[role="status"]')).getText()).includes("Saved as"), "the page to say it was saved");
    await openPage("Chat");
    return `${statSync(file).size} bytes`;
  },
};

async function theme(name) {
  await (await $('button[role="tab"]=General')).click();
  const option = await (await $('[role="radiogroup"][aria-label="Theme"]')).$(`label=${name}`);
  await option.click();
  await waitFor(async () => (await option.getAttribute("class"))?.includes("selected"), `the ${name} theme to be saved`);
}

async function toggleNoToolsWithImage() {
  await (await $('button[role="tab"]=Tools')).click();
  const box = await (await $("label*=Offer no tools when an image is attached")).$("input");
  const was = await box.isSelected();
  await box.click();
  // The box is drawn from the saved settings: it changes once the engine has saved the edit.
  await waitFor(async () => (await box.isSelected()) !== was, "the Tools edit to be saved");
}

// ---- set-up, as a user does it once: the microphone and model, the servers connected ----

let field;
let sampler;
let phase = "setup";
const log = [];
let t0;
let failed = null;
let exitCode = 0;
try {
  await ensureChat();
  await waitFor(async () => (await (await $('select[aria-label="Model"]')).getValue()) !== "", "a model");
  await chooseMicrophoneAndModel(browser);
  await waitFor(async () => (await (await $("body")).getText()).includes("Active: Ctrl+Alt+D"), "the dictate-anywhere shortcut to be active");
  await (await $('button[role="tab"]=MCP')).click();
  for (const name of ["demo", "clock"]) {
    await waitFor(async () => (await (await $(`[data-testid="status-${name}"]`)).getText()) === "connected", `${name} to connect`, 60_000);
  }
  await openPage("Chat");
  field = await textField("Perch soak field");
  await ensureShown();
  await waitFor(() => appLog(dataDir).includes("the page has settled after loading"), "start-up to settle", 30_000).catch(() => {});
  await sleep(3000);

  const pid = appPid();
  // The day's clock starts with its first sample.
  t0 = Date.now();
  sampler = startSampler(pid, SAMPLE_MS, t0, () => ({ phase, actions: log.length }));
  sampler.take({ phase: "start" });
  phase = "day";
  console.error(`soak: ${day.length} actions (SOAK_SCALE ${SCALE}); report to ${OUT}`);
  for (const [i, action] of day.entries()) {
    const began = Date.now();
    try {
      const detail = await actions[action.kind](action);
      log.push({ t: Date.now() - t0, kind: action.kind, detail, ms: Date.now() - began, ok: true });
    } catch (e) {
      log.push({ t: Date.now() - t0, kind: action.kind, detail: e.message.split("\n")[0], ms: Date.now() - began, ok: false });
      failed = { action: i, kind: action.kind, error: e };
      await run("import", ["-window", "root", join(ARTIFACTS, `soak-failed-${i}.png`)]).catch(() => {});
      break;
    }
    if ((i + 1) % 10 === 0) console.error(`soak: ${i + 1}/${day.length} actions, ${((Date.now() - t0) / 60_000).toFixed(1)} min`);
  }

  // The day over: the window hidden and left alone, then the last sample.
  phase = "idle";
  await ensureHidden();
  await sleep(IDLE_MS);
  sampler.take({ phase: "final" });
  sampler.stop();
} catch (e) {
  failed ??= { action: null, kind: phase, error: e };
} finally {
  sampler?.stop();
  field?.close();
  if (sampler && sampler.samples.length) {
    const reloads = (appLog(dataDir).match(/grown_mib=\d+/g) ?? []).join(", ");
    const notes = [
      reloads ? `The page was loaded again in a new process while hidden (${reloads}).` : "The page was never loaded again while hidden.",
      misheard.length ? `Heard with other words (the text landed): ${misheard.join("; ")}.` : null,
      failed ? `FAILED at action ${failed.action} (${failed.kind}): ${failed.error.message.split("\n")[0]}` : null,
    ].filter(Boolean);
    const lines = await writeReport(OUT, {
      samples: sampler.samples,
      actions: log,
      meta: { scale: SCALE, app: process.env.PERCH_APP, sampleMs: SAMPLE_MS, idleMs: IDLE_MS, tokenMs: TOKEN_MS, sentence: SENTENCE, notes },
    });
    for (const line of [...lines, ...notes]) console.log(line);
    if (APP_GROWTH_MIB !== null && !failed) {
      const app = (sample) => (sample.pssByName["perch-desktop"] ?? 0) / 1024;
      const midpoint = sampler.samples.find((sample) => sample.actions >= day.length / 2);
      const grown = app(sampler.samples.at(-1)) - app(midpoint);
      const verdict = `the app grew ${grown.toFixed(1)} MiB from the day's midpoint (${app(midpoint).toFixed(1)} MiB) to its end (bound ${APP_GROWTH_MIB})`;
      console.log(verdict);
      if (grown > APP_GROWTH_MIB) failed = { action: null, kind: "memory", error: new Error(verdict) };
    }
  }
  // A page loaded again while hidden left WebDriver without its session: end the app by its
  // pid, as a logout would, rather than wait for the driver to.
  if (/grown_mib/.test(appLog(dataDir))) {
    try {
      process.kill(appPid(), "SIGTERM");
    } catch {
      // already gone
    }
  }
  await session.close();
  fake.stop();
  await mic.stop();
  if (failed) {
    console.error(`soak: ${failed.kind} failed: ${failed.error.stack ?? failed.error}`);
    exitCode = 1;
  }
}
process.exit(exitCode);
