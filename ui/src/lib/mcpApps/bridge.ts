/**
 * Host side of the MCP Apps bridge (extension `io.modelcontextprotocol/ui`, spec 2026-01-26): the
 * JSON-RPC 2.0 conversation, over `postMessage`, between Perch and an app's view in a sandboxed
 * frame. The view is untrusted: every message is rate-limited before it is looked at, its
 * envelope checked with cheap field reads before a bounded walk of its size, and a view that
 * floods or keeps sending junk is stopped. Logic only: the caller words reasons for the user.
 */

export const PROTOCOL_VERSION = "2026-01-26";
/** Older versions answered in kind; anything else gets `PROTOCOL_VERSION`. */
const ECHOED_VERSIONS = ["2025-11-21"];
export const MAX_MESSAGE_BYTES = 256 * 1024;
export const MAX_DEPTH = 32;
export const MIN_HEIGHT = 48;
export const MAX_HEIGHT = 600;
const BUCKET_BURST = 200;
const BUCKET_PER_SECOND = 100;
/** Refusals for this long without one message getting through, or this many within one
 * `STRIKE_WINDOW_MS`, is a flood; this many invalid messages within one window is junk. The
 * window keeps an app that bursts now and then over a long life from adding up to a stop. */
const FLOOD_MS = 1000;
const MAX_REFUSED = 1000;
const MAX_INVALID = 100;
const STRIKE_WINDOW_MS = 10_000;
const DEFAULT_TEARDOWN_MS = 1000;

export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
export const SERVER_ERROR = -32000;
const NOT_SUPPORTED_TEXT = "not supported by Perch";
const NOT_FOUND_TEXT = "method not found";
const INTERNAL_TEXT = "internal error";
const ALREADY_INITIALIZED_TEXT = "already initialized";
const INVALID_PARAMS_PREFIX = "invalid params: ";
/** Defined by the spec, deliberately not offered: answered "not supported" rather than "not found". */
const REFUSED_METHODS = new Set(["ui/download-file", "sampling/createMessage"]);
/** The most text an app may put in the model's context (its blocks and its structured part, as
 * JSON, together); the engine holds the same limit. */
export const MAX_MODEL_CONTEXT_CHARS = 4000;
/** Reserved for web hosts' proxies between sandbox and view; a view has no business sending them. */
const SANDBOX_PREFIX = "ui/notifications/sandbox-";

export type RequestId = string | number;
export interface RpcError {
  code: number;
  message: string;
}
export type Envelope =
  | { kind: "request"; id: RequestId; method: string; params: Record<string, unknown> }
  | { kind: "notification"; method: string; params: Record<string, unknown> }
  | { kind: "response"; id: RequestId; result?: unknown; error?: RpcError };
export type EnvelopeProblem =
  | "not-object" | "jsonrpc" | "id" | "method" | "params" | "shape" | "error"
  | "too-large" | "too-deep" | "not-json" | "proto-key" | "unreadable";

const hasOwn = (value: object, key: string) => Object.prototype.hasOwnProperty.call(value, key);

/** What JSON.parse would make: nothing with behaviour, nothing a prototype lookup could surprise. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Walks `root` as JSON would serialize it, charging an estimate of each part's size, and stops at
 * the first problem: so a huge or cyclic payload (structured clone allows both) costs at most the
 * budget. Buffers, dates, maps and the like are refused, since their size would go uncounted.
 */
function walkProblem(root: unknown): EnvelopeProblem | null {
  let remaining = MAX_MESSAGE_BYTES;
  const visit = (value: unknown, depth: number): EnvelopeProblem | null => {
    switch (typeof value) {
      case "string": remaining -= value.length + 2; break;
      case "number": remaining -= 8; break;
      case "boolean": case "undefined": remaining -= 5; break;
      case "object": {
        if (value === null) { remaining -= 4; break; }
        if (depth > MAX_DEPTH) return "too-deep";
        remaining -= 2;
        if (Array.isArray(value)) {
          if (Object.getPrototypeOf(value) !== Array.prototype) return "not-json";
          // Indexes, not keys: a sparse array of length 2^32 - 1 stops at the budget.
          for (let i = 0, length = value.length; i < length; i++) {
            if ((remaining -= 1) < 0) return "too-large";
            const problem = visit(value[i], depth + 1);
            if (problem) return problem;
          }
        } else if (isPlainObject(value)) {
          for (const key in value) {
            if (!hasOwn(value, key)) continue;
            // An own `__proto__` survives cloning and would reach whatever Object.assigns it.
            if (key === "__proto__") return "proto-key";
            if ((remaining -= key.length + 4) < 0) return "too-large";
            const problem = visit(value[key], depth + 1);
            if (problem) return problem;
          }
        } else return "not-json";
        break;
      }
      default: return "not-json";
    }
    return remaining < 0 ? "too-large" : null;
  };
  return visit(root, 0);
}

