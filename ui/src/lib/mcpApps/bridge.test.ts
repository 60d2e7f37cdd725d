import { afterEach, describe, expect, it, vi, type Mock } from "vitest";
import {
  AppSession,
  BridgeRouter,
  checkParams,
  MAX_HEIGHT,
  MAX_MESSAGE_BYTES,
  MIN_HEIGHT,
  modelContext,
  PROTOCOL_VERSION,
  TokenBucket,
  validateEnvelope,
  type HostHandlers,
  type SessionOptions,
} from "./bridge";

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Posted = Record<string, any>;

const request = (id: string | number, method: string, params?: Record<string, unknown>) => ({ jsonrpc: "2.0", id, method, ...(params && { params }) });
const notification = (method: string, params?: Record<string, unknown>) => ({ jsonrpc: "2.0", method, ...(params && { params }) });
const initializeRequest = (protocolVersion = PROTOCOL_VERSION) =>
  request("init", "ui/initialize", { appInfo: { name: "app", version: "1.0" }, appCapabilities: {}, protocolVersion });

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A session on a fake clock and a manual frame scheduler, recording what it posts. */
function setup(options: Partial<SessionOptions> = {}, overrides: Partial<HostHandlers> = {}) {
  const posted: Posted[] = [];
  const frames: (() => void)[] = [];
  const clock = { now: 0 };
  const handlers = {
    callTool: vi.fn<HostHandlers["callTool"]>(async () => ({ content: [{ type: "text", text: "done" }] })),
    listTools: vi.fn<HostHandlers["listTools"]>(async () => ({ tools: [{ name: "search" }] })),
    readResource: vi.fn<HostHandlers["readResource"]>(async (uri) => ({ contents: [{ uri, text: "body" }] })),
    listResources: vi.fn<HostHandlers["listResources"]>(async () => ({ resources: [] })),
    openLink: vi.fn<HostHandlers["openLink"]>(async () => true),
    message: vi.fn<HostHandlers["message"]>(async () => true),
    updateModelContext: vi.fn<HostHandlers["updateModelContext"]>(async () => ({ modelContext: "kept" })),
    log: vi.fn<HostHandlers["log"]>(),
    sizeChanged: vi.fn<HostHandlers["sizeChanged"]>(),
    requestDisplayMode: vi.fn<HostHandlers["requestDisplayMode"]>(() => "fullscreen"),
    requestTeardown: vi.fn<HostHandlers["requestTeardown"]>(),
    stopped: vi.fn<HostHandlers["stopped"]>(),
  };
  // Overrides become implementations, so every handler stays a mock the test can inspect.
  for (const [name, implementation] of Object.entries(overrides)) {
    (handlers[name as keyof HostHandlers] as Mock).mockImplementation(implementation);
  }
  const session = new AppSession({
    post: (message) => posted.push(message as Posted),
    handlers,
    hostInfo: { name: "Perch", version: "0.1.0" },
    hostCapabilities: { openLinks: {} },
    hostContext: { theme: "dark", displayMode: "inline" },
    toolInput: { query: "weather" },
    now: () => clock.now,
    schedule: (f) => frames.push(f),
    ...options,
  });
  const initialize = (protocolVersion?: string) => {
    session.receive(initializeRequest(protocolVersion));
    session.receive(notification("ui/notifications/initialized"));
  };
  const flushFrames = () => frames.splice(0).forEach((f) => f());
  /** Posts after initialization's answer and notifications, once handlers' promises settled. */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));
  return { session, posted, handlers, clock, frames, initialize, flushFrames, settle };
}

const methods = (posted: Posted[]) => posted.map((m) => m.method ?? `response:${m.id}`);

