// Signed updates in the real app, against a loopback update server: the release manifest Tauri's
// updater reads (`latest.json`) and a newer build, a real .deb signed with a throwaway key by
// scripts/sign-release.sh as `make app-release` signs releases (the version bound in the
// signature, latest.json written beside). The app is a debug build started with that server and
// key (`PERCH_UPDATE_ENDPOINT`, `PERCH_UPDATE_PUBKEY`, honoured by debug builds only). It was not
// installed from a package, so a verified download is saved for the user to install; it never
// replaces itself here.
//
// - the server down at start: nothing is said (the log has it);
// - a manifest with an older version: "up to date";
// - a signature from another key, and a tampered file: refused, nothing saved;
// - the real thing: progress, verified, saved byte for byte; `perch update check|apply` too;
// - on a connection NetworkManager reports metered (a stand-in on a private bus), no check.
import assert from "node:assert/strict";
import { execFile, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { after, before, describe, it } from "node:test";
import { APP, CLI, freshDataDir, freshRuntimeDir, launch, screenshot, sleep, waitFor } from "../lib/harness.js";
import { appLog } from "../lib/proc.js";

const run = promisify(execFile);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
const TAURI = join(ROOT, "node_modules", ".bin", "tauri");
const VERSION = "9.9.9";
const PACKAGE = `Perch_${VERSION}_amd64.deb`;

/** A throwaway key pair (no password): the private key's text and the public key. */
function keyPair(dir, name) {
  const path = join(dir, name);
  execFileSync(TAURI, ["signer", "generate", "--ci", "-p", "", "-w", path], { stdio: "ignore" });
  return { secret: readFileSync(path, "utf8").trim(), pubkey: readFileSync(`${path}.pub`, "utf8").trim() };
}

/**
 * A release as `make app-release` publishes one: `package` copied into its own folder, signed
 * with `key` for `version` and listed in latest.json by scripts/sign-release.sh. Returns the
 * manifest.
 */
function release(dir, packageFile, key, version, baseUrl, notes) {
  mkdirSync(dir);
  const copy = join(dir, PACKAGE);
  copyFileSync(packageFile, copy);
  execFileSync(join(ROOT, "scripts", "sign-release.sh"), [copy], {
    env: {
      ...process.env,
      TAURI_SIGNING_PRIVATE_KEY: key.secret,
      TAURI_SIGNING_PRIVATE_KEY_PASSWORD: "",
      PERCH_RELEASE_VERSION: version,
      PERCH_RELEASE_URL: baseUrl,
      PERCH_RELEASE_NOTES: notes,
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  return JSON.parse(readFileSync(join(dir, "latest.json"), "utf8"));
}

/** A small real Debian package, as a newer Perch would be. */
function buildDeb(dir) {
  const root = join(dir, "pkg");
  mkdirSync(join(root, "DEBIAN"), { recursive: true });
  mkdirSync(join(root, "usr", "share", "doc", "perch-update-test"), { recursive: true });
  writeFileSync(
    join(root, "DEBIAN", "control"),
    `Package: perch-update-test\nVersion: ${VERSION}\nArchitecture: amd64\nMaintainer: Perch <perch@example.com>\nDescription: a newer Perch, for the updater's test\n`,
  );
  writeFileSync(join(root, "usr", "share", "doc", "perch-update-test", "README"), "newer\n".repeat(20_000));
  const out = join(dir, PACKAGE);
  execFileSync("dpkg-deb", ["--root-owner-group", "--build", root, out], { stdio: "ignore" });
  return out;
}

describe("signed updates", () => {
  const work = mkdtempSync(join(tmpdir(), "perch-update-"));
  const deb = buildDeb(work);
  const good = readFileSync(deb);
  const tampered = Buffer.from(good);
  tampered[tampered.length - 100] ^= 0xff;
  const notes = join(work, "notes.md");
  writeFileSync(notes, "- A Logs page in Settings\n- Updates that check their signature\n");

  // What the server does now: "down" drops every connection, else it serves that release's
  // manifest (and the package, or the tampered one).
  const server = { mode: "down", manifestRequests: 0, port: 0, manifests: {} };
  const http = createServer((req, res) => {
    if (server.mode === "down") return req.socket.destroy();
    if (req.url === "/latest.json") {
      server.manifestRequests += 1;
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify(server.manifests[server.mode]));
    }
    if (req.url === `/download/${PACKAGE}`) {
      const bytes = server.mode === "tampered" ? tampered : good;
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": bytes.length });
      return res.end(bytes);
    }
    res.writeHead(404).end();
  });
  http.on("connection", () => {
    if (server.mode === "down") server.manifestRequests += 1;
  });

  let session;
  let env;
  const dataDir = freshDataDir();
  const $ = (s) => session.browser.$(s);
  const card = () => $('fieldset[aria-label="Updates"]');
  const saved = () => (existsSync(join(dataDir, "updates")) ? readdirSync(join(dataDir, "updates")) : []);

  before(async () => {
    await new Promise((resolve) => http.listen(0, "127.0.0.1", resolve));
    server.port = http.address().port;
    const base = `http://127.0.0.1:${server.port}/download`;
    const ours = keyPair(work, "ours.key");
    const theirs = keyPair(work, "theirs.key");
    const signed = release(join(work, "good"), deb, ours, VERSION, base, notes);
    assert.deepEqual(Object.keys(signed.platforms), ["linux-x86_64-deb", "linux-x86_64"]);
    assert.equal(signed.platforms["linux-x86_64"].url, `${base}/${PACKAGE}`);
    server.manifests = {
      good: signed,
      // The same signed release, its package changed on the way.
      tampered: signed,
      other_key: release(join(work, "other"), deb, theirs, VERSION, base, notes),
      older: release(join(work, "older"), deb, ours, "0.0.9", base, notes),
    };
    server.pubkey = ours.pubkey;
    const runtime = freshRuntimeDir();
    env = { ...process.env, PERCH_IPC_PATH: join(runtime, "perch", "review.sock") };
    session = await launch(dataDir, {
      XDG_RUNTIME_DIR: runtime,
      PERCH_UPDATE_ENDPOINT: `http://127.0.0.1:${server.port}/latest.json`,
      PERCH_UPDATE_PUBKEY: server.pubkey,
    });
  });
  after(async () => {
    await session?.close();
    http.close();
  });

  it("says nothing when the update server is down at start", async () => {
    // The check at start waits for the first paint to settle, then asks once.
    await waitFor(() => server.manifestRequests > 0, "the check at start", 30_000);
    await waitFor(() => /the update check failed/.test(appLog(dataDir)), "the failure in the log", 10_000);
    await sleep(500);
    assert.equal(await (await $("*=is available")).isExisting(), false);
    assert.equal((await session.browser.$$('[role="alert"]')).length, 0, "no alert for a server that is down");
    await (await $('a[aria-label="Settings"]')).click();
    await (await card()).waitForDisplayed();
    assert.match(await (await card()).getText(), /This is Perch 0\.1\.0\./);
  });

  it("ignores a release that is not newer", async () => {
    server.mode = "older";
    await (await (await card()).$("button=Check now")).click();
    await waitFor(async () => /Perch 0\.1\.0 is up to date/.test(await (await card()).getText()), "up to date");
  });

  it("refuses a build signed with another key, and saves nothing", async () => {
    server.mode = "other_key";
    await (await (await card()).$("button=Check now")).click();
    const download = await (await card()).$(`button=Download ${VERSION}`);
    await download.waitForDisplayed();
    assert.match(await (await card()).getText(), /A Logs page in Settings/, "the release notes are shown");
    await download.click();
    const alert = await (await card()).$('[role="alert"]');
    await alert.waitForDisplayed({ timeout: 30_000 });
    assert.match(await alert.getText(), /does not carry Perch's signature.*nothing was installed/);
    assert.deepEqual(saved(), []);
    await (await card()).scrollIntoView({ block: "start" });
    await screenshot("update-refused");
  });

  it("refuses a tampered build from the command line, with a clear message", async () => {
    server.mode = "tampered";
    const failed = await run(CLI, ["update", "apply"], { env }).then(
      () => null,
      (e) => e,
    );
    assert.ok(failed, "perch update apply fails");
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /does not carry Perch's signature/);
    assert.deepEqual(saved(), []);
  });

  it("downloads the real build, verifies it and saves it to install by hand", async () => {
    server.mode = "good";
    const download = await (await card()).$(`button=Download ${VERSION}`);
    await download.waitForDisplayed();
    await download.click();
    await waitFor(async () => /signature verified/.test(await (await card()).getText()), "the verified download", 30_000);
    const text = await (await card()).getText();
    assert.match(text, /not installed from a package/);
    assert.match(text, new RegExp(`sudo apt install .*updates/${PACKAGE}`));
    assert.deepEqual(saved(), [PACKAGE]);
    assert.ok(readFileSync(join(dataDir, "updates", PACKAGE)).equals(good), "saved byte for byte");
    assert.equal(await (await (await card()).$("button=Install and restart")).isExisting(), false);
    await (await card()).scrollIntoView({ block: "start" });
    await screenshot("update-ready");
  });

  it("answers perch update check and apply", async () => {
    const check = await run(CLI, ["update", "check"], { env });
    assert.match(check.stdout, new RegExp(`Perch ${VERSION} is available \\(this is 0\\.1\\.0\\)`));
    assert.match(check.stdout, /A Logs page in Settings/);
    const apply = await run(CLI, ["update", "apply"], { env });
    assert.match(apply.stdout, /signature verified/);
    assert.match(apply.stdout, new RegExp(`saved at .*updates/${PACKAGE}`));
  });
});

describe("signed updates on a metered connection", () => {
  const dataDir = freshDataDir();
  let bus;
  let networkManager;
  let session;
  let requests = 0;
  const http = createServer((req, res) => {
    requests += 1;
    res.writeHead(204).end();
  });

  before(async () => {
    await new Promise((resolve) => http.listen(0, "127.0.0.1", resolve));
    // A private bus stands in for the system bus, with NetworkManager saying "metered" on it.
    bus = spawn("dbus-daemon", ["--session", "--nofork", "--print-address"], { stdio: ["ignore", "pipe", "ignore"] });
    const address = (await once(createInterface({ input: bus.stdout }), "line"))[0].trim();
    networkManager = spawn(join(dirname(APP), "examples", "fake_network_manager"), [address, "1"], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    await once(createInterface({ input: networkManager.stdout }), "line");
    session = await launch(dataDir, {
      XDG_RUNTIME_DIR: freshRuntimeDir(),
      DBUS_SYSTEM_BUS_ADDRESS: address,
      PERCH_UPDATE_ENDPOINT: `http://127.0.0.1:${http.address().port}/latest.json`,
    });
  });
  after(async () => {
    await session?.close();
    networkManager?.kill();
    bus?.kill();
    http.close();
  });

  it("does not check at start", async () => {
    await waitFor(() => /the connection is metered/.test(appLog(dataDir)), "the metered connection noticed", 30_000);
    assert.equal(requests, 0, "nothing asked of the update server");
  });
});
