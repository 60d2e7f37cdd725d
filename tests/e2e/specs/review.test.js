// Reviews in the real app: pushed by the MCP bridge, shown in the panel, references opened in
// the editor, modes, the selection read back, and hostile markdown kept inert in WebKit.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, realpathSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  REVIEW_BRIDGE,
  freshDataDir,
  freshRuntimeDir,
  launch,
  screenshot,
  useLoggingEditor,
  waitFor,
  waitForGeometry,
} from "../lib/harness.js";

describe("reviews from the editor", () => {
  const dataDir = freshDataDir();
  const runtime = freshRuntimeDir();
  const repo = realpathSync(freshDataDir());
  const editorLog = join(dataDir, "editor-args.txt");
  let session;
  let mcp;

  const call = async (name, args) => {
    const result = await mcp.callTool({ name, arguments: args });
    return { error: result.isError === true, text: result.content.map((c) => c.text).join("\n") };
  };
  const $ = (selector) => session.browser.$(selector);
  const reviewText = async () => (await $(".review-body")).getText();

  before(async () => {
    mkdirSync(join(repo, "src"), { recursive: true });
    writeFileSync(join(repo, "src/auth.rs"), Array.from({ length: 60 }, (_, i) => `// line ${i + 1}`).join("\n"));
    session = await launch(dataDir, { XDG_RUNTIME_DIR: runtime });
    mcp = new Client({ name: "perch-e2e", version: "1.0.0" });
    await mcp.connect(
      new StdioClientTransport({
        command: REVIEW_BRIDGE,
        env: { ...process.env, PERCH_IPC_PATH: join(runtime, "perch", "review.sock") },
        stderr: "inherit",
      }),
    );
  });
  after(async () => {
    await mcp?.close();
    await session?.close();
  });

  it("a review pushed through the bridge opens the panel, leaving mini mode", async () => {
    await (await $('button[aria-label="Mini mode"]')).click();
    await waitForGeometry({ width: 52, height: 52 }, "mini mode");

    const pushed = await call("present_review", {
      baseUri: repo,
      content: [
        "# Session handling",
        "",
        "Expired sessions are rejected in [`src/auth.rs:45`][] before the database is read.",
        "",
        "## Details",
        "",
        "- The check spans [`src/auth.rs:40-50`][]; see also [the login path](src/auth.rs:12).",
        "- This one points nowhere: [`src/missing.rs:3`][].",
      ].join("\n"),
    });
    assert.equal(pushed.error, false, pushed.text);
    assert.match(pushed.text, /shown in Perch/);
    assert.match(pushed.text, /src\/missing\.rs:3/, "the agent hears which references are broken");

    await waitForGeometry({ width: 450, height: 450 }, "the window back from mini mode");
    const heading = await $(".review-body h1");
    await heading.waitForDisplayed();
    assert.equal(await heading.getText(), "Session handling");
    assert.equal((await session.browser.$$(".review-body button.file-ref")).length, 3);
    assert.equal((await session.browser.$$(".review-body .file-ref.broken")).length, 1);
    await screenshot("review-arrived");
  });

  it("a click on a reference runs the editor command with the file and the line", async () => {
    await useLoggingEditor(session, editorLog);
    await (await $('a[aria-label="Review"]')).click();

    await (await $('.review-body button.file-ref[data-ref="src/auth.rs:45"]')).click();
    const args = await waitFor(() => existsSync(editorLog) && readFileSync(editorLog, "utf8"), "the editor to run");
    assert.equal(args, `${join(repo, "src/auth.rs")}|45`);

    await (await $('.review-body button.file-ref[data-ref="src/auth.rs:12"]')).click();
    await waitFor(() => readFileSync(editorLog, "utf8").endsWith("|12"), "the link form to open line 12");
    await screenshot("review-reference-opened");
  });

  it("append and update-section build on the shown review", async () => {
    let r = await call("present_review", { baseUri: repo, mode: "append", content: "## Tests\n\nAdded a regression test." });
    assert.equal(r.error, false, r.text);
    await waitFor(async () => (await reviewText()).includes("Added a regression test."), "the appended section");

    r = await call("present_review", {
      baseUri: repo,
      mode: "update-section",
      section: "Details",
      content: "Rewritten: the check now lives in [`src/auth.rs:30`][].",
    });
    assert.equal(r.error, false, r.text);
    await waitFor(async () => (await reviewText()).includes("Rewritten: the check now lives"), "the updated section");
    const text = await reviewText();
    assert.ok(!text.includes("points nowhere"), "the old section body is gone");
    assert.ok(text.indexOf("Rewritten") < text.indexOf("Added a regression test."), "the section kept its place");

    r = await call("present_review", { baseUri: repo, mode: "update-section", content: "no section" });
    assert.equal(r.error, true);
    assert.match(r.text, /needs "section"/);
    const versions = await session.browser.$$('select[aria-label="Review version"] option');
    assert.equal(versions.length, 1 + 3, "Latest plus three stored versions");
    await screenshot("review-updated-section");
  });

  it("the selection in the panel is what get_selection returns", async () => {
    await session.browser.execute(() => {
      const h = document.querySelector(".review-body h1");
      const range = document.createRange();
      range.selectNodeContents(h);
      const selection = document.getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
    });
    await waitFor(async () => (await call("get_selection", {})).text === "Session handling", "the selection to reach the socket");
    await session.browser.execute(() => document.getSelection().removeAllRanges());
    await waitFor(async () => (await call("get_selection", {})).text === "Nothing is selected in Perch.", "the cleared selection");
  });

  it("hostile markdown renders inert in the real webview", async () => {
    const hostile = [
      "# Hostile",
      "<script>window.pwned = 'script'</script>",
      '<img src="x" onerror="window.pwned = \'img\'">',
      '<iframe src="https://evil.example"></iframe>',
      '<svg onload="window.pwned = \'svg\'"><script>window.pwned = \'svg-script\'</script></svg>',
      "[click me](javascript:window.pwned='link')",
      '<a href="javascript:window.pwned=\'raw-link\'">raw</a>',
      '<details open ontoggle="window.pwned=\'details\'">x</details>',
      "![pixel](javascript:window.pwned='img-md')",
      '<object data="data:text/html,<script>parent.pwned=1</script>"></object>',
    ].join("\n\n");
    const r = await call("present_review", { baseUri: repo, content: hostile });
    assert.equal(r.error, false, r.text);
    await waitFor(async () => (await (await $(".review-body h1")).getText()) === "Hostile", "the hostile review");
    // Try the links too.
    for (const link of await session.browser.$$(".review-body a")) await link.click().catch(() => {});
    const report = await session.browser.execute(() => {
      const body = document.querySelector(".review-body");
      const all = Array.from(body.querySelectorAll("*"));
      return {
        dangerous: body.querySelectorAll("script, iframe, svg, object, embed, form, style").length,
        handlers: all.filter((el) => Array.from(el.attributes).some((a) => a.name.startsWith("on"))).length,
        jsUrls: all.filter((el) => Array.from(el.attributes).some((a) => /javascript:|data:text\/html/i.test(a.value))).length,
        pwned: window.pwned ?? null,
        stillPerch: location.protocol + "//" + location.host,
      };
    });
    assert.deepEqual(
      { dangerous: report.dangerous, handlers: report.handlers, jsUrls: report.jsUrls, pwned: report.pwned },
      { dangerous: 0, handlers: 0, jsUrls: 0, pwned: null },
    );
    await screenshot("review-hostile-inert");
  });
});
