// Start-up with bad data: the app explains what happened instead of crashing or losing data.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { freshDataDir, launch, screenshot } from "../lib/harness.js";

async function bodyText(browser) {
  const body = await browser.$("body");
  await browser.waitUntil(async () => (await body.getText()).trim().length > 0);
  return body.getText();
}

describe("start-up with bad data", () => {
  it("a corrupt database is kept as a backup, replaced, and reported", async () => {
    const dir = freshDataDir();
    const garbage = Buffer.from("not a database at all\n".repeat(500));
    writeFileSync(join(dir, "perch.db"), garbage);
    const session = await launch(dir);
    try {
      const notice = await session.browser.$(".notice");
      await notice.waitForDisplayed();
      const text = await notice.getText();
      assert.match(text, /Your history database was damaged/);
      assert.match(text, /perch\.db\.corrupt-/);
      await screenshot("corrupt-database-notice");
      const backups = readdirSync(dir).filter((f) => f.startsWith("perch.db.corrupt-"));
      assert.equal(backups.length, 1);
      assert.deepEqual(readFileSync(join(dir, backups[0])), garbage, "the damaged bytes are kept");
      // The app works on the fresh database.
      await (await session.browser.$('a[aria-label="History"]')).click();
      assert.match(await bodyText(session.browser), /No conversations yet/);
    } finally {
      await session.close();
    }
  });

  it("a crash report from the last run is announced once and shown in Settings -> Logs", async () => {
    const dir = freshDataDir();
    // As perch-crash writes one (its own tests make real ones from a panicking process).
    mkdirSync(join(dir, "crashes"), { mode: 0o700 });
    const report = "20261127T140200.125Z-perch-mcp-web-4242.txt";
    writeFileSync(
      join(dir, "crashes", report),
      [
        "Perch crash report",
        "Component: perch-mcp-web",
        "Version: 0.1.0",
        "OS: linux x86_64",
        "Time: 2026-11-27T14:02:00.125Z",
        "Process: 4242",
        "Thread: tokio-runtime-worker",
        "Location: mcp_servers/web/src/read.rs:88:21",
        "Message: index out of bounds: the len is 3 but the index is 7",
        "",
        "Backtrace:",
        "   0: perch_mcp_web::read::page",
        "",
      ].join("\n"),
      { mode: 0o600 },
    );
    let session = await launch(dir);
    try {
      const notice = await session.browser.$(".notice");
      await notice.waitForDisplayed();
      assert.match(await notice.getText(), /the web tools server\) hit an unexpected error/);
      await screenshot("crash-notice");
      await (await notice.$("a=Open Settings → Logs")).click();
      const card = await session.browser.$('fieldset[aria-label="Crash reports"]');
      await card.waitForDisplayed();
      assert.match(await card.getText(), /perch-mcp-web[\s\S]*the len is 3 but the index is 7/);
      await (await card.$("button=Show")).click();
      await (await card.$("pre")).waitForDisplayed();
      assert.match(await (await card.$("pre")).getText(), /Backtrace:\n\s*0: perch_mcp_web::read::page/);
      await card.scrollIntoView({ block: "start" });
      await screenshot("crash-report-shown");
      assert.deepEqual(readdirSync(join(dir, "crashes")), [report.replace(/\.txt$/, ".seen.txt")]);
    } finally {
      await session.close();
    }
    // Told once: the next start says nothing of it.
    session = await launch(dir);
    try {
      await (await session.browser.$('a[aria-label="Settings"]')).waitForDisplayed();
      assert.equal((await session.browser.$$(".notice")).length, 0);
    } finally {
      await session.close();
    }
  });

  it("a database from a newer Perch is refused and left untouched", async () => {
    const dir = freshDataDir();
    const db = join(dir, "perch.db");
    execFileSync("python3", [
      "-c",
      "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('create table t(x)'); " +
        "c.execute('pragma user_version=99'); c.commit()",
      db,
    ]);
    const before = readFileSync(db);
    const session = await launch(dir);
    try {
      const text = await bodyText(session.browser);
      assert.match(text, /Perch could not start/);
      assert.match(text, /newer Perch/);
      await screenshot("newer-database-refused");
    } finally {
      await session.close();
    }
    assert.deepEqual(readFileSync(db), before, "the newer database is not modified");
  });

  it("an unusable data folder is named with what to do", async () => {
    const parent = freshDataDir();
    const file = join(parent, "a-file");
    writeFileSync(file, "x");
    const bad = join(file, "data");
    const session = await launch(bad);
    try {
      const text = await bodyText(session.browser);
      assert.match(text, /Perch could not start/);
      assert.ok(text.includes(bad), `the path is named: ${text}`);
      assert.match(text, /PERCH_DATA_DIR/);
      await screenshot("unusable-data-folder");
    } finally {
      await session.close();
    }
    assert.ok(!existsSync(bad));
  });
});
