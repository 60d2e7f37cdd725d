// @-file attachments in the real app against a fake Ollama: the picker searches the folder set
// in Settings -> Tools (skipping what .gitignore and build folders hide), a picked file becomes a
// chip, rides on the question as a delimited block with its path, and shows on the question
// when the conversation is reopened; a file too large is offered as its first lines.
import assert from "node:assert/strict";
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { freshDataDir, freshRuntimeDir, launch, screenshot, startFakeLlm, waitFor } from "../lib/harness.js";

const NOTES = "The quokka handshake sends three frames before the first byte of data.\n";

describe("files with @", () => {
  let fake;
  let session;
  const $ = (s) => session.browser.$(s);
  const project = realpathSync(freshDataDir());

  before(async () => {
    mkdirSync(join(project, "docs"));
    mkdirSync(join(project, "target"));
    writeFileSync(join(project, ".gitignore"), "quokka_secret.md\n");
    writeFileSync(join(project, "docs", "quokka_notes.md"), NOTES);
    writeFileSync(join(project, "quokka_secret.md"), "ignored by git\n");
    writeFileSync(join(project, "target", "quokka_build.md"), "a build output\n");
    // Over the 256 KiB a file may bring: offered as its first lines instead.
    writeFileSync(join(project, "quokka_big.log"), "a line of a long quokka log\n".repeat(12_000));

    fake = await startFakeLlm("ollama");
    session = await launch(freshDataDir(), {
      OLLAMA_HOST: fake.host,
      PERCH_KEY_STORE: "file",
      XDG_RUNTIME_DIR: freshRuntimeDir(),
    });
    // The picker searches the folders set in Settings -> Tools.
    await (await $('a[aria-label="Settings"]')).click();
    await (await $('button[role="tab"]=Tools')).click();
    const folders = await $('textarea[aria-label="Folders"]');
    await folders.setValue(project);
    await (await $('button[role="tab"]=General')).click(); // leaving the field saves it
    await (await $('a[aria-label="Chat"]')).click();
    const box = await $('textarea[aria-label="Message"]');
    await box.waitForEnabled();
    await waitFor(async () => (await (await $('select[aria-label="Model"]')).getValue()) !== "", "a model");
  });
  after(async () => {
    await session?.close();
    fake?.stop();
  });

  const options = async () => {
    const titles = [];
    for (const option of await session.browser.$$('[role="option"]')) titles.push(await option.getAttribute("title"));
    return titles;
  };

  it("finds a file with @, attaches it as a chip and sends it with the question", async () => {
    const box = await $('textarea[aria-label="Message"]');
    await box.setValue("Summarise @quokka");
    const found = await waitFor(async () => {
      const titles = await options();
      return titles.includes(join(project, "docs", "quokka_notes.md")) && titles;
    }, "the picker to list the notes");
    assert.ok(!found.some((t) => t.endsWith("quokka_secret.md")), "git-ignored files are not offered");
    assert.ok(!found.some((t) => t.includes("/target/")), "build folders are skipped");
    await screenshot("files-picker");

    // Arrow to the notes and take them with Enter.
    await waitFor(async () => {
      const active = await $('[role="option"][aria-selected="true"]');
      if ((await active.getAttribute("title")).endsWith("quokka_notes.md")) return true;
      await session.browser.keys("ArrowDown");
      return false;
    }, "the notes to be the active option");
    await session.browser.keys("Enter");
    const chip = await $(".file-chip");
    await chip.waitForDisplayed();
    assert.equal(await chip.getAttribute("title"), join(project, "docs", "quokka_notes.md"));
    assert.equal(await box.getValue(), "Summarise ", "the @query is replaced by the chip");
    assert.equal((await session.browser.$$('[role="option"]')).length, 0, "the picker closed");

    await fake.script({ steps: [{ type: "text", text: "Three frames come first." }, { type: "finish" }], token_delay_ms: 0 });
    await box.addValue("these notes");
    await session.browser.keys("Enter");
    const request = await waitFor(async () => {
      const chats = (await fake.requests()).filter((r) => r.path === "/api/chat");
      return chats.length > 0 && chats.at(-1);
    }, "the question to reach the fake Ollama");
    const user = request.body.messages.findLast((m) => m.role === "user");
    assert.ok(user.content.includes(`<file path="${join(project, "docs", "quokka_notes.md")}">`), user.content);
    assert.ok(user.content.includes(NOTES.trim()), "the file's text goes with it");
    assert.ok(user.content.trimEnd().endsWith("Summarise these notes"), "the question follows the file");
    await waitFor(async () => (await session.browser.$$(".composer .file-chip")).length === 0, "the chip to clear once sent");
    await waitFor(async () => (await (await $(".message.assistant:not([aria-busy])")).getText()).includes("Three frames"), "the answer");

    // Reopened from History, the question still shows the file it carried.
    await (await $('a[aria-label="History"]')).click();
    const row = await $(".row .row-open");
    await row.waitForDisplayed();
    await row.click();
    const stored = await $(".message.user .file-chip");
    await stored.waitForDisplayed();
    assert.equal(await stored.getText(), "quokka_notes.md");
    await screenshot("files-reopened");
  });

  it("offers the first lines of a file that is too large", async () => {
    await (await $('a[aria-label="Chat"]')).click();
    const box = await $('textarea[aria-label="Message"]');
    await box.setValue("@quokka_big");
    await waitFor(async () => (await options()).includes(join(project, "quokka_big.log")), "the big log in the picker");
    await session.browser.keys("Enter");
    const offer = await $("button*=Attach the first");
    await offer.waitForDisplayed();
    assert.match(await (await $(".file-notice")).getText(), /^quokka_big\.log is \d+ KB; a file may be at most 256 KB\./);
    await screenshot("files-too-large");
    await offer.click();
    const chip = await $(".composer .file-chip");
    await chip.waitForDisplayed();
    assert.match(await chip.getText(), /first [\d,]+ lines/);
  });
});
