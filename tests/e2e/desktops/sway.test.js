// Perch under a real sway (wlroots) with its real portals (tests/e2e/desktops/sway.sh): the app is a
// native Wayland window; with no GlobalShortcuts portal the user is told how to bind the keys in
// sway's own config, and the keys bound that way (Alt+. and Ctrl+Alt+D, as the lane's config
// binds them) work: the screenshot goes through the Screenshot portal, and dictate-anywhere types
// the whole sentence into a GTK field on Wayland. `perch selection` and `perch doctor` too.
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { ARTIFACTS, CLI, sleep, waitFor } from "../lib/harness.js";
import { swayWindows } from "../lib/desktops.js";
import { textField } from "../lib/text_field.js";
import { chooseMicrophoneAndModel, launchWithMicrophone } from "../lib/voice.js";

const run = promisify(execFile);
const SENTENCE = "Please take a screenshot of my editor.";
const words = (text) => text.toLowerCase().replace(/[^a-z ]/g, "").trim();

/** The whole output as the compositor shows it. */
async function grab(name) {
  await run("grim", [join(ARTIFACTS, `sway-${name}.png`)]).catch(() => {});
}

/** Keys through a virtual keyboard, as a person types them (`wtype` syntax). */
const keys = (...args) => run("wtype", args);

/**
 * Runs what sway's bindings `exec` as `perch ...` (handed over by the lane's shim, since sway's
 * user cannot reach the app) with the real CLI, against `dataDir`. Returns a stop function.
 */
function relayBindings(dataDir) {
  let done = 0;
  const timer = setInterval(() => {
    const lines = readFileSync(process.env.SWAY_LANE_COMMANDS, "utf8").split("\n").filter(Boolean);
    for (const line of lines.slice(done)) {
      execFile(CLI, line.split(" "), { env: { ...process.env, PERCH_DATA_DIR: dataDir } }, (error, stdout, stderr) => {
        if (error) console.warn(`sway binding "perch ${line}" failed: ${stderr || error.message}`);
      });
    }
    done = lines.length;
  }, 100);
  return () => clearInterval(timer);
}

/** The `bindsym ...` line Settings tells the user to add for the shortcut labelled `label`
 * (once the app has heard that the desktop did not bind it). */
