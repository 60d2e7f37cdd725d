import { describe, expect, it, vi } from "vitest";
import { act, cleanup, render, screen, waitFor } from "../../test/render";
import userEvent from "@testing-library/user-event";
import type { OpenedApp } from "../../bindings";
import { PUT_IN_COMPOSER } from "../../lib/shortcuts";
import { toolCall } from "../../test/fixtures";
import { calls, emitEvent, onCommand } from "../../test/tauri";
import { AppFrame } from "./AppFrame";

const CALL = toolCall({
  id: "card-1",
  server: "clock",
  tool: "get-time",
  arguments: {},
  output: { text: "2026-11-27T10:00:00Z", images: [], is_error: false, truncated_chars: 0 },
});

const OPENED: OpenedApp = {
  url: "perch-app://localhost/0123456789abcdef0123456789abcdef",
  host_version: "0.4.2",
  app: {
    session: "s1",
    token: "0123456789abcdef0123456789abcdef",
    app_name: "Get Time",
    tool: { name: "get-time", inputSchema: { type: "object" } },
    tool_input: {},
    tool_result: { content: [{ type: "text", text: "2026-11-27T10:00:00Z" }], structuredContent: { time: "2026-11-27T10:00:00Z" } },
    prefers_border: null,
    connect_domains: [],
    resource_domains: [],
    refused_domains: [{ entry: "http://127.0.0.1:9", reason: "not encrypted" }],
  },
};

/** The card's app, opened; returns its frame, with what the host posts to it collected. */
async function renderOpened({ onToolCalled, onModelContext }: { onToolCalled?: () => void; onModelContext?: (text: string | null) => void } = {}) {
  onCommand("mcp_app_open", () => ({ Ok: OPENED }));
  onCommand("mcp_app_close", () => null);
  onCommand("mcp_app_request", (args) => ({ Ok: { echoed: args } }));
  onCommand("open_url", () => null);
  render(<AppFrame call={CALL} asking={false} onShowText={() => {}} onToolCalled={onToolCalled} onModelContext={onModelContext} />);
  const frame = (await screen.findByTitle("Get Time, an app from clock")) as HTMLIFrameElement;
  const view = frame.contentWindow!;
  const posted: Record<string, unknown>[] = [];
  vi.spyOn(view, "postMessage").mockImplementation((m: unknown) => void posted.push(m as Record<string, unknown>));
  const send = (data: unknown) => act(() => void window.dispatchEvent(new MessageEvent("message", { data, origin: "null", source: view })));
  // The handshake, as the SDK's App does it (its first id is 0). The frame is drawn before the
  // effect that routes its messages runs; until then a message goes nowhere, as a real view's
  // would, and the view tries again (the bridge answers at once, so it is never sent twice).
  await waitFor(() => {
    if (!posted.some((m) => m.id === 0)) {
      send({ jsonrpc: "2.0", id: 0, method: "ui/initialize", params: { appInfo: { name: "t", version: "1" }, appCapabilities: {}, protocolVersion: "2026-01-26" } });
    }
    expect(posted.some((m) => m.id === 0)).toBe(true);
  });
  send({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} });
  return { frame, posted, send };
}

