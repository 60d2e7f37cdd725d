// Dictation in the real app, recording through its own microphone code (cpal and ALSA) from a
// virtual microphone that plays espeak-ng speech: choose the microphone and the model in
// Settings -> Voice, press the mic button, see the partial text, stop, and find the words at
// the cursor in the input box, unsent. Then push-to-talk with Perch hidden: the bubble shows
// that it listens, and the window comes back with the text. Last, dictate-anywhere: with Perch
// hidden and a GTK text field focused, the words are typed into the field, Perch's window never
// appears (only the small indicator, which leaves the focus in the field, and goes once the
// words are typed), the clipboard is what it was, and Esc cancels a dictation.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { CLI, freshDataDir, launch, perchWindows, screenshot, visibleWindows, waitFor, xdotool } from "../lib/harness.js";
import { textField } from "../lib/text_field.js";
import { MODEL, chooseMicrophoneAndModel, virtualMicrophone } from "../lib/voice.js";

const SENTENCE = "Please take a screenshot of my editor.";

/** The dictate-anywhere indicator's windows on screen (none, or one). */
async function indicatorWindows() {
  return visibleWindows("^Perch dictation$");
}

/** The indicator's window once it is on screen (null until then, for `waitFor`). */
const indicatorShown = async () => ((await indicatorWindows()).at(0) ?? null);

async function windowGeometry(id) {
  const v = Object.fromEntries((await xdotool("getwindowgeometry", "--shell", id)).split("\n").map((l) => l.split("=")));
  return { x: Number(v.X), y: Number(v.Y), width: Number(v.WIDTH), height: Number(v.HEIGHT) };
}

const words = (text) => text.toLowerCase().replace(/[^a-z ]/g, "").trim();

/** Empties the input box the way a user does (so the app sees it), whatever draft it kept. */
async function emptyBox(browser, box) {
  await box.click();
  await browser.keys(["Control", "a"]);
  await browser.keys("Backspace");
  await waitFor(async () => (await box.getValue()) === "", "the input box to be empty");
}

