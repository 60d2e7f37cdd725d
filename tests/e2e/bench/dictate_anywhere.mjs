// Dictate-anywhere, in the real app: from letting go of Ctrl+Alt+D to the words in another
// application's text field (a GTK entry), for a 5 s utterance with whisper tiny.en, side by side
// with the seed's stack on the same speech and the same field: faster-whisper tiny.en and pynput
// (seed_dictate.py). The two take turns, one dictation each, so a busy moment of the machine
// falls on both; each side's first dictation is a warm-up (Perch loads its model there).
//
// Perch records through its own microphone code from the virtual microphone the voice specs use
// (tests/voice/virtual-microphone.sh: ALSA's `file` plugin). Each dictation opens the device
// again, and the plugin opens its infile again with it, so every dictation hears the utterance
// from its start. That device has no clock: it is read as fast as the app reads it, some 200
// times real time in a release build, so the 5 s utterance is recorded within the first few
// tens of milliseconds and silence follows. The key is therefore held only HOLD_MS once the
// indicator shows: long enough for the utterance, short of the 300 s recording limit (reached
// after a second and a half at that speed, when the dictation would end on its own). The final
// pass sees the utterance (the VAD cuts the silence off); no partial pass is in flight at the
// release, as one may be after 5 s of real speech (benches/voice.rs, with a paced source,
// includes that).
//
// The seed is timed from the start of its transcription (the key released: it transcribed what
// it recorded once the key was let go) with its model loaded and warm, and the speech already
// decoded to samples, as its recorder would hold them. Both sides end when the field has the
// last character typed (its text as the field reports it, read every millisecond).
// Run by: PERCH_APP=.../release/perch-desktop bench/run.sh dictate_anywhere.mjs
import { execFile, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { appLog, appPid, treePss } from "../lib/proc.js";
import { CLI, freshDataDir, freshRuntimeDir, launch, perchWindows, sleep, visibleWindows, waitFor, xdotool } from "../lib/harness.js";
import { textField } from "../lib/text_field.js";

const RUNS = Number(process.env.RUNS ?? 10);
const HOLD_MS = Number(process.env.HOLD_MS ?? 300);
const THREADS = 2;
// 13 words, 5.0 s at espeak-ng's 150 words a minute; tiny.en gets every word of it on both sides.
const SENTENCE = "Open the settings, turn on dark mode and read me my latest messages.";
const MODEL = process.env.PERCH_WHISPER_TEST_MODEL ?? join(homedir(), ".cache/perch/models/ggml-tiny.en.bin");
const PYTHON = process.env.PERCH_BENCH_PYTHON ?? join(process.env.VENV ?? join(homedir(), ".cache/perch/venv"), "bin/python");
const here = dirname(fileURLToPath(import.meta.url));
const run = promisify(execFile);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const words = (text) => text.toLowerCase().replace(/[^a-z ]/g, "").trim().split(/\s+/).filter(Boolean);
/** Word error rate of `text` against the sentence: substitutions, insertions and deletions. */
function wordError(text) {
  const [ref, hyp] = [words(SENTENCE), words(text)];
  let row = hyp.map((_, j) => j + 1);
  for (let i = 0; i < ref.length; i++) {
    const next = [i + 1];
    for (let j = 0; j < hyp.length; j++) {
      next.push(Math.min(row[j] + 1, next[j] + 1, (j === 0 ? i : row[j - 1]) + (ref[i] === hyp[j] ? 0 : 1)));
    }
    row = next.slice(1);
  }
  return (hyp.length ? row.at(-1) : ref.length) / ref.length;
}

if (!existsSync(MODEL)) throw new Error(`${MODEL} is missing: run make deps`);
if (!existsSync(PYTHON)) throw new Error(`${PYTHON} is missing: run make deps (the venv with faster-whisper and pynput)`);
const dir = mkdtempSync(join(tmpdir(), "perch-dictate-bench-"));
const speech = join(dir, "speech.wav");
execFileSync("espeak-ng", ["-s", "150", "-w", speech, SENTENCE]);
const seconds = Number(execFileSync("soxi", ["-D", speech]).toString());
const alsa = execFileSync(join(here, "../../voice/virtual-microphone.sh"), [speech, join(dir, "alsa")]).toString().trim();

const runtime = freshRuntimeDir();
const cliEnv = { ...process.env, PERCH_IPC_PATH: join(runtime, "perch", "review.sock") };
const dataDir = freshDataDir();
const session = await launch(dataDir, { ALSA_CONFIG_PATH: alsa, PERCH_KEY_STORE: "file", XDG_RUNTIME_DIR: runtime });
const browser = session.browser;
const invoke = (command, args = {}) =>
  browser.execute((c, a) => window.__TAURI_INTERNALS__.invoke(c, a), command, args);

/** The dictate-anywhere indicator is on screen. */
const indicatorShown = async () =>
  (await visibleWindows("^Perch dictation$")).length > 0;

let field;
let seed;
try {
  await (await browser.$('textarea[aria-label="Message"]')).waitForEnabled();
  // Start-up settles first (the page's memory is noted some seconds after it loads; the update
  // check runs): a dictation during it was seen taking a second longer.
  await waitFor(() => appLog(dataDir).includes("the page has settled after loading"), "start-up to settle", 30_000).catch(() => {});
  // Settings -> Voice, as the voice spec sets it in the page: this microphone, this model file.
  const devices = await invoke("voice_devices");
  const mic = devices.find((d) => d.name.includes("Perch test microphone"));
  if (!mic) throw new Error(`no virtual microphone among ${JSON.stringify(devices)}`);
  await invoke("set_voice_settings", { base: {}, voice: { model: MODEL, device: mic.name } });
  await waitFor(
    async () => (await invoke("voice_shortcut_statuses")).some((s) => s.name === "dictate_anywhere" && s.active),
    "the dictate-anywhere shortcut to be active",
  );
  await run(CLI, ["toggle"], { env: cliEnv });
  await waitFor(async () => (await perchWindows()).length === 0, "the window to hide");

  field = await textField("Perch bench field");
  // Every change of the field's text, with when it was seen (polled each millisecond: the
  // field's lines arrive between polls).
  let seen = { text: field.text, at: Date.now() };
  const poll = setInterval(() => {
    if (field.text !== seen.text) seen = { text: field.text, at: Date.now() };
  }, 1);

  seed = spawn(PYTHON, [join(here, "seed_dictate.py"), speech, String(THREADS)], { stdio: ["pipe", "pipe", "inherit"] });
  const seedLines = [];
  createInterface({ input: seed.stdout }).on("line", (line) => seedLines.push(line));
  await waitFor(() => seedLines.includes("ready"), "the seed's model to load and warm", 120_000);
  seedLines.length = 0;

  /** The field empty and focused, as the user has it before dictating. */
  const ready = async () => {
    await field.setText("");
    await field.focus();
    await sleep(300);
  };
  /** Waits until the field's text stays `quiet` ms unchanged; its last change then. */
  const settled = async (quiet = 500) => {
    await waitFor(() => seen.text !== "" && Date.now() - seen.at >= quiet, "the typed text to settle", 60_000);
    return seen;
  };

  // The app's memory with the window hidden, while the indicator shows, and after it went: the
  // indicator's own page is the growth of WebKit's web processes.
  const memory = { idle: treePss(appPid()) };
  const webKit = (m) => m.byName.WebKitWebProces ?? 0;
  const perch = async () => {
    await ready();
    await xdotool("keydown", "ctrl+alt+d");
    await waitFor(indicatorShown, "the dictation indicator to appear");
    memory.showing ??= (await sleep(HOLD_MS / 2), treePss(appPid()));
    await sleep(HOLD_MS);
    // Stamped before the key-up is sent: the app may hear it before xdotool returns.
    const released = Date.now();
    await xdotool("keyup", "ctrl+alt+d");
    if (field.text !== "") throw new Error(`the dictation ended before the key was let go (recording limit?): "${field.text}"`);
    // Done when the indicator has gone (it goes once the words are typed) and the text is still.
    await waitFor(async () => !(await indicatorShown()) && seen.text !== "", "the words typed and the indicator gone", 60_000);
    const last = await settled();
    return { ms: last.at - released, text: last.text };
  };

  const seedRun = async () => {
    await ready();
    seed.stdin.write("go\n");
    await waitFor(() => seedLines.length > 0, "the seed to type", 60_000);
    const report = JSON.parse(seedLines.shift());
    await waitFor(() => field.text === report.text, () => `the seed's words in the field (has "${field.text}", typed "${report.text}")`);
    const last = await settled();
    return { ms: last.at - report.released, text: last.text, transcribe: report.transcribe_ms, type: report.type_ms };
  };

  const results = { perch: [], seed: [] };
  for (let i = 0; i <= RUNS; i++) {
    const [ours, theirs] = [await perch(), await seedRun()];
    if (i === 0) continue; // the warm-up
    results.perch.push(ours);
    results.seed.push(theirs);
  }
  clearInterval(poll);
  memory.after = treePss(appPid());

  const row = (name, rs) => {
    const ms = rs.map((r) => r.ms);
    return `  ${name.padEnd(40)} ${String(Math.round(median(ms))).padStart(7)} ${String(Math.round(Math.min(...ms))).padStart(7)} ${String(Math.round(Math.max(...ms))).padStart(7)}`;
  };
  // Perch's whisper uses its own thread count (cores up to 4: both here on 2 cores).
  console.log(`\ndictate-anywhere: key released -> text in a GTK field, ${seconds.toFixed(2)} s utterance (${words(SENTENCE).length} words), whisper tiny.en, the seed on ${THREADS} threads and Perch on its default (cores up to 4), ${RUNS} runs after a warm-up`);
  console.log(`machine: ${(await run("nproc")).stdout.trim()} cores; the key held ${HOLD_MS} ms once the indicator showed`);
  console.log(`  ${"".padEnd(40)} ${"median".padStart(7)} ${"min".padStart(7)} ${"max".padStart(7)}  (ms)`);
  console.log(row("Perch (whisper.cpp, XTest)", results.perch));
  console.log(row("seed (faster-whisper + pynput)", results.seed));
  const of = (key) => Math.round(median(results.seed.map((r) => r[key])));
  console.log(`    seed: transcription ${of("transcribe")} ms, typing ${of("type")} ms (medians)`);
  console.log(`  all, Perch: ${results.perch.map((r) => r.ms).join(", ")}`);
  console.log(`  all, seed:  ${results.seed.map((r) => Math.round(r.ms)).join(", ")}`);
  const mib = (kib) => (kib / 1024).toFixed(1);
  console.log(
    `memory (PSS, app tree): hidden ${mib(memory.idle.total)} MiB; indicator showing ${mib(memory.showing.total)} MiB, of which WebKit's web processes ${mib(webKit(memory.showing))} against ${mib(webKit(memory.idle))} before (the indicator's page: +${mib(webKit(memory.showing) - webKit(memory.idle))} MiB); after ${mib(memory.after.total)} MiB (WebKit ${mib(webKit(memory.after))})`,
  );
  console.log(`said:         ${JSON.stringify(SENTENCE)}`);
  for (const [name, rs] of Object.entries(results)) {
    for (const text of new Set(rs.map((r) => r.text))) {
      const n = rs.filter((r) => r.text === text).length;
      const error = wordError(text);
      console.log(`${`${name} typed`.padEnd(13)} ${JSON.stringify(text)} (${n} of ${rs.length})${error ? `, word error rate ${error.toFixed(3)}` : ""}`);
    }
  }
} finally {
  seed?.stdin.write("quit\n");
  field?.close();
  await session.close();
}