describe("AppFrame", () => {
  it("loads the page from its one-time address in a frame with an opaque origin, and says what was refused", async () => {
    const { frame, posted } = await renderOpened();
    expect(frame.getAttribute("src")).toBe(OPENED.url);
    expect(frame.getAttribute("sandbox")).toBe("allow-scripts allow-forms");
    expect(frame.getAttribute("allow")).toBe("");
    expect(screen.getByText(/It asked for http:\/\/127.0.0.1:9, which Perch does not allow/)).toBeInTheDocument();
    // The initialize answer, then the tool's input and result, in that order.
    const methods = posted.map((m) => m.method ?? `answer ${String(m.id)}`);
    expect(methods).toEqual(["answer 0", "ui/notifications/tool-input", "ui/notifications/tool-result"]);
    const init = posted[0] as { result: { hostInfo: unknown; hostContext: { toolInfo: { id: string } }; hostCapabilities: Record<string, unknown> } };
    expect(init.result.hostContext.toolInfo.id).toBe("card-1");
    expect(init.result.hostInfo).toEqual({ name: "Perch", version: "0.4.2" });
    expect(init.result.hostCapabilities.updateModelContext).toEqual({ text: {}, structuredContent: {} });
    expect(Object.keys(init.result.hostCapabilities)).not.toContain("sampling");
  });

  it("relays the app's tool call to the engine for its own session, and tells the card when it ended", async () => {
    const ended = vi.fn();
    const { posted, send } = await renderOpened({ onToolCalled: ended });
    send({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "get-time", arguments: {} } });
    await waitFor(() => expect(posted.some((m) => m.id === 5)).toBe(true));
    const request = calls.find((c) => c.cmd === "mcp_app_request");
    expect(request?.args).toEqual({ session: "s1", method: "tools/call", params: { name: "get-time", arguments: {} } });
    expect(ended).toHaveBeenCalledTimes(1);
    // A refused call ended too; other requests are not calls.
    onCommand("mcp_app_request", () => ({ Err: { code: -32000, message: "declined" } }));
    send({ jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "get-time", arguments: {} } });
    await waitFor(() => expect(posted.some((m) => m.id === 6)).toBe(true));
    send({ jsonrpc: "2.0", id: 7, method: "tools/list", params: {} });
    await waitFor(() => expect(posted.some((m) => m.id === 7)).toBe(true));
    expect(ended).toHaveBeenCalledTimes(2);
  });

  it("hands the app's context for the model to the engine, and tells the card what the model will read", async () => {
    const told = vi.fn();
    const { posted, send } = await renderOpened({ onModelContext: told });
    onCommand("mcp_app_request", (args) => ({ Ok: { model_context: `kept: ${JSON.stringify(args.params)}` } }));
    send({ jsonrpc: "2.0", id: 9, method: "ui/update-model-context", params: { content: [{ type: "text", text: "2 selected" }], structuredContent: { ids: [4, 7] } } });
    await waitFor(() => expect(posted.find((m) => m.id === 9)).toEqual({ jsonrpc: "2.0", id: 9, result: {} }));
    const request = calls.find((c) => c.cmd === "mcp_app_request" && c.args.method === "ui/update-model-context");
    expect(request?.args).toEqual({ session: "s1", method: "ui/update-model-context", params: { text: "2 selected", structured: { ids: [4, 7] } } });
    expect(told).toHaveBeenCalledWith('kept: {"text":"2 selected","structured":{"ids":[4,7]}}');
  });

  it("puts a suggested message in the message box only when the user takes it", async () => {
    const { posted, send } = await renderOpened();
    const put = vi.fn();
    window.addEventListener(PUT_IN_COMPOSER, put);
    send({ jsonrpc: "2.0", id: 6, method: "ui/message", params: { role: "user", content: [{ type: "text", text: "Remind me at noon" }] } });
    expect(await screen.findByText("Remind me at noon")).toBeInTheDocument();
    expect(put).not.toHaveBeenCalled();
    await userEvent.click(screen.getByRole("button", { name: "Put in message box" }));
    expect((put.mock.calls[0][0] as CustomEvent).detail).toBe("Remind me at noon");
    await waitFor(() => expect(posted.find((m) => m.id === 6)).toMatchObject({ result: {} }));
    window.removeEventListener(PUT_IN_COMPOSER, put);
  });

  it("opens a link only after the user says so, and never a non-web one", async () => {
    const { posted, send } = await renderOpened();
    send({ jsonrpc: "2.0", id: 7, method: "ui/open-link", params: { url: "javascript:alert(1)" } });
    await waitFor(() => expect(posted.find((m) => m.id === 7)).toMatchObject({ result: { isError: true } }));
    send({ jsonrpc: "2.0", id: 8, method: "ui/open-link", params: { url: "https://example.org/docs" } });
    expect(await screen.findByText("https://example.org/docs")).toBeInTheDocument();
    expect(calls.some((c) => c.cmd === "open_url")).toBe(false);
    await userEvent.click(screen.getByRole("button", { name: "Open" }));
    await waitFor(() => expect(calls.find((c) => c.cmd === "open_url")?.args).toEqual({ url: "https://example.org/docs" }));
    await waitFor(() => expect(posted.find((m) => m.id === 8)).toMatchObject({ result: {} }));
  });

  it("asks one thing at a time: a second link while one waits is refused, so the link cannot change under a click", async () => {
    const { posted, send } = await renderOpened();
    send({ jsonrpc: "2.0", id: 9, method: "ui/open-link", params: { url: "https://example.org/first" } });
    expect(await screen.findByText("https://example.org/first")).toBeInTheDocument();
    send({ jsonrpc: "2.0", id: 10, method: "ui/open-link", params: { url: "https://evil.example/second" } });
    await waitFor(() => expect(posted.find((m) => m.id === 10)).toMatchObject({ result: { isError: true } }));
    expect(screen.getByText("https://example.org/first")).toBeInTheDocument();
    expect(screen.queryByText("https://evil.example/second")).not.toBeInTheDocument();
  });

  it("tells the app it is being closed before its card goes", async () => {
    const { posted, send } = await renderOpened();
    cleanup();
    const teardown = posted.find((m) => m.method === "ui/resource-teardown") as { id: number } | undefined;
    expect(teardown).toBeDefined();
    send({ jsonrpc: "2.0", id: teardown!.id, result: {} });
    await waitFor(() => expect(calls.some((c) => c.cmd === "mcp_app_close" && c.args.session === "s1")).toBe(true));
  });

  it("starts four apps by itself, and the fifth on the user's word", async () => {
    onCommand("mcp_app_open", () => ({ Ok: OPENED }));
    onCommand("mcp_app_close", () => null);
    render(
      <>
        {[1, 2, 3, 4, 5].map((n) => (
          <AppFrame key={n} call={{ ...CALL, id: `card-${n}` }} asking={false} onShowText={() => {}} />
        ))}
      </>,
    );
    const show = await screen.findByRole("button", { name: "Show app" });
    expect(screen.getAllByTitle("Get Time, an app from clock")).toHaveLength(4);
    await userEvent.click(show);
    await waitFor(() => expect(screen.getAllByTitle("Get Time, an app from clock")).toHaveLength(5));
  });

  it("gives a failed app's place back, so it does not hold up the next", async () => {
    onCommand("mcp_app_open", (args) => (args.callId === "card-5" ? { Ok: OPENED } : { Err: { code: -32000, message: "no page" } }));
    onCommand("mcp_app_close", () => null);
    render(
      <>
        {[1, 2, 3, 4, 5].map((n) => (
          <AppFrame key={n} call={{ ...CALL, id: `card-${n}` }} asking={false} onShowText={() => {}} />
        ))}
      </>,
    );
    expect(await screen.findByTitle("Get Time, an app from clock")).toBeInTheDocument();
    expect(screen.getAllByText(/The app could not be shown: no page/)).toHaveLength(4);
    expect(screen.queryByRole("button", { name: "Show app" })).not.toBeInTheDocument();
  });

  it("removes the frame and says why when Perch stops the app", async () => {
    await renderOpened();
    emitEvent("mcp-app-stopped", { session: "s1", reason: "memory" });
    expect(await screen.findByText(/it used too much memory/)).toBeInTheDocument();
    expect(screen.queryByTitle("Get Time, an app from clock")).not.toBeInTheDocument();
    await waitFor(() => expect(calls.some((c) => c.cmd === "mcp_app_close" && c.args.session === "s1")).toBe(true));
  });

  it("stops an app that floods, with nothing posted after", async () => {
    const { posted, send } = await renderOpened();
    const before = posted.length;
    act(() => {
      for (let i = 0; i < 5_000; i++) send({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: i } });
    });
    expect(await screen.findByText(/it sent too many messages/)).toBeInTheDocument();
    expect(posted.length).toBe(before);
  });

  it("says why an app could not be opened, and the text stays", async () => {
    onCommand("mcp_app_open", () => ({ Err: { code: -32000, message: "apps from clock are turned off" } }));
    render(<AppFrame call={CALL} asking={false} onShowText={() => {}} />);
    expect(await screen.findByText(/The app could not be shown: apps from clock are turned off/)).toBeInTheDocument();
  });
});