const isId = (id: unknown): id is RequestId =>
  (typeof id === "string" && id.length <= 64) || Number.isSafeInteger(id);

/** Checks one message's JSON-RPC envelope: cheap field checks first, the size walk last. */
export function validateEnvelope(data: unknown): { ok: true; message: Envelope } | { ok: false; reason: EnvelopeProblem } {
  const fail = (reason: EnvelopeProblem) => ({ ok: false as const, reason });
  try {
    if (!isPlainObject(data)) return fail("not-object");
    if (data.jsonrpc !== "2.0") return fail("jsonrpc");
    // Each field is read once: a getter could answer differently the second time.
    const { id, method, params } = data;
    if (id !== undefined && !isId(id)) return fail("id");
    const hasResult = hasOwn(data, "result");
    const hasError = hasOwn(data, "error");
    let message: Envelope;
    if (method !== undefined) {
      if (typeof method !== "string" || method.length < 1 || method.length > 64) return fail("method");
      if (params !== undefined && !isPlainObject(params)) return fail("params");
      if (hasResult || hasError) return fail("shape");
      const checkedParams = params ?? {};
      message = id === undefined
        ? { kind: "notification", method, params: checkedParams }
        : { kind: "request", id, method, params: checkedParams };
    } else {
      if (id === undefined || hasResult === hasError) return fail("shape");
      if (hasError) {
        const error = data.error;
        if (!isPlainObject(error)) return fail("error");
        const { code, message: text } = error;
        if (typeof code !== "number" || typeof text !== "string") return fail("error");
        message = { kind: "response", id, error: { code, message: text } };
      } else message = { kind: "response", id, result: data.result };
    }
    const sizeProblem = walkProblem(data);
    return sizeProblem ? fail(sizeProblem) : { ok: true, message };
  } catch {
    // A throwing getter or proxy trap: nothing a structured clone makes, so hostile by design.
    return fail("unreadable");
  }
}

const isString = (value: unknown, min: number, max: number): value is string =>
  typeof value === "string" && value.length >= min && value.length <= max;
const isSize = (value: unknown) => value === undefined || (typeof value === "number" && Number.isFinite(value) && value >= 0);

/** The text of a `ui/message`: its text blocks joined by lines; null when anything else is in it. */
export function messageText(params: Record<string, unknown>): string | null {
  const { role, content } = params;
  if (role !== "user" || !Array.isArray(content)) return null;
  const texts: string[] = [];
  for (const block of content) {
    if (!isPlainObject(block) || block.type !== "text" || typeof block.text !== "string") return null;
    texts.push(block.text);
  }
  const text = texts.join("\n");
  return text.trim() === "" ? null : text;
}

export type ModelContext = { text: string; structured?: Record<string, unknown> };
/** What a `ui/update-model-context` puts before the model: its text blocks, then its structured
 * part; null when it holds anything else (images, resources) or is too long. Empty: cleared. */
export function modelContext(params: Record<string, unknown>): ModelContext | null {
  const { content, structuredContent } = params;
  if (content !== undefined && !Array.isArray(content)) return null;
  if (structuredContent !== undefined && !isPlainObject(structuredContent)) return null;
  const texts: string[] = [];
  for (const block of content ?? []) {
    if (!isPlainObject(block) || block.type !== "text" || typeof block.text !== "string") return null;
    texts.push(block.text);
  }
  const text = texts.join("\n");
  const size = text.length + (structuredContent === undefined ? 0 : JSON.stringify(structuredContent).length);
  if (size > MAX_MODEL_CONTEXT_CHARS) return null;
  return structuredContent === undefined ? { text } : { text, structured: structuredContent };
}

