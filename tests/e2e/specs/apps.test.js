// MCP Apps in the real app: a tool's own interface shown in its card, from real servers over
// stdio. The official SDK's example server (`server-basic-vanillajs`, its `get-time` tool and
// page) renders in a sandboxed frame; its button calls the server's tool through the approval
// card, which names the app, and the answer lands in the frame; its message goes to the message
// box (never sent) and its link is asked about. A hostile server's pages then try to leave the
// frame: the window, Perch's DOM and IPC, the network (a loopback listener records any request
// that got out), navigation, and floods of messages and memory. Each is asserted to fail, beside
// the control that the same frame's own work succeeded. Then what WebKit does on its own
// (preconnects, DNS prefetches, a link with a target): no connection reaches the listener, which
// does count one made on purpose. And what an app tells the model: lines written to pass for
// Perch's own records reach the model quoted, as data, and a flood of them is held to a rate.
import assert from "node:assert/strict";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { freshDataDir, launch, screenshot, sleep, startFakeLlm, waitFor } from "../lib/harness.js";
import { startLoopback } from "../lib/loopback.js";
import { layoutProblems } from "../lib/layout.js";
import { appLog, appPid, firstPaints } from "../lib/proc.js";
import { FORGED, FORGED_LINE, linesOf } from "../lib/mcp-apps/forged.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..", "..", "..");
const VANILLA = join(root, "node_modules", "@modelcontextprotocol", "server-basic-vanillajs", "dist", "index.js");
const HOSTILE = join(here, "..", "lib", "mcp-apps", "hostile-server.mjs");

