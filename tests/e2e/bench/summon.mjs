// Summon, in the real app: from `perch show` to the window visible with the cursor in the input,
// (a) while the page is kept (the window hidden a moment) and (b) after the hidden window freed
// its page (Settings -> General -> Memory), which then loads again. With the memory of the app's
// process tree visible, hidden with the page kept, and hidden with the page freed. The reload is
// timed to the new page's first frame, which it reports to the app (logged as "first paint").
// Run by `make bench` (with the release app) or: PERCH_APP=... bench/run.sh summon.mjs
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { CLI, freshDataDir, freshRuntimeDir, launch, perchWindows, sleep, waitFor } from "../lib/harness.js";
import { appPid, firstPaints, pageProcess, treePss } from "../lib/proc.js";

const RUNS = Number(process.env.RUNS ?? 10);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mib = (kib) => (kib / 1024).toFixed(1);
const run = promisify(execFile);

const runtime = freshRuntimeDir();
const env = { ...process.env, PERCH_IPC_PATH: join(runtime, "perch", "review.sock") };
const dataDir = freshDataDir();
const session = await launch(dataDir, { XDG_RUNTIME_DIR: runtime, PERCH_KEY_STORE: "file" });
const browser = session.browser;
const setReleaseAfter = (secs) =>
  browser.execute(
    (s) => window.__TAURI_INTERNALS__.invoke("set_hidden_settings", { base: {}, hidden: { release_page_after_secs: s } }),
    secs,
  );
const hide = async () => {
  await run(CLI, ["toggle"], { env });
  await waitFor(async () => (await perchWindows()).length === 0, "the window to hide");
};
const paints = () => firstPaints(dataDir);

/** In the page: the wall-clock time it is next shown with the cursor in the input. */
const armShownAt = () =>
  browser.execute(() => {
    window.__shownAt = null;
    const check = () => {
      const box = document.querySelector('textarea[aria-label="Message"]');
      if (document.visibilityState === "visible" && document.hasFocus() && document.activeElement === box) {
        window.__shownAt = Date.now();
      } else {
        requestAnimationFrame(check);
      }
    };
    document.addEventListener("visibilitychange", () => requestAnimationFrame(check), { once: true });
  });

try {
  const box = await browser.$('textarea[aria-label="Message"]');
  await box.waitForEnabled();
  await box.click();
  await sleep(3000); // start-up settles
  const pid = appPid();
  const visible = treePss(pid);

  // (a) The page kept: hidden for a moment, shown again.
  await setReleaseAfter(0);
  const kept = [];
  for (let i = 0; i < RUNS; i++) {
    await hide();
    await armShownAt();
    const asked = Date.now();
    await run(CLI, ["show"], { env });
    const at = await waitFor(() => browser.execute(() => window.__shownAt), "the window shown, input focused");
    kept.push(at - asked);
  }
  console.log(`summon (perch show -> visible, input focused), page kept, median of ${RUNS}: ${median(kept)} ms (all: ${kept.join(", ")})`);
  await hide();
  await sleep(5000);
  const hiddenKept = treePss(pid);

  // (b) The page freed while hidden, loaded again on show; the last use of WebDriver first.
  await run(CLI, ["show"], { env });
  await setReleaseAfter(1);
  const reloaded = [];
  let hiddenFreed = null;
  for (let i = 0; i < Math.min(RUNS, 5); i++) {
    await hide();
    await waitFor(() => pageProcess(pid) === null, "the page's process to end", 20_000);
    if (hiddenFreed === null) {
      await sleep(5000);
      hiddenFreed = treePss(pid);
    }
    const painted = paints();
    const asked = Date.now();
    await run(CLI, ["show"], { env });
    // The new page reports its first frame (two animation frames after its first render).
    while (paints() === painted) {
      if (Date.now() - asked > 20_000) throw new Error("the page did not load again");
      await sleep(2);
    }
    reloaded.push(Date.now() - asked);
  }

  console.log(`summon after the page was freed (page loads again), median of ${reloaded.length}: ${median(reloaded)} ms (all: ${reloaded.join(", ")})`);
  for (const [what, m] of [["visible, idle", visible], ["hidden, page kept", hiddenKept], ["hidden, page freed", hiddenFreed]]) {
    const parts = Object.entries(m.byName).map(([n, k]) => `${n} ${mib(k)}`).join(", ");
    console.log(`PSS ${what}: ${mib(m.total)} MiB (${parts})`);
  }
} finally {
  // The WebDriver session ended with the first page; end the app as a logout would.
  await run("pkill", ["-TERM", "-f", "-x", `${process.env.PERCH_APP}( .*)?`]).catch(() => {});
  await session.close();
}