/** Per-method params check, after the envelope's: the name of the faulty field, or null. */
export function checkParams(method: string, params: Record<string, unknown>): string | null {
  switch (method) {
    case "ui/initialize":
      return isString(params.protocolVersion, 1, 64) ? null : "protocolVersion";
    case "tools/call":
      if (!isString(params.name, 1, 128)) return "name";
      return params.arguments === undefined || isPlainObject(params.arguments) ? null : "arguments";
    case "resources/read":
      return isString(params.uri, 1, 2048) ? null : "uri";
    case "ui/open-link":
      return isString(params.url, 1, 4096) ? null : "url";
    case "ui/message":
      return messageText(params) === null ? "content" : null;
    case "ui/update-model-context":
      return modelContext(params) === null ? "content" : null;
    case "ui/request-display-mode":
      return isString(params.mode, 1, 32) ? null : "mode";
    case "ui/notifications/size-changed":
      if (!isSize(params.width)) return "width";
      return isSize(params.height) ? null : "height";
    case "notifications/message":
      if (!isString(params.level, 1, 32)) return "level";
      return params.logger === undefined || isString(params.logger, 0, 128) ? null : "logger";
    default:
      return null;
  }
}

/** Continuous refill: `burst` messages at once, then `perSecond` on average. */
export class TokenBucket {
  private tokens: number;
  private last: number | null = null;
  constructor(private readonly burst: number, private readonly perSecond: number) {
    this.tokens = burst;
  }
  take(now: number): boolean {
    // A clock that steps back refills nothing, and does not move `last` back to refill twice.
    if (this.last === null || now > this.last) {
      if (this.last !== null) this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.perSecond) / 1000);
      this.last = now;
    }
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }
}

export type StopReason = "flood" | "malformed" | "closed";
export interface HostHandlers {
  callTool(name: string, args: Record<string, unknown>): Promise<unknown>;
  listTools(): Promise<unknown>;
  readResource(uri: string): Promise<unknown>;
  listResources(): Promise<unknown>;
  openLink(url: string): Promise<boolean>;
  message(text: string): Promise<boolean>;
  /** The app's context for the model, replacing what it gave before (empty text and no
   * structured part: none). */
  updateModelContext(context: ModelContext): Promise<unknown>;
  log(level: string, data: unknown, logger?: string): void;
  sizeChanged(size: { width?: number; height: number }): void;
  requestDisplayMode(mode: string): "inline" | "fullscreen";
  requestTeardown(): void;
  /** Called once, when the session stops itself ("flood", "malformed"); not for stop() or teardown(). */
  stopped(reason: StopReason): void;
}
export interface SessionOptions {
  post: (message: object) => void;
  handlers: HostHandlers;
  hostInfo: { name: string; version: string };
  hostCapabilities: Record<string, unknown>;
  hostContext: Record<string, unknown>;
  toolInput: Record<string, unknown>;
  toolResult?: unknown;
  now?: () => number;
  schedule?: (f: () => void) => void;
  teardownTimeoutMs?: number;
}
export interface SessionCounters {
  received: number;
  refused: number;
  invalid: number;
  /** Valid messages dropped: out of turn, unknown notifications, sandbox-*, stray responses. */
  ignored: number;
}

/** Turns a handler's rejection into the JSON-RPC error the view gets. */
function toRpcError(err: unknown): RpcError {
  try {
    if (typeof err === "object" && err !== null) {
      const { code, message } = err as { code?: unknown; message?: unknown };
      if (Number.isInteger(code) && typeof message === "string") return { code: code as number, message };
      return { code: SERVER_ERROR, message: String(message ?? err) };
    }
    return { code: SERVER_ERROR, message: String(err) };
  } catch {
    return { code: SERVER_ERROR, message: INTERNAL_TEXT };
  }
}

type Phase = "new" | "initializing" | "ready";
type Outcome = { method: "ui/notifications/tool-result" | "ui/notifications/tool-cancelled"; params: unknown };

