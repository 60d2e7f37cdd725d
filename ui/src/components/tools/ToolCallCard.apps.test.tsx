// A card whose tool has an app (MCP Apps): what the app ran is listed under it. In a file of its
// own because which tools have apps is read once a page (lib/mcpApps/appTools).
import { describe, expect, it } from "vitest";
import { render, screen, waitFor, within } from "../../test/render";
import userEvent from "@testing-library/user-event";
import type { ToolCallRecord } from "../../bindings";
import { QuestionsProvider } from "../../lib/questions";
import { toolCall } from "../../test/fixtures";
import { calls, onCommand } from "../../test/tauri";
import { ToolCallCard } from "./ToolCallCard";

const CARD = toolCall();

const byApp = (id: string, status: ToolCallRecord["status"], text: string, is_error: boolean): ToolCallRecord => ({
  ...CARD,
  id,
  call_id: "",
  tool: "refresh_total",
  arguments: { round: id },
  status,
  output: { text, images: [], is_error, truncated_chars: 0 },
  duration_ms: status === "done" ? 4 : null,
  app_of: "c1",
});

function renderCard(call: ToolCallRecord) {
  onCommand("questions_pending", () => []);
  // Only `add` comes with an interface. Apps are not turned on in these tests' settings, so
  // the card shows its text: the list is the card's, not the frame's.
  onCommand("mcp_overview", () => ({ servers: [{ config: { name: "demo" }, tools: [{ name: "add", ui: { resource_uri: "ui://demo/add.html" } }, { name: "sub", ui: null }] }] }));
  onCommand("mcp_app_calls", (args) =>
    args.callId === "c1" ? { Ok: [byApp("a1", "done", "total: 5", false), byApp("a2", "denied", "The user declined", true)] } : { Ok: [] },
  );
  render(
    <QuestionsProvider>
      <ToolCallCard call={call} />
    </QuestionsProvider>,
  );
}

describe("ToolCallCard with an app", () => {
  it("lists what the card's app ran, as saved, with each call's arguments and result", async () => {
    renderCard(CARD);
    const list = await screen.findByText("2 calls from its app");
    expect(calls.filter((c) => c.cmd === "mcp_app_calls").map((c) => c.args)).toEqual([{ callId: "c1" }]);
    await userEvent.click(list);
    const rows = screen.getAllByRole("listitem");
    expect(rows.map((r) => r.querySelector("summary")?.textContent)).toEqual(["Refresh total done · 4 ms", "Refresh total declined"]);
    await userEvent.click(within(rows[1]).getByText("Refresh total"));
    expect(within(rows[1]).getByText("The user declined")).toHaveClass("error");
    expect(within(rows[1]).getByText(/"round": "a2"/)).toBeInTheDocument();
  });

  it("shows what the card's app told the model, as saved", async () => {
    renderCard({ ...CARD, app_context: 'The user picked the blue plan.\n{"plan":"blue"}' });
    const told = await screen.findByText("What its app told the model");
    await userEvent.click(told);
    expect(screen.getByText(/The user picked the blue plan\./)).toHaveTextContent('The user picked the blue plan. {"plan":"blue"}');
  });

  it("lists nothing for a tool without an app, and does not ask", async () => {
    renderCard({ ...CARD, id: "c2", tool: "sub" });
    await screen.findByText("Sub");
    // A card with an app asks at once (the first test); give this one the same chance.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(calls.some((c) => c.cmd === "mcp_app_calls")).toBe(false);
    expect(screen.queryByText(/from its app/)).not.toBeInTheDocument();
  });

  it("lists nothing while the card's call has not finished", async () => {
    renderCard({ ...CARD, status: "running", output: null });
    await screen.findByText("Add");
    await waitFor(() => expect(screen.getByText(/running/)).toBeInTheDocument());
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(calls.some((c) => c.cmd === "mcp_app_calls")).toBe(false);
  });
});
