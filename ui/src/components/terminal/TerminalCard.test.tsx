import { describe, expect, it } from "vitest";
import { act, render, screen, waitFor } from "../../test/render";
import userEvent from "@testing-library/user-event";
import type { OpenQuestion, TerminalUpdate, ToolCallRecord } from "../../bindings";
import { QuestionsProvider } from "../../lib/questions";
import { TerminalProvider, plainOutput, shellTokens } from "../../lib/terminal";
import { calls, onCommand } from "../../test/tauri";
import { ToolCallCard } from "../tools/ToolCallCard";

const CALL: ToolCallRecord = {
  id: "c1",
  call_id: "p1",
  message_id: 2,
  round: 0,
  text_offset: 0,
  server: "terminal",
  tool: "run_command",
  arguments: { command: "cargo test && echo ok" },
  status: "pending",
  output: null,
  duration_ms: null,
  created_at: 0,
};

const SANDBOX = { enforced: true, network_blocked: false, writable: ["/w"], summary: "Sandboxed: writable only in /w; network on" };

function ask(canRemember: boolean, whyAsked: string | null = null, needsFolder = false): OpenQuestion {
  return {
    id: 9,
    question: {
      kind: "tool_approval",
      run_id: "r",
      conversation_id: "conv",
      call_id: "c1",
      server: "terminal",
      tool: "run_command",
      arguments: CALL.arguments,
      read_only: false,
      destructive: false,
      app: null,
      detail: { kind: "command", command: "cargo test && echo ok", cwd: "/w", reason: "to run the tests", sandbox: SANDBOX, why_asked: whyAsked, can_remember: canRemember, needs_folder: needsFolder },
    },
  };
}

/** Renders the card inside the providers; returns a function that plays terminal updates. */
function setup(call: ToolCallRecord, pending: OpenQuestion[]) {
  let channel: { onmessage: (u: TerminalUpdate) => void } | null = null;
  onCommand("questions_pending", () => pending);
  onCommand("question_answer", () => null);
  onCommand("terminal_kill", () => null);
  onCommand("terminal_subscribe", (args) => {
    channel = args.onEvent as typeof channel;
    return null;
  });
  render(
    <QuestionsProvider>
      <TerminalProvider>
        <ToolCallCard call={call} />
      </TerminalProvider>
    </QuestionsProvider>,
  );
  return (u: TerminalUpdate) => act(() => channel!.onmessage(u));
}

