// "Add server" links in the real app: a `perch://mcp/add?...` link is delivered as the desktop
// delivers it on Linux, by starting the app a second time with the link as its only argument (the
// single-instance plugin hands it to the running Perch). The confirmation shows exactly what
// would be saved: the command line with its arguments and the environment's names (values
// hidden), or the address, and opens with the focus on Cancel. Cancel leaves the servers file as
// it was; Add saves the entry. A link naming a server the user has is refused, and Esc closes.
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { APP, freshDataDir, geometry, launch, screenshot, waitFor, xdotool } from "../lib/harness.js";

/** GTK tooltip windows shown on the display now (override-redirect popups typed TOOLTIP). */
function tooltipsShown() {
  const out = execFileSync("sh", [
    "-c",
    'for w in $(xwininfo -root -children | sed -n "s/^ *\\(0x[0-9a-f]*\\) .*/\\1/p"); do ' +
      'xwininfo -id "$w" | grep -q "Map State: IsViewable" && xprop -id "$w" _NET_WM_WINDOW_TYPE | grep -q TOOLTIP && echo "$w"; done; true',
  ]);
  return String(out).split("\n").filter(Boolean);
}

/** Starts the app again with `link`, as a browser or `xdg-open` would; resolves with its exit code. */
function deliver(link, dataDir) {
  const second = spawn(APP, [link], { env: { ...process.env, PERCH_DATA_DIR: dataDir }, stdio: "ignore" });
  return new Promise((resolve) => second.on("exit", resolve));
}

