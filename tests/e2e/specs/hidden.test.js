// A hidden window gives its page's memory back: after the time set in Settings -> General the
// page's web process ends, and showing the window loads the page again where it was, with the
// draft. A page that has grown well past its size after loading is loaded again sooner, while
// still hidden, so the next show is instant. A web process that crashes is reloaded the same
// way instead of leaving a blank window, unless it keeps crashing.
//
// WebDriver cannot follow the page into its new process (WebKit ends the automation session
// with the old one), so after the first reload this spec judges by what a user has: the
// pixels of the input holding the draft, the page's processes, and the app's log, where every
// page that renders reports its first paint over the IPC.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import {
  CLI,
  freshDataDir,
  freshRuntimeDir,
  geometry,
  launch,
  perchWindows,
  screenshot,
  visibleWindows,
  waitFor,
  xdotool,
} from "../lib/harness.js";
import { appLog, appPid, firstPaints, pageProcess, treePss } from "../lib/proc.js";

const run = promisify(execFile);
const shots = mkdtempSync(join(tmpdir(), "perch-e2e-crops-"));
let crops = 0;

/** A picture of the window's `area` ({x, y, width, height}), from the screen. */
async function crop(area) {
  const g = await geometry();
  const file = join(shots, `input-${crops++}.png`);
  const { x, y, width, height } = area;
  await run("import", ["-window", "root", "-crop", `${width}x${height}+${g.x + x}+${g.y + y}`, "+repage", file]);
  return file;
}

/** Pixels that differ between two pictures (`compare` exits 1 when any do). */
async function differing(a, b) {
  const out = await run("compare", ["-metric", "AE", "-fuzz", "10%", a, b, "null:"]).catch((e) => e);
  return Number(String(out.stderr).trim().split(/\s/)[0]);
}

/** Types `draft` into the message input; returns the input's place and a picture of it. */
async function typeDraft(browser, draft) {
  const box = await browser.$('textarea[aria-label="Message"]');
  await box.waitForDisplayed();
  const { x, y } = await box.getLocation();
  const { width, height } = await box.getSize();
  const input = { x: Math.round(x), y: Math.round(y), width: Math.round(width), height: Math.round(height) };
  await browser.execute(() => document.activeElement?.blur());
  const empty = await crop(input);
  await box.setValue(draft);
  await browser.execute(() => document.activeElement?.blur());
  const typed = await crop(input);
  assert.ok((await differing(empty, typed)) > 100, "the picture shows the draft's text");
  return { input, typed };
}

/** Waits for the input to look as it did with the draft (a blinking caret may differ). */
const draftShown = ({ input, typed }, what) =>
  waitFor(async () => (await differing(typed, await crop(input))) < 40, what, 20_000);

/** The app on `dataDir`, with its own runtime folder; `env` reaches it with the CLI. */
async function start(dataDir) {
  const runtime = freshRuntimeDir();
  const env = { ...process.env, PERCH_IPC_PATH: join(runtime, "perch", "review.sock") };
  const session = await launch(dataDir, { XDG_RUNTIME_DIR: runtime });
  return { session, env, app: appPid() };
}

/** The WebDriver session ends with the first page; end the app as a logout would. */
async function stop(started) {
  if (!started) return;
  await run("kill", ["-TERM", String(started.app)]).catch(() => {});
  await started.session.close();
}

