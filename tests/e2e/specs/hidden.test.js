// A hidden window gives its page's memory back: after the time set in Settings -> General the
// page's web process ends, and showing the window loads the page again where it was, with the
// draft. A web process that crashes is reloaded the same way instead of leaving a blank window,
// unless it keeps crashing.
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
  waitFor,
  xdotool,
} from "../lib/harness.js";
import { appLog, appPid, firstPaints, pageProcess } from "../lib/proc.js";

const run = promisify(execFile);

describe("a hidden window", () => {
  const dataDir = freshDataDir();
  const shots = mkdtempSync(join(tmpdir(), "perch-e2e-crops-"));
  let session;
  let env;
  let app;
  let input; // the input's place in the window
  let typed; // a picture of the input holding the draft
  let crops = 0;

  const paints = () => firstPaints(dataDir);

  /** A picture of the input, from the screen. */
  async function cropInput() {
    const g = await geometry();
    const file = join(shots, `input-${crops++}.png`);
    const { x, y, width, height } = input;
    await run("import", ["-window", "root", "-crop", `${width}x${height}+${g.x + x}+${g.y + y}`, "+repage", file]);
    return file;
  }

  /** Pixels that differ between two pictures (`compare` exits 1 when any do). */
  async function differing(a, b) {
    const out = await run("compare", ["-metric", "AE", "-fuzz", "10%", a, b, "null:"]).catch((e) => e);
    return Number(String(out.stderr).trim().split(/\s/)[0]);
  }

  /** Waits for the input to look as it did with the draft (a blinking caret may differ). */
  const draftShown = (what) =>
    waitFor(async () => (await differing(typed, await cropInput())) < 40, what, 20_000);

  before(async () => {
    const runtime = freshRuntimeDir();
    env = { ...process.env, PERCH_IPC_PATH: join(runtime, "perch", "review.sock") };
    session = await launch(dataDir, { XDG_RUNTIME_DIR: runtime });
    app = appPid();
  });
  after(async () => {
    // The WebDriver session ended with the first page; end the app as a logout would.
    await run("kill", ["-TERM", String(app)]).catch(() => {});
    await session?.close();
  });

  it("frees its page after the set time and loads it again on show, with the draft", async () => {
    const box = await session.browser.$('textarea[aria-label="Message"]');
    await box.waitForDisplayed();
    const { x, y } = await box.getLocation();
    const { width, height } = await box.getSize();
    input = { x: Math.round(x), y: Math.round(y), width: Math.round(width), height: Math.round(height) };
    await session.browser.execute(() => document.activeElement?.blur());
    const empty = await cropInput();
    await box.setValue("a draft that must survive");
    await session.browser.execute(() => document.activeElement?.blur());
    typed = await cropInput();
    assert.ok((await differing(empty, typed)) > 100, "the picture shows the draft's text");
    // Settings offers a minute at least; the command takes any value, and a test cannot wait minutes.
    await session.browser.execute(() =>
      window.__TAURI_INTERNALS__.invoke("set_hidden_settings", { hidden: { release_page_after_secs: 1 } }),
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
    await draftShown("the input to show the draft again");
    await screenshot("hidden-page-reloaded");
  });

  it("loads the page again when its web process crashes", async () => {
    const crashed = pageProcess(app);
    const painted = paints();
    await run("kill", ["-KILL", String(crashed)]);
    await waitFor(() => ![null, crashed].includes(pageProcess(app)), "a new page process after the crash");
    await waitFor(() => paints() > painted, "the new page to render", 20_000);
    await draftShown("the input to show the draft after the crash");
  });

  it("stops loading a page that keeps crashing, says so, and loads it again on show", async () => {
    // The crash above may be counted too: end pages until one is not replaced, at most three.
    let kills = 0;
    for (;;) {
      const page = pageProcess(app);
      assert.ok(page, "a page process to end");
      await run("kill", ["-KILL", String(page)]);
      kills += 1;
      const replaced = await waitFor(() => ![null, page].includes(pageProcess(app)), "a new page process", 5_000).then(
        () => true,
        () => false,
      );
      if (!replaced) break;
      assert.ok(kills < 3, "the third crash within a minute stops the reloads");
    }
    assert.match(appLog(dataDir), /ended unexpectedly 3 times within 60 s; not loading it again until the window is shown/);
    const dialog = await waitFor(
      async () => (await xdotool("search", "--onlyvisible", "--name", "keeps crashing").catch(() => "")).split("\n")[0],
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
    await draftShown("the input to show the draft again");
  });
});