describe("MCP apps", () => {
  let fake;
  let session;
  let listener;
  let dataDir;
  const $ = (s) => session.browser.$(s);
  const $$ = (s) => session.browser.$$(s);

  before(async () => {
    fake = await startFakeLlm("ollama");
    listener = await startLoopback();
    dataDir = freshDataDir();
    writeFileSync(
      join(dataDir, "mcp_servers.json"),
      JSON.stringify({
        mcpServers: {
          clock: { command: process.execPath, args: [VANILLA, "--stdio"] },
          hostile: { command: process.execPath, args: [HOSTILE, "--listener", listener.url] },
        },
      }),
    );
    session = await launch(dataDir, { OLLAMA_HOST: fake.host, PERCH_KEY_STORE: "file" });
  });
  after(async () => {
    await session?.close();
    fake?.stop();
    await listener?.close();
  });

  /** A new chat: the previous one's apps are torn down when it is left (at most four run). */
  async function newChat() {
    // The shortcut is the window's: the focus may be in an app's frame, which keeps its keys.
    await (await $('textarea[aria-label="Message"]')).click();
    await session.browser.keys(["Control", "n"]);
    await waitFor(async () => (await $$("section.tool-card")).length === 0, "an empty chat");
  }

  async function ask(text, toolCalls) {
    await fake.script({ steps: [...toolCalls.map(([name, args]) => ({ type: "tool_call", name, arguments: args ?? {} })), { type: "finish" }] });
    await fake.script({ steps: [{ type: "text", text: "Here it is." }, { type: "finish" }] });
    const box = await $('textarea[aria-label="Message"]');
    await box.waitForEnabled();
    await box.setValue(text);
    await session.browser.keys("Enter");
  }

  /** Allows the pending question on the card of `tool`, looked up afresh (React re-renders). */
  async function allowOnCard(label) {
    await waitFor(async () => {
      const group = await $(`section.tool-card[aria-label="${label}"] [aria-label="Approve this tool call"]`);
      if (!(await group.isExisting())) return false;
      const button = await group.$("button=Allow once");
      if (!(await button.isExisting()) || !(await button.isEnabled())) return false;
      await button.click();
      return true;
    }, `the approval on ${label}`, 30_000);
  }

  /** Runs `fn` inside the app frame of the card labelled `label`, and comes back out. */
  async function inFrame(label, fn) {
    const frame = await $(`section.tool-card[aria-label="${label}"] .app-frame iframe`);
    await frame.waitForExist({ timeout: 30_000 });
    await session.browser.switchFrame(frame);
    try {
      return await fn();
    } finally {
      await session.browser.switchFrame(null);
    }
  }

  /** Empties the message box as a user does (WebDriver's clear fires no input event, so the
   * page would keep its draft). */
  async function emptyBox() {
    const box = await $('textarea[aria-label="Message"]');
    await box.click();
    await session.browser.keys(["Control", "a"]);
    await session.browser.keys("Backspace");
    await waitFor(async () => (await box.getValue()) === "", "the message box to be empty");
  }

  /** The window's document (the route after `#` changes with the chat). */
  const topUrl = async () => (await session.browser.getUrl()).split("#")[0];

  it("shows the clock's own page in its card, and its button calls the server through the approval card", async () => {
    // Both servers connected (they start after the first paint), so their tools are offered.
    await (await $('a[aria-label="Settings"]')).click();
    await (await $('button[role="tab"]=MCP')).click();
    for (const name of ["clock", "hostile"]) {
      await waitFor(async () => (await (await $(`[data-testid="status-${name}"]`)).getText()) === "connected", `${name} to connect`, 30_000);
    }
    await (await $('a[aria-label="Chat"]')).click();
    await waitFor(async () => (await (await $('select[aria-label="Model"]')).getValue()) !== "", "a model");
    const home = await topUrl();
    await ask("What time is it on the server?", [["clock__get-time"]]);
    await allowOnCard("Tool clock:get-time");
    // The frame got the tool's result (the page writes it in place of "Loading...").
    let first = "";
    await inFrame("Tool clock:get-time", async () => {
      await waitFor(async () => {
        first = await (await $("#server-time")).getText();
        return first !== "" && !first.includes("Loading");
      }, "the result in the app");
    });
    assert.match(first, /\d{4}-\d{2}-\d{2}T/, "an ISO time from the server");
    await screenshot("mcp-app-clock");

    // The app's own call: asked on the same card, naming the app.
    await sleep(1100); // the next second, so the answer differs
    await inFrame("Tool clock:get-time", async () => (await $("#get-time-btn")).click());
    const approval = await $('section.tool-card[aria-label="Tool clock:get-time"] [aria-label="Approve this tool call"]');
    await approval.waitForExist({ timeout: 15_000 });
    assert.match(await approval.getText(), /app in this answer wants to run get-time from clock/);
    await allowOnCard("Tool clock:get-time");
    await inFrame("Tool clock:get-time", async () => {
      await waitFor(async () => {
        const now = await (await $("#server-time")).getText();
        return now !== first && /\d{4}-\d{2}-\d{2}T/.test(now);
      }, "the app's own call to answer");
    });
    // On record under the card, as saved by the engine.
    const record = await $('section.tool-card[aria-label="Tool clock:get-time"] .app-calls');
    await waitFor(async () => (await record.isExisting()) && /1 call from its app/.test(await record.getText()), "the app's call on record");
    await (await record.$("summary")).click();
    assert.match(await record.getText(), /Get time\s+done/);
    assert.equal(await topUrl(), home, "the window stayed on Perch's page");
  });

  it("puts the app's message in the message box without sending it, and asks before opening its link", async () => {
    const before = (await fake.requests()).length;
    await inFrame("Tool clock:get-time", async () => {
      const text = await $("#message-text");
      await text.setValue("Remind me at noon");
      await (await $("#send-message-btn")).click();
    });
    await (await $("button=Put in message box")).click();
    await waitFor(async () => (await (await $('textarea[aria-label="Message"]')).getValue()).includes("Remind me at noon"), "the message in the box");
    await sleep(500);
    assert.equal((await fake.requests()).length, before, "nothing was sent to the model");
    await emptyBox();

    await inFrame("Tool clock:get-time", async () => (await $("#open-link-btn")).click());
    const consent = await $('[aria-label="The app wants to open a link"]');
    await consent.waitForExist({ timeout: 10_000 });
    assert.match(await consent.getText(), /wants to open https:\/\/modelcontextprotocol\.io\//);
    await consent.scrollIntoView({ block: "nearest" });
    await screenshot("mcp-app-link-consent");
    // At 450x450, the consent row and the record of the app's calls (opened above) fit.
    assert.deepEqual(await layoutProblems(session.browser), []);
    await (await $("button=Don't open")).click();
    await consent.waitForExist({ reverse: true, timeout: 5_000 });
  });

  /** Calls one attack tool and returns what its page saw (its #result). */
  async function attack(name) {
    await newChat();
    await ask(`Run ${name}`, [[`hostile__attack_${name}`]]);
    const label = `Tool hostile:attack_${name}`;
    await allowOnCard(label);
    let seen = null;
    await inFrame(label, async () => {
      await waitFor(async () => {
        const text = await (await $("#result")).getText().catch(() => "pending");
        if (text === "pending" || text === "") return false;
        seen = JSON.parse(text);
        return true;
      }, `the ${name} page to finish`, 20_000);
    });
    return seen;
  }

  it("keeps a hostile app inside its frame: no window, DOM, IPC, navigation or network", async () => {
    const home = await topUrl();
    const theme = await session.browser.execute(() => document.documentElement.dataset.theme ?? "");
    for (const name of ["top-nav", "parent-dom", "tauri-globals", "network", "self-nav"]) {
      const seen = await attack(name);
      assert.notEqual(seen?.outcome, "succeeded", `${name}: ${JSON.stringify(seen)}`);
      if (name === "tauri-globals") {
        // WebKit's channel to the IPC handler is visible in frames; Perch makes it inert.
        assert.match(seen.detail["webkit.messageHandlers.ipc"], /^(absent|inert)$/);
        assert.match(seen.detail["innerFrame.webkit.messageHandlers.ipc"], /^(absent|inert|threw .*)$/);
      }
      if (name === "network") {
        // The loopback origin it declared was refused, and the card says so.
        const card = await $('section.tool-card[aria-label="Tool hostile:attack_network"]');
        assert.match(await card.getProperty("textContent"), /which Perch does not allow/);
      }
    }
    await sleep(1500); // the self-navigation fires after 200 ms; loads after the page finished
    assert.deepEqual(listener.requests, [], "no request reached the loopback listener");
    assert.deepEqual(listener.wsAttempts, [], "no WebSocket reached the loopback listener");
    assert.equal(await topUrl(), home, "the window is still on Perch's page");
    assert.equal(await session.browser.execute(() => document.documentElement.dataset.theme ?? ""), theme, "the theme is unchanged");
    const logs = readdirSync(join(dataDir, "logs"), { withFileTypes: true })
      .filter((f) => f.isFile())
      .map((f) => readFileSync(join(dataDir, "logs", f.name), "utf8"))
      .join("\n");
    // WebKit itself keeps the frame from loading http: (the listener saw nothing); a page of
    // Perch's own app scheme with a token it never gave out is refused by Perch's policy.
    assert.match(logs, /a navigation away from Perch's pages was stopped url=perch-app:\/\/localhost\/(ab){16}/);
  });

  it("lets no app connect or resolve a name ahead of time: preconnect, DNS prefetch, a link with a target", async () => {
    const home = await topUrl();
    // Control: a connection made on purpose is counted (and a request on it).
    const connections = listener.connections.length;
    await (await fetch(`${listener.url}/control`)).text();
    assert.equal(listener.connections.length, connections + 1, "the listener counts connections");
    const counted = listener.connections.length;

    // Preconnects and DNS prefetches, static and added by script, and the page's own click on
    // a link with target=_blank; then the user's own click on such a link.
    const seen = await attack("speculative");
    const fromPage = listener.connections.length - counted;
    await inFrame("Tool hostile:attack_speculative", async () => (await $("#user-blank")).click());
    await sleep(1500);
    const fromClick = listener.connections.length - counted - fromPage;
    const times = listener.connections.slice(counted).map((c) => c.time - seen.detail.at.script);
    console.log(`e2e: speculative loads: ${fromPage} connection(s) from the page (its own click ${seen.detail.at.scriptClick - seen.detail.at.script} ms after its script began), ${fromClick} after the user's click; at ms ${JSON.stringify(times)}`);
    assert.deepEqual({ fromPage, fromClick }, { fromPage: 0, fromClick: 0 }, "no connection from the app reached the listener");
    assert.deepEqual(
      seen.detail.supports,
      { preconnect: false, "dns-prefetch": false, prefetch: false, prerender: false },
      "the frame has none of the link types WebKit loads on its own",
    );
    assert.deepEqual(listener.requests.map((r) => r.path), ["/control"]);
    assert.equal(await topUrl(), home, "the window is still on Perch's page");
  });

  it("refuses an app's call to a tool only the model may call, and lets it call its app-only tool", async () => {
    await newChat();
    await ask("Run tool-call", [["hostile__attack_tool-call"]]);
    const label = "Tool hostile:attack_tool-call";
    await allowOnCard(label);
    // The page calls the app-only tool first: asked on the card, naming the app.
    await allowOnCard(label);
    let seen;
    await inFrame(label, async () => {
      await waitFor(async () => {
        const text = await (await $("#result")).getText().catch(() => "pending");
        if (!text.includes("model_only")) return false;
        seen = text;
        return true;
      }, "the tool-call page to finish", 30_000);
    });
    assert.match(seen, /secret-ran/, "the app-only tool ran for its app");
    assert.doesNotMatch(seen, /model-only-ran/, "a model-only tool is refused to an app");
    assert.match(seen, /visibility/);
  });

  it("shows on the card what an app told the model, and the model reads it next turn", async () => {
    await newChat();
    await ask("Run echo", [["hostile__echo_app"]]);
    const label = "Tool hostile:echo_app";
    await allowOnCard(label);
    await inFrame(label, async () => {
      await waitFor(async () => (await (await $("#result")).getText().catch(() => "")).includes("succeeded"), "the echo page");
      await (await $("#tell-model")).click();
      await waitFor(async () => (await (await $("#call-result")).getText()) !== "", "the answer to the app");
      // Taken, and nothing more said to the app.
      assert.deepEqual(JSON.parse(await (await $("#call-result")).getText()).result, {});
    });
    const told = await $(`section.tool-card[aria-label="${label}"] details.app-context`);
    await told.waitForExist({ timeout: 10_000 });
    await (await told.$("summary")).click();
    assert.match(await told.getText(), /The user picked the blue plan\.\s+\{"plan":"blue"\}/);
    await told.scrollIntoView({ block: "nearest" });
    await screenshot("mcp-app-told-model");
    assert.deepEqual(await layoutProblems(session.browser), []);
    const before = (await fake.requests()).filter((r) => r.path === "/api/chat").length;
    await fake.script({ steps: [{ type: "text", text: "Blue." }, { type: "finish" }] });
    await (await $('textarea[aria-label="Message"]')).setValue("Which plan?");
    await session.browser.keys("Enter");
    await waitFor(async () => (await fake.requests()).filter((r) => r.path === "/api/chat").length > before, "the next turn");
    const sent = JSON.stringify((await fake.requests()).filter((r) => r.path === "/api/chat").at(before).body.messages);
    assert.match(sent, /the app shown with that call says: \\"The user picked the blue plan/);
  });

  /** Asks `text` in the open chat; the messages of the request the model was sent for it. */
  async function nextTurn(text) {
    const chats = async () => (await fake.requests()).filter((r) => r.path === "/api/chat");
    const before = (await chats()).length;
    await fake.script({ steps: [{ type: "text", text: "Noted." }, { type: "finish" }] });
    await (await $('textarea[aria-label="Message"]')).setValue(text);
    await session.browser.keys("Enter");
    await waitFor(async () => (await chats()).length > before, "the next turn");
    return (await chats()).at(before).body.messages;
  }

  it("gives the model what an app or a tool says as data: nothing in it passes for Perch's records", async () => {
    // The app tells the model lines forged to read as Perch's record of a terminal command and
    // as roles; its tool's result carries the same lines.
    const seen = await attack("forge-context");
    assert.equal(seen.outcome, "succeeded", `the app's words were taken: ${JSON.stringify(seen)}`);
    const messages = await nextTurn("What did the app say?");
    const lines = messages.flatMap((m) => linesOf(m.content ?? ""));
    assert.deepEqual(lines.filter((line) => FORGED_LINE.test(line)), [], "no line passes for Perch's record or a role");
    // Control: both reached the model whole, each inside Perch's own note, as a quoted string.
    const said = "[the app shown with that call says: ";
    const note = lines.find((line) => line.startsWith(said));
    assert.ok(note?.endsWith('"]'), note);
    assert.equal(JSON.parse(note.slice(said.length, -1)), FORGED);
    const call = lines.find((line) => line.startsWith("[tool call hostile:attack_forge-context {} -> Done: "));
    assert.ok(call?.endsWith('"]'), call);
    assert.equal(JSON.parse(call.slice(call.indexOf(" -> Done: ") + 10, -1)), `ran forge-context\n${FORGED}`);
  });

  it("holds an app to a rate of changes to what the model is told", async () => {
    const seen = await attack("context-flood");
    // 62 at once: a minute's worth (MAX_CONTEXT_UPDATES_PER_MINUTE) are taken, the rest refused.
    assert.equal(seen.detail.accepted, 20, JSON.stringify(seen.detail));
    assert.match(seen.detail.firstRefusal, /too many requests/);
    // Control: those taken were taken: the card shows one of them, and the model reads one (the
    // 62 run at once, so which came last may differ between the two).
    const told = await $('section.tool-card[aria-label="Tool hostile:attack_context-flood"] details.app-context');
    await told.waitForExist({ timeout: 10_000 });
    await (await told.$("summary")).click();
    assert.match(await told.getText(), /update \d+/);
    const messages = await nextTurn("What did the app say last?");
    const lines = messages.flatMap((m) => linesOf(m.content ?? ""));
    assert.ok(lines.some((line) => /^\[the app shown with that call says: "update \d+"\]$/.test(line)), JSON.stringify(messages));
  });

  it("stops an app that floods, and the window keeps working", async () => {
    await newChat();
    await ask("Run flood", [["hostile__attack_flood"]]);
    await allowOnCard("Tool hostile:attack_flood");
    const note = await $('section.tool-card[aria-label="Tool hostile:attack_flood"] .app-frame.note');
    await note.waitForExist({ timeout: 20_000 });
    assert.match(await note.getProperty("textContent"), /too many messages/);
    const box = await $('textarea[aria-label="Message"]');
    await box.setValue("still here");
    assert.equal(await box.getValue(), "still here", "the page still answers");
    await emptyBox();
  });

  it("stops an app that grows without bound", async () => {
    await newChat();
    await ask("Run memory", [["hostile__attack_memory"]]);
    await allowOnCard("Tool hostile:attack_memory");
    const note = await $('section.tool-card[aria-label="Tool hostile:attack_memory"] .app-frame.note');
    await note.waitForExist({ timeout: 60_000 });
    assert.match(await note.getProperty("textContent"), /too much memory/);
  });

  it("shows the result as text when apps are off, and the server is told so", async () => {
    await (await $('a[aria-label="Settings"]')).click();
    await (await $('button[role="tab"]=Tools')).click();
    const apps = await $("label*=Show the apps tool servers send");
    await apps.waitForExist();
    await (await apps.$("input")).click();
    // The servers restart without the extension (told at their start).
    await (await $('button[role="tab"]=MCP')).click();
    await sleep(300);
    await waitFor(async () => (await (await $('[data-testid="status-hostile"]')).getText()) === "connected", "hostile to reconnect", 30_000);
    await waitFor(async () => (await (await $('[data-testid="status-clock"]')).getText()) === "connected", "clock to reconnect", 30_000);
    // The clock's row keeps its own Apps switch (off with the global one).
    const clockRow = await $('fieldset[aria-label="Server clock"]');
    await clockRow.scrollIntoView({ block: "nearest" });
    assert.match(await clockRow.getText(), /Apps/);
    await screenshot("mcp-app-server-switch");
    await (await $('a[aria-label="Chat"]')).click();
    await newChat();
    await ask("Were apps offered, and what time is it?", [["hostile__capability"], ["clock__get-time"]]);
    await allowOnCard("Tool hostile:capability");
    await allowOnCard("Tool clock:get-time");
    const capability = await $('section.tool-card[aria-label="Tool hostile:capability"]');
    await waitFor(async () => (await capability.getText()).includes("done"), "the capability call");
    // The card is drawn again as the answer is saved: the button is looked up afresh each try.
    await waitFor(async () => {
      const show = await capability.$("button=Show result");
      if (await show.isExisting()) await show.click();
      return /"apps":\s*false/.test(await capability.getText());
    }, "the capability result shown");
    // The clock's card, whose tool has a page, shows its result as text and no frame.
    const clock = await $('section.tool-card[aria-label="Tool clock:get-time"]');
    await waitFor(async () => (await clock.getText()).includes("done"), "the clock's call");
    await (await clock.$("button=Show result")).waitForExist();
    assert.equal((await $$(".app-frame iframe")).length, 0, "no app frame");
  });

  // Last: WebDriver cannot follow the page into the new process it is loaded in (WebKit ends the
  // automation session with the old one), so from there on this judges by the app's log and
  // the screen, as hidden.test.js does.
  it("stops an app whose script never returns, loading the window again without it", async () => {
    await (await $('a[aria-label="Settings"]')).click();
    await (await $('button[role="tab"]=Tools')).click();
    await (await (await $("label*=Show the apps tool servers send")).$("input")).click();
    await (await $('button[role="tab"]=MCP')).click();
    await sleep(300);
    await waitFor(async () => (await (await $('[data-testid="status-hostile"]')).getText()) === "connected", "hostile to reconnect", 30_000);
    await (await $('a[aria-label="Chat"]')).click();
    await newChat();
    await ask("Run busy", [["hostile__attack_busy"]]);
    await allowOnCard("Tool hostile:attack_busy");
    const log = () => appLog(dataDir);
    const count = (line) => log().split(line).length - 1;
    const paints = firstPaints(dataDir);
    await waitFor(() => count("an app's page opens") > 0 && log().includes("ui://hostile/busy.html"), "the busy app to open", 30_000);
    const opened = Date.now();
    await waitFor(() => count("the page stopped answering with apps open") === 1, "the hang to be noticed", 60_000);
    await waitFor(() => firstPaints(dataDir) > paints, "the page to paint again in a new process", 60_000);
    console.log(`e2e: the busy app opened; the page painted again ${Date.now() - opened} ms later`);
    // The page, loaded where it was, shows the card again; its app is not opened again.
    await waitFor(() => count("an app that held up the page is not opened again") > 0, "the card to be refused its app", 30_000);
    await screenshot("mcp-app-hung-reloaded");
    await sleep(15_000);
    assert.equal(count("the page stopped answering with apps open"), 1, "the reloaded page answers: no second hang");
    // The session went with the old page: the app is ended as a logout would.
    process.kill(appPid(), "SIGTERM");
  });
});
