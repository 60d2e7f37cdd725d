// A hidden window gives its page's memory back: after the time set in Settings -> General the
// page's web process ends, and showing the window loads the page again where it was, with the
// draft. A web process that crashes is reloaded the same way instead of leaving a blank window.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { APP, CLI, freshDataDir, freshRuntimeDir, launch, perchWindows, screenshot, waitFor } from "../lib/harness.js";

const run = promisify(execFile);

/** The app's process id (`pgrep` prints one per line). */
async function appPid() {
  const { stdout } = await run("pgrep", ["-f", "-x", `${APP}( .*)?`]);
  return stdout.trim().split("\n")[0];
}

/** The pid of the app's page process, or null while it has none. */
async function webProcess(app) {
  const { stdout } = await run("pgrep", ["-P", app, "-f", "WebKitWebProcess"]).catch(() => ({ stdout: "" }));
  return stdout.trim().split("\n")[0] || null;
}

describe("a hidden window", () => {
  let session;
  let env;
  let app;
  const box = () => session.browser.$('textarea[aria-label="Message"]');

  before(async () => {
    const runtime = freshRuntimeDir();
    env = { ...process.env, PERCH_IPC_PATH: join(runtime, "perch", "review.sock") };
    session = await launch(freshDataDir(), { XDG_RUNTIME_DIR: runtime });
    app = await appPid();
  });
  after(async () => session?.close());

  it("frees its page after the set time and loads it again on show, with the draft", async () => {
    await (await box()).waitForDisplayed();
    await (await box()).setValue("a draft that must survive");
    // Settings offers a minute at least; the command takes any value, and a test cannot wait minutes.
    await session.browser.execute(() =>
      window.__TAURI_INTERNALS__.invoke("set_hidden_settings", { hidden: { release_page_after_secs: 1 } }),
    );
    const before = await webProcess(app);
    assert.ok(before, "a page process runs while the window shows");

    await run(CLI, ["toggle"], { env });
    await waitFor(async () => (await perchWindows()).length === 0, "the window to hide");
    await waitFor(async () => (await webProcess(app)) === null, "the page's web process to end", 20_000);

    await run(CLI, ["show"], { env });
    await waitFor(async () => (await perchWindows()).length === 1, "the window to show");
    await waitFor(async () => (await webProcess(app)) !== null, "a new page process");
    await (await box()).waitForDisplayed({ timeout: 15_000 });
    assert.equal(await (await box()).getValue(), "a draft that must survive");
    assert.notEqual(await webProcess(app), before);
    await screenshot("hidden-page-reloaded");
  });

  it("loads the page again when its web process crashes", async () => {
    const crashed = await webProcess(app);
    await run("kill", ["-KILL", crashed]);
    await waitFor(async () => ![null, crashed].includes(await webProcess(app)), "a new page process after the crash");
    await (await box()).waitForDisplayed({ timeout: 15_000 });
    assert.equal(await (await box()).getValue(), "a draft that must survive");
  });
});
