// Terminal panel figures in the real app: Run (the approval button) to the first output byte
// painted in the xterm.js panel, and throughput into the panel for a command printing 50 MB,
// with the app's memory (PSS summed over the app's process tree, WebKit included) sampled
// while it runs. Run by `make bench` (with the release app).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freshDataDir, launch, startFakeLlm, waitFor } from "../lib/harness.js";
import { appPid, treePss } from "../lib/proc.js";

const RUNS = Number(process.env.RUNS ?? 5);
// `make bench-quick` floods less (MB=5); the figure is made with 50.
const MB = Number(process.env.MB ?? 50);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** PSS in MiB of the app's process tree. */
const pssTree = (root) => treePss(root).total / 1024;
/** The process tree at its largest while a flood streams, by process (MiB). */
let peakBy = {};
function sample(root) {
  const tree = treePss(root);
  if (tree.total / 1024 > peak) {
    peak = tree.total / 1024;
    peakBy = Object.fromEntries(Object.entries(tree.byName).map(([name, kib]) => [name, kib / 1024]));
  }
}

const fake = await startFakeLlm("ollama");
const session = await launch(freshDataDir(), { OLLAMA_HOST: fake.host, PERCH_KEY_STORE: "file" });
const $ = (s) => session.browser.$(s);
const pid = appPid();

async function turn(command) {
  await fake.script({ steps: [{ type: "tool_call", name: "terminal__run_command", arguments: { command } }, { type: "finish" }] });
  await fake.script({ steps: [{ type: "text", text: "Done." }, { type: "finish" }] });
  const box = await $('textarea[aria-label="Message"]');
  await box.waitForEnabled();
  await box.setValue(`run ${command.slice(0, 20)}`);
  await session.browser.keys("Enter");
  await (await $('[aria-label="Approve this command"]')).waitForDisplayed({ timeout: 20000 });
}

/** Clicks Run in the page and resolves with the ms until `marker` is painted in the panel. */
async function runUntilPainted(marker, timeoutMs) {
  return session.browser.executeAsync(
    (marker, timeoutMs, done) => {
      const button = [...document.querySelectorAll(".approval button")].find((b) => b.textContent === "Run");
      const t0 = performance.now();
      button.click();
      const check = () => {
        const rows = document.querySelector('[data-testid="terminal-screen"] .xterm-rows');
        if (rows && rows.textContent.includes(marker)) return done(performance.now() - t0);
        if (performance.now() - t0 > timeoutMs) return done(-1);
        requestAnimationFrame(check);
      };
      requestAnimationFrame(check);
    },
    marker,
    timeoutMs,
  );
}

const firstByte = [];
const throughput = [];
let peak = 0;
const idle = pssTree(pid);
try {
  await waitFor(async () => (await (await $('select[aria-label="Model"]')).getValue()) !== "", "a model");
  // Commands run in a working folder chosen first (none is assumed).
  const work = mkdtempSync(join(tmpdir(), "perch-bench-work-"));
  await (await $('a[aria-label="Settings"]')).click();
  await (await $('button[role="tab"]=Terminal')).click();
  await (await $('input[aria-label="Working folder"]')).setValue(work);
  await (await $('select[aria-label="Ask level"]')).click();
  await waitFor(async () => (await (await $('[aria-label="Sandbox"]')).getProperty("textContent")).includes(work), "the working folder saved");
  await (await $('a[aria-label="Chat"]')).click();
  for (let run = 1; run <= RUNS; run++) {
    await turn(`echo first-byte-${run}`);
    const ms = await runUntilPainted(`first-byte-${run}`, 20000);
    if (ms < 0) throw new Error("the first byte never reached the panel");
    firstByte.push(ms);
    await waitFor(async () => !(await (await $('[aria-label="Stop"]')).isExisting()), "the answer to end", 20000);
    console.error(`run ${run}: Run -> first byte in the panel ${ms.toFixed(1)} ms`);
  }
  const bytes = MB * 1_000_000;
  for (let run = 1; run <= Math.min(RUNS, 3); run++) {
    // 37.5 MB of zeros as base64 in 76-column lines: 50 MB of text, then a marker (built by the
    // shell, so the command line shown above the output does not already contain it).
    await turn(`head -c ${(bytes * 3) / 4} /dev/zero | base64; echo end-of-$(printf flood)-${run}`);
    const page = () => (treePss(pid).byName.WebKitWebProces ?? 0) / 1024;
    const pageBefore = page();
    let pagePeak = pageBefore;
    const sampler = setInterval(() => {
      sample(pid);
      pagePeak = Math.max(pagePeak, page());
    }, 250);
    const ms = await runUntilPainted(`end-of-flood-${run}`, 300000);
    clearInterval(sampler);
    // A short flood (make bench-quick's) can end before the first sample.
    sample(pid);
    pagePeak = Math.max(pagePeak, page());
    if (ms < 0) throw new Error("the flood never finished in the panel");
    throughput.push(MB / (ms / 1000));
    console.error(`run ${run}: ${MB} MB into the panel in ${(ms / 1000).toFixed(1)} s (${throughput.at(-1).toFixed(1)} MB/s), peak PSS ${peak.toFixed(0)} MiB; the page's process ${pageBefore.toFixed(0)} -> ${pagePeak.toFixed(0)} MiB`);
    await waitFor(async () => !(await (await $('[aria-label="Stop"]')).isExisting()), "the answer to end", 60000);
  }
} finally {
  await session.close();
  fake.stop();
}
console.log(`terminal panel, ${RUNS} runs`);
console.log(`  Run -> first output byte painted in the panel: median ${median(firstByte).toFixed(1)} ms`);
console.log(`  ${MB} MB of output into the panel: median ${median(throughput).toFixed(1)} MB/s`);
console.log(`  app memory (PSS, app + WebKit): ${idle.toFixed(0)} MiB before, peak ${peak.toFixed(0)} MiB while streaming`);
console.log(`  at the peak: ${Object.entries(peakBy).map(([name, mib]) => `${name} ${mib.toFixed(0)}`).join(", ")} MiB`);