describe("add-server links", () => {
  let session;
  const $ = (s) => session.browser.$(s);
  const dataDir = freshDataDir();
  const serversFile = join(dataDir, "mcp_servers.json");
  // The user's own file, kept byte for byte unless they press Add.
  const original = `${JSON.stringify({ mcpServers: { mine: { command: "perch-e2e-absent-program", enabled: false } } }, null, 2)}\n`;

  before(async () => {
    writeFileSync(serversFile, original);
    session = await launch(dataDir);
  });
  after(async () => session?.close());

  const dialog = async () => {
    const d = await $('[role="dialog"][aria-label="Add an MCP server"]');
    await d.waitForDisplayed({ timeout: 15_000 });
    return d;
  };

  it("shows the exact command line and the environment's names, and Cancel saves nothing", async () => {
    const link =
      "perch://mcp/add?name=e2e-time&command=uvx&arg=mcp-server-time&arg=--local-timezone%3DUTC&arg=two%20words&env=API_KEY%3Ds3cret";
    assert.equal(await deliver(link, dataDir), 0, "the second launch hands the link over and exits");
    const d = await dialog();
    assert.match(await d.getText(), /Add the MCP server e2e-time\?/);
    assert.match(await d.getText(), /This runs a program on your computer/);
    assert.equal(await (await d.$('[aria-label="Command line"]')).getText(), "uvx mcp-server-time --local-timezone=UTC 'two words'");
    const env = await d.$('[aria-label="Environment"]');
    assert.equal(await env.getText(), "API_KEY=••••••••");
    // A link can arrive while the user types elsewhere: a key then answers Cancel, not Add.
    assert.equal(await session.browser.execute(() => document.activeElement?.textContent), "Cancel");
    await screenshot("add-link-command");

    await (await d.$("button=Cancel")).click();
    await waitFor(async () => !(await (await $('[role="dialog"]')).isExisting()), "the dialog to close");
    assert.equal(readFileSync(serversFile, "utf8"), original, "the servers file is untouched");
  });

  it("shows the address of a Streamable HTTP server, and Add saves it", async () => {
    // Nothing listens there: the server is saved, and then fails to connect, harmlessly.
    const url = "http://127.0.0.1:9/mcp";
    assert.equal(await deliver(`perch://mcp/add?name=e2e-remote&url=${encodeURIComponent(url)}`, dataDir), 0);
    const d = await dialog();
    assert.equal(await (await d.$('[aria-label="Server address"]')).getText(), url);
    assert.equal(readFileSync(serversFile, "utf8"), original, "nothing saved before Add");
    await screenshot("add-link-url");

    await (await d.$("button=Add")).click();
    await waitFor(async () => !(await (await $('[role="dialog"]')).isExisting()), "the dialog to close");
    const saved = JSON.parse(readFileSync(serversFile, "utf8")).mcpServers;
    assert.deepEqual(saved["e2e-remote"], { type: "http", url });
    assert.deepEqual(saved.mine, { command: "perch-e2e-absent-program", enabled: false }, "the user's server kept");

    await (await $('a[aria-label="Settings"]')).click();
    await (await $('button[role="tab"]=MCP')).click();
    await (await $('fieldset[aria-label="Server e2e-remote"]')).waitForDisplayed({ timeout: 15_000 });
  });

  it("lists well-known servers in the Add card; picking one fills the form and saves nothing", async () => {
    const before = readFileSync(serversFile, "utf8");
    const summary = await $("summary=Well-known servers");
    await summary.scrollIntoView({ block: "center" });
    await summary.click();
    const list = await $('ul[aria-label="Well-known servers"]');
    await list.waitForDisplayed();
    const titles = await list.$$("li").map((li) => li.getAttribute("aria-label"));
    assert.ok(titles.includes("GitHub") && titles.includes("Linear") && titles.length >= 6, `listed: ${titles}`);
    await (await list.$('li[aria-label="Linear"] button')).click();
    assert.equal(await (await $('input[aria-label="Server name"]')).getValue(), "linear");
    assert.equal(await (await $('input[aria-label="Server URL"]')).getValue(), "https://mcp.linear.app/mcp");
    await (await $('input[aria-label="Server URL"]')).scrollIntoView({ block: "end" });
    await screenshot("catalogue-picked");
    assert.equal(readFileSync(serversFile, "utf8"), before, "picking saves nothing");
  });

  it("refuses a link named like a server you have, and Esc closes it", async () => {
    const before = readFileSync(serversFile, "utf8");
    assert.equal(await deliver("perch://mcp/add?name=Mine&command=npx&arg=-y&arg=evil-pkg", dataDir), 0);
    const d = await dialog();
    assert.match(await (await d.$('[role="alert"]')).getText(), /you already have a server named "mine", and a link cannot replace a server/);
    assert.equal(await (await d.$$("button=Add")).length, 0);
    await screenshot("add-link-name-taken");
    await session.browser.keys("Escape");
    await waitFor(async () => !(await (await $('[role="dialog"]')).isExisting()), "the dialog to close");
    assert.equal(readFileSync(serversFile, "utf8"), before, "the user's server is left alone");
  });

  it("a tooltip shown where the pointer rests does not stay over the dialog", async () => {
    // The pointer rests on the title bar's Settings button until its tooltip shows, as when a
    // link arrives while the user's pointer happens to lie on Perch.
    const { x, y } = await geometry();
    const button = await $('a[aria-label="Settings"]');
    const at = await session.browser.execute((el) => {
      const r = el.getBoundingClientRect();
      return { left: r.left + r.width / 2, top: r.top + r.height / 2 };
    }, button);
    await xdotool("mousemove", String(Math.round(x + at.left)), String(Math.round(y + at.top)));
    await xdotool("mousemove_relative", "--", "1", "0");
    await waitFor(async () => tooltipsShown().length > 0, "the Settings button's tooltip", 10_000);
    assert.equal(await deliver("perch://mcp/add?name=e2e-tip&url=https%3A%2F%2Fexample.com%2Fmcp", dataDir), 0);
    const d = await dialog();
    await waitFor(async () => tooltipsShown().length === 0, "the tooltip to go when the dialog shows", 5_000);
    await screenshot("add-link-no-tooltip");
    await (await d.$("button=Cancel")).click();
    await waitFor(async () => !(await (await $('[role="dialog"]')).isExisting()), "the dialog to close");
  });

  // It failed in full suites for two reasons: the window search dying on a tooltip that went
  // away (fixed: visibleWindows), and the tooltip never showing again because hiding it left
  // the view's "has a tooltip" off, which WebKit turns on only when the text changes (fixed in
  // add_link.rs::hide_tooltip).
  it("tooltips still show after a link's dialog", async () => {
    const { x, y } = await geometry();
    const button = await $('a[aria-label="Settings"]');
    const at = await session.browser.execute((el) => {
      const r = el.getBoundingClientRect();
      return { left: r.left + r.width / 2, top: r.top + r.height / 2 };
    }, button);
    // Tooltips still work afterwards: resting on the button again shows its tooltip. WebKit
    // sends a tooltip only when the text under the pointer changes, and GTK merges motion events,
    // so the page must have seen the pointer leave the button before it comes back (a quick
    // there-and-back reads as never having left, and no new tooltip is asked for).
    await session.browser.execute(() => {
      document.addEventListener("mouseover", (e) => (window.__e2eHovered = e.target), true);
    });
    // Up to three rests, as a user would try again: once in a cold run GTK showed nothing for the
    // first (10 s, on a quiet machine). The fault this guards against showed none, ever.
    for (let attempt = 1; ; attempt++) {
      await session.browser.execute(() => (window.__e2eHovered = null));
      await xdotool("mousemove", String(Math.round(x + at.left)), String(Math.round(y + at.top + 200)));
      await waitFor(
        async () =>
          session.browser.execute((el) => window.__e2eHovered !== null && !el.contains(window.__e2eHovered), button),
        "the page to see the pointer leave the Settings button",
        5_000,
      );
      await xdotool("mousemove", String(Math.round(x + at.left)), String(Math.round(y + at.top)));
      await xdotool("mousemove_relative", "--", "1", "0");
      try {
        await waitFor(async () => tooltipsShown().length > 0, "the tooltip to show again", 5_000);
        if (attempt > 1) console.log(`e2e: the tooltip showed again at rest ${attempt}`);
        break;
      } catch (e) {
        if (attempt === 3) throw e;
      }
    }
  });

  it("says why a link cannot be used", async () => {
    assert.equal(await deliver("perch://mcp/add?name=bad__name&url=https%3A%2F%2Fexample.com%2Fmcp", dataDir), 0);
    const d = await dialog();
    assert.match(await (await d.$('[role="alert"]')).getText(), /name cannot be used/);
    await (await d.$("button=Close")).click();
    await waitFor(async () => !(await (await $('[role="dialog"]')).isExisting()), "the dialog to close");
    assert.equal(Object.keys(JSON.parse(readFileSync(serversFile, "utf8")).mcpServers).sort().join(), "e2e-remote,mine");
  });
});
