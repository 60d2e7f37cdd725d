import { describe, expect, it, vi } from "vitest";
import { act, render, screen, waitFor } from "../../test/render";
import userEvent from "@testing-library/user-event";
import { ConversationBar, TalkButton } from "./Conversation";
import { QuestionsProvider } from "../../lib/questions";
import { questionNotSent } from "../../lib/conversation";
import { dictationState } from "../../lib/dictation";
import { calls, emitEvent, onCommand } from "../../test/tauri";

const count = (cmd: string) => calls.filter((c) => c.cmd === cmd).length;
const dictation = (event: unknown) => act(() => emitEvent("voice-update", { update: { session: 1, event } }));
const voice = (event: unknown) => act(() => emitEvent("speech-update", { event }));
const listening = { event: "listening", data: { device: "mic", sample_rate: 48000, channels: 2, max_seconds: 300 } };
const question = (text: string) => ({ event: "final", data: { text, audio_seconds: 2, transcribe_ms: 300, send: true } });

/** The bar and the button as the chat page has them; the returned function tells them whether
 * an answer is being written. */
function renderConversation(onStopAnswer: () => void = () => {}) {
  const ui = (answering: boolean) => (
    <QuestionsProvider>
      <ConversationBar answering={answering} onStopAnswer={onStopAnswer} />
      <TalkButton />
    </QuestionsProvider>
  );
  const { rerender } = render(ui(false));
  return (answering: boolean) => rerender(ui(answering));
}

