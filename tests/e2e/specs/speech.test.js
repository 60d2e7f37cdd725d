// Speech out in the real app: a hands-free conversation through the app's own microphone and
// loudspeaker code (cpal and ALSA), with a virtual microphone that asks a question in real time
// (a few seconds after each time it is opened) and a virtual loudspeaker drained in real time.
// Perch hears the question, sends it after the pause (the countdown on screen), reads the answer
// aloud (espeak-ng: no natural voice is downloaded in a fresh data folder), listens again, and
// when the question is asked over its next answer, which the model is still writing, stops
// talking and writing (barge-in) with the answer so far kept in the chat, and sends the question
// once it has stopped. What the loudspeaker got is heard back by `perch transcribe`.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { appendFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { axeViolations } from "../lib/axe.js";
import { CLI, freshDataDir, launch, screenshot, startFakeLlm, waitFor } from "../lib/harness.js";
import { pacedMicrophone } from "../lib/paced_microphone.js";
import { pacedSpeaker, speakerConfig } from "../lib/paced_speaker.js";
import { MODEL, chooseMicrophoneAndModel } from "../lib/voice.js";

const QUESTION = "What is the capital of France?";
const FIRST = "Paris is the capital of France.";
// Long enough to be talked over, and written slowly (200 ms a word, about 11 s, room for a busy
// machine): the question
// comes back three seconds into it, while the model is still writing it.
const SECOND =
  "The Seine runs through the middle of the city. It has been crossed by bridges for many centuries, and the oldest of them is called the new bridge. " +
  "Walking along the river from one end of the city to the other takes most of a day. At the very end of this long answer there is an elephant.";
const words = (text) => text.toLowerCase().replace(/[^a-z ]/g, " ");

