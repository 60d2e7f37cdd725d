// Start at login in the real app: the switch in Settings -> General writes and removes the XDG
// autostart entry, and a session start (the entry's Exec run as the session manager runs it)
// brings Perch up as its bubble without taking the focus, once.
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { APP, freshDataDir, launch, perchWindows, screenshot, sleep, waitFor, waitForGeometry, xdotool } from "../lib/harness.js";

const run = promisify(execFile);

/** The Exec line's arguments, unquoted as the Desktop Entry Specification says. */
function execArgs(entry) {
  const line = entry.split("\n").find((l) => l.startsWith("Exec="));
  assert.ok(line, `an Exec line in\n${entry}`);
  const value = line.slice("Exec=".length).replace(/\\\\/g, "\\");
  const args = [];
  for (const [, quoted, plain] of value.matchAll(/"((?:[^"\\]|\\.)*)"|(\S+)/g)) {
    args.push(quoted !== undefined ? quoted.replace(/\\(.)/g, "$1") : plain.replace(/%%/g, "%"));
  }
  return args;
}

/** Whether any process runs the app binary. */
async function appProcesses() {
  const out = await run("pgrep", ["-f", "-x", `${APP}( .*)?`]).catch(() => ({ stdout: "" }));
  return out.stdout.trim().split("\n").filter(Boolean);
}

describe("start at login", () => {
  const dataDir = freshDataDir();
  const config = mkdtempSync(join(tmpdir(), "perch-config-"));
  const entryPath = join(config, "autostart", "dev.perch.app.desktop");
  const env = { ...process.env, PERCH_DATA_DIR: dataDir, XDG_CONFIG_HOME: config, LANG: "C.UTF-8" };
  let session;
  const started = [];
  let other;
  after(async () => {
    await session?.close();
    other?.kill();
    for (const child of started) child.kill("SIGTERM");
    await waitFor(async () => (await appProcesses()).length === 0, "the app started at login to exit", 30_000);
  });

  it("Settings -> General writes the autostart entry and removes it again", async () => {
    session = await launch(dataDir, { XDG_CONFIG_HOME: config });
    const $ = (s) => session.browser.$(s);
    await (await $('a[aria-label="Settings"]')).click();
    const box = await $('[data-testid="start-at-login"] input[type="checkbox"]');
    await box.waitForEnabled();
    assert.equal(await box.isSelected(), false);
    assert.ok(!existsSync(entryPath), "no entry before the switch");
    await box.click();
    await waitFor(() => existsSync(entryPath), "the entry to be written");
    const entry = readFileSync(entryPath, "utf8");
    assert.deepEqual(execArgs(entry), [APP, "--autostart"], entry);
    await run("desktop-file-validate", [entryPath]);
    assert.match(await (await $('[data-testid="start-at-login"]')).getText(), new RegExp(`The entry is ${entryPath}`));
    await screenshot("start-at-login-on");
    await box.click();
    await waitFor(() => !existsSync(entryPath), "the entry to be removed");
    await box.click();
    await waitFor(() => existsSync(entryPath), "the entry to be written again");
    await session.close();
    session = undefined;
  });

  it("a session start brings Perch up as its bubble, leaves the focus alone, and starts it once", async () => {
    // What the user opened first holds the focus.
    other = spawn("xlogo", ["-geometry", "300x300+400+300"], { stdio: "ignore" });
    const otherId = (await waitFor(async () => xdotool("search", "--onlyvisible", "--class", "xlogo"), "xlogo")).split("\n")[0];
    await xdotool("windowactivate", "--sync", otherId);

    const [program, ...args] = execArgs(readFileSync(entryPath, "utf8"));
    started.push(spawn(program, args, { env, stdio: "ignore" }));
    await waitFor(async () => (await perchWindows()).length === 1, "Perch to start at login");
    await waitForGeometry({ width: 52, height: 52 }, "the bubble");
    // Give a late focus grab its chance before checking that none happened.
    await sleep(1500);
    assert.equal(await xdotool("getactivewindow"), otherId, "the focus stays where it was");
    await screenshot("started-at-login-as-bubble", { window: false });

    // A second session start (or the entry run twice) finds Perch running and shows nothing new.
    const second = spawn(program, args, { env, stdio: "ignore" });
    const code = await new Promise((resolve) => second.on("exit", resolve));
    assert.equal(code, 0, "the second start hands over and exits");
    assert.equal((await appProcesses()).length, 1, "one Perch");
    assert.equal((await perchWindows()).length, 1, "one window");
    await waitForGeometry({ width: 52, height: 52 }, "still the bubble");
    assert.equal(await xdotool("getactivewindow"), otherId, "the focus still where it was");
  });
});