describe("a hidden window", () => {
  const dataDir = freshDataDir();
  let session;
  let env;
  let app;
  let draft; // the input's place and a picture of it holding the draft

  const paints = () => firstPaints(dataDir);

  let started;
  before(async () => {
    started = await start(dataDir);
    ({ session, env, app } = started);
  });
  after(() => stop(started));

  it("frees its page after the set time and loads it again on show, with the draft", async () => {
    draft = await typeDraft(session.browser, "a draft that must survive");
    // Settings offers a minute at least; the command takes any value, and a test cannot wait minutes.
    // (`base` is the copy an edit was made from: the defaults, so only the fields named change.)
    await session.browser.execute(() =>
      window.__TAURI_INTERNALS__.invoke("set_hidden_settings", { base: {}, hidden: { release_page_after_secs: 1 } }),
    );
    const before = pageProcess(app);
    assert.ok(before, "a page process runs while the window shows");
    const painted = paints();

    await run(CLI, ["toggle"], { env });
    await waitFor(async () => (await perchWindows()).length === 0, "the window to hide");
    await waitFor(() => pageProcess(app) === null, "the page's web process to end", 20_000);

    await run(CLI, ["show"], { env });
    await waitFor(async () => (await perchWindows()).length === 1, "the window to show");
    await waitFor(() => ![null, before].includes(pageProcess(app)), "a new page process");
    await waitFor(() => paints() > painted, "the new page to render and reach the app", 20_000);
    await draftShown(draft, "the input to show the draft again");
    await screenshot("hidden-page-reloaded");
  });

  it("loads the page again when its web process crashes", async () => {
    const crashed = pageProcess(app);
    const painted = paints();
    await run("kill", ["-KILL", String(crashed)]);
    await waitFor(() => ![null, crashed].includes(pageProcess(app)), "a new page process after the crash");
    await waitFor(() => paints() > painted, "the new page to render", 20_000);
    await draftShown(draft, "the input to show the draft after the crash");
  });

  it("stops loading a page that keeps crashing, says so, and loads it again on show", async () => {
    // The crash above may be counted too: end pages until one is not replaced, at most three.
    let kills = 0;
    for (;;) {
      const page = pageProcess(app);
      assert.ok(page, "a page process to end");
      const painted = paints();
      await run("kill", ["-KILL", String(page)]);
      kills += 1;
      const replaced = await waitFor(() => ![null, page].includes(pageProcess(app)), "a new page process", 5_000).then(
        () => true,
        () => false,
      );
      if (!replaced) break;
      assert.ok(kills < 3, "the third crash in a row, each soon after loading, stops the reloads");
      // WebKit does not report a process killed while it is still being launched (one run
      // lost its third crash that way), so the next kill waits for the new page to render.
      await waitFor(() => paints() > painted, "the new page to render", 20_000);
    }
    assert.match(
      appLog(dataDir),
      /ended unexpectedly 3 times in a row, each within 60 s of loading; not loading it again until the window is shown/,
    );
    const dialog = await waitFor(
      async () => (await visibleWindows("keeps crashing"))[0],
      "a dialog saying the window keeps crashing",
    );
    await screenshot("hidden-page-keeps-crashing");
    await xdotool("windowclose", dialog).catch(() => {});
    const painted = paints();

    await run(CLI, ["toggle"], { env });
    await waitFor(async () => (await perchWindows()).length === 0, "the window to hide");
    await run(CLI, ["show"], { env });
    await waitFor(() => pageProcess(app) !== null, "a new page process when the window shows");
    await waitFor(() => paints() > painted, "the new page to render", 20_000);
    await draftShown(draft, "the input to show the draft again");
  });
});

describe("a hidden window whose page has grown", () => {
  const dataDir = freshDataDir();
  let session;
  let env;
  let app;

  const settledLines = () => appLog(dataDir).split("the page has settled after loading").length - 1;
  const pssMib = (pid) => treePss(pid).total / 1024;

  let started;
  before(async () => {
    started = await start(dataDir);
    ({ session, env, app } = started);
  });
  after(() => stop(started));

  it("loads it again in a new process soon after the hide, and shows it at once with the draft", async () => {
    const draft = await typeDraft(session.browser, "typed before the page grew");
    // Two seconds instead of thirty, and a release far away, so only the reload can happen.
    await session.browser.execute(() =>
      window.__TAURI_INTERNALS__.invoke("set_hidden_settings", {
        base: {},
        hidden: { release_page_after_secs: 600, reload_grown_page_after_secs: 2 },
      }),
    );
    await waitFor(() => settledLines() === 1, "the shell to measure the page once it settled", 30_000);
    const grownPage = pageProcess(app);
    const settled = pssMib(grownPage);
    // What a long conversation leaves, made plain: 100 MiB of data the page keeps.
    await session.browser.execute(() => {
      window.__kept = Array.from({ length: 200 }, (_, i) => new Float64Array(65_536).fill(i + 0.5));
    });
    await waitFor(() => pssMib(grownPage) > settled + 80, "the page's process to grow");
    const grown = pssMib(grownPage);
    const painted = firstPaints(dataDir);

    await run(CLI, ["toggle"], { env });
    await waitFor(async () => (await perchWindows()).length === 0, "the window to hide");
    const fresh = await waitFor(() => {
      const page = pageProcess(app);
      return page !== null && page !== grownPage && page;
    }, "a new page process while hidden", 20_000);
    assert.match(appLog(dataDir), /has grown since it loaded; loading the page again while the window is hidden/);
    await waitFor(() => settledLines() === 2, "the new page to settle", 30_000);
    assert.equal((await perchWindows()).length, 0, "the window stayed hidden");
    const after = pssMib(fresh);
    assert.ok(after < grown - 60, `the new page's process (${after.toFixed(1)} MiB) is far below the grown one (${grown.toFixed(1)})`);

    await run(CLI, ["show"], { env });
    await waitFor(async () => (await perchWindows()).length === 1, "the window to show");
    await draftShown(draft, "the input to show the draft, typed before the reload");
    await waitFor(() => firstPaints(dataDir) > painted, "the new page to have rendered");
    assert.equal(pageProcess(app), fresh, "showing did not load the page once more");
    await screenshot("hidden-page-grown-reloaded");
  });
});
