// Chat in the real app against a fake Ollama on loopback: type a question, watch it stream,
// stop it, find it in History by a word from the answer, and resume the conversation.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { freshDataDir, launch, screenshot, startFakeLlm, waitFor } from "../lib/harness.js";

const ANSWER = "The zanzibar protocol keeps each reply short. " + "It streams word after word so you can watch it arrive. ".repeat(40);

function words(text) {
  return text.split(/(?<= )/).map((w) => ({ type: "text", text: w }));
}

describe("chat", () => {
  let fake;
  let session;
  const $ = (s) => session.browser.$(s);

  before(async () => {
    fake = await startFakeLlm("ollama");
    session = await launch(freshDataDir(), { OLLAMA_HOST: fake.host, PERCH_KEY_STORE: "file" });
  });
  after(async () => {
    await session?.close();
    fake?.stop();
  });

  it("streams an answer as it arrives, and Stop keeps what came", async () => {
    await fake.script({ steps: [{ type: "thinking", text: "Planning a short answer." }, ...words(ANSWER), { type: "finish" }], token_delay_ms: 60 });
    const box = await $('textarea[aria-label="Message"]');
    await box.waitForEnabled();
    await waitFor(async () => (await (await $('select[aria-label="Model"]')).getValue()) === "ollama:qwen3-vl:8b-instruct", "the default model");
    await box.setValue("What is the zanzibar protocol?");
    await session.browser.keys("Enter");

    await waitFor(async () => (await (await $(".streaming")).getText()).includes("zanzibar protocol keeps"), "the answer to stream");
    const first = await (await $(".streaming")).getText();
    await waitFor(async () => (await (await $(".streaming")).getText()).length > first.length, "more words to arrive");
    await screenshot("chat-streaming");

    await (await $('button[aria-label="Stop"]')).click();
    await waitFor(async () => (await (await $(".message.assistant")).getText()).includes("Stopped."), "the stop to show");
    const kept = await (await $(".message.assistant .markdown")).getText();
    assert.ok(kept.startsWith("The zanzibar protocol keeps each reply short."), kept);
    assert.ok(kept.length < ANSWER.length, "the answer was cut short");
    await screenshot("chat-stopped");
  });

  it("finds the conversation in History by a word from the answer and resumes it", async () => {
    await (await $('a[aria-label="History"]')).click();
    const search = await $('input[aria-label="Search history"]');
    await search.setValue("zanzibar");
    const hit = await $(".row.hit .row-open");
    await hit.waitForDisplayed();
    assert.equal(await (await $(".row.hit mark")).getText(), "zanzibar");
    await screenshot("history-search");

    await hit.click();
    await waitFor(async () => (await (await $(".message.assistant")).getText()).includes("Stopped."), "the conversation to open");
    const box = await $('textarea[aria-label="Message"]');
    await box.setValue("Shorter please");
    await session.browser.keys("Enter");
    await waitFor(async () => {
      const answers = await session.browser.$$(".message.assistant");
      return answers.length === 2 && (await answers[1].getText()).includes("You said: Shorter please");
    }, "the resumed conversation's answer");
    await screenshot("chat-resumed");

    const chats = (await fake.requests()).filter((r) => r.path === "/api/chat");
    const resumed = chats.at(-1).body.messages.map((m) => m.content);
    assert.ok(resumed.includes("What is the zanzibar protocol?"), "the model sees the earlier question");
    assert.ok(resumed.some((c) => c.startsWith("The zanzibar protocol keeps")), "and the stopped answer");
    assert.equal(resumed.at(-1), "Shorter please");
  });
});