describe("speech out", () => {
  let session;
  let fake;
  let microphone;
  let speaker;
  const $ = (s) => session.browser.$(s);
  const barText = async () => {
    const bar = await $(".conversation-bar");
    return (await bar.isExisting()) ? bar.getText() : "";
  };

  before(async () => {
    assert.ok(existsSync(MODEL), `${MODEL} is missing: run make deps`);
    fake = await startFakeLlm("ollama");
    microphone = pacedMicrophone(QUESTION, { quietMs: 3000 });
    speaker = await pacedSpeaker();
    appendFileSync(microphone.alsaConfig, speakerConfig(speaker.fifo));
    session = await launch(freshDataDir(), { OLLAMA_HOST: fake.host, ALSA_CONFIG_PATH: microphone.alsaConfig, PERCH_KEY_STORE: "file" });
  });
  after(async () => {
    await session?.close();
    await microphone?.stop();
    await speaker?.stop();
    fake?.stop();
  });

  it("is set up in Settings -> Voice: the microphone, the model and the loudspeaker", async () => {
    await chooseMicrophoneAndModel(session.browser);
    const loudspeaker = await $('select[aria-label="Loudspeaker"]');
    await waitFor(async () => (await loudspeaker.getText()).includes("Perch test speaker"), "the virtual loudspeaker in the list");
    await loudspeaker.selectByVisibleText("Perch test speaker");
    // With no natural voice downloaded, the settings say espeak-ng reads, and why.
    await waitFor(async () => (await (await $("body")).getText()).includes("espeak-ng reads answers: the natural voice en_US-lessac-medium is not downloaded"), "the voice's explanation");
    await screenshot("speech-settings");
  });

  it("hears a spoken question, sends it after the countdown, and reads the answer aloud", async () => {
    await fake.script({ steps: [{ type: "text", text: FIRST }, { type: "finish" }], token_delay_ms: 20 });
    // One step a word: the fake waits token_delay_ms before each step.
    const slowly = SECOND.split(/(?<= )/).map((text) => ({ type: "text", text }));
    await fake.script({ steps: [...slowly, { type: "finish" }], token_delay_ms: 200 });
    await (await $('a[aria-label="Chat"]')).click();
    await (await $('button[aria-label="Talk hands-free"]')).click();
    await waitFor(async () => (await barText()).includes("Listening"), "the conversation to listen");
    await screenshot("speech-listening");
    // The bar is a named region whose status line screen readers hear; nothing on screen fails
    // axe's serious or critical rules while it shows.
    const bar = await $('[role="region"][aria-label="Hands-free conversation"]');
    assert.equal(await (await bar.$('[role="status"]')).getAttribute("aria-live"), "polite");
    assert.deepEqual(await axeViolations(session.browser), [], "the conversation's bar passes axe");
    // The countdown shows in the pause after the question.
    await waitFor(async () => /Sending in \d/.test(await barText()), "the countdown", 20_000);
    await screenshot("speech-countdown");
    // Whisper's turn on two loaded cores may take seconds: the voice spec's allowance. Whisper
    // tiny mishears words when the machine is busy, likely as the virtual microphone falls behind
    // the app, which reads it with no clock, and ALSA's file plugin copies only what the FIFO
    // holds, leaving the rest of a period as it was (CI heard "the capital of thrands", a busy
    // machine here "the capital on thrands"). So the question is known by "capital":
    // what is checked is that the spoken question was sent, not how well the smallest model hears.
    const sent = async () => {
      const texts = [];
      for (const message of await session.browser.$$(".message.user")) texts.push(await message.getText());
      return texts;
    };
    await waitFor(
      async () => words((await sent())[0] ?? "").includes("capital"),
      async () => `the spoken question to be sent (sent: ${JSON.stringify(await sent())})`,
      60_000,
    );
    await waitFor(async () => (await barText()).includes("Speaking"), async () => `the answer to be read aloud (bar: "${await barText()}")`, 30_000);
    await screenshot("speech-speaking");
    await waitFor(async () => speaker.played() > 1.0, "the loudspeaker to play the answer", 20_000);
  });

  it("listens again, and stops talking when the question is asked over the next answer", async () => {
    // The first answer ends; the microphone, opened again as it started, asks the question
    // anew: the second answer comes and is read until the question comes over it.
    await waitFor(async () => (await session.browser.$$(".message.user")).length >= 2, "the next question to be heard and sent", 40_000);
    await waitFor(async () => (await session.browser.$$(".message.user")).length >= 3, "the question asked over the second answer to be sent", 40_000);
    const answers = [];
    for (const answer of await session.browser.$$(".message.assistant:not([aria-busy])")) answers.push(await answer.getText());
    // Stopped while it was written: what was written stays, the rest never came.
    assert.ok(answers.some((t) => t.includes("The Seine runs through the middle of the city.")), `the interrupted answer is kept in the chat: ${answers}`);
    assert.ok(!answers.some((t) => t.includes("elephant")), `the interrupted answer was stopped before its end: ${answers}`);
    // The question asked over it went once it had stopped, once.
    const questions = [];
    for (const message of await session.browser.$$(".message.user")) questions.push(words(await message.getText()));
    assert.equal(questions[2].match(/capital/g)?.length, 1, `the third question: ${questions[2]}`);
    await session.browser.keys("Escape");
    await waitFor(async () => (await barText()) === "", "Esc to end the conversation");
    assert.equal(await (await $('button[aria-label="Talk hands-free"]')).getAttribute("aria-pressed"), "false");

    // What the loudspeaker got: the first answer whole, and the second cut off before its end.
    const wav = speaker.recording(join(freshDataDir(), "played.wav"));
    const heard = execFileSync(CLI, ["transcribe", wav, "--model", MODEL, "--language", "en"], { env: { ...process.env, PERCH_DATA_DIR: session.dataDir } }).toString();
    console.log(`the loudspeaker played: ${heard.trim()}`);
    assert.match(words(heard), /paris/, `the loudspeaker played: ${heard}`);
    assert.doesNotMatch(words(heard), /elephant/, `the interrupted end was not played: ${heard}`);
  });
});
