import { describe, expect, it } from "vitest";
import { render, screen, within, waitFor } from "../../test/render";
import userEvent from "@testing-library/user-event";
import type { OpenQuestion, ToolCallRecord } from "../../bindings";
import { QuestionsProvider } from "../../lib/questions";
import { toolCall } from "../../test/fixtures";
import { calls, emitEvent, onCommand } from "../../test/tauri";
import { ToolCallCard, humanLabel } from "./ToolCallCard";

const CALL = toolCall({ status: "pending", output: null, duration_ms: null });

const ASK: OpenQuestion = {
  id: 7,
  question: {
    kind: "tool_approval",
    run_id: "r",
    conversation_id: "conv",
    call_id: "c1",
    server: "demo",
    tool: "add",
    arguments: { a: 2, b: 3 },
    read_only: true,
    destructive: false,
    app: null,
    detail: null,
  },
};

/** The card of CALL with ASK open; resolves with its approval group. */
async function renderAsked() {
  onCommand("questions_pending", () => [ASK]);
  onCommand("question_answer", () => null);
  render(
    <QuestionsProvider>
      <ToolCallCard call={CALL} />
    </QuestionsProvider>,
  );
  return screen.findByRole("group", { name: "Approve this tool call" });
}

describe("ToolCallCard", () => {
  it("names the app when a call comes from the card's app, with the arguments it asks for", async () => {
    const fromApp: OpenQuestion = {
      ...ASK,
      question: { ...ASK.question, kind: "tool_approval", tool: "refresh", arguments: { city: "Oslo" }, app: "Weather" } as OpenQuestion["question"],
    };
    onCommand("questions_pending", () => [fromApp]);
    onCommand("question_answer", () => null);
    render(
      <QuestionsProvider>
        <ToolCallCard call={CALL} />
      </QuestionsProvider>,
    );
    const group = await screen.findByRole("group", { name: "Approve this tool call" });
    expect(group).toHaveTextContent("The Weather app in this answer wants to run refresh from demo with:");
    expect(group).toHaveTextContent('"city": "Oslo"');
  });

  it("offers Sign in on a call whose server needs one, and says when it is done", async () => {
    let finish: (v: unknown) => void = () => {};
    onCommand("mcp_sign_in", () => new Promise((resolve) => (finish = resolve)));
    const failed: ToolCallRecord = {
      ...CALL,
      server: "linear",
      tool: "list_issues",
      status: "needs_sign_in",
      output: { text: "The tool could not run: linear needs you to sign in.", is_error: true, images: [], truncated_chars: 0 },
    };
    render(
      <QuestionsProvider>
        <ToolCallCard call={failed} />
      </QuestionsProvider>,
    );
    const action = screen.getByRole("group", { name: "Sign in to linear" });
    expect(action).toHaveTextContent("linear needs you to sign in before its tools can run.");
    expect(screen.getByText("needs sign-in")).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "Sign in" }));
    expect(calls.find((c) => c.cmd === "mcp_sign_in")?.args).toEqual({ name: "linear", scope: null });
    expect(action).toHaveTextContent("Finish signing in in your browser.");
    finish({ signed_in: true, issuer: null, scopes: [], expires_at: null, can_refresh: true });
    await waitFor(() => expect(action).toHaveTextContent("Signed in to linear. Ask again to run it."));
  });

  it("asks inline, naming the server, the tool and its arguments, and sends the choice", async () => {
    const group = await renderAsked();
    expect(group).toHaveTextContent("Run add from demo with these arguments?");
    expect(screen.getByText(/"a": 2/)).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "Allow in this chat" }));
    const answered = calls.find((c) => c.cmd === "question_answer");
    expect(answered?.args).toEqual({ id: 7, answer: { kind: "approval", choice: "conversation" } });
    expect(screen.queryByRole("group", { name: "Approve this tool call" })).not.toBeInTheDocument();
  });

  it("takes the focus without a button having it, so a stray Enter approves nothing", async () => {
    const group = await renderAsked();
    // The focus moves in an effect after the group is drawn.
    await waitFor(() => expect(group).toHaveFocus());
    await userEvent.keyboard("{Enter}");
    await userEvent.keyboard(" ");
    expect(calls.some((c) => c.cmd === "question_answer")).toBe(false);
    await userEvent.tab();
    expect(screen.getByRole("button", { name: "Allow once" })).toHaveFocus();
    await userEvent.keyboard("{Enter}");
    expect(calls.find((c) => c.cmd === "question_answer")?.args).toEqual({
      id: 7,
      answer: { kind: "approval", choice: "once" },
    });
  });

  it("leaves the focus with someone typing elsewhere", async () => {
    onCommand("questions_pending", () => [ASK]);
    render(
      <QuestionsProvider>
        <input aria-label="Elsewhere" />
        <ToolCallCard call={CALL} />
      </QuestionsProvider>,
    );
    const elsewhere = screen.getByRole("textbox", { name: "Elsewhere" });
    elsewhere.focus();
    await screen.findByRole("group", { name: "Approve this tool call" });
    expect(elsewhere).toHaveFocus();
  });

  it("asks about a tool that sends or destroys at every call: no allowing it for the chat", async () => {
    const destructive: OpenQuestion = { ...ASK, question: { ...ASK.question, destructive: true } as OpenQuestion["question"] };
    onCommand("questions_pending", () => [destructive]);
    render(
      <QuestionsProvider>
        <ToolCallCard call={CALL} />
      </QuestionsProvider>,
    );
    const group = await screen.findByRole("group", { name: "Approve this tool call" });
    expect(within(group).getByRole("button", { name: "Allow once" })).toBeInTheDocument();
    expect(within(group).getByRole("button", { name: "Always allow" })).toBeInTheDocument();
    expect(within(group).queryByRole("button", { name: "Allow in this chat" })).not.toBeInTheDocument();
  });

  it("shows questions that arrive later and drops settled ones", async () => {
    onCommand("questions_pending", () => []);
    render(
      <QuestionsProvider>
        <ToolCallCard call={CALL} />
      </QuestionsProvider>,
    );
    await waitFor(() => expect(calls.some((c) => c.cmd === "questions_pending")).toBe(true));
    emitEvent("question-event", { event: { event: "asked", data: ASK } });
    expect(await screen.findByRole("button", { name: "Never" })).toBeInTheDocument();
    emitEvent("question-event", { event: { event: "settled", data: 7 } });
    await waitFor(() => expect(screen.queryByRole("button", { name: "Never" })).not.toBeInTheDocument());
  });

  it("shows the result, its images and the truncation note", async () => {
    onCommand("questions_pending", () => []);
    const done: ToolCallRecord = {
      ...CALL,
      status: "done",
      duration_ms: 12,
      output: { text: "5", images: [{ mime: "image/png", base64: "aGk=" }], is_error: false, truncated_chars: 40 },
    };
    render(
      <QuestionsProvider>
        <ToolCallCard call={done} />
      </QuestionsProvider>,
    );
    expect(screen.getByText("done · 12 ms")).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "Show result" }));
    expect(screen.getByText("5")).toBeInTheDocument();
    expect(screen.getByRole("img", { name: "Result image 1" })).toHaveAttribute("src", "data:image/png;base64,aGk=");
    expect(screen.getByText(/40 characters were cut/)).toBeInTheDocument();
  });

  it("labels tools for people", () => {
    expect(humanLabel("read_text_file")).toBe("Read text file");
    expect(humanLabel("trigger-long-running-operation")).toBe("Trigger long running operation");
    expect(humanLabel("getCurrentTime")).toBe("Get current time");
  });
});
