// Knowledge folders in the real app: a folder added in Settings is indexed (its secret file
// left out), the model (a fake Ollama) searches it with search_knowledge in a real turn, the
// answer's citation opens the editor at the cited line, a passage picked with `#` goes with a
// question as its lines, and removing the last folder leaves no index behind.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { freshDataDir, freshRuntimeDir, launch, screenshot, startFakeLlm, useLoggingEditor, waitFor } from "../lib/harness.js";

const SECRET = "sk-live-e2e-0d9c8b7a6f5e";
const DECISIONS = `# Decisions

## Storage
We keep the history in SQLite, one file per user.

## Retry policy
Failed uploads are attempted again three times, waiting 1, 4 and 16 seconds
between attempts, then the user is told and the draft is kept.
`;

describe("knowledge folders", () => {
  let fake;
  let session;
  const $ = (s) => session.browser.$(s);
  const dataDir = freshDataDir();
  const tmp = freshDataDir();
  const project = realpathSync(freshDataDir());
  const editorLog = join(tmp, "editor-args.txt");

  before(async () => {
    fake = await startFakeLlm("ollama");
    mkdirSync(join(project, "docs"));
    writeFileSync(join(project, "docs/decisions.md"), DECISIONS);
    writeFileSync(join(project, ".env"), `API_KEY=${SECRET}\n`);
    writeFileSync(join(project, "docs/deploy.pem"), `${SECRET}\n`);
    session = await launch(dataDir, { OLLAMA_HOST: fake.host, PERCH_KEY_STORE: "file", XDG_RUNTIME_DIR: freshRuntimeDir() });
  });
  after(async () => {
    await session?.close();
    fake?.stop();
  });

  it("indexes a folder added in Settings, with its progress and without its secrets", async () => {
    await (await $('a[aria-label="Settings"]')).click();
    await (await $('button[role="tab"]=Tools')).click();
    const input = await $('input[aria-label="Folder to add"]');
    await input.waitForDisplayed();
    await input.setValue(project);
    await (await $("button=Add folder")).click();
    const card = await $('fieldset[aria-label="Knowledge folders"]');
    await waitFor(async () => (await card.getText()).includes("files: 1 · passages: 3"), async () => `the folder indexed: ${await card.getText()}`);
    await screenshot("knowledge-folder-indexed");
    assert.ok(existsSync(join(dataDir, "knowledge.db")));
    const index = readFileSync(join(dataDir, "knowledge.db")).toString("latin1");
    assert.ok(!index.includes(SECRET), "a secret reached the index");
  });

  it("answers from the folder with a citation that opens the editor at the line", async () => {
    await useLoggingEditor(session, editorLog);
    const cited = join(project, "docs/decisions.md");
    await fake.script({ steps: [{ type: "tool_call", name: "knowledge__search_knowledge", arguments: { query: "retry policy for uploads" } }, { type: "finish" }] });
    await fake.script({ steps: [{ type: "text", text: `Uploads are retried three times ([\`${cited}:6-8\`][]).` }, { type: "finish" }] });
    await (await $('a[aria-label="Chat"]')).click();
    const box = await $('textarea[aria-label="Message"]');
    await box.waitForEnabled();
    await box.setValue("What did we decide about the retry policy?");
    await session.browser.keys("Enter");

    const answer = await $(".message.assistant");
    await waitFor(async () => (await answer.getText()).includes("Uploads are retried three times"), "the answer after the search");
    const chats = (await fake.requests()).filter((r) => r.path === "/api/chat");
    assert.ok(chats[0].body.tools.some((t) => t.function.name === "knowledge__search_knowledge"), "the search was offered");
    const result = chats[1].body.messages.find((m) => m.role === "tool").content;
    assert.ok(result.includes(`[\`${cited}:6-8\`][] (Decisions > Retry policy)`), result);
    assert.ok(result.includes("attempted again three times") && !result.includes(SECRET), result);

    const reference = await answer.$(`button.file-ref[data-ref="${cited}:6-8"]`);
    await reference.waitForDisplayed();
    await screenshot("knowledge-cited-answer");
    await reference.click();
    const args = await waitFor(() => existsSync(editorLog) && readFileSync(editorLog, "utf8"), "the editor to run");
    assert.equal(args, `${cited}|6`);

    // The search's card lists the passages it found; each opens the editor at its lines too.
    rmSync(editorLog);
    const summary = await $('[aria-label="Knowledge search summary"]');
    await waitFor(async () => (await summary.getText()).includes("Decisions > Retry policy"), "the passages on the search's card");
    await (await summary.$('button[aria-label="Open decisions.md:6-8 in the editor"]')).click();
    const again = await waitFor(() => existsSync(editorLog) && readFileSync(editorLog, "utf8"), "the editor to run from the card");
    assert.equal(again, `${cited}|6`);
  });

  it("attaches a passage picked with # to the question, as its lines", async () => {
    const cited = join(project, "docs/decisions.md");
    await fake.script({ steps: [{ type: "text", text: "Three attempts are enough for a flaky network." }, { type: "finish" }] });
    await (await $('a[aria-label="Chat"]')).click();
    const box = await $('textarea[aria-label="Message"]');
    await box.waitForEnabled();
    await box.setValue("Is this enough? #retry policy");
    const option = await $(`[aria-label="Passages"] [role="option"][title="${cited}:6-8"]`);
    await option.waitForDisplayed();
    await screenshot("knowledge-hash-picker");
    await session.browser.keys("Enter");
    const chip = await $(`.chip[title="${cited}:6-8"]`);
    await chip.waitForDisplayed();
    assert.ok((await chip.getText()).startsWith("decisions.md:6-8"), await chip.getText());
    assert.equal(await box.getValue(), "Is this enough? ");
    const before = (await fake.requests()).filter((r) => r.path === "/api/chat").length;
    await session.browser.keys("Enter");

    await waitFor(async () => (await (await session.browser.$$(".message.assistant")).at(-1).getText()).includes("flaky network"), "the answer");
    const chats = (await fake.requests()).filter((r) => r.path === "/api/chat");
    assert.equal(chats.length, before + 1);
    const question = chats.at(-1).body.messages.findLast((m) => m.role === "user").content;
    assert.ok(question.startsWith(`<file path="${cited}" lines="6-8">\n## Retry policy\nFailed uploads are attempted again three times`), question);
    assert.ok(!question.includes("SQLite") && question.trimEnd().endsWith("Is this enough?"), question);
    await screenshot("knowledge-hash-sent");
  });

  it("removes the last folder and its index with it", async () => {
    await (await $('a[aria-label="Settings"]')).click();
    await (await $('button[role="tab"]=Tools')).click();
    await (await $(`button[aria-label="Remove ${project}"]`)).click();
    await (await $("button=Remove and forget its index")).click();
    await waitFor(() => !existsSync(join(dataDir, "knowledge.db")), "the index deleted");
    assert.ok(!existsSync(join(dataDir, "knowledge.db-wal")));
  });
});
