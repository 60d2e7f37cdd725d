#!/usr/bin/env node
// Self-check of the hostile MCP Apps server (hostile-server.mjs), over the official SDK's client:
// what it lists, serves and answers is what the e2e specs will rely on. No app, no browser.
//
//   node tests/e2e/lib/mcp-apps/check.mjs        (exit 0: all good; 1: a mismatch, listed)
//
// `checkHostileServer()` is exported so that a spec can run the same checks later.
import { deepStrictEqual } from "node:assert/strict";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Script } from "node:vm";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { startLoopback } from "../loopback.js";
import { FORGED } from "./forged.mjs";

export const SERVER = join(dirname(fileURLToPath(import.meta.url)), "hostile-server.mjs");
export const APP_MIME = "text/html;profile=mcp-app";
export const UI_EXTENSION = "io.modelcontextprotocol/ui";
export const ATTACKS = [
  "top-nav", "parent-dom", "tauri-globals", "network", "self-nav", "flood", "memory", "tool-call", "busy",
  "speculative", "forge-context", "context-flood",
];
export const ECHO_URI = "ui://hostile/echo.html";
const attackUri = (name) => `ui://hostile/${name}.html`;

/** Connects an SDK client to a fresh hostile server aimed at `listener`. */
async function connect(listener, capabilities) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [SERVER, "--listener", listener],
    stderr: "pipe",
  });
  const client = new Client({ name: "hostile-check", version: "1" }, { capabilities });
  await client.connect(transport);
  return client;
}

const textOf = (result) => result.content?.map((c) => c.text).join("") ?? "";

/**
 * Runs every check; resolves with the list of failures (empty when all pass).
 * @param {(line: string) => void} [log]
 */
export async function checkHostileServer(log = () => {}) {
  const failures = [];
  const expect = (what, actual, expected) => {
    try {
      deepStrictEqual(actual, expected);
      log(`ok   ${what}`);
    } catch {
      failures.push(`${what}: got ${JSON.stringify(actual)}, want ${JSON.stringify(expected)}`);
      log(`FAIL ${what}: got ${JSON.stringify(actual)}, want ${JSON.stringify(expected)}`);
    }
  };

  const loopback = await startLoopback();
  const port = new URL(loopback.origin).port;
  const inward = [`https://localtest.me:${port}`, "https://*.nip.io", `https://127.0.0.1.nip.io:${port}`];
  const csp = { connectDomains: [loopback.origin, ...inward], resourceDomains: [loopback.origin, ...inward] };
  const clients = [];
  try {
    const apps = await connect(loopback.url, { extensions: { [UI_EXTENSION]: { mimeTypes: [APP_MIME] } } });
    clients.push(apps);

    // --- tools/list
    const { tools } = await apps.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    expect(
      "tool names",
      Object.keys(byName).sort(),
      [...ATTACKS.map((n) => `attack_${n}`), "capability", "echo_app", "big_result", "app_only_secret", "model_only"].sort(),
    );
    for (const name of ATTACKS) {
      const tool = byName[`attack_${name}`] ?? {};
      const uri = attackUri(name);
      expect(`attack_${name} _meta`, tool._meta, { ui: { resourceUri: uri }, "ui/resourceUri": uri });
      expect(`attack_${name} readOnlyHint`, tool.annotations?.readOnlyHint, true);
    }
    expect("capability has no UI", byName.capability?._meta?.ui, undefined);
    expect("echo_app _meta.ui", byName.echo_app?._meta?.ui, { resourceUri: ECHO_URI, visibility: ["model", "app"] });
    expect("app_only_secret _meta.ui", byName.app_only_secret?._meta?.ui, { visibility: ["app"] });
    expect("model_only _meta.ui", byName.model_only?._meta?.ui, { resourceUri: ECHO_URI, visibility: ["model"] });

    // --- resources/list and resources/read
    const { resources } = await apps.listResources();
    const listed = Object.fromEntries(resources.map((r) => [r.uri, r]));
    const pages = [...ATTACKS.map((n) => [n, attackUri(n), { csp }]), ["echo", ECHO_URI, undefined]];
    expect("resource URIs", Object.keys(listed).sort(), pages.map(([, uri]) => uri).sort());
    for (const [name, uri, ui] of pages) {
      expect(`${uri} listed mimeType`, listed[uri]?.mimeType, APP_MIME);
      expect(`${uri} listed _meta.ui`, listed[uri]?._meta?.ui, ui);
      const { contents } = await apps.readResource({ uri });
      const [item] = contents;
      expect(`${uri} read: one item`, contents.length, 1);
      expect(`${uri} read mimeType`, item.mimeType, APP_MIME);
      expect(`${uri} read _meta.ui`, item._meta?.ui, ui);
      const html = item.text ?? "";
      expect(`${uri} is a page with #result`, /^<!doctype html>/i.test(html) && html.includes('<pre id="result">'), true);
      expect(`${uri} aims at the listener`, html.includes(JSON.stringify(loopback.origin)), true);
      // The inline script must at least compile: a typo would pass every host check silently.
      const script = html.match(/<script>([\s\S]*)<\/script>/)?.[1] ?? "";
      let compiles = true;
      try {
        new Script(script, { filename: uri });
      } catch (e) {
        compiles = String(e);
      }
      expect(`${uri} script compiles`, compiles, true);
      if (name === "echo") expect(`${uri} has #call-secret and #tell-model`, html.includes('id="call-secret"') && html.includes('id="tell-model"'), true);
    }

    // --- tools/call
    for (const name of ATTACKS) {
      const ran = name === "forge-context" ? `ran ${name}\n${FORGED}` : `ran ${name}`;
      expect(`attack_${name} result`, textOf(await apps.callTool({ name: `attack_${name}` })), ran);
    }
    expect("app_only_secret result", textOf(await apps.callTool({ name: "app_only_secret" })), "secret-ran");
    expect("model_only result", textOf(await apps.callTool({ name: "model_only" })), "model-only-ran");
    const big = await apps.callTool({ name: "big_result" });
    expect("big_result text", [textOf(big).length, textOf(big).endsWith("[text end]")], [100_000, true]);
    expect("big_result structured", [JSON.stringify(big.structuredContent).length > 150_000, big.structuredContent?.last], [true, "structured end"]);

    // --- the capability, as each kind of client advertises it
    const capability = async (client) => JSON.parse(textOf(await client.callTool({ name: "capability" })));
    expect("capability with the extension", await capability(apps), { apps: true });
    const plain = await connect(loopback.url, {});
    clients.push(plain);
    expect("capability without it", await capability(plain), { apps: false });
    // Only the spec's place (`extensions`) counts.
    const experimental = await connect(loopback.url, { experimental: { [UI_EXTENSION]: {} } });
    clients.push(experimental);
    expect("capability under experimental only", await capability(experimental), { apps: false });

    // Serving pages sends nothing anywhere: only a browser running them may reach the listener.
    expect("listener untouched", loopback.requests, []);
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    await loopback.close();
  }
  return failures;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const timer = setTimeout(() => {
    console.error("check: timed out after 60 s");
    process.exit(1);
  }, 60_000);
  try {
    const failures = await checkHostileServer((line) => console.log(line));
    console.log(failures.length ? `\n${failures.length} check(s) failed` : "\nall checks passed");
    process.exitCode = failures.length ? 1 : 0;
  } catch (e) {
    console.error("check: error:", e);
    process.exitCode = 1;
  } finally {
    clearTimeout(timer);
  }
}