/** One app view's conversation with the host, from `ui/initialize` to teardown. */
export class AppSession {
  private readonly options: SessionOptions;
  private readonly handlers: HostHandlers;
  private readonly now: () => number;
  private readonly schedule: (f: () => void) => void;
  private readonly bucket = new TokenBucket(BUCKET_BURST, BUCKET_PER_SECOND);
  private readonly count: SessionCounters = { received: 0, refused: 0, invalid: 0, ignored: 0 };
  private phase: Phase = "new";
  private stopReason: StopReason | null = null;
  private overflowSince: number | null = null;
  /** Refusals and invalid messages in the current strike window, and when it began. */
  private strikes = { since: 0, refused: 0, invalid: 0 };
  private hostContext: Record<string, unknown>;
  /** Context changes made after the initialize answer went out, merged, for when the view is ready. */
  private pendingContext: Record<string, unknown> | null = null;
  private outcome: Outcome | null = null;
  private outcomeSent = false;
  private lastHeight: number | null = null;
  private pendingSize: { width?: number; height: number } | null = null;
  private sizeScheduled = false;
  private nextId = 1;
  private readonly awaiting = new Map<RequestId, () => void>();
  private teardownPromise: Promise<void> | null = null;

  constructor(options: SessionOptions) {
    this.options = options;
    this.handlers = options.handlers;
    this.now = options.now ?? (() => performance.now());
    this.schedule = options.schedule ?? ((f) => requestAnimationFrame(() => f()));
    this.hostContext = { ...options.hostContext };
    if (options.toolResult !== undefined) this.outcome = { method: "ui/notifications/tool-result", params: options.toolResult };
  }

  get stoppedReason(): StopReason | null {
    return this.stopReason;
  }
  get initialized(): boolean {
    return this.phase === "ready";
  }
  get counters(): SessionCounters {
    return { ...this.count };
  }

  receive(data: unknown): void {
    if (this.stopReason !== null) return;
    this.count.received += 1;
    const now = this.now();
    if (now - this.strikes.since >= STRIKE_WINDOW_MS) this.strikes = { since: now, refused: 0, invalid: 0 };
    if (!this.bucket.take(now)) {
      this.count.refused += 1;
      this.strikes.refused += 1;
      this.overflowSince ??= now;
      if (now - this.overflowSince >= FLOOD_MS || this.strikes.refused > MAX_REFUSED) this.stopSelf("flood");
      return;
    }
    this.overflowSince = null;
    const checked = validateEnvelope(data);
    if (!checked.ok) return this.countInvalid();
    try {
      this.dispatch(checked.message);
    } catch {
      // Only a getter deep in params that threw after the walk read it fine gets here.
      this.countInvalid();
    }
  }

  sendToolResult(result: unknown): void {
    this.setOutcome({ method: "ui/notifications/tool-result", params: result });
  }

  sendToolCancelled(reason?: string): void {
    this.setOutcome({ method: "ui/notifications/tool-cancelled", params: reason === undefined ? {} : { reason } });
  }

  setHostContext(partial: Record<string, unknown>): void {
    if (this.stopReason !== null) return;
    // Only what differs from what the view was given is news: a host that re-states its whole
    // context (on every render) sends nothing.
    const changed = Object.fromEntries(
      Object.entries(partial).filter(([key, value]) => JSON.stringify(value) !== JSON.stringify(this.hostContext[key])),
    );
    if (Object.keys(changed).length === 0) return;
    partial = changed;
    this.hostContext = { ...this.hostContext, ...partial };
    // Before the initialize answer, that answer carries the change; before `initialized`, wait.
    if (this.phase === "ready") this.notify("ui/notifications/host-context-changed", partial);
    else if (this.phase === "initializing") this.pendingContext = { ...this.pendingContext, ...partial };
  }

