// Screenshot questions in the real app: Alt+. pressed with xdotool captures the screen (a known
// picture painted on the root window) without Perch in it; the chip rides on the question to a
// fake Ollama, whose request carries the image; the overlay dragged with xdotool yields the
// dragged region; Esc cancels; window mode captures the window clicked; two monitors made with
// `xrandr --setmonitor`; `perch screenshot | show | toggle` from a shell.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
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
  startFakeLlm,
  visibleWindows,
  waitFor,
  xdotool,
} from "../lib/harness.js";
import { QUARTERS, colourWindow, decoded, paintRoot, patternAt, screenPixel, xrandr } from "../lib/screen.js";

const run = promisify(execFile);

describe("screenshots", () => {
  let fake;
  let session;
  let tmp;
  let runtime;
  const $ = (s) => session.browser.$(s);
  const chips = async () => session.browser.$$(".capture-chip");
  /** What the chips say they hold ("View Region 160 x 100"). */
  const chipNames = async () => {
    const names = [];
    for (const thumb of await session.browser.$$(".capture-thumb")) names.push(await thumb.getAttribute("aria-label"));
    return names;
  };

  /** Overlay windows on screen (one per monitor while selecting). */
  const overlays = async () => {
    return visibleWindows("^Perch capture$");
  };

  /** Waits until the overlay shows the frozen screen, dimmed (its page and picture loaded). */
  async function overlayShown(count = 1) {
    await waitFor(async () => (await overlays()).length === count, `${count} overlay window(s)`);
    await waitFor(async () => {
      // The picture's bottom-left green, dimmed: darker than the green itself, and not black.
      const [r, g, b] = (await screenPixel(5, 795)).slice(1).match(/../g).map((h) => parseInt(h, 16));
      return g > 60 && g < 160 && r < 40 && b < 40;
    }, "the overlay to show the dimmed frozen screen");
  }

  /** Waits until the overlay draws its selection frame (#4da3ff) through the screen pixel (x, y). */
  async function frameShown(x, y, what) {
    await waitFor(async () => (await screenPixel(x, y)) === "#4DA3FF", `the overlay to draw ${what}`);
  }

  async function setMode(mode) {
    await (await $('select[aria-label="Capture mode"]')).selectByAttribute("value", mode);
    await waitFor(async () => (await (await $('select[aria-label="Capture mode"]')).getValue()) === mode, `mode ${mode}`);
  }

  /** Sends a question and returns the image the fake Ollama received with it, decoded. */
  async function askAndGetImage(question, name) {
    const before = (await fake.requests()).filter((r) => r.path === "/api/chat").length;
    const box = await $('textarea[aria-label="Message"]');
    await box.setValue(question);
    await session.browser.keys("Enter");
    const request = await waitFor(async () => {
      const chats = (await fake.requests()).filter((r) => r.path === "/api/chat");
      return chats.length > before && chats.at(-1);
    }, "the question to reach the fake Ollama");
    const user = request.body.messages.findLast((m) => m.role === "user");
    assert.equal(user.content, question);
    assert.equal(user.images.length, 1, "one image rides on the question");
    await waitFor(async () => (await chips()).length === 0, "the chips to clear once sent");
    return decoded(tmp, name, user.images[0]);
  }

  async function pressShortcut() {
    await xdotool("key", "alt+period");
  }

  before(async () => {
    tmp = freshDataDir();
    await paintRoot(tmp);
    fake = await startFakeLlm("ollama");
    runtime = freshRuntimeDir();
    session = await launch(freshDataDir(), { OLLAMA_HOST: fake.host, PERCH_KEY_STORE: "file", XDG_RUNTIME_DIR: runtime });
    const box = await $('textarea[aria-label="Message"]');
    await box.waitForEnabled();
    await waitFor(async () => (await (await $('select[aria-label="Model"]')).getValue()) === "ollama:qwen3-vl:8b-instruct", "the default model");
  });
  after(async () => {
    await session?.close();
    fake?.stop();
  });

  it("Alt+. captures the monitor under the pointer, without Perch in it, and the chip rides on the question", async () => {
    const perch = await geometry();
    await xdotool("mousemove", "900", "600");
    await pressShortcut();
    await waitFor(async () => (await chips()).length === 1, "a chip after Alt+.");
    assert.match((await chipNames())[0], /Monitor screen/);
    await waitFor(async () => (await perchWindows()).length === 1, "Perch to come back");
    const focused = await session.browser.execute(() => document.activeElement?.getAttribute("aria-label"));
    assert.equal(focused, "Message", "the cursor is in the input box");
    await screenshot("chip-after-shortcut");

    const image = await askAndGetImage("What is on my screen?", "fullscreen.png");
    assert.deepEqual([image.width, image.height], [1280, 800]);
    assert.equal(await image.pixel(5, 5), QUARTERS.topLeft);
    assert.equal(await image.pixel(1275, 795), QUARTERS.bottomRight);
    // Where Perch's window stood, the capture shows the screen behind it.
    const cx = perch.x + Math.floor(perch.width / 2);
    const cy = perch.y + Math.floor(perch.height / 2);
    assert.equal(await image.pixel(cx, cy), patternAt(cx, cy), "Perch is absent from its own capture");
    // Sent, it can be seen again from its question's chip.
    await (await $("button=1 image")).click();
    const sent = await $('[role="dialog"][aria-label="Images sent with the question"] img');
    await sent.waitForDisplayed({ timeout: 10000 });
    assert.ok((await sent.getAttribute("src")).startsWith("data:image/"), "the sent image");
    await screenshot("sent-image");
    await session.browser.keys("Escape");
    await waitFor(async () => !(await $('[role="dialog"][aria-label="Images sent with the question"]').isExisting()), "the view to close");
  });

  it("precision: the region dragged on the overlay, at its size and with its pixels", async () => {
    await setMode("precision");
    await pressShortcut();
    await overlayShown();
    await xdotool("mousemove", "600", "350");
    await screenshot("overlay-open", { window: false });
    await xdotool("mousedown", "1");
    await xdotool("mousemove", "700", "420");
    await xdotool("mousemove", "760", "450");
    // The frame's left edge runs down x = 600 from y = 350 to 450 while the button is held.
    await frameShown(600, 400, "the dragged rectangle");
    await screenshot("overlay-dragging", { window: false });
    await xdotool("mouseup", "1");
    await waitFor(async () => (await chips()).length === 1, "a chip for the region");
    await waitFor(async () => (await overlays()).length === 0, "the overlay to close");
    assert.match((await chipNames())[0], /Region 160 x 100/);
    await screenshot("region-chip");

    await (await $(".capture-thumb")).click();
    const viewer = await $(".capture-viewer");
    await viewer.waitForDisplayed();
    assert.match(await viewer.getText(), /160 x 100/);
    await screenshot("region-large-view");
    await session.browser.keys("Escape");
    await viewer.waitForDisplayed({ reverse: true });

    const image = await askAndGetImage("Which colours meet here?", "region.png");
    assert.deepEqual([image.width, image.height], [160, 100]);
    assert.equal(await image.pixel(0, 0), patternAt(600, 350));
    assert.equal(await image.pixel(159, 99), patternAt(759, 449));
    assert.equal(await image.pixel(100, 70), patternAt(700, 420));
  });

  it("Esc on the overlay cancels and leaves no chip", async () => {
    await pressShortcut();
    await overlayShown();
    await xdotool("mousemove", "300", "300");
    await xdotool("key", "Escape");
    await waitFor(async () => (await overlays()).length === 0, "the overlay to close on Esc");
    await waitFor(async () => (await perchWindows()).length === 1, "Perch to come back");
    assert.equal((await chips()).length, 0);
  });

  it("window mode captures the window clicked", async () => {
    const child = await colourWindow(tmp, { title: "capture-target", x: 150, y: 120, width: 240, height: 160, colour: "#B01EB0" });
    try {
      const [id] = await waitFor(async () => {
        const ids = await visibleWindows("^capture-target$");
        return ids.length > 0 && ids;
      }, "the target window");
      const g = Object.fromEntries((await xdotool("getwindowgeometry", "--shell", id)).split("\n").map((l) => l.split("=")));
      await setMode("window");
      await pressShortcut();
      await overlayShown();
      await xdotool("mousemove", String(Number(g.X) + 100), String(Number(g.Y) + 80));
      await frameShown(Number(g.X), Number(g.Y) + Math.floor(Number(g.HEIGHT) / 2), "the outline of the window under the pointer");
      await screenshot("window-mode-hover", { window: false });
      await xdotool("click", "1");
      await waitFor(async () => (await chips()).length === 1, "a chip for the window");
      assert.match((await chipNames())[0], /Window:/);
      const image = await askAndGetImage("What is this window?", "window.png");
      assert.deepEqual([image.width, image.height], [Number(g.WIDTH), Number(g.HEIGHT)]);
      assert.equal(await image.pixel(10, 10), "#B01EB0");
      assert.equal(await image.pixel(Number(g.WIDTH) - 5, Number(g.HEIGHT) - 5), "#B01EB0");
    } finally {
      child.kill();
    }
  });

  it("two monitors: the one under the pointer, and a region on the second one's overlay", async () => {
    await xrandr("--setmonitor", "LEFT", "640/170x800/210+0+0", "screen");
    await xrandr("--setmonitor", "RIGHT", "640/170x800/210+640+0", "none");
    try {
      await setMode("fullscreen");
      await xdotool("mousemove", "1000", "300");
      await pressShortcut();
      await waitFor(async () => (await chips()).length === 1, "a chip for the right monitor");
      assert.match((await chipNames())[0], /Monitor RIGHT/);
      const right = await askAndGetImage("And the right one?", "right-monitor.png");
      assert.deepEqual([right.width, right.height], [640, 800]);
      assert.equal(await right.pixel(5, 5), QUARTERS.topRight);
      assert.equal(await right.pixel(5, 795), QUARTERS.bottomRight);

      await setMode("precision");
      await pressShortcut();
      await overlayShown(2);
      await screenshot("overlays-two-monitors", { window: false });
      await xdotool("mousemove", "900", "100");
      await xdotool("mousedown", "1");
      await xdotool("mousemove", "950", "500");
      await xdotool("mousemove", "1000", "600");
      await xdotool("mouseup", "1");
      await waitFor(async () => (await chips()).length === 1, "a chip for the region on the right monitor");
      const region = await askAndGetImage("This part?", "right-region.png");
      assert.deepEqual([region.width, region.height], [100, 500]);
      assert.equal(await region.pixel(0, 0), patternAt(900, 100));
      assert.equal(await region.pixel(99, 499), patternAt(999, 599));
    } finally {
      await xrandr("--delmonitor", "RIGHT").catch(() => {});
      await xrandr("--delmonitor", "LEFT").catch(() => {});
      await setMode("fullscreen");
    }
  });

  it("perch screenshot, show and toggle reach the running app", async () => {
    const env = { ...process.env, PERCH_IPC_PATH: join(runtime, "perch", "review.sock") };
    const shot = await run(CLI, ["screenshot", "--mode", "fullscreen"], { env });
    assert.match(shot.stdout, /Captured Monitor screen \(1280 x 800\)/);
    await waitFor(async () => (await chips()).length === 1, "the chip from perch screenshot");
    await (await $('button[aria-label^="Remove"]')).click();
    await waitFor(async () => (await chips()).length === 0, "the chip to go");

    await run(CLI, ["toggle"], { env });
    await waitFor(async () => (await perchWindows()).length === 0, "perch toggle to hide the window");
    await run(CLI, ["show"], { env });
    await waitFor(async () => (await perchWindows()).length === 1, "perch show to bring it back");
    const bad = await run(CLI, ["screenshot", "--mode", "everything"], { env }).catch((e) => e);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /unknown screenshot mode "everything"/);
  });
});
