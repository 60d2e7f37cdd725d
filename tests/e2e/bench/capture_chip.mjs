// Shortcut press to chip visible, in the real app: xdotool presses Alt+. and the page records
// when the chip enters the DOM (both on the wall clock), median of 10. Then the memory a chip
// holds: PSS of the app's process tree (the app and its WebKit processes, from
// /proc/PID/smaps_rollup) before and after 10 chips, per chip.
// Run by `make bench` (with the release app) or: PERCH_APP=... bench/run.sh capture_chip.mjs
import { freshDataDir, launch, sleep, waitFor, xdotool } from "../lib/harness.js";
import { appPid, treePss } from "../lib/proc.js";
import { paintRoot } from "../lib/screen.js";

const RUNS = Number(process.env.RUNS ?? 10);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

await paintRoot(freshDataDir());
const session = await launch(freshDataDir(), { PERCH_KEY_STORE: "file" });
const chips = async () => (await session.browser.$$(".capture-chip")).length;
try {
  await (await session.browser.$('textarea[aria-label="Message"]')).waitForEnabled();
  await (await session.browser.$('select[aria-label="Capture mode"]')).waitForDisplayed();
  await sleep(2000); // let start-up settle before measuring memory
  const pid = appPid();
  const before = treePss(pid);
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const count = await chips();
    // The page notes the wall-clock time the chip count grows past `count`.
    await session.browser.execute((n) => {
      window.__chipAt = null;
      const observer = new MutationObserver(() => {
        if (document.querySelectorAll(".capture-chip").length > n) {
          window.__chipAt = Date.now();
          observer.disconnect();
        }
      });
      observer.observe(document.body, { childList: true, subtree: true });
    }, count);
    const pressed = Date.now();
    await xdotool("key", "alt+period");
    const at = await waitFor(() => session.browser.execute(() => window.__chipAt), "the chip", 20_000);
    times.push(at - pressed);
    await sleep(300);
  }
  await sleep(1000);
  const after = treePss(pid);
  console.log(`shortcut press to chip visible, median of ${RUNS}: ${median(times)} ms (all: ${times.join(", ")})`);
  const mib = (kib) => (kib / 1024).toFixed(1);
  console.log(`memory per chip: ${((after.total - before.total) / RUNS).toFixed(0)} KiB PSS (app tree ${mib(before.total)} -> ${mib(after.total)} MiB with ${RUNS} chips)`);
  // Which process holds it: the app (the engine and the shell) or WebKit's (the page).
  for (const name of Object.keys(after.byName).sort()) {
    const grew = (after.byName[name] - (before.byName[name] ?? 0)) / RUNS;
    console.log(`  ${name}: ${mib(before.byName[name] ?? 0)} -> ${mib(after.byName[name])} MiB, ${grew.toFixed(0)} KiB per chip`);
  }
} finally {
  await session.close();
}