describe("validateEnvelope", () => {
  const ok = { jsonrpc: "2.0", method: "ping", id: 1 };
  const cyclic: Record<string, unknown> = { jsonrpc: "2.0", method: "x", params: {} };
  (cyclic.params as Record<string, unknown>).self = cyclic.params;
  let deep: Record<string, unknown> = {};
  for (let i = 0; i < 40; i++) deep = { inner: deep };
  const wide: Record<string, unknown> = {};
  for (let i = 0; i < 30_000; i++) wide[`k${i}`] = i;
  const throwing = { jsonrpc: "2.0", id: 1 };
  Object.defineProperty(throwing, "method", { enumerable: true, get: () => { throw new Error("trap"); } });
  const throwingDeep = { jsonrpc: "2.0", method: "x", params: { a: {} } };
  Object.defineProperty(throwingDeep.params.a, "b", { enumerable: true, get: () => { throw new Error("trap"); } });

  it.each([
    ["a string", "{\"jsonrpc\":\"2.0\"}", "not-object"],
    ["a number", 42, "not-object"],
    ["undefined", undefined, "not-object"],
    ["null", null, "not-object"],
    ["an array", [ok], "not-object"],
    ["a class instance", new Date(), "not-object"],
    ["an object with a custom prototype", Object.assign(Object.create({ jsonrpc: "2.0" }), { method: "ping" }), "not-object"],
    ["no jsonrpc", { method: "ping", id: 1 }, "jsonrpc"],
    ["jsonrpc 1.0", { ...ok, jsonrpc: "1.0" }, "jsonrpc"],
    ["jsonrpc as a number", { ...ok, jsonrpc: 2 }, "jsonrpc"],
    ["a null id", { ...ok, id: null }, "id"],
    ["an object id", { ...ok, id: { n: 1 } }, "id"],
    ["a float id", { ...ok, id: 1.5 }, "id"],
    ["an unsafe integer id", { ...ok, id: 2 ** 53 }, "id"],
    ["a 65-character id", { ...ok, id: "x".repeat(65) }, "id"],
    ["a 65-character method", { ...ok, method: "m".repeat(65) }, "method"],
    ["an empty method", { ...ok, method: "" }, "method"],
    ["a method that is not a string", { ...ok, method: 7 }, "method"],
    ["array params", { ...ok, params: [1, 2] }, "params"],
    ["string params", { ...ok, params: "x" }, "params"],
    ["a request carrying a result", { ...ok, result: {} }, "shape"],
    ["neither method nor id", { jsonrpc: "2.0", result: {} }, "shape"],
    ["a response with both result and error", { jsonrpc: "2.0", id: 1, result: {}, error: { code: 1, message: "m" } }, "shape"],
    ["a response with neither result nor error", { jsonrpc: "2.0", id: 1 }, "shape"],
    ["an error that is a string", { jsonrpc: "2.0", id: 1, error: "bad" }, "error"],
    ["an error without a message", { jsonrpc: "2.0", id: 1, error: { code: -1 } }, "error"],
    ["an error with a string code", { jsonrpc: "2.0", id: 1, error: { code: "E", message: "m" } }, "error"],
    ["an oversize string", { ...ok, params: { text: "x".repeat(MAX_MESSAGE_BYTES) } }, "too-large"],
    ["an oversize object of small parts", { ...ok, params: wide }, "too-large"],
    ["a huge sparse array", { ...ok, params: { list: new Array(2 ** 32 - 1) } }, "too-large"],
    ["an object nested 40 deep", { ...ok, params: deep }, "too-deep"],
    ["a cycle", cyclic, "too-deep"],
    ["a buffer, whose bytes the walk would not count", { ...ok, params: { blob: new ArrayBuffer(8) } }, "not-json"],
    ["a map", { ...ok, params: { m: new Map() } }, "not-json"],
    ["a throwing getter on the envelope", throwing, "unreadable"],
    ["a throwing getter deep in params", throwingDeep, "unreadable"],
    ["an own __proto__ key", JSON.parse('{"jsonrpc":"2.0","method":"x","params":{"__proto__":{"polluted":true}}}'), "proto-key"],
  ])("refuses %s", (_, data, reason) => {
    expect(validateEnvelope(data)).toEqual({ ok: false, reason });
  });

  it("did not let the __proto__ payload reach any prototype", () => {
    validateEnvelope(JSON.parse('{"jsonrpc":"2.0","method":"x","params":{"__proto__":{"polluted":true}}}'));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("accepts requests, notifications and responses, and says which", () => {
    expect(validateEnvelope({ jsonrpc: "2.0", id: "a".repeat(64), method: "tools/list" })).toEqual({
      ok: true,
      message: { kind: "request", id: "a".repeat(64), method: "tools/list", params: {} },
    });
    expect(validateEnvelope({ jsonrpc: "2.0", id: -3, method: "m".repeat(64), params: { a: [1, null, true] } })).toEqual({
      ok: true,
      message: { kind: "request", id: -3, method: "m".repeat(64), params: { a: [1, null, true] } },
    });
    expect(validateEnvelope({ jsonrpc: "2.0", method: "ui/notifications/initialized" })).toEqual({
      ok: true,
      message: { kind: "notification", method: "ui/notifications/initialized", params: {} },
    });
    expect(validateEnvelope({ jsonrpc: "2.0", id: 9, result: { done: true } })).toEqual({
      ok: true,
      message: { kind: "response", id: 9, result: { done: true } },
    });
    expect(validateEnvelope({ jsonrpc: "2.0", id: 9, error: { code: -32000, message: "no", data: 1 } })).toEqual({
      ok: true,
      message: { kind: "response", id: 9, error: { code: -32000, message: "no" } },
    });
  });

  it("accepts null-prototype objects, as some parsers make them", () => {
    const data = Object.assign(Object.create(null), { jsonrpc: "2.0", method: "ping", id: 1 });
    expect(validateEnvelope(data).ok).toBe(true);
  });

  it("accepts a payload just under the size limit and 32 levels deep", () => {
    let nested: Record<string, unknown> = {};
    for (let i = 0; i < 30; i++) nested = { n: nested };
    // The envelope is level 0 and params level 1: the innermost object here is level 32.
    expect(validateEnvelope({ ...ok, params: { text: "x".repeat(MAX_MESSAGE_BYTES - 1000), nested } }).ok).toBe(true);
    expect(validateEnvelope({ ...ok, params: { nested: { n: nested } } })).toEqual({ ok: false, reason: "too-deep" });
  });
});

describe("checkParams", () => {
  it.each([
    ["tools/call", {}, "name"],
    ["tools/call", { name: "" }, "name"],
    ["tools/call", { name: "n".repeat(129) }, "name"],
    ["tools/call", { name: "search", arguments: [1] }, "arguments"],
    ["resources/read", { uri: "u".repeat(2049) }, "uri"],
    ["ui/open-link", { url: 5 }, "url"],
    ["ui/open-link", { url: "h".repeat(4097) }, "url"],
    ["ui/message", { role: "assistant", content: [{ type: "text", text: "hi" }] }, "content"],
    ["ui/notifications/size-changed", { height: -1 }, "height"],
    ["ui/notifications/size-changed", { width: Infinity, height: 10 }, "width"],
    ["ui/notifications/size-changed", { height: "10" }, "height"],
    ["notifications/message", { data: 1 }, "level"],
    ["ui/update-model-context", { content: [{ type: "image", data: "aGk=", mimeType: "image/png" }] }, "content"],
    ["ui/update-model-context", { content: { type: "text", text: "hi" } }, "content"],
    ["ui/update-model-context", { content: [{ type: "text", text: 5 }] }, "content"],
    ["ui/update-model-context", { structuredContent: [1, 2] }, "content"],
  ])("%s with %j is faulty in %s", (method, params, field) => {
    expect(checkParams(method, params)).toBe(field);
  });

  it.each([
    ["tools/call", { name: "search" }],
    ["tools/call", { name: "search", arguments: { q: 1 } }],
    ["resources/read", { uri: "ui://app/index.html" }],
    ["ui/notifications/size-changed", {}],
    ["ui/notifications/size-changed", { width: 0, height: 320.5 }],
    ["tools/list", { cursor: "c" }],
    ["ui/update-model-context", {}],
    ["ui/update-model-context", { content: [], structuredContent: { a: 1 } }],
  ])("%s with %j passes", (method, params) => {
    expect(checkParams(method, params)).toBeNull();
  });
});

describe("modelContext", () => {
  const text = (n: number) => [{ type: "text", text: "x".repeat(n) }];
  it("takes up to 4,000 characters of text and structured JSON together", () => {
    expect(modelContext({ content: text(4000) })?.text).toHaveLength(4000);
    expect(modelContext({ content: text(4001) })).toBeNull();
    // {"y":"yy"} is 10 characters.
    expect(modelContext({ content: text(3990), structuredContent: { y: "yy" } })).toEqual({ text: "x".repeat(3990), structured: { y: "yy" } });
    expect(modelContext({ content: text(3991), structuredContent: { y: "yy" } })).toBeNull();
    expect(modelContext({ content: [{ type: "text", text: "a" }, { type: "text", text: "b" }] })).toEqual({ text: "a\nb" });
  });
});

describe("TokenBucket", () => {
  it("spends its burst, then refills continuously up to the burst", () => {
    const bucket = new TokenBucket(2, 10);
    expect([bucket.take(0), bucket.take(0), bucket.take(0)]).toEqual([true, true, false]);
    // 10 per second is one every 100 ms: half a token after 50 ms is not enough.
    expect(bucket.take(50)).toBe(false);
    expect(bucket.take(100)).toBe(true);
    expect(bucket.take(100)).toBe(false);
    // A long pause refills the burst, not more.
    expect([bucket.take(60_000), bucket.take(60_000), bucket.take(60_000)]).toEqual([true, true, false]);
  });

  it("refills nothing when the clock steps back", () => {
    const bucket = new TokenBucket(1, 10);
    expect(bucket.take(1000)).toBe(true);
    expect(bucket.take(0)).toBe(false);
    expect(bucket.take(1050)).toBe(false);
    expect(bucket.take(1100)).toBe(true);
  });
});

describe("AppSession ordering", () => {
  it("posts nothing before initialized but the initialize answer", () => {
    const { session, posted } = setup({ toolResult: { content: [{ type: "text", text: "sunny" }] } });
    session.setHostContext({ theme: "light" });
    session.receive(request(1, "ping"));
    session.receive(initializeRequest());
    session.receive(request(2, "ping"));
    session.setHostContext({ locale: "fr" });
    session.sendToolCancelled("late");
    expect(posted).toEqual([
      {
        jsonrpc: "2.0",
        id: "init",
        result: {
          protocolVersion: PROTOCOL_VERSION,
          hostInfo: { name: "Perch", version: "0.1.0" },
          hostCapabilities: { openLinks: {} },
          // The change made before the answer is in it.
          hostContext: { theme: "light", displayMode: "inline" },
        },
      },
    ]);
    expect(session.initialized).toBe(false);
    expect(session.counters.ignored).toBe(2);

    session.receive(notification("ui/notifications/initialized"));
    expect(session.initialized).toBe(true);
    expect(posted.slice(1)).toEqual([
      { jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: { query: "weather" } } },
      { jsonrpc: "2.0", method: "ui/notifications/tool-result", params: { content: [{ type: "text", text: "sunny" }] } },
      { jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: { locale: "fr" } },
    ]);
  });

  it("ignores everything before ui/initialize, initialized included", () => {
    const { session, posted } = setup();
    session.receive(notification("ui/notifications/initialized"));
    session.receive(request(1, "tools/call", { name: "search" }));
    expect(posted).toEqual([]);
    expect(session.counters).toEqual({ received: 2, refused: 0, invalid: 0, ignored: 2 });
    session.receive(initializeRequest());
    expect(session.initialized).toBe(false);
  });

  it("sends tool-input once, and the result given later after it, once", () => {
    const { session, posted, initialize } = setup();
    initialize();
    session.receive(notification("ui/notifications/initialized"));
    session.sendToolResult({ content: [], isError: true });
    session.sendToolResult({ content: [{ type: "text", text: "again" }] });
    session.sendToolCancelled();
    expect(methods(posted)).toEqual(["response:init", "ui/notifications/tool-input", "ui/notifications/tool-result"]);
    expect(posted[2].params).toEqual({ content: [], isError: true });
  });

  it("holds a result given before initialization until after tool-input", () => {
    const { session, posted, initialize } = setup();
    session.sendToolResult({ content: [{ type: "text", text: "early" }] });
    expect(posted).toEqual([]);
    initialize();
    expect(methods(posted)).toEqual(["response:init", "ui/notifications/tool-input", "ui/notifications/tool-result"]);
  });

  it("sends tool-cancelled instead of a result", () => {
    const { session, posted, initialize } = setup();
    initialize();
    session.sendToolCancelled("user stopped it");
    session.sendToolResult({ content: [] });
    expect(posted.slice(1)).toEqual([
      { jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: { query: "weather" } } },
      { jsonrpc: "2.0", method: "ui/notifications/tool-cancelled", params: { reason: "user stopped it" } },
    ]);
  });

  it("sends context changes made once the view is ready, as they come", () => {
    const { session, posted, initialize } = setup();
    initialize();
    session.setHostContext({ displayMode: "fullscreen" });
    expect(posted.at(-1)).toEqual({ jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: { displayMode: "fullscreen" } });
  });

  it("sends only what changed, and nothing for a context stated again unchanged", () => {
    const { session, posted } = setup();
    session.receive(initializeRequest());
    // Stated again between the answer and `initialized` (a render): nothing is waiting after it.
    session.setHostContext({ theme: "dark", displayMode: "inline" });
    session.receive(notification("ui/notifications/initialized"));
    expect(methods(posted)).toEqual(["response:init", "ui/notifications/tool-input"]);
    session.setHostContext({ theme: "dark", displayMode: "fullscreen" });
    expect(posted.slice(2)).toEqual([{ jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: { displayMode: "fullscreen" } }]);
    session.setHostContext({ displayMode: "fullscreen" });
    expect(posted).toHaveLength(3);
  });
});

