// Settings -> Logs in the real app: the engine's start-up line in the live tail, an MCP server's
// stderr under its component's filter, and "Copy diagnostics" writing a zip into Downloads that
// holds the doctor's report.
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { freshDataDir, launch, screenshot, waitFor } from "../lib/harness.js";

/** Local time as the engine stamps a server's stderr lines: `2026-03-01 10:00:01`. */
function stamp(date) {
  const two = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${two(date.getMonth() + 1)}-${two(date.getDate())} ${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
}

const SERVER_LINE = "the seeded server is listening on stdio";

describe("logs and diagnostics", () => {
  let session;
  let downloads;
  const $ = (s) => session.browser.$(s);
  const logText = async () => (await $("ol.log-lines")).getText();

  before(async () => {
    const dir = freshDataDir();
    mkdirSync(join(dir, "logs", "mcp"), { recursive: true });
    writeFileSync(join(dir, "logs", "mcp", "seeded.log"), `${stamp(new Date())} ${SERVER_LINE}\n`);
    // Downloads is where the user's desktop says (xdg-user-dirs), here a folder of the test's.
    const config = freshDataDir();
    downloads = join(config, "Downloads");
    mkdirSync(downloads);
    writeFileSync(join(config, "user-dirs.dirs"), `XDG_DOWNLOAD_DIR="${downloads}"\n`);
    session = await launch(dir, { PERCH_KEY_STORE: "file", XDG_CONFIG_HOME: config });
  });
  after(async () => {
    await session?.close();
  });

  it("tails the log with filters and saves a diagnostics bundle to Downloads", async () => {
    await (await $('a[aria-label="Settings"]')).click();
    await (await $('button[role="tab"]=Logs')).click();
    await waitFor(async () => (await logText()).includes("engine started"), "the engine's start-up line in the tail");
    assert.ok((await logText()).includes(SERVER_LINE), "the server's stderr is in the tail");
    await screenshot("logs-tail");

    await (await $("button=MCP servers")).click();
    await waitFor(async () => !(await logText()).includes("engine started"), "the engine's lines to be filtered out");
    assert.ok((await logText()).includes(SERVER_LINE), "the server's line stays under MCP servers");
    assert.ok((await logText()).includes("seeded"), "the server is named");
    await screenshot("logs-mcp-filter");
    await (await $("button=All")).click();

    await (await $('input[type="checkbox"]')).click();
    await (await $("button=Save diagnostics")).click();
    const saved = await $('[aria-label="Diagnostics saved"]');
    await saved.waitForDisplayed({ timeout: 60_000 });
    const path = await (await $(".path-inline")).getText();
    assert.equal(join(downloads, basename(path)), path, `saved into Downloads: ${path}`);
    assert.match(basename(path), /^perch-diagnostics-\d{8}-\d{6}\.zip$/);
    assert.ok(existsSync(path), "the zip exists");
    // A zip names its files in plain text in its directory.
    assert.ok(readFileSync(path).includes("doctor.json"), "the zip holds doctor.json");
    assert.match(await saved.getText(), /Removed: /);
    await saved.scrollIntoView();
    await screenshot("diagnostics-saved");
  });
});
