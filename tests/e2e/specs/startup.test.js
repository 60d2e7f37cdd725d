// Start-up with bad data: the app explains what happened instead of crashing or losing data.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
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