describe("AppSession initialize", () => {
  it.each([
    ["2025-11-21", "2025-11-21"],
    ["2026-01-26", "2026-01-26"],
    ["1999-01-01", PROTOCOL_VERSION],
  ])("answers %s with %s", (asked, answered) => {
    const { session, posted } = setup();
    session.receive(initializeRequest(asked));
    expect(posted[0].result.protocolVersion).toBe(answered);
  });

  it("refuses an initialize without a protocol version, and lets the view try again", () => {
    const { session, posted } = setup();
    session.receive(request(1, "ui/initialize", { appInfo: { name: "a", version: "1" } }));
    expect(posted[0]).toEqual({ jsonrpc: "2.0", id: 1, error: { code: -32602, message: "invalid params: protocolVersion" } });
    session.receive(initializeRequest());
    expect(posted[1].result.protocolVersion).toBe(PROTOCOL_VERSION);
  });

  it("refuses a second initialize", () => {
    const { session, posted, initialize } = setup();
    initialize();
    session.receive(request(7, "ui/initialize", { protocolVersion: PROTOCOL_VERSION }));
    expect(posted.at(-1)).toEqual({ jsonrpc: "2.0", id: 7, error: { code: -32600, message: "already initialized" } });
  });
});

describe("AppSession requests", () => {
  it("routes tools/call with its name and arguments, and answers with the same id", async () => {
    const { session, posted, handlers, initialize, settle } = setup();
    initialize();
    session.receive(request("call-1", "tools/call", { name: "search", arguments: { q: "rain" } }));
    session.receive(request(2, "tools/call", { name: "list" }));
    await settle();
    expect(handlers.callTool.mock.calls).toEqual([["search", { q: "rain" }], ["list", {}]]);
    expect(posted.slice(2)).toEqual([
      { jsonrpc: "2.0", id: "call-1", result: { content: [{ type: "text", text: "done" }] } },
      { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "done" }] } },
    ]);
  });

  it.each([
    ["a JSON-RPC error", { code: -32001, message: "denied by the user" }, { code: -32001, message: "denied by the user" }],
    ["an Error", new Error("server gone"), { code: -32000, message: "server gone" }],
    ["a string", "nope", { code: -32000, message: "nope" }],
  ])("echoes a tools/call rejected with %s as its error", async (_, rejection, error) => {
    const { session, posted, initialize, settle } = setup({}, { callTool: () => Promise.reject(rejection) });
    initialize();
    session.receive(request(5, "tools/call", { name: "search" }));
    await settle();
    expect(posted.at(-1)).toEqual({ jsonrpc: "2.0", id: 5, error });
  });

  it("answers -32603 when a handler throws instead of rejecting", () => {
    const { session, posted, initialize } = setup({}, {
      callTool: () => {
        throw new Error("bug");
      },
    });
    initialize();
    session.receive(request(5, "tools/call", { name: "search" }));
    expect(posted.at(-1)).toEqual({ jsonrpc: "2.0", id: 5, error: { code: -32603, message: "internal error" } });
  });

  it("answers invalid params without calling the handler", () => {
    const { session, posted, handlers, initialize } = setup();
    initialize();
    session.receive(request(3, "tools/call", { arguments: {} }));
    expect(handlers.callTool).not.toHaveBeenCalled();
    expect(posted.at(-1)).toEqual({ jsonrpc: "2.0", id: 3, error: { code: -32602, message: "invalid params: name" } });
  });

  it("routes the listing and reading requests, and answers ping", async () => {
    const { session, posted, handlers, initialize, settle } = setup();
    initialize();
    session.receive(request(1, "tools/list"));
    session.receive(request(2, "resources/list"));
    session.receive(request(3, "resources/read", { uri: "ui://app/data.json" }));
    session.receive(request(4, "ping"));
    await settle();
    expect(handlers.readResource).toHaveBeenCalledWith("ui://app/data.json");
    const answers = Object.fromEntries(posted.slice(2).map((m) => [m.id, m.result]));
    expect(answers).toEqual({
      1: { tools: [{ name: "search" }] },
      2: { resources: [] },
      3: { contents: [{ uri: "ui://app/data.json", text: "body" }] },
      4: {},
    });
  });

  it("joins a ui/message's text blocks and answers by the handler's verdict", async () => {
    const verdicts = [true, false];
    const { session, posted, handlers, initialize, settle } = setup({}, { message: vi.fn(async () => verdicts.shift()!) });
    initialize();
    const content = [{ type: "text", text: "first" }, { type: "text", text: "second" }];
    session.receive(request(1, "ui/message", { role: "user", content }));
    session.receive(request(2, "ui/message", { role: "user", content: [{ type: "text", text: "again" }] }));
    await settle();
    expect(handlers.message).toHaveBeenNthCalledWith(1, "first\nsecond");
    expect(posted.slice(2)).toEqual([
      { jsonrpc: "2.0", id: 1, result: {} },
      { jsonrpc: "2.0", id: 2, result: { isError: true } },
    ]);
  });

  it.each([
    ["an image block", [{ type: "text", text: "look" }, { type: "image", data: "AAAA", mimeType: "image/png" }]],
    ["no blocks", []],
    ["only empty text", [{ type: "text", text: " " }]],
  ])("refuses a ui/message with %s", (_, content) => {
    const { session, posted, handlers, initialize } = setup();
    initialize();
    session.receive(request(1, "ui/message", { role: "user", content }));
    expect(handlers.message).not.toHaveBeenCalled();
    expect(posted.at(-1)).toEqual({ jsonrpc: "2.0", id: 1, error: { code: -32602, message: "invalid params: content" } });
  });

  it.each([
    [true, {}],
    [false, { isError: true }],
  ])("answers ui/open-link opened=%s with %j", async (opened, result) => {
    const { session, posted, handlers, initialize, settle } = setup({}, { openLink: vi.fn(async () => opened) });
    initialize();
    session.receive(request(1, "ui/open-link", { url: "https://example.com/" }));
    await settle();
    expect(handlers.openLink).toHaveBeenCalledWith("https://example.com/");
    expect(posted.at(-1)).toEqual({ jsonrpc: "2.0", id: 1, result });
  });

  it("answers ui/request-display-mode with the mode actually set", () => {
    const { session, posted, handlers, initialize } = setup({}, { requestDisplayMode: vi.fn(() => "inline" as const) });
    initialize();
    session.receive(request(1, "ui/request-display-mode", { mode: "pip" }));
    expect(handlers.requestDisplayMode).toHaveBeenCalledWith("pip");
    expect(posted.at(-1)).toEqual({ jsonrpc: "2.0", id: 1, result: { mode: "inline" } });
  });

  it("hands the app's context for the model to the host, and tells the app only that it was taken", async () => {
    const { session, posted, handlers, initialize, settle } = setup();
    initialize();
    session.receive(request(1, "ui/update-model-context", { content: [{ type: "text", text: "3 rows selected" }], structuredContent: { rows: [1, 2, 3] } }));
    session.receive(request(2, "ui/update-model-context", {}));
    await settle();
    expect(handlers.updateModelContext.mock.calls).toEqual([[{ text: "3 rows selected", structured: { rows: [1, 2, 3] } }], [{ text: "" }]]);
    expect(posted.slice(-2)).toEqual([
      { jsonrpc: "2.0", id: 1, result: {} },
      { jsonrpc: "2.0", id: 2, result: {} },
    ]);
  });

  it.each(["ui/download-file", "sampling/createMessage"])("refuses %s as not supported", (method) => {
    const { session, posted, initialize } = setup();
    initialize();
    session.receive(request(1, method, {}));
    expect(posted.at(-1)).toEqual({ jsonrpc: "2.0", id: 1, error: { code: -32601, message: "not supported by Perch" } });
  });

  it("answers an unknown request with method not found", () => {
    const { session, posted, initialize } = setup();
    initialize();
    session.receive(request("x", "tools/destroy"));
    expect(posted.at(-1)).toEqual({ jsonrpc: "2.0", id: "x", error: { code: -32601, message: "method not found" } });
  });

  it("is not held up by a handler that never settles", () => {
    const { session, posted, initialize } = setup({}, { callTool: () => new Promise(() => {}) });
    initialize();
    session.receive(request(1, "tools/call", { name: "slow" }));
    session.receive(request(2, "ui/request-display-mode", { mode: "fullscreen" }));
    expect(posted.at(-1)).toEqual({ jsonrpc: "2.0", id: 2, result: { mode: "fullscreen" } });
  });
});

