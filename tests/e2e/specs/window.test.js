// The floating window in the real app: first page, mini mode, persistence, single instance.
import { execFile, spawn } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import {
  APP,
  CLI,
  freshDataDir,
  geometry,
  launch,
  perchWindows,
  screen,
  screenshot,
  waitFor,
  waitForGeometry,
  xdotool,
} from "../lib/harness.js";

const run = async (cmd, args) => (await promisify(execFile)(cmd, args)).stdout;

/**
 * Waits until the app has saved the window where it is now (it saves 400 ms after moves
 * settle), read from its database, so a restart is not raced against the save.
 */
async function waitForSaved(dataDir, mode) {
  await waitFor(async () => {
    const g = await geometry();
    const rows = await run("sqlite3", ["-readonly", join(dataDir, "perch.db"), "SELECT value FROM settings WHERE key = 'window'"]);
    if (!rows.trim()) return false;
    const saved = JSON.parse(rows);
    if (saved.mode !== mode) return false;
    if (mode === "mini") return true;
    const b = saved.bounds;
    return b && b.x === g.x && b.y === g.y && b.width === g.width && b.height === g.height;
  }, `the ${mode} placement to be saved`);
}

describe("the floating window", () => {
  const dataDir = freshDataDir();
  let session;
  after(async () => session?.close());

  it("opens on the Chat page at 450x450 near the top-right corner", async () => {
    session = await launch(dataDir);
    const heading = await session.browser.$("h1");
    await heading.waitForDisplayed();
    assert.equal(await heading.getText(), "Ask anything");
    const active = await session.browser.$("a.tab.active");
    assert.equal(await active.getAttribute("aria-label"), "Chat");

    const { width } = await screen();
    const g = await waitForGeometry({ width: 450, height: 450 }, "the default size");
    assert.equal(g.x, width - 450 - 24, "24 px from the right edge");
    assert.equal(g.y, 24);
    const state = await run("xprop", ["-id", g.id, "_NET_WM_STATE"]);
    assert.match(state, /_NET_WM_STATE_ABOVE/, "always on top");
    assert.match(state, /_NET_WM_STATE_SKIP_TASKBAR/, "not in the taskbar");
    await screenshot("chat-page");
    // Our openbox composites nothing, so transparent corners would be black: the window is square.
    if (process.env.E2E_USE_DISPLAY !== "1") {
      const look = await session.browser.execute(() => ({
        composited: document.documentElement.dataset.composited,
        radius: getComputedStyle(document.querySelector(".shell")).borderTopLeftRadius,
      }));
      assert.deepEqual(look, { composited: "no", radius: "0px" });
    }
  });

  it("closes to its bubble, not into a tray this desktop does not have", async () => {
    const before = await geometry();
    const close = await session.browser.$('button[aria-label="Close to the bubble"]');
    assert.match(await close.getAttribute("title"), /this desktop has no tray/);
    await close.click();
    await waitForGeometry({ width: 52, height: 52, x: before.x + before.width - 52, y: before.y }, "the bubble");
    assert.equal((await perchWindows()).length, 1, "still on screen");
    await (await session.browser.$('button[aria-label^="Open Perch"]')).click();
    await waitForGeometry({ width: before.width, height: before.height }, "the window back");
    // Said once, on the window when it is back.
    await waitFor(async () => (await (await session.browser.$(".notices")).getText()).includes("No system tray here"), "the note");
    await (await session.browser.$('.notices button[aria-label="Dismiss"]')).click();
  });

  it("cannot be resized below its minimum", async () => {
    const { id, width, height } = await geometry();
    // Asked until the window manager answers: the test before hides the window and shows it
    // again, and openbox ignored a resize sent while it was still mapping it (1 run in 3).
    const resized = (w, h) => async () => {
      await xdotool("windowsize", id, w, h);
      return geometry();
    };
    await waitFor(async () => {
      const g = await resized("100", "100")();
      return g.width === 320 && g.height === 360;
    }, "the minimum size");
    await waitFor(async () => {
      const g = await resized(String(width), String(height))();
      return g.width === width && g.height === height;
    }, "the size back");
  });

  it("shrinks to a 52x52 bubble at the top-right corner of its bounds and restores them", async () => {
    const before = await geometry();
    await (await session.browser.$('button[aria-label="Mini mode"]')).click();
    const mini = await waitForGeometry(
      { width: 52, height: 52, x: before.x + before.width - 52, y: before.y },
      "mini mode",
    );
    assert.ok(mini);
    await (await session.browser.$('button[aria-label="Open Perch"]')).waitForDisplayed();
    await screenshot("mini-mode");

    await (await session.browser.$('button[aria-label="Open Perch"]')).click();
    await waitForGeometry({ x: before.x, y: before.y, width: before.width, height: before.height }, "restored bounds");
    await (await session.browser.$("h1")).waitForDisplayed();
    await screenshot("restored-from-mini");
  });

  it("keeps its bounds across a restart", async () => {
    const { id } = await geometry();
    await xdotool("windowmove", id, "100", "150");
    await xdotool("windowsize", id, "500", "420");
    await waitForGeometry({ x: 100, y: 150, width: 500, height: 420 }, "the moved window");
    await waitForSaved(dataDir, "normal");
    await screenshot("moved-and-resized");
    await session.close();

    session = await launch(dataDir);
    await waitForGeometry({ x: 100, y: 150, width: 500, height: 420 }, "the bounds after restart");
    await screenshot("bounds-after-restart");
  });

  it("keeps mini mode across a restart and still restores the normal bounds", async () => {
    await (await session.browser.$('button[aria-label="Mini mode"]')).click();
    await waitForGeometry({ width: 52, height: 52, x: 100 + 500 - 52, y: 150 }, "mini mode");
    await waitForSaved(dataDir, "mini");
    await session.close();

    session = await launch(dataDir);
    await waitForGeometry({ width: 52, height: 52, x: 548, y: 150 }, "mini mode after restart");
    await screenshot("mini-after-restart");
    await (await session.browser.$('button[aria-label="Open Perch"]')).click();
    await waitForGeometry({ x: 100, y: 150, width: 500, height: 420 }, "normal bounds after mini restart");
  });

  it("comes back on screen when its saved place is off every monitor", async () => {
    const { id } = await geometry();
    // Window managers keep a corner in view; what matters is that most of it is off screen.
    await xdotool("windowmove", id, "3000", "2000");
    const { width, height } = await screen();
    await waitFor(async () => {
      const g = await geometry();
      return g.x + g.width > width && g.y + g.height > height;
    }, "the window to be mostly off screen");
    await waitForSaved(dataDir, "normal");
    await session.close();

    session = await launch(dataDir);
    const g = await geometry();
    assert.ok(g.x >= 0 && g.x + g.width <= width, `x on screen: ${JSON.stringify(g)}`);
    assert.ok(g.y >= 0 && g.y + g.height <= height, `y on screen: ${JSON.stringify(g)}`);
    assert.deepEqual([g.width, g.height], [500, 420], "the size is kept");
    await screenshot("clamped-back-on-screen");
    // Put it back where the next scenario expects it.
    await xdotool("windowmove", g.id, "100", "150");
    await waitForGeometry({ x: 100, y: 150 }, "the window moved back");
    await waitForSaved(dataDir, "normal");
  });

  it("a second launch focuses the first instead of opening another window", async () => {
    // Hide Perch (this openbox has no tray, so `perch toggle`, as a summon key would) and put
    // another window in front.
    await promisify(execFile)(CLI, ["toggle"], { env: { ...process.env, PERCH_DATA_DIR: dataDir } });
    await waitFor(async () => (await perchWindows()).length === 0, "the window to hide");
    const other = spawn("xlogo", ["-geometry", "300x300+400+300"], { stdio: "ignore" });
    try {
      const otherId = await waitFor(async () => xdotool("search", "--onlyvisible", "--class", "xlogo"), "xlogo");
      await xdotool("windowactivate", "--sync", otherId.split("\n")[0]);
      await screenshot("hidden-behind-another-app", { window: false });

      const second = spawn(APP, [], { env: { ...process.env, PERCH_DATA_DIR: dataDir }, stdio: "ignore" });
      const code = await new Promise((resolve) => second.on("exit", resolve));
      assert.equal(code, 0, "the second instance exits cleanly");

      const [perch] = await waitFor(async () => {
        const windows = await perchWindows();
        return windows.length > 0 && windows;
      }, "the first window to show again");
      assert.equal((await perchWindows()).length, 1, "still exactly one Perch window");
      await waitFor(async () => (await xdotool("getactivewindow")) === perch, "Perch to be focused");
      await waitForGeometry({ x: 100, y: 150, width: 500, height: 420 }, "the window back where it was");
      await screenshot("second-launch-focused-first");
    } finally {
      other.kill();
    }
  });
});
