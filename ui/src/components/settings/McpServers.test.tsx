import { describe, expect, it, vi } from "vitest";
import { act, render, screen, within } from "../../test/render";
import userEvent from "@testing-library/user-event";
import type { McpOverview, ServerView } from "../../bindings";
import { calls, emitEvent, onCommand } from "../../test/tauri";
import { McpServers } from "./McpServers";

function server(name: string, over: Partial<ServerView> = {}): ServerView {
  return {
    config: {
      name,
      transport: { type: "stdio", command: `perch-mcp-${name}`, args: [], env: {}, cwd: null },
      enabled: true,
      auto_start: true,
      timeout_secs: 60,
      always_on: [],
      bundled: true,
      stop_when_idle_secs: 120,
    },
    status: "connected",
    pid: 4242,
    last_error: null,
    connected_at: Date.now() - 90_000,
    restarts: 0,
    protocol_version: "2026-07-28",
    server_info: `perch-${name} 0.1.0`,
    instructions: null,
    tools: [
      { name: "add", title: null, description: "Add two numbers", input_schema: { type: "object" }, read_only: true, destructive: false },
    ],
    resources: [],
    prompts: [],
    sign_in: null,
    sign_in_page: null,
    ...over,
  };
}

describe("McpServers", () => {
  it("lists servers with status, PID, tools and uptime, and acts on them", async () => {
    let overview: McpOverview = {
      servers: [server("demo"), server("broken", { status: "error", pid: null, last_error: "npx was not found on your PATH." })],
      problems: [{ file: "/data/mcp_servers.json", line: 4, server: "bad", message: "needs a \"command\"" }],
    };
    onCommand("mcp_overview", () => overview);
    onCommand("mcp_stop", () => null);
    onCommand("mcp_logs", () => ["listening", "ready"]);
    render(<McpServers />);
    const demo = await screen.findByRole("group", { name: "Server demo" });
    expect(within(demo).getByText("4242")).toBeInTheDocument();
    expect(within(demo).getByText("1 min")).toBeInTheDocument();
    expect(within(demo).getByTestId("status-demo")).toHaveTextContent("connected");
    expect(screen.getByText("npx was not found on your PATH.")).toBeInTheDocument();
    expect(screen.getByText(/line 4: needs a "command"/)).toBeInTheDocument();

    await userEvent.click(within(demo).getByRole("button", { name: "Stop" }));
    expect(calls.find((c) => c.cmd === "mcp_stop")?.args).toEqual({ name: "demo" });

    onCommand("mcp_remove", () => null);
    await userEvent.click(within(demo).getByRole("button", { name: "Remove" }));
    const confirm = within(demo).getByRole("dialog", { name: "Remove demo" });
    expect(confirm).toHaveTextContent("It ships with Perch, so it stays listed.");
    expect(calls.some((c) => c.cmd === "mcp_remove")).toBe(false);
    await userEvent.click(within(confirm).getByRole("button", { name: "Turn off" }));
    expect(calls.find((c) => c.cmd === "mcp_remove")?.args).toEqual({ name: "demo" });

    await userEvent.click(within(demo).getByRole("button", { name: "Tools, resources and prompts" }));
    expect(within(demo).getByText("Add two numbers")).toBeInTheDocument();
    await userEvent.click(within(demo).getByRole("button", { name: "Show log" }));
    expect(within(demo).getByText(/listening\s+ready/)).toBeInTheDocument();

    overview = { ...overview, servers: [server("demo", { status: "stopped", pid: null })] };
    emitEvent("mcp-changed", { event: { event: "changed", data: { server: "demo" } } });
    expect(await within(await screen.findByRole("group", { name: "Server demo" })).findByText("stopped")).toBeInTheDocument();
  });

  it("shows what a server that offers nothing says about it", async () => {
    const google = server("google", {
      tools: [],
      instructions: "Google is not connected. Connect it in Settings → Connections.",
    });
    onCommand("mcp_overview", () => ({ servers: [google, server("demo", { instructions: "Adds numbers." })], problems: [] }));
    render(<McpServers />);
    expect(await screen.findByTestId("instructions-google")).toHaveTextContent("Google is not connected");
    expect(screen.queryByTestId("instructions-demo")).not.toBeInTheDocument();
  });

  it("shows an idle server with its tools, says it starts on use, and offers Start", async () => {
    onCommand("mcp_overview", () => ({ servers: [server("web", { status: "idle", pid: null, connected_at: null })], problems: [] }));
    onCommand("mcp_start", () => null);
    render(<McpServers />);
    const web = await screen.findByRole("group", { name: "Server web" });
    expect(within(web).getByTestId("status-web")).toHaveTextContent("idle");
    expect(within(web).getByText("Tools").nextElementSibling).toHaveTextContent("1");
    expect(web).toHaveTextContent("it starts again when one of its tools is called");
    await userEvent.click(within(web).getByRole("button", { name: "Start" }));
    expect(calls.find((c) => c.cmd === "mcp_start")?.args).toEqual({ name: "web" });
  });

  it("offers Sign in where a server needs it, shows the browser step, then who signed in, with Sign out", async () => {
    const remote = (over: Partial<ServerView>) =>
      server("linear", {
        config: { ...server("linear").config, bundled: false, transport: { type: "http", url: "https://mcp.linear.app/mcp", headers: {}, oauth: null } },
        status: "needs_sign_in",
        pid: null,
        tools: [],
        last_error: "it needs you to sign in: use Sign in on its card, or run `perch mcp login linear`",
        ...over,
      });
    let overview: McpOverview = { servers: [remote({})], problems: [] };
    onCommand("mcp_overview", () => overview);
    let finish: (v: unknown) => void = () => {};
    onCommand("mcp_sign_in", () => new Promise((resolve) => (finish = resolve)));
    onCommand("mcp_cancel_sign_in", () => null);
    onCommand("mcp_sign_out", () => true);
    render(<McpServers />);
    const card = await screen.findByRole("group", { name: "Server linear" });
    expect(within(card).getByTestId("status-linear")).toHaveTextContent("needs sign-in");
    await userEvent.click(within(card).getByRole("button", { name: "Sign in" }));
    expect(calls.find((c) => c.cmd === "mcp_sign_in")?.args).toEqual({ name: "linear", scope: null });

    // The browser step: the page's address, to copy where no browser opened, and Cancel.
    const page = "https://linear.app/oauth/authorize?client_id=perch&state=abc";
    overview = { servers: [remote({ sign_in_page: page })], problems: [] };
    emitEvent("mcp-changed", { event: { event: "changed", data: { server: "linear" } } });
    const waiting = await screen.findByRole("status", { name: "Signing in to linear" });
    expect(within(waiting).getByText(page)).toBeInTheDocument();
    await userEvent.click(within(waiting).getByRole("button", { name: "Cancel" }));
    expect(calls.find((c) => c.cmd === "mcp_cancel_sign_in")?.args).toEqual({ name: "linear" });

    // Signed in: who issued it and what was allowed, and Sign out.
    overview = {
      servers: [
        remote({
          status: "connected",
          last_error: null,
          sign_in: { signed_in: true, issuer: "https://linear.app", scopes: ["read", "write"], expires_at: Date.now() + 3_600_000, can_refresh: true },
        }),
      ],
      problems: [],
    };
    await act(async () => finish({ signed_in: true, issuer: "https://linear.app", scopes: ["read"], expires_at: null, can_refresh: true }));
    emitEvent("mcp-changed", { event: { event: "changed", data: { server: "linear" } } });
    expect(await within(await screen.findByRole("group", { name: "Server linear" })).findByText(/Signed in with https:\/\/linear.app, allowed read, write/)).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "Sign out" }));
    expect(calls.find((c) => c.cmd === "mcp_sign_out")?.args).toEqual({ name: "linear" });
  });

  it("adds a server from the form or pasted JSON and shows what was wrong", async () => {
    onCommand("mcp_overview", () => ({ servers: [], problems: [] }));
    onCommand("mcp_import", ({ json }) => {
      if (String(json).includes("broken")) throw { kind: "invalid", message: "server \"broken\": needs a \"command\"" };
      return ["time"];
    });
    render(<McpServers />);
    await userEvent.type(await screen.findByRole("textbox", { name: "Server name" }), "time");
    await userEvent.type(screen.getByRole("textbox", { name: "Server command" }), "uvx mcp-server-time --local-timezone UTC");
    await userEvent.click(screen.getByRole("button", { name: "Add" }));
    const sent = JSON.parse(String(calls.find((c) => c.cmd === "mcp_import")?.args.json));
    expect(sent).toEqual({ mcpServers: { time: { command: "uvx", args: ["mcp-server-time", "--local-timezone", "UTC"] } } });

    await userEvent.click(screen.getByRole("radio", { name: "Paste JSON" }));
    const box = screen.getByRole("textbox", { name: "Servers JSON" });
    await userEvent.click(box);
    await userEvent.paste('{"broken": {"args": []}}');
    await userEvent.click(screen.getByRole("button", { name: "Add" }));
    expect(await screen.findByRole("alert")).toHaveTextContent('server "broken": needs a "command"');
    expect(box).toHaveValue('{"broken": {"args": []}}');
  });

  it("fills the Add form from a well-known server, marks the ones added, and saves only on Add", async () => {
    const github = {
      name: "github",
      title: "GitHub",
      url: "https://api.githubcopilot.com/mcp/",
      about: "GitHub's own server.",
      needs: { kind: "token", header: "Authorization", prefix: "Bearer ", where_to_get: "https://github.com/settings/personal-access-tokens/new" },
      docs: "https://github.com/github/github-mcp-server",
    };
    const linear = { name: "linear", title: "Linear", url: "https://mcp.linear.app/mcp", about: "Linear issues.", needs: { kind: "sign_in" }, docs: "https://linear.app/docs/mcp" };
    const sentry = { name: "sentry", title: "Sentry", url: "https://mcp.sentry.dev/mcp", about: "Sentry issues.", needs: { kind: "sign_in" }, docs: "https://docs.sentry.io/product/sentry-mcp/" };
    // Linear is configured (under another name, with a trailing slash); a server named sentry is something else.
    const http = (name: string, url: string) =>
      server(name, { config: { ...server(name).config, bundled: false, transport: { type: "http", url, headers: {}, oauth: null } } });
    onCommand("mcp_overview", () => ({ servers: [server("demo"), http("work-linear", "https://mcp.linear.app/mcp/"), server("sentry")], problems: [] }));
    onCommand("mcp_catalog", () => [github, linear, sentry]);
    onCommand("mcp_import", () => ["x"]);
    render(<McpServers />);
    await userEvent.click(await screen.findByText("Well-known servers", { selector: "summary" }));
    const list = screen.getByRole("list", { name: "Well-known servers" });
    const added = (title: string) => within(within(list).getByRole("listitem", { name: title })).queryByText("added", { selector: ".tag" });
    expect(added("Linear")).toBeInTheDocument();
    expect(added("GitHub")).toBeNull();
    expect(added("Sentry")).toBeNull();
    expect(within(list).getByRole("listitem", { name: "Linear" })).toHaveTextContent("Needs you to sign in");
    expect(within(list).getByRole("listitem", { name: "GitHub" })).toHaveTextContent("sent as Authorization: Bearer");

    // Picking fills the form and saves nothing.
    await userEvent.click(within(list).getByRole("button", { name: "Sentry" }));
    expect(screen.getByRole("textbox", { name: "Server name" })).toHaveValue("sentry-2");
    expect(screen.getByRole("textbox", { name: "Server URL" })).toHaveValue("https://mcp.sentry.dev/mcp");
    expect(calls.some((c) => c.cmd === "mcp_import")).toBe(false);
    await userEvent.click(screen.getByRole("button", { name: "Add" }));
    expect(JSON.parse(String(calls.find((c) => c.cmd === "mcp_import")?.args.json))).toEqual({
      mcpServers: { "sentry-2": { type: "http", url: "https://mcp.sentry.dev/mcp" } },
    });

    // A server that takes a token asks for it, and sends it in its header.
    calls.length = 0;
    await userEvent.click(screen.getByText("Well-known servers", { selector: "summary" }));
    await userEvent.click(within(list).getByRole("button", { name: "GitHub" }));
    expect(screen.getByRole("textbox", { name: "Server name" })).toHaveValue("github");
    await userEvent.type(screen.getByLabelText("Server token"), "ghp_secret");
    await userEvent.click(screen.getByRole("button", { name: "Add" }));
    expect(JSON.parse(String(calls.find((c) => c.cmd === "mcp_import")?.args.json))).toEqual({
      mcpServers: { github: { type: "http", url: "https://api.githubcopilot.com/mcp/", headers: { Authorization: "Bearer ghp_secret" } } },
    });
  });

  it("tells a timed-out call from a stopped server, each with its next step", async () => {
    onCommand("mcp_overview", () => ({ servers: [server("demo")], problems: [] }));
    onCommand("mcp_refresh", () => {
      throw { kind: "timeout", message: "demo did not answer within 60 s, so the call was cancelled", provider_kind: null };
    });
    render(<McpServers />);
    const demo = await screen.findByRole("group", { name: "Server demo" });
    await userEvent.click(within(demo).getByRole("button", { name: "Refresh" }));
    expect(await screen.findByRole("alert")).toHaveTextContent(/within 60 s.*did not answer in time; try again/);
    onCommand("mcp_refresh", () => {
      throw { kind: "closed", message: "demo stopped while the call ran (it crashed or was closed)", provider_kind: null };
    });
    await userEvent.click(within(demo).getByRole("button", { name: "Refresh" }));
    expect(await screen.findByRole("alert")).toHaveTextContent(/crashed or was closed.*see its log, then restart it/);
  });

  it("shows the newest list when an older answer arrives last", async () => {
    const answers: ((o: McpOverview) => void)[] = [];
    onCommand("mcp_overview", () => new Promise<McpOverview>((resolve) => answers.push(resolve)));
    render(<McpServers />);
    await vi.waitFor(() => expect(answers).toHaveLength(1));
    // A change arrives while the first request is still out: a second request goes out.
    emitEvent("mcp-changed", { event: { event: "changed", data: { server: "demo" } } });
    await vi.waitFor(() => expect(answers).toHaveLength(2));
    answers[1]({ servers: [server("demo", { status: "stopped", pid: null })], problems: [] });
    const demo = await screen.findByRole("group", { name: "Server demo" });
    await vi.waitFor(() => expect(within(demo).getByTestId("status-demo")).toHaveTextContent("stopped"));
    // The stale answer (still "connected") lands last and must not win.
    await act(async () => answers[0]({ servers: [server("demo"), server("gone")], problems: [] }));
    expect(within(demo).getByTestId("status-demo")).toHaveTextContent("stopped");
    expect(screen.queryByRole("group", { name: "Server gone" })).toBeNull();
  });
});
