import { describe, expect, it } from "vitest";
import { render, screen, within } from "../../test/render";
import userEvent from "@testing-library/user-event";
import type { AddLinkRequest, ServerView } from "../../bindings";
import { calls, emitEvent, onCommand } from "../../test/tauri";
import { AddServerLinks, shellQuote } from "./AddServerLinks";

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

/** The shell's side: links wait until dismissed. */
function shell(initial: AddLinkRequest[], servers: ServerView[] = []) {
  let pending = [...initial];
  onCommand("mcp_add_links", () => pending);
  onCommand("mcp_add_link_dismiss", ({ id }) => {
    const before = pending.length;
    pending = pending.filter((r) => r.id !== id);
    return pending.length !== before;
  });
  onCommand("mcp_overview", () => ({ servers, problems: [] }));
  return {
    arrive(request: AddLinkRequest) {
      pending.push(request);
      emitEvent("add-link-arrived", { id: request.id });
    },
  };
}

describe("AddServerLinks", () => {
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
    expect(calls.some((c) => c.cmd === "mcp_import")).toBe(false);
    expect(calls.find((c) => c.cmd === "mcp_add_link_dismiss")?.args).toEqual({ id: 1 });
  });

  it("Add saves exactly the proposed entry through mcp_import, then the next link is asked", async () => {
    const links = shell([]);
    onCommand("mcp_import", () => ["time"]);
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
    const imports = calls.filter((c) => c.cmd === "mcp_import");
    expect(imports).toHaveLength(1);
    expect(JSON.parse(String(imports[0].args.json))).toEqual(JSON.parse(STDIO_JSON));
    expect(calls.find((c) => c.cmd === "mcp_add_link_dismiss")?.args).toEqual({ id: 7 });

    // The address of a Streamable HTTP server, no program warning.
    const next = await screen.findByText(/Add the MCP server/);
    const second = next.closest("[role=dialog]") as HTMLElement;
    await within(second).findByText("linear");
    expect(within(second).getByLabelText("Server address")).toHaveTextContent("https://mcp.linear.app/mcp");
    expect(within(second).queryByRole("note")).toBeNull();
  });

  it("keeps the dialog and says why when saving fails, and warns before replacing a server", async () => {
    const existing = { config: { name: "time" } } as ServerView;
    shell([stdioLink()], [existing]);
    onCommand("mcp_import", () => {
      throw { kind: "invalid", message: "the servers file could not be written" };
    });
    render(<AddServerLinks />);
    const dialog = await screen.findByRole("dialog", { name: "Add an MCP server" });
    expect(await within(dialog).findByText(/You already have a server named time; Add replaces it/)).toBeInTheDocument();
    await userEvent.click(within(dialog).getByRole("button", { name: "Add" }));
    expect(await within(dialog).findByRole("alert")).toHaveTextContent("the servers file could not be written");
    expect(calls.some((c) => c.cmd === "mcp_add_link_dismiss")).toBe(false);
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