async function bindingLine(browser, label) {
  let text = "";
  await waitFor(async () => {
    text = await browser.execute((label) => {
      const rows = [...document.querySelectorAll("*")].filter((e) => e.textContent.includes(label) && e.textContent.includes("bindsym"));
      rows.sort((a, b) => a.textContent.length - b.textContent.length);
      return rows[0]?.textContent ?? "";
    }, label);
    return /`bindsym [^`]+`/.test(text);
  }, async () => `a bindsym line for ${label} (has: ${text || (await browser.$("body").getText()).split(label)[1]?.slice(0, 600)})`);
  return /`(bindsym [^`]+)`/.exec(text)[1];
}

describe("Perch on sway", () => {
  let session;
  const $ = (s) => session.browser.$(s);
  const cli = (...args) => execFileSync(CLI, args, { env: { ...process.env, PERCH_DATA_DIR: session.dataDir } }).toString();

  before(async () => {
    session = await launchWithMicrophone(SENTENCE);
    stopRelay = relayBindings(session.dataDir);
  });
  let stopRelay = () => {};
  after(async () => {
    stopRelay();
    await session?.close();
  });

  it("is a native Wayland window", async () => {
    const perch = await waitFor(async () => (await swayWindows()).find((w) => w.name === "Perch"), "Perch's window in sway's tree");
    assert.equal(perch.wayland, true, `a Wayland client, not XWayland: ${JSON.stringify(perch)}`);
    await (await $("textarea")).waitForDisplayed();
    await grab("window");
    // sway tiles it like every window; the rule README gives floats it at its own size.
    await run("swaymsg", ['[app_id="perch-desktop"] floating enable, sticky enable']);
    const floating = await waitFor(
      async () => (await swayWindows()).find((w) => w.name === "Perch" && w.floating && w.sticky),
      "Perch to float",
    );
    assert.ok(Math.abs(floating.rect.width - 450) <= 2 && Math.abs(floating.rect.height - 450) <= 40, `its own size: ${JSON.stringify(floating.rect)}`);
    await grab("window-floating");
    // Tiled again, so the other tests see it as sway's default puts it.
    await run("swaymsg", ['[app_id="perch-desktop"] floating disable']);
  });

  it("says how to bind the shortcuts in sway's config, as there is no GlobalShortcuts portal, and how to keep Perch on top", async () => {
    await (await $('a[aria-label="Settings"]')).click();
    const body = async () => (await $("body")).getText();
    await waitFor(async () => (await body()).includes("bindsym"), async () => `the sway binding hint in Settings (has: ${(await body()).slice(0, 600)})`);
    const text = await body();
    assert.match(text, /bindsym Mod1\+period exec .*perch screenshot/);
    assert.doesNotMatch(text, /Unable to find keycode/, "no X grab error on Wayland");
    // No GNOME custom shortcut is offered on sway.
    assert.doesNotMatch(text, /GNOME's shortcuts/);
    // Nor is always on top claimed: README's rule is named.
    assert.equal(
      await (await $('[data-testid="window-on-top"]')).getText(),
      'Always on top: sway keeps floating windows above tiled ones. Add for_window [app_id="perch-desktop"] floating enable, sticky enable to your sway config, then run swaymsg reload.',
    );
    await grab("shortcut-hint");
  });

  it("Alt+., bound in sway's config as Settings says, captures the screen through the portal", async () => {
    const line = await bindingLine(session.browser, "Screenshot shortcut");
    assert.equal(line, "bindsym Mod1+period exec perch screenshot");
    await run("swaymsg", [line]);
    await (await $('a[aria-label="Chat"]')).click();
    const chips = async () => session.browser.$$(".capture-chip");
    assert.equal((await chips()).length, 0);
    await keys("-M", "alt", ".", "-m", "alt");
    await waitFor(async () => (await chips()).length === 1, "a chip after Alt+.", 30_000);
    const name = await session.browser.execute(() => document.querySelector(".capture-chip").textContent);
    assert.match(name, /Monitor/);
    await grab("screenshot-chip");
  });

  it("`perch doctor` names the desktop and what its portals offer", async () => {
    const out = cli("doctor");
    assert.match(out, /display\s+Wayland \(wayland-\d+\)/);
    assert.match(out, /screen capture Wayland/);
    assert.match(out, /ok desktop\s+sway on Wayland/);
    assert.match(out, /ok screenshot portal\s+version \d+: captures go through it/);
    assert.match(out, /-- remote desktop portal\s+not offered .*types with wtype/);
    assert.match(out, /-- global shortcuts portal.*does not offer.*bindsym Mod1\+period exec perch screenshot/);
  });

  it("dictate-anywhere, bound as Settings says, types the whole sentence into a GTK field on Wayland", async () => {
    await chooseMicrophoneAndModel(session.browser);
    const line = await bindingLine(session.browser, "Dictate into any app");
    assert.equal(line, "bindsym Ctrl+Mod1+d exec perch dictate --toggle");
    await run("swaymsg", [line]);

    const field = await textField("Perch test field", "perch-test-field", { backend: "wayland" });
    try {
      const focusedField = async () => (await swayWindows()).find((w) => w.focused && w.name === "Perch test field");
      // Asked until sway has the window (it may map before its title is set).
      await waitFor(async () => (await run("swaymsg", ['[title="Perch test field"] focus']).catch(() => null)) && focusedField(), "the field to have the focus");
      assert.equal((await swayWindows()).find((w) => w.name === "Perch test field").wayland, true);
      await keys("-M", "ctrl", "-M", "alt", "d", "-m", "alt", "-m", "ctrl");
      // The sentence is about 3 s of speech, played in real time by the virtual microphone.
      await sleep(5000);
      await grab("dictating");
      // sway gives the indicator the focus (Wayland has no "never focus me" for a window), so
      // the words below arrive whole only because typing waits until it has let go.
      const indicator = (await swayWindows()).find((w) => w.name === "Perch dictation");
      assert.ok(indicator?.focused, `the indicator has the focus while Perch listens: ${JSON.stringify(indicator)}`);
      await keys("-M", "ctrl", "-M", "alt", "d", "-m", "alt", "-m", "ctrl");
      await waitFor(() => words(field.text).includes("screenshot of my editor"), () => `the words in the field (has "${field.text}")`, 60_000);
      assert.equal(words(field.text), words(SENTENCE));
      await grab("dictated");

      // `perch selection` takes the field's selected text into Perch, as on X11.
      await (await $('a[aria-label="Chat"]')).click();
      await field.setText("teh quick brown fox");
      field.selectAll();
      await sleep(500);
      cli("selection");
      const chip = await $(".selection-chip");
      await chip.waitForDisplayed({ timeout: 15_000 });
      const shown = await session.browser.execute(() => document.querySelector(".selection-chip").textContent);
      assert.match(shown, /teh quick brown fox/);
      await grab("selection");
    } finally {
      field.close();
    }
  });
});
