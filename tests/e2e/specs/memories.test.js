// Memories in the real app: the model (a fake Ollama) proposes one in a real turn, the user
// edits it on the card and keeps it; a later question about it is given it (in the system
// prompt the model reads) and the answer says so; a second proposal refused is never kept;
// Settings -> Memories lists, and forgets.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { freshDataDir, freshRuntimeDir, launch, screenshot, startFakeLlm, waitFor } from "../lib/harness.js";

describe("memories", () => {
  let fake;
  let session;
  const $ = (s) => session.browser.$(s);
  const dataDir = freshDataDir();
  const chats = async () => (await fake.requests()).filter((r) => r.path === "/api/chat");
  const lastAnswer = async () => (await session.browser.$$(".message.assistant")).at(-1);

  before(async () => {
    fake = await startFakeLlm("ollama");
    session = await launch(dataDir, { OLLAMA_HOST: fake.host, PERCH_KEY_STORE: "file", XDG_RUNTIME_DIR: freshRuntimeDir() });
  });
  after(async () => {
    await session?.close();
    fake?.stop();
  });

  const send = async (text) => {
    const box = await $('textarea[aria-label="Message"]');
    await box.waitForEnabled();
    await box.setValue(text);
    await session.browser.keys("Enter");
  };

  it("keeps a proposal the user edited on its card", async () => {
    await fake.script({ steps: [{ type: "tool_call", name: "memory__remember", arguments: { text: "The user deploys on Fridays" } }, { type: "finish" }] });
    await fake.script({ steps: [{ type: "text", text: "Noted: Fridays." }, { type: "finish" }] });
    await send("Remember that we deploy billing on Fridays");

    const proposal = await $(".memory-card textarea");
    await proposal.waitForDisplayed({ timeout: 20000 });
    assert.equal(await proposal.getValue(), "The user deploys on Fridays");
    await screenshot("memory-proposal");
    await proposal.clearValue();
    await proposal.setValue("The user's team deploys billing on Fridays");
    await (await $("button=Remember")).click();
    await waitFor(async () => (await (await lastAnswer()).getText()).includes("Noted: Fridays."), "the answer after the proposal");
    await waitFor(
      async () => (await (await $('[aria-label="Memory proposal"]')).getText()).includes("Remembered: “The user's team deploys billing on Fridays”"),
      "the card to say what was kept",
    );
    const result = (await chats())[1].body.messages.find((m) => m.role === "tool").content;
    assert.ok(result.includes("edited the note"), result);
  });

  it("gives a later question the memory it is about, and shows it with the answer", async () => {
    await (await $('button[aria-label="New chat"]')).click();
    await fake.script({ steps: [{ type: "text", text: "On Friday." }, { type: "finish" }] });
    await send("When does billing deploy?");
    await waitFor(async () => (await (await lastAnswer()).getText()).includes("On Friday."), "the answer");
    const system = (await chats()).at(-1).body.messages[0].content;
    assert.ok(system.includes("- The user's team deploys billing on Fridays"), system);
    const used = await (await lastAnswer()).$(".used-memories summary");
    await waitFor(async () => (await used.getText()) === "Given 1 memory", "the answer to say it was given a memory");
    await used.click();
    await waitFor(
      async () => (await (await $('ul[aria-label="Memories given to this answer"]')).getText()).includes("deploys billing on Fridays"),
      "the memory listed under the answer",
    );
    await screenshot("memory-used");
  });

  it("keeps nothing the user refused", async () => {
    await fake.script({ steps: [{ type: "tool_call", name: "memory__remember", arguments: { text: "The user's PIN is 4321" } }, { type: "finish" }] });
    await fake.script({ steps: [{ type: "text", text: "I won't keep it." }, { type: "finish" }] });
    await send("my PIN is 4321");
    await (await $("button=Don't remember")).waitForDisplayed({ timeout: 20000 });
    await (await $("button=Don't remember")).click();
    await waitFor(async () => (await (await lastAnswer()).getText()).includes("I won't keep it."), "the answer after the refusal");
    const cards = await session.browser.$$('[aria-label="Memory proposal"]');
    await waitFor(async () => (await cards.at(-1).getText()).includes("Not remembered"), "the card to say it was not kept");
  });

  it("lists the memories in Settings and forgets one", async () => {
    await (await $('a[aria-label="Settings"]')).click();
    await (await $('button[role="tab"]=Memories')).click();
    const list = await $('ul[aria-label="Memories"]');
    await waitFor(async () => (await list.getText()).includes("The user's team deploys billing on Fridays"), "the kept memory listed");
    assert.ok(!(await list.getText()).includes("4321"), "the refused one was kept");
    await screenshot("memories-settings");
    await (await $(`button[aria-label="Forget The user's team deploys billing on Fridays"]`)).click();
    await (await $("button=Forget it")).click();
    await waitFor(async () => (await $("p*=No memories yet").isDisplayed()), "the memory forgotten");
    await (await $('a[aria-label="Chat"]')).click();
  });
});