describe("a hands-free conversation", () => {
  it("listens, counts down to sending, thinks, speaks, is interrupted by talking, never hears approvals, and ends with Esc", async () => {
    let questions: unknown[] = [];
    onCommand("questions_pending", () => questions);
    onCommand("conversation_set", () => null);
    onCommand("conversation_listen", () => 1);
    onCommand("conversation_keep_listening", () => 1);
    onCommand("speech_stop", () => "9");
    onCommand("voice_cancel", () => 1);
    const answering = renderConversation();
    // Ctrl+Shift+Space starts it: every answer spoken, the microphone open.
    await userEvent.keyboard("{Control>}{Shift>} {/Shift}{/Control}");
    await waitFor(() => expect(count("conversation_listen")).toBe(1));
    expect(calls.find((c) => c.cmd === "conversation_set")?.args.on).toBe(true);
    expect(screen.getByRole("button", { name: "End the conversation" })).toHaveAttribute("aria-pressed", "true");
    dictation({ event: "listening", data: { device: "mic", sample_rate: 48000, channels: 2, max_seconds: 300 } });
    expect(screen.getByRole("status")).toHaveTextContent("Listening… ask your question.");

    // A pause: the countdown shows, and Keep listening cancels it.
    dictation({ event: "heard" });
    dictation({ event: "countdown", data: { remaining_ms: 900 } });
    expect(screen.getByText("Sending in 0.9 s")).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "Keep listening" }));
    expect(count("conversation_keep_listening")).toBe(1);
    dictation({ event: "countdown", data: { remaining_ms: null } });
    expect(screen.queryByRole("button", { name: "Keep listening" })).toBeNull();

    // The question goes (the composer sends a final text marked to send): Perch thinks.
    dictation(question("What time is it?"));
    expect(screen.getByRole("status")).toHaveTextContent("Thinking…");
    answering(true);
    expect(count("conversation_listen")).toBe(1);

    // The answer is spoken; Perch listens over it, and talking stops the voice.
    voice({ kind: "speaking", id: "9", latency_ms: 200 });
    expect(screen.getByRole("status")).toHaveTextContent("Speaking… talk to interrupt.");
    await waitFor(() => expect(count("conversation_listen")).toBe(2));
    dictation({ event: "listening", data: { device: "mic", sample_rate: 48000, channels: 2, max_seconds: 300 } });
    dictation({ event: "heard" });
    await waitFor(() => expect(count("speech_stop")).toBe(1));
    answering(false);

    // A tool approval comes up: the microphone closes, and the bar says to answer by hand.
    const ask = { id: 4, question: { kind: "tool_approval", run_id: "r", conversation_id: "c", call_id: "k", server: "demo", tool: "add", arguments: {}, read_only: false, detail: null } };
    questions = [ask];
    await act(async () => emitEvent("question-event", { event: { event: "asked", data: ask } }));
    await waitFor(() => expect(count("voice_cancel")).toBe(1));
    dictation({ event: "cancelled" });
    expect(screen.getByRole("status")).toHaveTextContent("Perch does not take a spoken yes");
    const listened = count("conversation_listen");
    await act(async () => emitEvent("question-event", { event: { event: "settled", data: 4 } }));
    await waitFor(() => expect(count("conversation_listen")).toBe(listened + 1));

    // Esc ends it: the voice silenced and the microphone closed by the shell.
    await userEvent.keyboard("{Escape}");
    await waitFor(() => expect(calls.filter((c) => c.cmd === "conversation_set").at(-1)?.args.on).toBe(false));
    expect(screen.getByRole("button", { name: "Talk hands-free" })).toHaveAttribute("aria-pressed", "false");
    expect(screen.queryByRole("region", { name: "Hands-free conversation" })).toBeNull();
  });

  it("talking over an answer still being written stops it; the question is sent, and nothing listens until it is", async () => {
    onCommand("questions_pending", () => []);
    onCommand("conversation_set", () => null);
    onCommand("conversation_listen", () => 1);
    onCommand("speech_stop", () => "9");
    const stopAnswer = vi.fn();
    const answering = renderConversation(stopAnswer);
    await userEvent.click(screen.getByRole("button", { name: "Talk hands-free" }));
    await waitFor(() => expect(count("conversation_listen")).toBe(1));
    dictation(listening);
    dictation(question("Tell me about Paris."));
    answering(true);
    // The first sentence is spoken while the model writes on: Perch listens over it.
    voice({ kind: "speaking", id: "9", latency_ms: 200 });
    await waitFor(() => expect(count("conversation_listen")).toBe(2));
    dictation(listening);
    dictation({ event: "heard" });
    await waitFor(() => expect(count("speech_stop")).toBe(1));
    expect(stopAnswer).toHaveBeenCalledTimes(1);
    voice({ kind: "stopped", id: "9" });
    // The new question arrives while the stopped answer is ending; when it has ended nothing
    // listens: the question is on its way.
    dictation(question("And Rome?"));
    answering(false);
    expect(count("conversation_listen")).toBe(2);
    expect(screen.getByRole("status")).toHaveTextContent("Thinking…");
    // It went: the next answer is written, and Perch listens again when it ends (here nothing
    // was spoken: the answer failed).
    answering(true);
    answering(false);
    await waitFor(() => expect(count("conversation_listen")).toBe(3));
    await userEvent.keyboard("{Escape}");
    await waitFor(() => expect(screen.getByRole("button", { name: "Talk hands-free" })).toHaveAttribute("aria-pressed", "false"));
  });

  it("ends saying why when the microphone cannot listen, and leaves the mic button usable", async () => {
    onCommand("questions_pending", () => []);
    onCommand("conversation_set", () => null);
    onCommand("conversation_listen", () => {
      throw { kind: "external", message: "No microphone found (the ALSA audio system has no input device)." };
    });
    renderConversation();
    await userEvent.click(screen.getByRole("button", { name: "Talk hands-free" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("No microphone found");
    expect(screen.getByRole("button", { name: "Talk hands-free" })).toHaveAttribute("aria-pressed", "false");
    expect(dictationState().phase).toBe("idle");
  });

  it("ends when a question heard could not be sent, saying where it is", async () => {
    onCommand("questions_pending", () => []);
    onCommand("conversation_set", () => null);
    onCommand("conversation_listen", () => 1);
    renderConversation();
    await userEvent.click(screen.getByRole("button", { name: "Talk hands-free" }));
    await waitFor(() => expect(count("conversation_listen")).toBe(1));
    dictation(listening);
    dictation(question("What time is it?"));
    act(() => questionNotSent());
    expect(await screen.findByRole("alert")).toHaveTextContent("it waits in the message box");
    expect(calls.filter((c) => c.cmd === "conversation_set").at(-1)?.args.on).toBe(false);
  });
});