describe("AppSession notifications", () => {
  it("passes logging and teardown requests to the host", () => {
    const { session, handlers, initialize } = setup();
    initialize();
    session.receive(notification("notifications/message", { level: "warning", logger: "app", data: { n: 1 } }));
    session.receive(notification("ui/notifications/request-teardown", {}));
    expect(handlers.log).toHaveBeenCalledWith("warning", { n: 1 }, "app");
    expect(handlers.requestTeardown).toHaveBeenCalledTimes(1);
  });

  it("ignores unknown notifications and tools/list_changed without answering", () => {
    const { session, posted, handlers, initialize } = setup();
    initialize();
    const before = posted.length;
    session.receive(notification("notifications/tools/list_changed"));
    session.receive(notification("ui/notifications/made-up", { x: 1 }));
    expect(posted).toHaveLength(before);
    expect(Object.values(handlers).every((handler) => handler.mock.calls.length === 0)).toBe(true);
    expect(session.counters).toMatchObject({ invalid: 0, ignored: 2 });
  });

  it("drops sandbox-* messages, even ones carrying an id", () => {
    const { session, posted, initialize } = setup();
    initialize();
    const before = posted.length;
    session.receive(notification("ui/notifications/sandbox-proxy-ready"));
    session.receive(request(9, "ui/notifications/sandbox-resource-ready", { html: "<p>" }));
    expect(posted).toHaveLength(before);
    expect(session.counters.ignored).toBe(2);
  });

  it("clamps heights and delivers the latest size once a frame", () => {
    const { session, handlers, frames, initialize, flushFrames } = setup();
    initialize();
    session.receive(notification("ui/notifications/size-changed", { height: 10 }));
    session.receive(notification("ui/notifications/size-changed", { height: 5000 }));
    session.receive(notification("ui/notifications/size-changed", { width: 320, height: 240 }));
    expect(frames).toHaveLength(1);
    expect(handlers.sizeChanged).not.toHaveBeenCalled();
    flushFrames();
    expect(handlers.sizeChanged.mock.calls).toEqual([[{ width: 320, height: 240 }]]);

    session.receive(notification("ui/notifications/size-changed", { height: 10 }));
    flushFrames();
    session.receive(notification("ui/notifications/size-changed", { height: 5000 }));
    flushFrames();
    // A width alone keeps the last height reported.
    session.receive(notification("ui/notifications/size-changed", { width: 500 }));
    flushFrames();
    expect(handlers.sizeChanged.mock.calls.slice(1)).toEqual([
      [{ height: MIN_HEIGHT }],
      [{ height: MAX_HEIGHT }],
      [{ width: 500, height: MAX_HEIGHT }],
    ]);
  });

  it("drops faulty sizes, and a width before any height", () => {
    const { session, handlers, frames, initialize } = setup();
    initialize();
    session.receive(notification("ui/notifications/size-changed", { width: 300 }));
    session.receive(notification("ui/notifications/size-changed", { height: -5 }));
    session.receive(notification("ui/notifications/size-changed", { height: "100px" }));
    expect(frames).toHaveLength(0);
    expect(handlers.sizeChanged).not.toHaveBeenCalled();
  });

  it("does not deliver a size after the session stopped", () => {
    const { session, handlers, initialize, flushFrames } = setup();
    initialize();
    session.receive(notification("ui/notifications/size-changed", { height: 300 }));
    session.stop("closed");
    flushFrames();
    expect(handlers.sizeChanged).not.toHaveBeenCalled();
  });
});

