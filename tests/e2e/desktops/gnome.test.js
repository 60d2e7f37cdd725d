// Perch under a real GNOME Shell 43 (Wayland, headless) with its real portals
// (tests/e2e/desktops/gnome.sh): a native window, which Settings says is not kept on top and how
// to do it; with no GlobalShortcuts portal Settings says where GNOME binds a command to a key,
// and adds GNOME's own custom shortcut on the user's yes, which the keys then run; `perch
// doctor`; a screenshot through the Screenshot portal with the permission a user's "Allow"
// stores; dictate-anywhere typing the whole sentence into a GTK field through the RemoteDesktop
// portal, its dialog answered as a user would, and again with no dialog.
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { ARTIFACTS, CLI, sleep, waitFor } from "../lib/harness.js";
import { textField } from "../lib/text_field.js";
import { gnomeClick, gnomeKeys, gnomeShell as shell, gnomeWindows } from "../lib/desktops.js";
import { pixel } from "../lib/screen.js";
import { chooseMicrophoneAndModel, launchWithMicrophone } from "../lib/voice.js";

const run = promisify(execFile);
const SENTENCE = "Please take a screenshot of my editor.";
const words = (text) => text.toLowerCase().replace(/[^a-z ]/g, "").trim();
const MEDIA_KEYS = "org.gnome.settings-daemon.plugins.media-keys";
const ENTRIES = "/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/";
/** A GSettings value in the lane's session, as `gsettings get` prints it. */
const gsettings = async (...args) => (await run("gsettings", args)).stdout.trim();
const entry = (path) => `${MEDIA_KEYS}.custom-keybinding:${path}`;

/** The whole screen as GNOME Shell shows it. */
async function grab(name) {
  // The dialog's answer is read from these pictures: the folder must be there.
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = join(ARTIFACTS, `gnome-${name}.png`);
  await run("gdbus", ["call", "--session", "-d", "org.gnome.Shell.Screenshot", "-o", "/org/gnome/Shell/Screenshot", "-m", "org.gnome.Shell.Screenshot.Screenshot", "false", "false", file]).catch(() => {});
  return file;
}

/**
 * GNOME 43's "Remote desktop" dialog answered as a user does: "Allow remote interaction" turned
 * on (its switch turns blue), then Share. Each click is checked on the screen and made again if
 * it was lost (a click right after the dialog maps can be).
 */
async function answerRemoteDesktopDialog() {
  const dialog = () => gnomeWindows().then((all) => all.find((w) => w.name === "Remote desktop"));
  await waitFor(dialog, "GNOME's remote desktop dialog", 60_000);
  for (let attempt = 0; attempt < 5; attempt++) {
    await sleep(500);
    const open = await dialog();
    if (!open) return;
    const { x, y } = open.rect;
    const shot = await grab(`remote-desktop-dialog-${attempt}`);
    const [r, g, b] = (await pixel(shot, x + 420, y + 74)).match(/[0-9A-F]{2}/g).map((h) => parseInt(h, 16));
    if (b > 150 && r < 120) await gnomeClick(x + 453, y + 22); // switched on: Share
    else await gnomeClick(x + 429, y + 74);
  }
  assert.equal(await dialog(), undefined, "the remote desktop dialog answered");
}

/**
 * Scrolls the smallest element matching `selector` and holding `text` into view within its own
 * scrolling area, `margin` pixels below its top, as the user scrolls it (scrollIntoView would
 * move the window's page too, title bar and all).
 */
async function scrollTo(browser, selector, text = "", margin = 40) {
  await browser.execute((selector, text, margin) => {
    const holding = [...document.querySelectorAll(selector)].filter((e) => e.textContent.includes(text));
    holding.sort((a, b) => a.textContent.length - b.textContent.length);
    let area = holding[0]?.parentElement;
    while (area && !(area.scrollHeight > area.clientHeight && /auto|scroll/.test(getComputedStyle(area).overflowY))) area = area.parentElement;
    if (area) area.scrollTop += holding[0].getBoundingClientRect().top - area.getBoundingClientRect().top - margin;
  }, selector, text, margin);
  await sleep(300);
}

