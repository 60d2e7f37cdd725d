// Google mail and calendar in the real app, against the loopback fake of Google's OAuth
// endpoints and the Gmail and Calendar APIs (tests/fake-google, which checks PKCE, the client's
// secret and scopes as Google does). Settings -> Connections takes the user's Desktop client,
// Connect opens Google's page in the system browser (here `$BROWSER`, a script that consents as
// a person would: it loads the page and follows the redirect to Perch's loopback), and the
// bundled Google server starts again with the granted tools. In a chat, a mail search card shows
// senders and subjects, and an event to create is shown on its approval card and then as created.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, it } from "node:test";
import { APP, consentingBrowser, freshDataDir, launch, screenshot, startFakeLlm, waitFor } from "../lib/harness.js";

// The fake's registered Desktop client (tests/fake-google/src/lib.rs).
const CLIENT_ID = "1071006060591-perchdesktop0fake0client.apps.googleusercontent.com";
const CLIENT_SECRET = "GOCSPX-fakeDesktopSecret0000000";

/** Starts the fake and resolves with its base URL (its first line on stdout). */
function startFakeGoogle() {
  const child = spawn(join(dirname(APP), "perch-fake-google"), [], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    createInterface({ input: child.stdout }).once("line", (base) => resolve({ child, base: base.trim() }));
  });
}

describe("Google connection", () => {
  let google;
  let fake;
  let session;
  const $ = (s) => session.browser.$(s);
  const tmp = freshDataDir();
  const opened = join(tmp, "opened.txt");
  const state = async () => (await fetch(`${google.base}/test/state`)).json();

  before(async () => {
    google = await startFakeGoogle();
    fake = await startFakeLlm("ollama");
    session = await launch(freshDataDir(), {
      OLLAMA_HOST: fake.host,
      PERCH_KEY_STORE: "file",
      PERCH_GOOGLE_BASE: google.base,
      BROWSER: consentingBrowser(tmp, opened),
    });
  });
  after(async () => {
    await session?.close();
    fake?.stop();
    google?.child.kill();
  });

  it("takes the user's client and connects through the browser with what they tick", async () => {
    await (await $('a[aria-label="Settings"]')).click();
    await (await $('button[role="tab"]=Connections')).click();
    const card = await $('fieldset[aria-label="Google"]');
    await card.waitForDisplayed();
    assert.match(await card.getText(), /Desktop app/);
    await screenshot("google-client-guide");
    await (await card.$("label=Client ID").$("input")).setValue(CLIENT_ID);
    await (await card.$("label=Client secret").$("input")).setValue(CLIENT_SECRET);
    await (await card.$("button=Save client")).click();

    // Reading is ticked first; the user adds changing the calendar, then connects.
    const change = await card.$('//label[contains(., "Change calendar")]/input');
    await change.waitForExist();
    await change.click();
    await (await card.$("button=Connect Google")).click();
    await waitFor(async () => /Connected as ada@example\.com/.test(await card.getText()), "the connection", 30_000);
    const text = await card.getText();
    assert.match(text, /read mail, see calendar, and change calendar/);
    const lines = readFileSync(opened, "utf8").trim().split("\n");
    assert.match(lines[0], /\/o\/oauth2\/v2\/auth\?.*code_challenge_method=S256/);
    assert.ok(!lines[0].includes(CLIENT_SECRET), "the secret never goes to the browser");
    assert.equal(lines[1], "landed 200 true");
    await card.scrollIntoView({ block: "start" });
    await screenshot("google-connected");

    // The Google server runs again with the granted tools (and none that would need more).
    await (await $('button[role="tab"]=MCP')).click();
    const server = await $('fieldset[aria-label="Server google"]');
    await waitFor(async () => /Tools\s*10/.test(await server.getText()), "the Google server's ten tools", 30_000);
  });

  it("shows a mail search as senders and subjects, and an event to create, then created", async () => {
    await fake.script({ steps: [{ type: "tool_call", name: "google__gmail_search", arguments: { query: "from:grace" } }, { type: "finish" }] });
    await fake.script({ steps: [{ type: "text", text: "Grace wrote about the compiler." }, { type: "finish" }] });
    await (await $('a[aria-label="Chat"]')).click();
    const box = await $('textarea[aria-label="Message"]');
    await box.waitForEnabled();
    await box.setValue("What did Grace send me?");
    await session.browser.keys("Enter");
    await (await $('[aria-label="Approve this tool call"]')).waitForDisplayed({ timeout: 20000 });
    assert.match(await (await $(".tool-card .google-summary")).getText(), /Search mail for .?from:grace/);
    await (await $("button=Allow once")).click();
    const messages = await $('ul[aria-label="Messages"]');
    await messages.waitForDisplayed({ timeout: 20000 });
    assert.match(await messages.getText(), /Grace/);
    assert.ok(!(await (await $(".tool-card")).getText()).includes('"query"'), "no raw JSON on the card");
    await waitFor(async () => (await (await $(".message.assistant")).getText()).includes("Grace wrote"), "the answer");
    await screenshot("google-mail-search");

    const event = { title: "Design review", start: "2026-12-01T10:00", duration_minutes: 45, attendees: ["ana@example.com"] };
    await fake.script({ steps: [{ type: "tool_call", name: "google__calendar_create_event", arguments: event }, { type: "finish" }] });
    await fake.script({ steps: [{ type: "text", text: "Booked." }, { type: "finish" }] });
    await box.setValue("Book a design review with Ana on 1 December at 10 for 45 minutes.");
    await session.browser.keys("Enter");
    const approval = await $('[aria-label="Approve this tool call"]');
    await approval.waitForDisplayed({ timeout: 20000 });
    const asked = await (await $$last(".tool-card")).getText();
    assert.match(asked, /New event/);
    assert.match(asked, /Design review/);
    assert.match(asked, /ana@example\.com/);
    await screenshot("google-event-approval");
    await (await $("button=Allow once")).click();
    // The card re-renders from its question to its result: the list is looked up afresh each
    // time, as a handle found mid-render goes stale.
    await waitFor(
      async () => /Design review.*10:00/s.test(await (await $('ul[aria-label="Event"]')).getText()),
      "the created event",
      20000,
    );
    await screenshot("google-event-created");

    const created = (await state()).events.find((e) => e.summary === "Design review");
    assert.ok(created, "the event is in the calendar");
    assert.equal(created.attendees[0].email, "ana@example.com");
  });

  /** The last element matching `selector`. */
  async function $$last(selector) {
    return (await session.browser.$$(selector)).at(-1);
  }
});