describe("AppSession under attack", () => {
  it("stops a flood of 10,000 messages at one instant, once, and goes silent", async () => {
    const { session, posted, handlers, initialize, settle } = setup();
    initialize();
    for (let i = 0; i < 10_000; i++) session.receive(request(i, "tools/call", { name: "spam" }));
    expect(session.stoppedReason).toBe("flood");
    expect(handlers.stopped.mock.calls).toEqual([["flood"]]);
    // The burst of 200, less the two initialization messages, got through before the bucket ran dry.
    expect(handlers.callTool).toHaveBeenCalledTimes(198);
    expect(session.counters).toEqual({ received: 1201, refused: 1001, invalid: 0, ignored: 0 });
    // Their answers arrive after the stop: none is posted, nor anything else.
    await settle();
    session.sendToolResult({ content: [] });
    session.setHostContext({ theme: "light" });
    session.receive(request("late", "ping"));
    expect(methods(posted)).toEqual(["response:init", "ui/notifications/tool-input"]);
    expect(handlers.callTool).toHaveBeenCalledTimes(198);
    expect(handlers.stopped).toHaveBeenCalledTimes(1);
  });

  it("lets a view that keeps to the rate through", () => {
    const { session, clock, initialize } = setup();
    initialize();
    for (let i = 0; i < 2000; i++) {
      clock.now += 10;
      session.receive(request(i, "ping"));
    }
    expect(session.stoppedReason).toBeNull();
    expect(session.counters.refused).toBe(0);
  });

  it("stops a view that sends more than 100 malformed messages", () => {
    const { session, handlers, clock } = setup();
    const junk = ["junk", [1], { jsonrpc: "1.0" }, { jsonrpc: "2.0", id: null, method: "x" }];
    for (let i = 0; i < 100; i++) {
      clock.now += 20;
      session.receive(junk[i % junk.length]);
    }
    expect(session.stoppedReason).toBeNull();
    session.receive(null);
    expect(session.stoppedReason).toBe("malformed");
    expect(handlers.stopped.mock.calls).toEqual([["malformed"]]);
    expect(session.counters.invalid).toBe(101);
  });

  it("does not add up a long-lived app's occasional junk and bursts to a stop", () => {
    const { session, clock } = setup();
    for (let round = 0; round < 5; round++) {
      // 80 junk messages and a burst of 400 (200 over the bucket) every 11 s.
      for (let i = 0; i < 80; i++) session.receive("junk");
      for (let i = 0; i < 400; i++) session.receive({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: i } });
      clock.now += 11_000;
    }
    expect(session.stoppedReason).toBeNull();
    expect(session.counters.invalid).toBe(400);
    expect(session.counters.refused).toBeGreaterThan(1000);
  });

  it("posts nothing when a pending tools/call resolves after stop", async () => {
    const pending = deferred<unknown>();
    const { session, posted, handlers, initialize, settle } = setup({}, { callTool: () => pending.promise });
    initialize();
    session.receive(request(1, "tools/call", { name: "search" }));
    const before = posted.length;
    session.stop("closed");
    pending.resolve({ content: [] });
    await settle();
    expect(posted).toHaveLength(before);
    // stop() is the host's own doing: it is not reported back to it.
    expect(handlers.stopped).not.toHaveBeenCalled();
    expect(session.stoppedReason).toBe("closed");
  });

  it("keeps going when posting fails, and answers an uncloneable result with an error", () => {
    const posted: Posted[] = [];
    const { session, initialize } = setup({
      post: (message) => {
        if ((message as Posted).result?.mode?.fn) throw new DOMException("could not be cloned", "DataCloneError");
        posted.push(message as Posted);
      },
    }, { requestDisplayMode: () => ({ fn: () => {} }) as never });
    initialize();
    session.receive(request(1, "ui/request-display-mode", { mode: "x" }));
    expect(posted.at(-1)).toEqual({ jsonrpc: "2.0", id: 1, error: { code: -32603, message: "internal error" } });
  });
});