describe("TerminalCard", () => {
  it("asks with the highlighted command, the folder, the reason and the sandbox", async () => {
    setup(CALL, [ask(true)]);
    const group = await screen.findByRole("group", { name: "Approve this command" });
    expect(group).toHaveTextContent("Run this command?");
    expect(group.querySelector(".sh-program")).toHaveTextContent("cargo");
    expect(group.querySelector(".sh-operator")).toHaveTextContent("&&");
    expect(group).toHaveTextContent("/w");
    expect(group).toHaveTextContent("to run the tests");
    expect(group).toHaveTextContent("Sandboxed: writable only in /w");
    await userEvent.click(screen.getByRole("button", { name: "Always allow this command" }));
    expect(calls.find((c) => c.cmd === "question_answer")?.args).toEqual({ id: 9, answer: { kind: "approval", choice: "always" } });
  });

  it("asks for the working folder first, and Run waits for it", async () => {
    setup(CALL, [ask(false, null, true)]);
    const group = await screen.findByRole("group", { name: "Approve this command" });
    expect(group).toHaveTextContent("needs a working folder first");
    expect(screen.getByRole("button", { name: "Run" })).toBeDisabled();
    expect(screen.getByRole("button", { name: "Deny" })).toBeEnabled();
    // A folder Perch refuses: the reason shows, Run still waits.
    onCommand("terminal_choose_folder", (args) => {
      if (args.path === "~") throw { kind: "invalid", message: "it holds your whole home folder" };
      return "/home/u/app";
    });
    const input = screen.getByRole("textbox", { name: "Folder for commands" });
    await userEvent.type(input, "~");
    await userEvent.click(screen.getByRole("button", { name: "Use" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("whole home folder");
    expect(screen.getByRole("button", { name: "Run" })).toBeDisabled();
    await userEvent.clear(input);
    await userEvent.type(input, "~/app{Enter}");
    expect(await screen.findByRole("status")).toHaveTextContent("Commands will run in /home/u/app");
    // The first folder is everyone's default, not this conversation's own.
    expect(calls.filter((c) => c.cmd === "terminal_choose_folder").map((c) => c.args)).toEqual([
      { path: "~", conversationId: null },
      { path: "~/app", conversationId: null },
    ]);
    await userEvent.click(screen.getByRole("button", { name: "Run" }));
    expect(calls.find((c) => c.cmd === "question_answer")?.args).toEqual({ id: 9, answer: { kind: "approval", choice: "once" } });
  });

  it("gives this conversation its own folder from a later card, and then offers no Always", async () => {
    setup(CALL, [ask(true)]);
    onCommand("terminal_choose_folder", () => "/home/u/other");
    await screen.findByRole("group", { name: "Approve this command" });
    expect(screen.getByRole("button", { name: "Always allow this command" })).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "Change…" }));
    // Choosing: Run waits for the folder; "only here" is the default on a later card.
    expect(screen.getByRole("button", { name: "Run" })).toBeDisabled();
    expect(screen.getByRole("checkbox", { name: "Only for this conversation" })).toBeChecked();
    await userEvent.type(screen.getByRole("textbox", { name: "Folder for commands" }), "~/other{Enter}");
    expect(await screen.findByRole("status")).toHaveTextContent("Commands in this conversation will run in /home/u/other");
    expect(calls.find((c) => c.cmd === "terminal_choose_folder")?.args).toEqual({ path: "~/other", conversationId: "conv" });
    // The card was judged for /w: its sandbox line and "always" do not hold for the new folder.
    expect(screen.queryByRole("button", { name: "Always allow this command" })).not.toBeInTheDocument();
    expect(screen.queryByText(SANDBOX.summary)).not.toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Run" })).toBeEnabled();
  });

  it("offers no folder change when the model named the folder", async () => {
    const named = ask(true);
    if (named.question.kind === "tool_approval") named.question.arguments = { command: "ls", cwd: "/w/sub" };
    setup(CALL, [named]);
    await screen.findByRole("group", { name: "Approve this command" });
    expect(screen.queryByRole("button", { name: "Change…" })).not.toBeInTheDocument();
  });

  it("offers no Always for lines Perch cannot check, and says why it asks", async () => {
    setup(CALL, [ask(false, "Perch cannot check this command: it uses eval.")]);
    await screen.findByRole("group", { name: "Approve this command" });
    expect(screen.queryByRole("button", { name: "Always allow this command" })).not.toBeInTheDocument();
    expect(screen.getByText(/it uses eval/)).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "Deny" }));
    expect(calls.find((c) => c.cmd === "question_answer")?.args).toEqual({ id: 9, answer: { kind: "approval", choice: "deny" } });
  });

  it("streams output live, can kill the command, and shows how it ended", async () => {
    const play = setup({ ...CALL, status: "running" }, []);
    await waitFor(() => expect(calls.some((c) => c.cmd === "terminal_subscribe")).toBe(true));
    play({ event: "started", data: { job: 4, call_id: "c1", conversation_id: "conv", command: "cargo test", cwd: "/w", sandbox: SANDBOX, pid: 123 } });
    play({ event: "output", data: { job: 4, data: "\x1b[32mrunning 3 tests\x1b[0m\r\n" } });
    play({ event: "running", data: { job: 4, secs: 10 } });
    expect(await screen.findByText(/running 3 tests/)).toBeInTheDocument();
    expect(screen.getByText(/running for 10 s/)).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "Kill" }));
    expect(calls.find((c) => c.cmd === "terminal_kill")?.args).toEqual({ job: 4 });
    play({
      event: "finished",
      data: {
        job: 4,
        event: { id: 1, conversation_id: "conv", message_id: 2, call_id: "c1", command: "cargo test", cwd: "/w", exit_code: 0, output: "", output_bytes: 20, duration_ms: 1500, timed_out: false, denied: false, killed: false, blocked: null, sandbox: "", created_at: 0 },
      },
    });
    expect(await screen.findByText("exit 0 · 1.5 sec")).toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Kill" })).not.toBeInTheDocument();
  });

  it("says a blocked command was blocked, and why", async () => {
    const play = setup({ ...CALL, status: "denied" }, []);
    await waitFor(() => expect(calls.some((c) => c.cmd === "terminal_subscribe")).toBe(true));
    play({
      event: "finished",
      data: {
        job: 0,
        event: { id: 2, conversation_id: "conv", message_id: 2, call_id: "c1", command: "rm -rf ~", cwd: "/w", exit_code: null, output: "", output_bytes: 0, duration_ms: 0, timed_out: false, denied: true, killed: false, blocked: "it deletes /home/me, a system or home folder", sandbox: "", created_at: 0 },
      },
    });
    expect(await screen.findByRole("alert")).toHaveTextContent("Blocked by Perch: it deletes /home/me");
    expect(screen.getByText("blocked")).toBeInTheDocument();
  });
});

describe("terminal text", () => {
  it("tokenises command lines for highlighting", () => {
    const kinds = shellTokens("sudo rm -rf \"$HOME/x\" | tee log").filter((t) => t.kind !== "space").map((t) => `${t.kind}:${t.text}`);
    expect(kinds).toEqual(["program:sudo", "word:rm", "option:-rf", 'string:"$HOME/x"', "operator:|", "program:tee", "word:log"]);
  });

  it("turns terminal output into plain lines", () => {
    expect(plainOutput("\x1b[1mbold\x1b[0m\r\nprogress 10%\rprogress 100%\r\n")).toBe("bold\nprogress 100%\n");
  });
});
