import { describe, expect, it } from "vitest";
import { render, screen } from "../../test/render";
import userEvent from "@testing-library/user-event";
import { MemoryRouter } from "react-router";
import type { OpenQuestion, ToolCallRecord } from "../../bindings";
import { QuestionsProvider } from "../../lib/questions";
import { toolCall } from "../../test/fixtures";
import { calls, onCommand } from "../../test/tauri";
import { ToolCallCard } from "./ToolCallCard";
import { UsedMemories } from "../chat/UsedMemories";

const PROPOSED = "The user deploys on Fridays";
const CALL = toolCall({
  id: "m1",
  server: "memory",
  tool: "remember",
  arguments: { text: PROPOSED },
  status: "running",
  output: null,
  duration_ms: null,
});
const ASK: OpenQuestion = {
  id: 3,
  question: { kind: "memory", conversation_id: "conv", call_id: "m1", text: PROPOSED },
};

function renderCard(call: ToolCallRecord, open: OpenQuestion[] = []) {
  onCommand("questions_pending", () => open);
  onCommand("question_answer", () => null);
  render(
    <MemoryRouter>
      <QuestionsProvider>
        <ToolCallCard call={call} />
      </QuestionsProvider>
    </MemoryRouter>,
  );
}

const answered = () => calls.filter((c) => c.cmd === "question_answer").map((c) => c.args);

describe("MemoryProposal", () => {
  it("keeps the proposal as the user edited it, with Ctrl+Enter", async () => {
    renderCard(CALL, [ASK]);
    const box = await screen.findByRole("textbox", { name: /proposes to remember/ });
    expect(box).toHaveValue(PROPOSED);
    expect(box).toHaveFocus();
    await userEvent.clear(box);
    await userEvent.type(box, "The team deploys billing on Fridays{Control>}{Enter}{/Control}");
    expect(answered()).toEqual([{ id: 3, answer: { kind: "memory", keep: "The team deploys billing on Fridays" } }]);
  });

  it("refuses it, and offers no way to keep an empty note", async () => {
    renderCard(CALL, [ASK]);
    const box = await screen.findByRole("textbox", { name: /proposes to remember/ });
    await userEvent.clear(box);
    expect(screen.getByRole("button", { name: "Remember" })).toBeDisabled();
    await userEvent.click(screen.getByRole("button", { name: "Don't remember" }));
    expect(answered()).toEqual([{ id: 3, answer: { kind: "memory", keep: null } }]);
  });

  it("says what became of it once answered", async () => {
    const kept = { kept: true, id: 4, text: "The team deploys on Fridays", proposed: PROPOSED };
    renderCard({ ...CALL, status: "done", output: { text: "", images: [], is_error: false, truncated_chars: 0, structured: kept } });
    expect(await screen.findByText(/Remembered: “The team deploys on Fridays”/)).toBeInTheDocument();
    expect(screen.getByRole("link", { name: "Manage memories" })).toHaveAttribute("href", "/settings?section=Memories");
  });

  it("shows an answer's memories, folded, with where to change them", async () => {
    render(
      <MemoryRouter>
        <UsedMemories memories={["The user's cat is called Miso", "The user is in Lisbon"]} />
      </MemoryRouter>,
    );
    await userEvent.click(screen.getByText("Given 2 memories"));
    expect(screen.getByRole("list", { name: "Memories given to this answer" })).toHaveTextContent("The user is in Lisbon");
  });
});