describe("AppSession teardown", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("resolves when the view answers, then stops as closed", async () => {
    vi.useFakeTimers();
    const { session, posted, handlers, initialize } = setup();
    initialize();
    const done = session.teardown();
    const teardown = posted.at(-1)!;
    expect(teardown).toMatchObject({ jsonrpc: "2.0", method: "ui/resource-teardown", params: {} });
    expect(session.teardown()).toBe(done);
    session.receive({ jsonrpc: "2.0", id: teardown.id, result: {} });
    await done;
    expect(session.stoppedReason).toBe("closed");
    expect(vi.getTimerCount()).toBe(0);
    expect(handlers.stopped).not.toHaveBeenCalled();
    session.sendToolResult({ content: [] });
    expect(posted.at(-1)).toBe(teardown);
  });

  it("resolves after the timeout when the view does not answer", async () => {
    vi.useFakeTimers();
    const { session, initialize } = setup({ teardownTimeoutMs: 500 });
    initialize();
    let resolved = false;
    void session.teardown().then(() => (resolved = true));
    // An answer to another id is not the answer.
    session.receive({ jsonrpc: "2.0", id: 12345, result: {} });
    await vi.advanceTimersByTimeAsync(499);
    expect(resolved).toBe(false);
    expect(session.stoppedReason).toBeNull();
    await vi.advanceTimersByTimeAsync(1);
    expect(resolved).toBe(true);
    expect(session.stoppedReason).toBe("closed");
  });

  it("sends no request to a view not yet initialized", async () => {
    const { session, posted } = setup();
    session.receive(initializeRequest());
    await session.teardown();
    expect(methods(posted)).toEqual(["response:init"]);
    expect(session.stoppedReason).toBe("closed");
  });

  it("resolves when the session stops itself during teardown, keeping that reason", async () => {
    const { session, initialize } = setup();
    initialize();
    const done = session.teardown();
    for (let i = 0; i < 2000; i++) session.receive(request(i, "ping"));
    await done;
    expect(session.stoppedReason).toBe("flood");
  });
});

