import { describe, expect, it } from "vitest";
import { act, fireEvent, render, screen } from "../test/render";
import { MiniBubble } from "./MiniBubble";
import { calls, emitEvent, onCommand } from "../test/tauri";
import { QuestionsProvider } from "../lib/questions";

describe("MiniBubble", () => {
  it("restores the window on a click", () => {
    onCommand("set_window_mode", () => null);
    render(<MiniBubble />);
    const bubble = screen.getByRole("button", { name: "Open Perch" });
    fireEvent.pointerDown(bubble, { button: 0, screenX: 10, screenY: 10 });
    fireEvent.pointerUp(bubble);
    // (The bubble follows the voice's state too, which sends the phrases it reads with.)
    expect(calls.filter((c) => c.cmd !== "speech_phrases")).toEqual([{ cmd: "set_window_mode", args: { mode: "normal" } }]);
  });

  it("drags the window instead when the pointer moves", () => {
    onCommand("set_window_mode", () => null);
    render(<MiniBubble />);
    const bubble = screen.getByRole("button", { name: "Open Perch" });
    fireEvent.pointerDown(bubble, { button: 0, screenX: 10, screenY: 10 });
    fireEvent.pointerMove(bubble, { screenX: 30, screenY: 25 });
    fireEvent.pointerUp(bubble);
    expect(calls.map((c) => c.cmd).filter((cmd) => cmd !== "speech_phrases")).toEqual(["startDragging"]);
  });

  it("shows a badge while an approval waits, and drops it once answered", async () => {
    const ask = { id: 4, question: { kind: "tool_approval", run_id: "r", conversation_id: "c", call_id: "k", server: "demo", tool: "add", arguments: {}, read_only: false, detail: null } };
    onCommand("questions_pending", () => [ask]);
    render(
      <QuestionsProvider>
        <MiniBubble />
      </QuestionsProvider>,
    );
    const bubble = await screen.findByRole("button", { name: "Open Perch: 1 question is waiting for you" });
    expect(bubble).toHaveTextContent("1");
    await act(async () => emitEvent("question-event", { event: { event: "settled", data: 4 } }));
    expect(screen.getByRole("button", { name: "Open Perch" })).not.toHaveTextContent("1");
  });
});
