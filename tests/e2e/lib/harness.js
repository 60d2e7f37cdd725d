// Drives the real Perch app: tauri-driver + WebKitWebDriver for the UI, xdotool for the
// window as the window manager sees it, ImageMagick for screenshots of the whole screen.
import { execFile, spawn } from "node:child_process";
import { chmodSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { promisify } from "node:util";
import { remote } from "webdriverio";
import { desktopWindows } from "./desktops.js";

const run = promisify(execFile);
export const APP = process.env.PERCH_APP;
// Built beside the app by `make app-debug`.
export const REVIEW_BRIDGE = join(dirname(APP), "perch-mcp-review");
export const CLI = join(dirname(APP), "perch");
export const FAKE_LLM = join(dirname(APP), "perch-fake-llm");

/** Starts the fake model service (a test double speaking Ollama's wire format) on a free port. */
export async function startFakeLlm(dialect = "ollama", args = []) {
  const child = spawn(FAKE_LLM, [dialect, ...args], { stdio: ["ignore", "pipe", "inherit"] });
  const url = await new Promise((resolve, reject) => {
    child.stdout.once("data", (d) => resolve(String(d).trim().replace(/^listening /, "")));
    child.once("exit", (code) => reject(new Error(`perch-fake-llm exited with ${code}`)));
  });
  return {
    url,
    host: new URL(url).host,
    async script(script) {
      const res = await fetch(`${url}/__fake/script`, { method: "POST", body: JSON.stringify(script) });
      if (!res.ok) throw new Error(`the fake refused the script: ${res.status}`);
    },
    async requests() {
      return (await fetch(`${url}/__fake/requests`)).json();
    },
    stop() {
      child.kill();
    },
  };
}
export const ARTIFACTS = process.env.E2E_ARTIFACTS;

export function freshDataDir() {
  return mkdtempSync(join(tmpdir(), "perch-e2e-"));
}

/**
 * A system browser whose user consents on every sign-in page: it records the page in `log`,
 * loads it, follows where the answer sends it (Perch's loopback redirect) and records
 * `landed STATUS CLOSE_TAB` (whether Perch's page says the tab can be closed). Returns the
 * `$BROWSER` value that runs it.
 */
export function consentingBrowser(dir, log) {
  const script = join(dir, "browser.mjs");
  writeFileSync(
    script,
    `import { appendFileSync } from "node:fs";
const page = process.argv[2];
appendFileSync(${JSON.stringify(log)}, page + "\\n");
const answer = await fetch(page, { redirect: "manual" });
const landed = await fetch(answer.headers.get("location"));
appendFileSync(${JSON.stringify(log)}, "landed " + landed.status + " " + (await landed.text()).includes("You can close this tab") + "\\n");
`,
  );
  chmodSync(script, 0o755);
  return `${process.execPath} ${script}`;
}

/** A private runtime dir (as XDG_RUNTIME_DIR would be), so each app gets its own review socket. */
export function freshRuntimeDir() {
  const dir = mkdtempSync(join(tmpdir(), "perch-run-"));
  chmodSync(dir, 0o700);
  return dir;
}

/** Two different free ports, asked for while both are held: one asked for after the other was
 * let go can be the same port, and tauri-driver with one port for both never answers. */
async function freePorts() {
  const listen = () =>
    new Promise((resolve, reject) => {
      const server = createServer();
      server.on("error", reject);
      server.listen(0, "127.0.0.1", () => resolve(server));
    });
  const servers = [await listen(), await listen()];
  const ports = servers.map((s) => s.address().port);
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  return ports;
}

// WebKit keeps local storage (the composer's draft, for one) under XDG_DATA_HOME: one folder
// per data folder, so a spec never finds another run's draft and a relaunch finds its own. Kept
// apart from the data folder, which some specs make unusable on purpose.
const webkitData = new Map();
function webkitDataFor(dataDir) {
  if (!webkitData.has(dataDir)) webkitData.set(dataDir, mkdtempSync(join(tmpdir(), "perch-webkit-")));
  return webkitData.get(dataDir);
}

/**
 * Starts Perch with its data in `dataDir` and returns a WebDriver session. The app inherits
 * tauri-driver's environment, so each launch gets its own driver with PERCH_DATA_DIR set.
 */
export async function launch(dataDir, env = {}) {
  // Both ports free, so several suites (other checkouts) can run side by side.
  const [port, nativePort] = await freePorts();
  const driver = spawn("tauri-driver", ["--port", String(port), "--native-port", String(nativePort)], {
    // English unless a spec asks for another locale: the UI and the model follow the system's.
    env: { ...process.env, LANG: "C.UTF-8", LC_ALL: "", LC_MESSAGES: "", PERCH_DATA_DIR: dataDir, XDG_DATA_HOME: webkitDataFor(dataDir), ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let driverLog = "";
  driver.stderr.on("data", (d) => (driverLog += d));
  await waitFor(async () => {
    // Each try bounded: a driver that accepts but never answers must not hang the wait.
    const res = await fetch(`http://127.0.0.1:${port}/status`, { signal: AbortSignal.timeout(2000) }).catch(() => null);
    return res !== null;
  }, "tauri-driver to listen").catch((e) => {
    // A driver left running would keep the spec's process (and the whole suite) alive.
    driver.kill();
    throw new Error(`${e.message}\n${driverLog}`);
  });
  let browser;
  try {
    browser = await remote({
      hostname: "127.0.0.1",
      port,
      logLevel: "error",
      capabilities: { "tauri:options": { application: APP } },
    });
  } catch (e) {
    driver.kill();
    throw new Error(`could not start the app: ${e.message}\n${driverLog}`);
  }
  const session = {
    browser,
    dataDir,
    async close() {
      await browser.deleteSession().catch(() => {});
      driver.kill();
      // The window goes before the process does (it still saves, stops answers and MCP
      // servers); a relaunch before then would be handed to the exiting instance.
      const exited = async () => (await perchWindows()).length === 0 && !(await appRunning());
      try {
        await waitFor(exited, "the app to exit", 30_000);
      } catch {
        // WebKitWebDriver ends the app with the session; once (of hundreds of runs) the driver
        // went first and the app was left running, orphaned. End it as a logout would.
        console.warn("e2e: the app outlived its WebDriver session; ending it with SIGTERM");
        await run("pkill", ["-TERM", "-f", "-x", `${APP}( .*)?`]).catch(() => {});
        await waitFor(exited, "the app to exit after SIGTERM", 15_000);
      }
    },
  };
  await waitFor(async () => (await perchWindows()).length === 1, "the Perch window to map");
  return session;
}

/** Whether any process runs the app binary (`pgrep` exits 1 when none does). */
async function appRunning() {
  try {
    await run("pgrep", ["-f", "-x", `${APP}( .*)?`]);
    return true;
  } catch {
    return false;
  }
}

/**
 * Settings -> Reviews -> Editor command: a stand-in editor that writes `FILE|LINE` to
 * `logFile`; returns once the settings are saved (Settings stays open).
 */
export async function useLoggingEditor(session, logFile) {
  const $ = (s) => session.browser.$(s);
  await (await $('a[aria-label="Settings"]')).click();
  await (await $('button[role="tab"]=Reviews')).click();
  const field = await $('input[aria-label="Editor command"]');
  await field.waitForDisplayed();
  await field.setValue(`sh -c 'printf "%s|%s" "$1" "$2" > ${logFile}' perch-test-editor {file} {line}`);
  await session.browser.keys("Enter");
  await waitFor(async () => (await (await $('.settings [role="status"]')).getText()).includes("Listening at"), "settings saved");
}

/** Polls `check` until it returns something truthy; `what` (text, or a function giving text) names it on timeout. */
export async function waitFor(check, what, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await check();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await sleep(100);
  }
  let name = what;
  if (typeof what === "function") name = await Promise.resolve().then(what).catch((e) => `(describing failed: ${e.message})`);
  throw new Error(`timed out waiting for ${name} (last: ${last})`);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function xdotool(...args) {
  const { stdout } = await run("xdotool", args);
  return stdout.trim();
}

/**
 * Visible top-level windows whose name matches `pattern` (a regular expression, as xdotool
 * reads it), their ids as the window manager knows them.
 */
export async function visibleWindows(pattern) {
  // xdotool walks every window and dies on an X error when one goes during the walk (a
  // tooltip, a menu): that says nothing about the windows asked for, so the walk is tried
  // again. It exits 1 with nothing on stderr when no window matches.
  for (let attempt = 1; ; attempt++) {
    try {
      const out = await xdotool("search", "--onlyvisible", "--name", pattern);
      return out ? out.split("\n") : [];
    } catch (e) {
      if (!String(e.stderr).includes("X Error") || attempt === 5) return [];
    }
  }
}

/** Visible top-level windows titled "Perch" (their ids as the window manager knows them). */
export async function perchWindows() {
  if (process.env.PERCH_TEST_DESKTOP) {
    const all = await desktopWindows();
    return all.filter((w) => w.name === "Perch" && w.visible).map((w) => String(w.id));
  }
  return visibleWindows("^Perch$");
}

/** The Perch window's position and size as the window manager has it. */
export async function geometry() {
  const [id] = await perchWindows();
  if (!id) throw new Error("no Perch window");
  const out = await xdotool("getwindowgeometry", "--shell", id);
  const v = Object.fromEntries(out.split("\n").map((l) => l.split("=")));
  return { id, x: Number(v.X), y: Number(v.Y), width: Number(v.WIDTH), height: Number(v.HEIGHT) };
}

export async function waitForGeometry(expected, what) {
  let last;
  return waitFor(async () => {
    last = await geometry();
    return Object.entries(expected).every(([k, v]) => last[k] === v) ? last : false;
  }, () => `${what}: ${JSON.stringify(expected)}, last ${JSON.stringify(last)}`);
}

/**
 * Waits until the Perch window shows painted content on the screen (not the black of an
 * unpainted or transparent surface). WebDriver only knows the DOM; this checks the pixels.
 */
export async function waitForPaint(what = "the window to paint") {
  let mean;
  await waitFor(async () => {
    const g = await geometry();
    const { stdout } = await run("import", [
      "-window", "root", "-crop", `${g.width}x${g.height}+${g.x}+${g.y}`, "-format", "%[fx:mean]", "info:",
    ]);
    mean = Number(stdout);
    return mean > 0.1;
  }, `${what} (mean brightness ${mean})`);
}

// Each spec file runs in its own process; its name keeps the numbering of files apart.
const SPEC = basename(process.argv[1] ?? "e2e", ".test.js");
let step = 0;
/** Saves a PNG of the whole screen once the window has painted, numbered in the order taken. */
export async function screenshot(name, { window = true } = {}) {
  if (window) await waitForPaint(`the window to paint before "${name}"`);
  step += 1;
  const file = join(ARTIFACTS, `${SPEC}-${String(step).padStart(2, "0")}-${name}.png`);
  await run("import", ["-window", "root", file]);
  return file;
}

export function screen() {
  return run("xdpyinfo").then(({ stdout }) => {
    const [, w, h] = stdout.match(/dimensions:\s+(\d+)x(\d+)/);
    return { width: Number(w), height: Number(h) };
  });
}