describe("BridgeRouter", () => {
  const frameWindow = () => {
    const frame = document.createElement("iframe");
    document.body.append(frame);
    return frame.contentWindow!;
  };
  const post = (data: unknown, source: MessageEventSource | null, origin = "null") =>
    window.dispatchEvent(new MessageEvent("message", { data, origin, source }));

  it("routes by source, and only messages from an opaque origin", () => {
    const [first, second, stranger] = [frameWindow(), frameWindow(), frameWindow()];
    const a = setup().session;
    const b = setup().session;
    const receiveA = vi.spyOn(a, "receive");
    const receiveB = vi.spyOn(b, "receive");
    const router = new BridgeRouter();
    const unregisterA = router.register(first, a);
    const unregisterB = router.register(second, b);

    post({ n: 1 }, first);
    post({ n: 2 }, second);
    post({ n: 3 }, first, "https://evil.example");
    post({ n: 4 }, stranger);
    post({ n: 5 }, null);
    expect(receiveA.mock.calls).toEqual([[{ n: 1 }]]);
    expect(receiveB.mock.calls).toEqual([[{ n: 2 }]]);

    unregisterA();
    post({ n: 6 }, first);
    expect(receiveA).toHaveBeenCalledTimes(1);
    unregisterB();
  });

  it("listens only while a session is registered", () => {
    const target = new EventTarget() as Window;
    const add = vi.spyOn(target, "addEventListener");
    const remove = vi.spyOn(target, "removeEventListener");
    const router = new BridgeRouter(target);
    expect(add).not.toHaveBeenCalled();
    const source = frameWindow();
    const session = setup().session;
    const receive = vi.spyOn(session, "receive");
    const unregister = router.register(source, session);
    const unregisterAgain = router.register(frameWindow(), setup().session);
    expect(add).toHaveBeenCalledTimes(1);
    target.dispatchEvent(new MessageEvent("message", { data: "hello", origin: "null", source }));
    expect(receive).toHaveBeenCalledWith("hello");
    unregister();
    expect(remove).not.toHaveBeenCalled();
    unregisterAgain();
    expect(remove).toHaveBeenCalledTimes(1);
    target.dispatchEvent(new MessageEvent("message", { data: "late", origin: "null", source }));
    expect(receive).toHaveBeenCalledTimes(1);
  });

  it("keeps a newer registration for a source when an older one is undone", () => {
    const source = frameWindow();
    const older = setup().session;
    const newer = setup().session;
    const receive = vi.spyOn(newer, "receive");
    const router = new BridgeRouter();
    const unregisterOlder = router.register(source, older);
    const unregisterNewer = router.register(source, newer);
    unregisterOlder();
    post("still routed", source);
    expect(receive).toHaveBeenCalledWith("still routed");
    unregisterNewer();
  });
});
