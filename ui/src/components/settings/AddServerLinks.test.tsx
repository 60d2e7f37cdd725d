import { afterEach, describe, expect, it, vi } from "vitest";
import { render, screen, waitFor, within } from "../../test/render";
import userEvent from "@testing-library/user-event";
import type { AddLinkRequest } from "../../bindings";
import { calls, emitEvent, onCommand } from "../../test/tauri";
import { AddServerLinks, KEY_ACTIVATION_DELAY_MS, shellQuote } from "./AddServerLinks";

const STDIO_JSON = JSON.stringify({
  mcpServers: { time: { command: "uvx", args: ["mcp-server-time", "--local-timezone=Europe/Paris", "two words"], env: { API_KEY: "s3cret" } } },
});

function stdioLink(id = 1): AddLinkRequest {
  return {
    id,
    proposal: {
      name: "time",
      transport: { type: "stdio", command: "uvx", args: ["mcp-server-time", "--local-timezone=Europe/Paris", "two words"], env: { API_KEY: "s3cret" } },
      json: STDIO_JSON,
    },
    error: null,
  };
}

/** The shell's side: links wait until answered (Add saves and answers; Cancel dismisses). */
function shell(initial: AddLinkRequest[]) {
  let pending = [...initial];
  const answer = (id: unknown) => {
    const before = pending.length;
    pending = pending.filter((r) => r.id !== id);
    return pending.length !== before;
  };
  onCommand("mcp_add_links", () => pending);
  onCommand("mcp_add_link_dismiss", ({ id }) => answer(id));
  onCommand("mcp_add_link_accept", ({ id }) => {
    const name = pending.find((r) => r.id === id)?.proposal?.name;
    answer(id);
    return [name];
  });
  return {
    arrive(request: AddLinkRequest) {
      pending.push(request);
      emitEvent("add-link-arrived", { id: request.id });
    },
  };
}

const adds = () => calls.filter((c) => c.cmd === "mcp_add_link_accept");