describe("voice dictation", () => {
  let session;
  const $ = (s) => session.browser.$(s);

  before(async () => {
    assert.ok(existsSync(MODEL), `${MODEL} is missing: run make deps`);
    session = await launch(freshDataDir(), { ALSA_CONFIG_PATH: virtualMicrophone(SENTENCE), PERCH_KEY_STORE: "file" });
  });
  after(async () => {
    await session?.close();
  });

  it("is set up in Settings -> Voice: the microphone and the model file", async () => {
    await chooseMicrophoneAndModel(session.browser);
    const rows = await session.browser.$$(".voice-models tr");
    assert.equal(rows.length, 6, "tiny, base and small in both kinds");
    // The push-to-talk shortcut is registered with the X server.
    await waitFor(async () => (await (await $("body")).getText()).includes("Active: Ctrl+Alt+Space"), async () => `the shortcut to be active (${session.dataDir})`);
    await screenshot("voice-settings");
  });

  it("puts the dictated words at the cursor in the input box, unsent", async () => {
    await (await $('a[aria-label="Chat"]')).click();
    const box = await $('textarea[aria-label="Message"]');
    await emptyBox(session.browser, box);
    await box.addValue("Note: ");
    await (await $('button[aria-label="Dictate"]')).click();
    const stop = await $('button[aria-label="Stop dictation"]');
    await stop.waitForDisplayed({ timeout: 15_000 });
    // The greyed line shows what is heard so far ("Listening…" until the first partial text).
    const partial = await $(".dictation-partial");
    await partial.waitForDisplayed();
    assert.match(await partial.getText(), /Listening|screenshot|editor/i);
    await waitFor(async () => Number((await (await $(".mic-time")).getText()).replace("s", "")) >= 3, "the sentence to be heard");
    await screenshot("voice-listening");
    await stop.click();
    await waitFor(async () => words(await box.getValue()).includes("screenshot of my editor"), async () => `the final text in the box (has "${await box.getValue()}")`, 60_000);
    const text = await box.getValue();
    assert.ok(text.startsWith("Note: Please take a screenshot"), text);
    assert.equal((await session.browser.$$(".message.user")).length, 0, "nothing was sent");
    assert.equal(await (await $(".dictation-partial")).isExisting(), false, "the greyed text is gone");
    await screenshot("voice-final");
  });

  it("push-to-talk works with Perch hidden: the bubble listens, the window returns with the text", async () => {
    const box = await $('textarea[aria-label="Message"]');
    await emptyBox(session.browser, box);
    // Hidden as the summon key would (this openbox has no tray to close into).
    execFileSync(CLI, ["toggle"], { env: { ...process.env, PERCH_DATA_DIR: session.dataDir } });
    await waitFor(async () => (await perchWindows()).length === 0, "the window to hide");
    await xdotool("keydown", "ctrl+alt+space");
    await waitFor(async () => (await perchWindows()).length === 1, "the bubble to appear");
    await waitFor(async () => (await (await $(".mini-bubble")).getAttribute("aria-label")) === "Perch is listening", "the bubble to listen");
    await screenshot("voice-bubble-listening");
    // Hold while the sentence plays, then let go.
    await new Promise((r) => setTimeout(r, 3000));
    await xdotool("keyup", "ctrl+alt+space");
    const again = await $('textarea[aria-label="Message"]');
    await waitFor(async () => words(await again.getValue()).includes("screenshot of my editor"), "the text in the restored window", 60_000);
    assert.equal(words(await again.getValue()), words(SENTENCE));
    assert.equal((await session.browser.$$(".message.user")).length, 0, "nothing was sent");
    await screenshot("voice-push-to-talk");
  });

  it("dictate-anywhere types the words into the focused application, Perch staying hidden", async () => {
    await (await $('a[aria-label="Settings"]')).click();
    await (await $("button=Voice")).click();
    await waitFor(async () => (await (await $("body")).getText()).includes("Active: Ctrl+Alt+D"), "the dictate-anywhere shortcut to be active");
    execFileSync(CLI, ["toggle"], { env: { ...process.env, PERCH_DATA_DIR: session.dataDir } });
    await waitFor(async () => (await perchWindows()).length === 0, "the window to hide");
    const field = await textField("Perch test field");
    try {
      await field.setClipboard("what the user copied before");
      await field.focus();
      const focused = await xdotool("getwindowfocus");
      await xdotool("keydown", "ctrl+alt+d");
      // The indicator shows Perch listening, at the bottom of the screen, without the focus.
      const indicator = await waitFor(indicatorShown, "the dictation indicator to appear");
      const at = await windowGeometry(indicator);
      assert.ok(at.y > 800 / 2 && Math.abs(at.x + at.width / 2 - 1280 / 2) <= 2, `at the bottom centre: ${JSON.stringify(at)}`);
      assert.ok(at.height <= 80, `one line high: ${JSON.stringify(at)}`);
      // It says it listens (read from its own page, then back to the main one). The words so
      // far are the same partial texts the composer shows; the component test checks them.
      const main = await session.browser.getWindowHandle();
      const other = (await session.browser.getWindowHandles()).find((h) => h !== main);
      assert.ok(other, "the indicator is a page of the app");
      await session.browser.switchToWindow(other);
      await waitFor(async () => {
        const said = await session.browser.execute(() => document.querySelector('[data-testid="dictation-indicator"]')?.textContent ?? "");
        return /Listening… Esc cancels\./.test(said);
      }, "the indicator to say it listens");
      await session.browser.switchToWindow(main);
      await screenshot("voice-dictate-anywhere-indicator", { window: false });
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(await xdotool("getwindowfocus"), focused, "the text field keeps the focus");
      // Perch did not come forward: the focus stays where the words go.
      assert.equal((await perchWindows()).length, 0, "no Perch window while dictating");
      await xdotool("keyup", "ctrl+alt+d");
      await waitFor(() => words(field.text).includes("screenshot of my editor"), () => `the words in the field (has "${field.text}")`, 60_000);
      assert.equal(words(field.text), words(SENTENCE));
      await waitFor(async () => (await indicatorWindows()).length === 0, "the indicator to go with the dictation");
      assert.equal((await perchWindows()).length, 0, "Perch stayed hidden");
      assert.equal(await field.clipboard(), "what the user copied before", "the clipboard is untouched");
      await screenshot("voice-dictate-anywhere", { window: false });

      // Esc while speaking cancels (the shortcut's keys still held, as a person holding them
      // presses it): the indicator goes and nothing is typed.
      await field.setText("kept as it was");
      await field.focus();
      await xdotool("keydown", "ctrl+alt+d");
      await waitFor(indicatorShown, "the indicator for the second dictation");
      await new Promise((r) => setTimeout(r, 1500));
      await xdotool("key", "Escape");
      await waitFor(async () => (await indicatorWindows()).length === 0, "the indicator to go on Esc");
      await xdotool("keyup", "ctrl+alt+d");
      await new Promise((r) => setTimeout(r, 3000));
      assert.equal(field.text, "kept as it was", "nothing typed after Esc");
    } finally {
      field.close();
    }
  });
});