describe("Perch on GNOME", () => {
  let session;
  const $ = (s) => session.browser.$(s);
  const cli = (...args) => execFileSync(CLI, args, { env: { ...process.env, PERCH_DATA_DIR: session.dataDir } }).toString();

  before(async () => {
    session = await launchWithMicrophone(SENTENCE);
  });
  after(async () => {
    await session?.close();
  });

  it("is a native Wayland window", async () => {
    const perch = await waitFor(async () => (await gnomeWindows()).find((w) => w.name === "Perch"), "Perch's window in GNOME Shell");
    assert.equal(perch.wayland, true, JSON.stringify(perch));
    await grab("window");
  });

  it("says where GNOME binds a command to a key, as there is no GlobalShortcuts portal", async () => {
    await (await $('a[aria-label="Settings"]')).click();
    const body = async () => (await $("body")).getText();
    await waitFor(async () => (await body()).includes("Custom Shortcuts"), async () => `the GNOME hint in Settings (has: ${(await body()).slice(0, 800)})`);
    assert.match(await body(), /Custom Shortcuts, add one for the keys Alt\+\. with the command `perch screenshot`\./);
    assert.doesNotMatch(await body(), /Unable to find keycode/, "no X grab error on Wayland");
    // Seen where the user reads it, in the 450x450 window.
    await scrollTo(session.browser, "*", "Custom Shortcuts");
    await grab("shortcut-hint");
  });

  it("says always on top is not in effect on GNOME, and that Alt+Space gets it", async () => {
    const line = await $('[data-testid="window-on-top"]');
    await line.waitForDisplayed();
    assert.equal(
      await line.getText(),
      "Always on top: not in effect, GNOME lets no app keep itself on top. Press Alt+Space in Perch's window and choose Always on Top.",
    );
    // What it says is so: GNOME Shell does not keep Perch's window above the others.
    const perch = (await gnomeWindows()).find((w) => w.name === "Perch");
    assert.equal(perch.above, false, JSON.stringify(perch));
  });

  it("`perch doctor` names the desktop and what its portals offer", async () => {
    const out = cli("doctor");
    assert.match(out, /ok desktop\s+GNOME on Wayland/);
    assert.match(out, /ok screenshot portal\s+version \d+/);
    assert.match(out, /ok remote desktop portal\s+version \d+/);
  });

  it("captures the screen through the Screenshot portal, with the permission a user's Allow stores", async () => {
    // What GNOME's "Allow" in its screenshot dialog stores for an application without an app id.
    await run("gdbus", ["call", "--session", "-d", "org.freedesktop.impl.portal.PermissionStore", "-o", "/org/freedesktop/impl/portal/PermissionStore",
      "-m", "org.freedesktop.impl.portal.PermissionStore.SetPermission", "screenshot", "true", "screenshot", "", "['yes']"]);
    await (await $('a[aria-label="Chat"]')).click();
    const out = cli("screenshot");
    assert.match(out, /Captured/);
    const chips = async () => session.browser.$$(".capture-chip");
    await waitFor(async () => (await chips()).length === 1, "a chip after perch screenshot");
    await grab("screenshot-chip");
    await (await $(".capture-chip button[aria-label^='Remove']")).click().catch(() => {});
  });

  it("adds GNOME's own custom shortcut for Alt+. on the user's yes, beside the user's own, and the keys run the installed perch", async () => {
    // The user's own custom shortcut, as GNOME's Settings writes it.
    const theirs = `${ENTRIES}custom0/`;
    await run("gsettings", ["set", entry(theirs), "name", "Terminal"]);
    await run("gsettings", ["set", entry(theirs), "binding", "<Super>t"]);
    await run("gsettings", ["set", entry(theirs), "command", "gnome-terminal"]);
    await run("gsettings", ["set", MEDIA_KEYS, "custom-keybindings", `['${theirs}']`]);
    const ours = `${ENTRIES}perch-screenshot/`;
    const command = `${CLI} screenshot`;

    await (await $('a[aria-label="Settings"]')).click();
    const offer = await $('[data-shortcut="screenshot"]');
    await (await offer.$("button=Add to GNOME's shortcuts")).click();
    const dialog = await offer.$('[role="dialog"]');
    assert.equal(await (await dialog.$("p")).getText(), `Add a custom shortcut to GNOME's keyboard settings: Alt+. runs ${command}?`);
    await scrollTo(session.browser, '[data-shortcut="screenshot"]', "", 120);
    await grab("add-shortcut-confirm");
    await (await dialog.$("button=Add")).click();
    const added = await offer.$('[role="status"]');
    await added.waitForDisplayed({ timeout: 15_000 });
    const said = await added.getText();
    assert.ok(said.startsWith(`Added to GNOME's custom shortcuts: Alt+. runs ${command}. Change it in GNOME's Settings`), said);
    await scrollTo(session.browser, '[data-shortcut="screenshot"]', "", 120);
    await grab("add-shortcut-added");

    // In GNOME's settings, read back in the session: the user's own kept, Perch's added once.
    assert.equal(await gsettings("get", MEDIA_KEYS, "custom-keybindings"), `['${theirs}', '${ours}']`);
    assert.equal(await gsettings("get", entry(ours), "binding"), "'<Alt>period'");
    assert.equal(await gsettings("get", entry(ours), "command"), `'${command}'`);
    assert.equal(await gsettings("get", entry(theirs), "command"), "'gnome-terminal'");

    // Alt+. pressed in GNOME Shell: GNOME runs the command, which captures into Perch.
    await (await $('a[aria-label="Chat"]')).click();
    const chips = async () => (await session.browser.$$(".capture-chip")).length;
    const before = await chips();
    await gnomeKeys("Alt_L", "period");
    await waitFor(async () => (await chips()) === before + 1, "a chip after Alt+. through GNOME's custom shortcut", 30_000);
    await grab("add-shortcut-pressed");
    await (await $(".capture-chip button[aria-label^='Remove']")).click().catch(() => {});

    // Taken out again from Settings: only Perch's entry goes.
    await (await $('a[aria-label="Settings"]')).click();
    await (await (await $('[data-shortcut="screenshot"]')).$("button=Remove from GNOME's shortcuts")).click();
    await (await (await $('[data-shortcut="screenshot"]')).$("button=Add to GNOME's shortcuts")).waitForDisplayed();
    assert.equal(await gsettings("get", MEDIA_KEYS, "custom-keybindings"), `['${theirs}']`);
  });

  it("dictate-anywhere types the whole sentence into a GTK field through the RemoteDesktop portal, the first time and the next", async () => {
    await chooseMicrophoneAndModel(session.browser);
    const field = await textField("Perch test field", "perch-test-field", { backend: "wayland" });
    const dictate = async (answerDialog) => {
      await field.setText("");
      // The field's window is mapped (and titled) a moment after it starts; under load, later.
      await waitFor(async () => (await gnomeWindows()).some((w) => w.name === "Perch test field"), "the field's window to be mapped");
      await shell(`global.get_window_actors().map((a) => a.meta_window).find((w) => w.get_title() === "Perch test field").activate(global.get_current_time()); return true;`);
      await waitFor(async () => (await gnomeWindows()).find((w) => w.focused && w.name === "Perch test field"), "the field to have the focus");
      // GNOME has no GlobalShortcuts portal: the custom shortcut Settings names runs this.
      cli("dictate", "--toggle");
      // The sentence is about 3 s of speech, played in real time by the virtual microphone.
      await sleep(5000);
      await grab(`dictating-${answerDialog ? "first" : "next"}`);
      cli("dictate", "--toggle");
      if (answerDialog) {
        // The first typing asks: GNOME's "Remote desktop" dialog, answered as a user does (turn
        // on "Allow remote interaction", then Share; places measured on GNOME 43's dialog).
        await answerRemoteDesktopDialog();
      }
      await waitFor(() => words(field.text).includes("screenshot of my editor"), () => `the words in the field (has "${field.text}")`, 60_000);
      await sleep(1000);
      assert.equal(words(field.text), words(SENTENCE), "every word, the first letters included");
      assert.equal((await gnomeWindows()).find((w) => w.name === "Remote desktop"), undefined, "no dialog the second time");
    };
    try {
      await dictate(true);
      await grab("dictated-first");
      await dictate(false);
      await grab("dictated-next");
    } finally {
      field.close();
    }
  });
});