describe("AddServerLinks", () => {
  afterEach(() => vi.useRealTimers());

  it("shows the exact command line, masks the environment's values, and Cancel saves nothing", async () => {
    shell([stdioLink()]);
    render(<AddServerLinks />);
    const dialog = await screen.findByRole("dialog", { name: "Add an MCP server" });
    expect(dialog).toHaveTextContent("Add the MCP server time?");
    expect(within(dialog).getByRole("note")).toHaveTextContent("This runs a program on your computer");
    expect(within(dialog).getByLabelText("Command line")).toHaveTextContent(
      /^uvx mcp-server-time --local-timezone=Europe\/Paris 'two words'$/,
    );
    const env = within(dialog).getByLabelText("Environment");
    expect(env).toHaveTextContent("API_KEY=••••••••");
    expect(env).not.toHaveTextContent("s3cret");
    await userEvent.click(within(dialog).getByRole("button", { name: "Show values" }));
    expect(env).toHaveTextContent("API_KEY=s3cret");

    await userEvent.click(within(dialog).getByRole("button", { name: "Cancel" }));
    expect(screen.queryByRole("dialog")).toBeNull();
    expect(adds()).toHaveLength(0);
    expect(calls.find((c) => c.cmd === "mcp_add_link_dismiss")?.args).toEqual({ id: 1 });
  });

  it("Add has the shell save the proposal it kept, then the next link is asked", async () => {
    const links = shell([]);
    render(<AddServerLinks />);
    expect(screen.queryByRole("dialog")).toBeNull();
    links.arrive(stdioLink(7));
    links.arrive({
      id: 8,
      proposal: {
        name: "linear",
        transport: { type: "http", url: "https://mcp.linear.app/mcp", headers: {} },
        json: JSON.stringify({ mcpServers: { linear: { type: "http", url: "https://mcp.linear.app/mcp" } } }),
      },
      error: null,
    });
    const dialog = await screen.findByRole("dialog", { name: "Add an MCP server" });
    expect(dialog).toHaveTextContent("Add the MCP server time?");
    await userEvent.click(within(dialog).getByRole("button", { name: "Add" }));
    // The page sends only which link: what is saved is what the shell kept from it.
    expect(adds().map((c) => c.args)).toEqual([{ id: 7 }]);
    expect(calls.some((c) => c.cmd === "mcp_import" || c.cmd === "mcp_add_link_dismiss")).toBe(false);

    // The address of a Streamable HTTP server, no program warning.
    const next = await screen.findByText(/Add the MCP server/);
    const second = next.closest("[role=dialog]") as HTMLElement;
    await within(second).findByText("linear");
    expect(within(second).getByLabelText("Server address")).toHaveTextContent("https://mcp.linear.app/mcp");
    expect(within(second).queryByRole("note")).toBeNull();
  });

  it("keeps the dialog and says why when the engine refuses to add", async () => {
    shell([stdioLink()]);
    const taken = 'you already have a server named "time", and a link cannot replace a server';
    onCommand("mcp_add_link_accept", () => {
      throw { kind: "invalid", message: taken };
    });
    render(<AddServerLinks />);
    const dialog = await screen.findByRole("dialog", { name: "Add an MCP server" });
    await userEvent.click(within(dialog).getByRole("button", { name: "Add" }));
    expect(await within(dialog).findByRole("alert")).toHaveTextContent(taken);
    expect(calls.some((c) => c.cmd === "mcp_add_link_dismiss")).toBe(false);
  });

  it("opens with the focus on Cancel, so Enter meant for another window adds nothing", async () => {
    shell([stdioLink()]);
    render(<AddServerLinks />);
    const dialog = await screen.findByRole("dialog", { name: "Add an MCP server" });
    await waitFor(() => expect(within(dialog).getByRole("button", { name: "Cancel" })).toHaveFocus());
    await userEvent.keyboard("{Enter}");
    expect(adds()).toHaveLength(0);
    expect(calls.find((c) => c.cmd === "mcp_add_link_dismiss")?.args).toEqual({ id: 1 });
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
  });

  it("ignores a key on Add for a moment after the dialog shows; a key after that adds", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    shell([stdioLink()]);
    render(<AddServerLinks />);
    const dialog = await screen.findByRole("dialog", { name: "Add an MCP server" });
    // The dialog puts the focus on Cancel once it has opened (an effect, which a loaded machine
    // may run after the dialog is found); the keys go to Add only after that.
    await waitFor(() => expect(within(dialog).getByRole("button", { name: "Cancel" })).toHaveFocus());
    const add = within(dialog).getByRole("button", { name: "Add" });
    add.focus();
    expect(add).toHaveFocus();
    await userEvent.keyboard("{Enter}");
    await userEvent.keyboard(" ");
    expect(adds()).toHaveLength(0);
    expect(dialog).toBeInTheDocument();
    vi.setSystemTime(Date.now() + KEY_ACTIVATION_DELAY_MS);
    await userEvent.keyboard("{Enter}");
    expect(adds().map((c) => c.args)).toEqual([{ id: 1 }]);
  });

  it("Esc cancels the dialog, as Cancel does", async () => {
    shell([stdioLink(), { id: 2, proposal: null, error: "the link gives no name" }]);
    render(<AddServerLinks />);
    expect(await screen.findByRole("dialog", { name: "Add an MCP server" })).toHaveTextContent("Add the MCP server time?");
    await userEvent.keyboard("{Escape}");
    expect(calls.filter((c) => c.cmd === "mcp_add_link_dismiss").map((c) => c.args)).toEqual([{ id: 1 }]);
    expect(adds()).toHaveLength(0);
    // The next one, a refused link, closes with Esc too.
    const refused = await screen.findByRole("alert");
    expect(refused).toHaveTextContent("the link gives no name");
    await userEvent.keyboard("{Escape}");
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
    expect(calls.filter((c) => c.cmd === "mcp_add_link_dismiss").map((c) => c.args)).toEqual([{ id: 1 }, { id: 2 }]);
  });

  it("says why a link was refused, with nothing to add", async () => {
    shell([{ id: 3, proposal: null, error: "the link's name cannot be used: names use letters, digits, - and _" }]);
    render(<AddServerLinks />);
    const dialog = await screen.findByRole("dialog", { name: "Add an MCP server" });
    expect(within(dialog).getByRole("alert")).toHaveTextContent("the link's name cannot be used");
    expect(within(dialog).queryByRole("button", { name: "Add" })).toBeNull();
    await userEvent.click(within(dialog).getByRole("button", { name: "Close" }));
    expect(calls.find((c) => c.cmd === "mcp_add_link_dismiss")?.args).toEqual({ id: 3 });
    expect(screen.queryByRole("dialog")).toBeNull();
  });

  it("quotes arguments as a shell would need them", () => {
    expect(shellQuote("-y")).toBe("-y");
    expect(shellQuote("@scope/pkg@1.2")).toBe("@scope/pkg@1.2");
    expect(shellQuote("two words")).toBe("'two words'");
    expect(shellQuote("it's")).toBe("'it'\\''s'");
    expect(shellQuote("")).toBe("''");
    expect(shellQuote("$(rm -rf ~)")).toBe("'$(rm -rf ~)'");
  });
});