  teardown(): Promise<void> {
    if (this.teardownPromise) return this.teardownPromise;
    // A view not yet initialized may not be sent a request: it is simply closed.
    if (this.stopReason !== null || this.phase !== "ready") {
      this.stop("closed");
      return (this.teardownPromise = Promise.resolve());
    }
    const id = this.nextId++;
    this.teardownPromise = new Promise<void>((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.awaiting.delete(id);
        resolve();
      };
      const timer = setTimeout(finish, this.options.teardownTimeoutMs ?? DEFAULT_TEARDOWN_MS);
      this.awaiting.set(id, finish);
      this.send({ jsonrpc: "2.0", id, method: "ui/resource-teardown", params: {} });
    }).then(() => this.stop("closed"));
    return this.teardownPromise;
  }

  stop(reason: StopReason): void {
    if (this.stopReason !== null) return;
    this.stopReason = reason;
    this.pendingSize = null;
    this.pendingContext = null;
    // Whoever waits on an answer (teardown) is let go: no answer will be read now.
    for (const finish of [...this.awaiting.values()]) finish();
  }

  private stopSelf(reason: StopReason): void {
    if (this.stopReason !== null) return;
    this.stop(reason);
    try {
      this.handlers.stopped(reason);
    } catch {
      // The session is stopped whatever the handler does.
    }
  }

  private ignore(): void {
    this.count.ignored += 1;
  }

  private countInvalid(): void {
    this.count.invalid += 1;
    this.strikes.invalid += 1;
    if (this.strikes.invalid > MAX_INVALID) this.stopSelf("malformed");
  }

  private dispatch(message: Envelope): void {
    if (message.kind === "response") {
      const finish = this.awaiting.get(message.id);
      return finish ? finish() : this.ignore();
    }
    if (message.method.startsWith(SANDBOX_PREFIX)) return this.ignore();
    if (message.kind === "request") this.onRequest(message.id, message.method, message.params);
    else this.onNotification(message.method, message.params);
  }

  private onRequest(id: RequestId, method: string, params: Record<string, unknown>): void {
    if (method === "ui/initialize") return this.onInitialize(id, params);
    // Nothing may go to the view before `initialized`, answers included: the request is dropped.
    if (this.phase !== "ready") return this.ignore();
    const problem = checkParams(method, params);
    if (problem !== null) return this.sendError(id, INVALID_PARAMS, INVALID_PARAMS_PREFIX + problem);
    const handlers = this.handlers;
    const byOutcome = (ok: boolean) => (ok ? {} : { isError: true });
    let run: (() => unknown) | null = null;
    switch (method) {
      case "ping": run = () => ({}); break;
      case "tools/call": run = () => handlers.callTool(params.name as string, (params.arguments as Record<string, unknown>) ?? {}); break;
      case "tools/list": run = () => handlers.listTools(); break;
      case "resources/read": run = () => handlers.readResource(params.uri as string); break;
      case "resources/list": run = () => handlers.listResources(); break;
      case "ui/message": run = () => handlers.message(messageText(params) as string).then(byOutcome); break;
      // The app hears only that it was taken, never what the host did with it.
      case "ui/update-model-context": run = () => handlers.updateModelContext(modelContext(params) as ModelContext).then(() => ({})); break;
      case "ui/open-link": run = () => handlers.openLink(params.url as string).then(byOutcome); break;
      case "ui/request-display-mode": run = () => ({ mode: handlers.requestDisplayMode(params.mode as string) }); break;
    }
    if (run) this.answer(id, run);
    else if (REFUSED_METHODS.has(method)) this.sendError(id, METHOD_NOT_FOUND, NOT_SUPPORTED_TEXT);
    else this.sendError(id, METHOD_NOT_FOUND, NOT_FOUND_TEXT);
  }

  private onInitialize(id: RequestId, params: Record<string, unknown>): void {
    if (this.phase !== "new") return this.sendError(id, INVALID_REQUEST, ALREADY_INITIALIZED_TEXT);
    const problem = checkParams("ui/initialize", params);
    if (problem !== null) return this.sendError(id, INVALID_PARAMS, INVALID_PARAMS_PREFIX + problem);
    const asked = params.protocolVersion as string;
    this.phase = "initializing";
    this.send({
      jsonrpc: "2.0",
      id,
      result: {
        protocolVersion: ECHOED_VERSIONS.includes(asked) ? asked : PROTOCOL_VERSION,
        hostInfo: this.options.hostInfo,
        hostCapabilities: this.options.hostCapabilities,
        hostContext: this.hostContext,
      },
    });
  }

  private onNotification(method: string, params: Record<string, unknown>): void {
    if (this.phase === "new" || checkParams(method, params) !== null) return this.ignore();
    switch (method) {
      case "ui/notifications/initialized":
        return this.phase === "initializing" ? this.becomeReady() : this.ignore();
      case "ui/notifications/size-changed":
        return this.onSizeChanged(params.width as number | undefined, params.height as number | undefined);
      case "ui/notifications/request-teardown":
        return this.callHandler(() => this.handlers.requestTeardown());
      case "notifications/message":
        return this.callHandler(() => this.handlers.log(params.level as string, params.data, params.logger as string | undefined));
      default:
        // `notifications/tools/list_changed` among them: Perch does not list the app's tools.
        this.ignore();
    }
  }

  private becomeReady(): void {
    this.phase = "ready";
    this.notify("ui/notifications/tool-input", { arguments: this.options.toolInput });
    this.sendOutcome();
    if (this.pendingContext) this.notify("ui/notifications/host-context-changed", this.pendingContext);
    this.pendingContext = null;
  }

  private setOutcome(outcome: Outcome): void {
    if (this.stopReason !== null || this.outcome !== null) return;
    this.outcome = outcome;
    this.sendOutcome();
  }

  /** Only after tool-input, which goes out the moment the view is ready, and only once. */
  private sendOutcome(): void {
    if (this.phase !== "ready" || this.outcome === null || this.outcomeSent) return;
    this.outcomeSent = true;
    this.notify(this.outcome.method, this.outcome.params);
  }

  /** Heights are clamped and delivered at most once a frame, the latest winning. */
  private onSizeChanged(width: number | undefined, height: number | undefined): void {
    const reported = height ?? this.lastHeight;
    // A width alone, before any height, leaves nothing to resize the frame to.
    if (reported === null) return;
    this.lastHeight = reported;
    const clamped = Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, reported));
    this.pendingSize = width === undefined ? { height: clamped } : { width, height: clamped };
    if (this.sizeScheduled) return;
    this.sizeScheduled = true;
    this.schedule(() => {
      this.sizeScheduled = false;
      const size = this.pendingSize;
      this.pendingSize = null;
      if (size && this.stopReason === null) this.callHandler(() => this.handlers.sizeChanged(size));
    });
  }

  private callHandler(call: () => void): void {
    try {
      call();
    } catch {
      // A host handler's fault is not the view's: the session carries on.
    }
  }

  /** Runs a request's handler without waiting on it, so a promise that never settles blocks nothing. */
  private answer(id: RequestId, run: () => unknown): void {
    const reply = (result: unknown) => {
      if (!this.send({ jsonrpc: "2.0", id, result: result ?? {} })) this.sendError(id, INTERNAL_ERROR, INTERNAL_TEXT);
    };
    let outcome: unknown;
    try {
      outcome = run();
    } catch {
      return this.sendError(id, INTERNAL_ERROR, INTERNAL_TEXT);
    }
    if (typeof (outcome as PromiseLike<unknown> | null)?.then !== "function") return reply(outcome);
    (outcome as PromiseLike<unknown>).then(reply, (err: unknown) => this.send({ jsonrpc: "2.0", id, error: toRpcError(err) }));
  }

  private sendError(id: RequestId, code: number, message: string): void {
    this.send({ jsonrpc: "2.0", id, error: { code, message } });
  }

  private notify(method: string, params: unknown): void {
    this.send({ jsonrpc: "2.0", method, params });
  }

  /** The one way out: nothing leaves a stopped session, even from a handler settling late. */
  private send(message: object): boolean {
    if (this.stopReason !== null) return false;
    try {
      this.options.post(message);
      return true;
    } catch {
      // An answer that cannot be cloned, or a frame already gone.
      return false;
    }
  }
}

/** One `message` listener per window: routes by `event.source`, requires `event.origin === "null"`. */
export class BridgeRouter {
  private readonly target: Window;
  private readonly sessions = new Map<MessageEventSource, AppSession>();
  private listening = false;

  constructor(target?: Window) {
    this.target = target ?? window;
  }

  register(source: MessageEventSource, session: AppSession): () => void {
    this.sessions.set(source, session);
    if (!this.listening) {
      this.target.addEventListener("message", this.onMessage);
      this.listening = true;
    }
    return () => {
      // A later registration for the same source is not undone by an earlier one's unregister.
      if (this.sessions.get(source) === session) this.sessions.delete(source);
      if (this.sessions.size === 0 && this.listening) {
        this.target.removeEventListener("message", this.onMessage);
        this.listening = false;
      }
    };
  }

  private readonly onMessage = (event: MessageEvent): void => {
    // The map lookup first: every other frame's and extension's messages end here, cheaply.
    const source = event.source;
    const session = source === null ? undefined : this.sessions.get(source);
    // A sandboxed frame without allow-same-origin has an opaque origin, serialized "null".
    if (session === undefined || event.origin !== "null") return;
    session.receive(event.data);
  };
}
