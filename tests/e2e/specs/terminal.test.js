// The terminal in the real app: the fake Ollama asks for terminal__run_command; the first
// card asks for the working folder (none is assumed), which is then saved in Settings; the
// approval card shows the highlighted command, its folder, the model's reason and the sandbox;
// "Always allow" shows the whole command and its folder in Settings -> Permissions, where it
// is revoked; Run
// starts it in a real PTY under the sandbox and its output appears live in the xterm.js
// panel, which lists the command with its exit code; Deny leaves it unrun; a blocked command
// is refused without a question and the card says why.
import assert from "node:assert/strict";
import { mkdtempSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { freshDataDir, launch, screenshot, startFakeLlm, waitFor } from "../lib/harness.js";

describe("terminal", () => {
  let fake;
  let session;
  const work = mkdtempSync(join(tmpdir(), "perch-e2e-work-"));
  const $ = (s) => session.browser.$(s);
  const $$ = (s) => session.browser.$$(s);
  const runCommand = async (command, reason) => {
    await fake.script({ steps: [{ type: "tool_call", name: "terminal__run_command", arguments: { command, reason } }, { type: "finish" }] });
    await fake.script({ steps: [{ type: "text", text: "Done." }, { type: "finish" }] });
  };
  const ask = async (text) => {
    const box = await $('textarea[aria-label="Message"]');
    await box.waitForEnabled();
    await box.setValue(text);
    await session.browser.keys("Enter");
  };
  const lastCard = async () => {
    const cards = await $$(".terminal-card");
    return cards[cards.length - 1];
  };

  before(async () => {
    fake = await startFakeLlm("ollama");
    session = await launch(freshDataDir(), { OLLAMA_HOST: fake.host, PERCH_KEY_STORE: "file" });
    await waitFor(async () => (await (await $('select[aria-label="Model"]')).getValue()) === "ollama:qwen3-vl:8b-instruct", "the default model");
  });
  after(async () => {
    await session?.close();
    fake?.stop();
  });

  it("asks on the card, runs on Run, and streams the output into the panel", async () => {
    await runCommand("for i in 1 2 3; do echo line-$i; done; echo finished > made.txt; echo all-done", "to show the output");
    await ask("Run a command that prints three lines");
    const approval = await $('[aria-label="Approve this command"]');
    await approval.waitForDisplayed({ timeout: 20000 });
    // No working folder yet: the card asks for one, and Run waits for it.
    assert.match(await approval.getText(), /needs a working folder first/);
    assert.equal(await (await $("button=Run")).isEnabled(), false, "Run before a folder is chosen");
    await screenshot("terminal-first-folder");
    // Looked up afresh: the card re-renders as the question changes, and a kept handle goes
    // stale under a slow machine's timing.
    const folder = '[aria-label="Approve this command"] form[aria-label="Working folder"]';
    await (await $(`${folder} input[aria-label="Folder for commands"]`)).setValue(work);
    // "Use" is enabled by React's next render of the typed value, not by the typing itself.
    const use = await $(`${folder} button[type="submit"]`);
    await use.waitForEnabled();
    await use.click();
    // WebKit's WebDriver leaves the monospace path spans out of getText: read their text.
    const cardText = async () => (await $('[aria-label="Approve this command"]')).getProperty("textContent");
    await waitFor(async () => (await cardText()).includes(`Commands will run in ${work}`), "the chosen folder on the card").catch(async (e) => {
      await screenshot("terminal-folder-refused");
      throw new Error(`${e.message}: the card says ${await cardText()}`);
    });
    const card = await $('[aria-label="Approve this command"]');
    const text = await card.getText();
    assert.match(text, /Run this command\?/);
    assert.match(text, /for i in 1 2 3/);
    assert.match(text, /to show the output/);
    assert.equal(await (await card.$(".sh-program")).getText(), "for");
    await screenshot("terminal-approval");
    await (await $("button=Run")).click();

    const screen = await $('[data-testid="terminal-screen"]');
    await screen.waitForDisplayed({ timeout: 15000 }).catch(async (e) => {
      await screenshot("terminal-panel-missing");
      throw e;
    });
    await waitFor(async () => (await (await $('[data-testid="terminal-screen"] .xterm-rows')).getText()).includes("line-3"), "the output in the panel").catch(async (e) => {
      await screenshot("terminal-output-missing");
      throw e;
    });
    const rows = await (await $('[data-testid="terminal-screen"] .xterm-rows')).getText();
    assert.match(rows, /line-1[\s\S]*line-2[\s\S]*line-3/);
    await waitFor(async () => (await (await $(".terminal-commands")).getText()).includes("exit 0"), "the command listed with its exit code");
    assert.ok(existsSync(join(work, "made.txt")), "the command ran in the working folder");
    await waitFor(async () => (await (await $(".message.assistant:last-of-type")).getText()).includes("Done."), "the answer after the command");
    await screenshot("terminal-panel");
    await (await $('button[aria-label="Close the terminal"]')).click();
    await waitFor(async () => !(await (await $('[data-testid="terminal-screen"]')).isExisting()), "the panel to close");
  });

  it("saved the chosen folder, and lists an always-allowed command with its folder until revoked", async () => {
    await (await $('a[aria-label="Settings"]')).click();
    await (await $('button[role="tab"]=Terminal')).click();
    assert.equal(await (await $('input[aria-label="Working folder"]')).getValue(), work);
    await waitFor(async () => (await (await $('[aria-label="Sandbox"]')).getText()).startsWith("Sandboxed"), "the sandbox line");
    assert.match(await (await $('[aria-label="Sandbox"]')).getText(), new RegExp(`writable only in ${work}`));
    await screenshot("terminal-settings");
    await (await $('a[aria-label="Chat"]')).click();

    await runCommand("echo remember-me", "to test Always allow");
    await ask("Say it");
    const approval = await $('[aria-label="Approve this command"]');
    await approval.waitForDisplayed({ timeout: 20000 });
    assert.match(await approval.getText(), /Sandboxed: writable only in/);
    await (await $("button=Always allow this command")).click();
    await waitFor(async () => (await (await $(".message.assistant:last-of-type")).getText()).includes("Done."), "the answer after the command");

    await (await $('a[aria-label="Settings"]')).click();
    await (await $('button[role="tab"]=Permissions')).click();
    const list = await $('ul[aria-label="Commands always allowed"]');
    await waitFor(async () => (await list.getText()).includes("echo remember-me"), "the rule in Settings");
    assert.match(await list.getText(), /echo remember-me\s+in .*perch-e2e-work-/);
    await screenshot("terminal-rule");
    await (await list.$('button[aria-label="Revoke echo remember-me"]')).click();
    await waitFor(async () => (await list.getText()).includes("None yet."), "the rule to be revoked");
    await (await $('a[aria-label="Chat"]')).click();
  });

  it("draws a 30 MB flood to its end without falling behind for good", async () => {
    // 22.5 MB of zeros as base64: 30 MB of 76-column lines, far faster than xterm.js parses;
    // the shell builds the marker, so the command shown above the output does not contain it.
    await runCommand("head -c 22500000 /dev/zero | base64; echo end-of-$(printf flood)", "to flood the panel");
    await ask("Print a lot");
    await (await $('[aria-label="Approve this command"]')).waitForDisplayed({ timeout: 20000 });
    await (await $("button=Run")).click();
    const rows = async () => (await (await $('[data-testid="terminal-screen"] .xterm-rows')).getText());
    await waitFor(async () => (await rows()).includes("end-of-flood"), "the flood's last line in the panel", 120000).catch(async (e) => {
      await screenshot("terminal-flood-missing");
      throw e;
    });
    const shown = await rows();
    // The flood's lines, the marker, then the footer: in order, nothing after the end lost.
    assert.match(shown, /A{10,}\s*end-of-flood\s*\[exit 0/);
    // What the panel skipped is named in one line (on screen only if it was near the end).
    const note = shown.match(/\[([\d.]+ [MK]B) of output skipped: it came faster than the panel can show\]/);
    console.error(note ? `the panel skipped ${note[1]}` : "no skipped-output note among the rows on screen");
    await waitFor(async () => (await (await $(".message.assistant:last-of-type")).getText()).includes("Done."), "the answer after the flood");
    // The page still takes typing at once.
    const box = await $('textarea[aria-label="Message"]');
    await box.setValue("still here");
    assert.equal(await box.getValue(), "still here");
    await box.clearValue();
    await screenshot("terminal-flood");
  });

  it("leaves a denied command unrun", async () => {
    await runCommand("touch denied.txt", "to test Deny");
    await ask("Make a file");
    const approval = await $('[aria-label="Approve this command"]');
    await approval.waitForDisplayed({ timeout: 20000 });
    await (await $("button=Deny")).click();
    await waitFor(async () => (await (await (await lastCard()).$(".tool-status")).getText()).startsWith("declined"), "the card to say declined");
    assert.ok(!existsSync(join(work, "denied.txt")), "a denied command never runs");
    await screenshot("terminal-denied");
  });

  it("refuses a blocked command without asking and says why on the card", async () => {
    await runCommand("cd ~ && rm -rf .", "to clean up");
    await ask("Clean up my home folder");
    // The text is read where it is waited for: the streamed answer's card is replaced by the
    // saved one, and a card looked up a moment before may be gone (seen with the machine busy).
    const card = await waitFor(async () => {
      const text = await (await lastCard()).getText();
      return text.includes("Blocked by Perch") && text;
    }, "the blocked card");
    assert.match(card, /it deletes .*a system or home folder/);
    assert.ok(!(await (await $('[aria-label="Approve this command"]')).isExisting()), "no question for a blocked command");
    await screenshot("terminal-blocked");
    // The panel keeps the conversation's commands, the blocked one included, after reopening.
    if (!(await (await $('[data-testid="terminal-screen"]')).isExisting())) await (await $('button[aria-label="Show the terminal"]')).click();
    await waitFor(async () => (await (await $(".terminal-commands")).getText()).includes("blocked"), "the blocked command in the panel");
  });
});
