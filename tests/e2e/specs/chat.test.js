// Chat in the real app against a fake Ollama on loopback: type a question, watch it stream,
// stop it, find it in History by a word from the answer, and resume the conversation; a
// remote image in an answer is never fetched, and a file reference opens in the editor.
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { freshDataDir, freshRuntimeDir, launch, screenshot, startFakeLlm, useLoggingEditor, waitFor } from "../lib/harness.js";

const ANSWER = "The zanzibar protocol keeps each reply short. " + "It streams word after word so you can watch it arrive. ".repeat(40);

function words(text) {
  return text.split(/(?<= )/).map((w) => ({ type: "text", text: w }));
}

describe("chat", () => {
  let fake;
  let session;
  const $ = (s) => session.browser.$(s);
  // A loopback web server standing in for a tracker, and the system browser's stand-in.
  const fetched = [];
  const images = createServer((req, res) => {
    fetched.push(req.url);
    res.writeHead(404).end();
  });
  let imageOrigin;
  const tmp = freshDataDir();
  const browserLog = join(tmp, "browser-url.txt");
  const editorLog = join(tmp, "editor-args.txt");
  const repo = realpathSync(freshDataDir());

  before(async () => {
    fake = await startFakeLlm("ollama");
    await new Promise((resolve) => images.listen(0, "127.0.0.1", resolve));
    imageOrigin = `http://127.0.0.1:${images.address().port}`;
    mkdirSync(join(tmp, "bin"));
    writeFileSync(join(tmp, "bin", "xdg-open"), `#!/bin/sh\nprintf '%s' "$1" > '${browserLog}'\n`);
    chmodSync(join(tmp, "bin", "xdg-open"), 0o755);
    mkdirSync(join(repo, "src"));
    writeFileSync(join(repo, "src/auth.rs"), Array.from({ length: 60 }, (_, i) => `// line ${i + 1}`).join("\n"));
    session = await launch(freshDataDir(), {
      OLLAMA_HOST: fake.host,
      PERCH_KEY_STORE: "file",
      XDG_RUNTIME_DIR: freshRuntimeDir(),
      // The policy would let the page load images from the listener; only the renderer stops them.
      PERCH_TEST_IMG_SRC: imageOrigin,
      PATH: `${join(tmp, "bin")}:${process.env.PATH}`,
    });
  });
  after(async () => {
    await session?.close();
    fake?.stop();
    images.close();
  });

  // Asks `question`, the fake answering `answer` (markdown); returns the saved answer's element.
  const ask = async (question, answer) => {
    const shown = answer.slice(0, answer.search(/[[`!*]/)).trim(); // its start, as rendered
    await fake.script({ steps: [{ type: "text", text: answer }, { type: "finish" }], token_delay_ms: 0 });
    const before = (await session.browser.$$(".message.assistant")).length;
    await (await $('textarea[aria-label="Message"]')).setValue(question);
    await session.browser.keys("Enter");
    await waitFor(async () => {
      const answers = await session.browser.$$(".message.assistant:not([aria-busy])");
      return answers.length > before && (await answers.at(-1).getText()).includes(shown);
    }, "the answer to be saved");
    return (await session.browser.$$(".message.assistant")).at(-1);
  };

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

  it("sets math in KaTeX's own fonts, which the package ships as woff2 only", async () => {
    const answer = await ask("The area under x squared?", "The area is *exactly* $$\\int_0^1 x^2\\,dx = \\frac{1}{3}$$ as computed.");
    await (await answer.$(".katex .katex-html")).waitForDisplayed();
    const faces = await session.browser.executeAsync((done) => {
      document.fonts.ready.then(() =>
        done([...document.fonts].filter((f) => f.family.replace(/"/g, "").startsWith("KaTeX_")).map((f) => `${f.family.replace(/"/g, "")} ${f.style} ${f.weight} ${f.status}`)),
      );
    });
    // The faces the formula uses were fetched and decoded; a format WebKit could not read would be "error".
    for (const face of ["KaTeX_Main normal", "KaTeX_Math italic"]) {
      assert.ok(faces.some((f) => f.startsWith(`${face} `) && f.endsWith(" loaded")), `${face} loaded, among: ${faces.join("; ")}`);
    }
    assert.ok(!faces.some((f) => f.endsWith(" error")), faces.join("; "));
    await screenshot("chat-math");
  });

  it("never fetches a remote image in an answer, even where the CSP would allow it", async () => {
    const answer = await ask("Show me the chart", `Here is the chart: ![usage chart](${imageOrigin}/pixel.png) as promised.`);
    const placeholder = await answer.$("button.remote-image");
    assert.equal(await placeholder.getText(), `usage chart · image from ${imageOrigin.slice("http://".length)}`);
    assert.equal((await answer.$$("img")).length, 0);
    // The control: the page itself may load from the listener, so only the renderer kept the pixel out.
    await session.browser.execute((src) => {
      const img = document.createElement("img");
      img.id = "csp-control";
      img.src = src;
      document.body.append(img);
    }, `${imageOrigin}/control.png`);
    await waitFor(() => fetched.includes("/control.png"), "the control image to be requested");
    await session.browser.execute(() => document.getElementById("csp-control")?.remove());
    assert.deepEqual(fetched, ["/control.png"], "only the control image was requested");
    await screenshot("chat-remote-image-placeholder");

    await placeholder.click();
    const opened = await waitFor(() => existsSync(browserLog) && readFileSync(browserLog, "utf8"), "the browser to open");
    assert.equal(opened, `${imageOrigin}/pixel.png`);
    assert.deepEqual(fetched, ["/control.png"], "opening it is the browser's job, not the app's");
  });

  it("opens a file reference of an answer in the editor, from the folders in Settings", async () => {
    await (await $('a[aria-label="Settings"]')).click();
    await (await $('button[role="tab"]=Tools')).click();
    const folders = await $('textarea[aria-label="Folders"]');
    await folders.setValue(repo);
    await (await $('input[aria-label="Tools per message"]')).click(); // leaving the field saves it
    await useLoggingEditor(session, editorLog);
    await (await $('a[aria-label="Chat"]')).click();

    const answer = await ask("Where is the session check?", "It is in [`src/auth.rs:45`][]; [`src/gone.rs:3`][] was removed.");
    const reference = await answer.$('button.file-ref[data-ref="src/auth.rs:45"]');
    await reference.waitForDisplayed();
    assert.match(await (await answer.$('.file-ref.broken[data-ref="src/gone.rs:3"]')).getAttribute("title"), /does not exist/);
    await screenshot("chat-file-reference");
    await reference.click();
    const args = await waitFor(() => existsSync(editorLog) && readFileSync(editorLog, "utf8"), "the editor to run");
    assert.equal(args, `${join(repo, "src/auth.rs")}|45`);
  });
});
