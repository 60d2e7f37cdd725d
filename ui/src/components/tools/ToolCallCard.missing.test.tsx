// A card whose server is not loaded because the servers file has a problem: the card says so
// (where its app would have been), and the note goes once the fixed file is read again. In a
// file of its own because the servers' lists are read once a page (lib/mcpApps/appTools).
import { describe, expect, it } from "vitest";
import { act, render, screen, waitFor } from "../../test/render";
import type { McpOverview } from "../../bindings";
import { QuestionsProvider } from "../../lib/questions";
import { toolCall } from "../../test/fixtures";
import { emitEvent, onCommand } from "../../test/tauri";
import { ToolCallCard } from "./ToolCallCard";

describe("ToolCallCard of a server the servers file failed to load", () => {
  it("says why the server is missing, and stops once the file is fixed", async () => {
    const broken = { file: "/data/mcp_servers.json", line: 3, server: null, message: "not valid JSON: trailing comma at line 3 column 1" };
    let overview = { servers: [], problems: [broken] } as unknown as McpOverview;
    onCommand("questions_pending", () => []);
    onCommand("mcp_overview", () => overview);
    onCommand("mcp_app_calls", () => ({ Ok: [] }));
    render(
      <QuestionsProvider>
        <ToolCallCard call={toolCall()} />
      </QuestionsProvider>,
    );
    const note = await screen.findByRole("note");
    expect(note).toHaveTextContent(
      "demo is not loaded: the MCP servers file has a problem (line 3: not valid JSON: trailing comma at line 3 column 1). Fix it in Settings → MCP or in the file; Perch reads it again when it is saved.",
    );

    overview = { servers: [{ config: { name: "demo" }, tools: [] }], problems: [] } as unknown as McpOverview;
    await act(async () => emitEvent("mcp-changed", { event: { event: "changed", data: { server: "demo" } } }));
    await waitFor(() => expect(screen.queryByRole("note")).toBeNull());
  });
});
