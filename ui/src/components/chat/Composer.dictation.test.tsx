import { describe, expect, it, vi } from "vitest";
import { act, render, screen, waitFor } from "../../test/render";
import userEvent from "@testing-library/user-event";
import { Composer } from "./Composer";
import { SettingsProvider } from "../../lib/settings";
import { insertAt } from "../../lib/dictation";
import { calls, emitEvent, onCommand } from "../../test/tauri";
import { healthyApp } from "../../test/fixtures";
import type { DictationEvent } from "../../bindings";

function voice(event: DictationEvent) {
  act(() => emitEvent("voice-update", { update: { session: 1, event } }));
}

/** The composer as the chat page has it, with or without an answer being written. */
function composer(onSend: () => Promise<boolean>, streaming = false) {
  return (
    <SettingsProvider>
      <Composer
        chat="new"
        streaming={streaming}
        models={[]}
        model="ollama:llama3"
        onModel={() => {}}
        usage={{ used: 0, limit: null }}
        editing={null}
        onSend={onSend}
        onStop={() => {}}
        onEditLast={() => {}}
        onCancelEdit={() => {}}
      />
    </SettingsProvider>
  );
}

function renderComposer(onSend = vi.fn(async () => true)) {
  healthyApp();
  onCommand("voice_start", () => 1);
  onCommand("voice_stop", () => 1);
  onCommand("voice_cancel", () => 1);
  render(composer(onSend));
  return onSend;
}

describe("dictation in the composer", () => {
  it("shows the level and greyed partial text, then puts the final text at the cursor without sending", async () => {
    localStorage.setItem("perch.draft", "Hello world");
    const onSend = renderComposer();
    const box = screen.getByRole<HTMLTextAreaElement>("textbox", { name: "Message" });
    box.focus();
    box.setSelectionRange(6, 6);
    await userEvent.click(screen.getByRole("button", { name: "Dictate" }));
    expect(calls.some((c) => c.cmd === "voice_start")).toBe(true);
    voice({ event: "listening", data: { device: "Mic", sample_rate: 48000, channels: 2, max_seconds: 300 } });
    voice({ event: "level", data: { level: 0.7, seconds: 1.2 } });
    expect(screen.getByRole("meter", { name: "Microphone level" })).toHaveAttribute("aria-valuenow", "0.7");
    voice({ event: "partial", data: { text: "dear" } });
    expect(screen.getByLabelText("Dictated so far")).toHaveTextContent("dear");
    expect(box.value).toBe("Hello world");
    await userEvent.click(screen.getByRole("button", { name: "Stop dictation" }));
    expect(calls.some((c) => c.cmd === "voice_stop")).toBe(true);
    voice({ event: "transcribing", data: { seconds: 2 } });
    voice({ event: "final", data: { text: "dear friend,", audio_seconds: 2, transcribe_ms: 400, send: false } });
    await waitFor(() => expect(box.value).toBe("Hello dear friend, world"));
    expect(screen.queryByLabelText("Dictated so far")).toBeNull();
    expect(onSend).not.toHaveBeenCalled();
    expect(localStorage.getItem("perch.draft")).toBe("Hello dear friend, world");
  });

  it("sends when send after dictation is on", async () => {
    localStorage.setItem("perch.draft", "");
    const onSend = renderComposer();
    voice({ event: "listening", data: { device: "Mic", sample_rate: 16000, channels: 1, max_seconds: 300 } });
    voice({ event: "final", data: { text: "What time is it?", audio_seconds: 2, transcribe_ms: 300, send: true } });
    await waitFor(() => expect(onSend).toHaveBeenCalledWith("What time is it?", [], [], [], undefined));
    // Sent, it leaves the box: the next dictation does not send it again.
    const box = screen.getByRole<HTMLTextAreaElement>("textbox", { name: "Message" });
    await waitFor(() => expect(box.value).toBe(""));
    voice({ event: "listening", data: { device: "Mic", sample_rate: 16000, channels: 1, max_seconds: 300 } });
    voice({ event: "final", data: { text: "And the date?", audio_seconds: 2, transcribe_ms: 300, send: true } });
    await waitFor(() => expect(onSend).toHaveBeenLastCalledWith("And the date?", [], [], [], undefined));
  });

  it("sends a question dictated while an answer is written once that answer has ended", async () => {
    localStorage.setItem("perch.draft", "");
    healthyApp();
    const onSend = vi.fn(async () => true);
    const { rerender } = render(composer(onSend, true));
    voice({ event: "listening", data: { device: "Mic", sample_rate: 16000, channels: 1, max_seconds: 300 } });
    voice({ event: "final", data: { text: "And Rome?", audio_seconds: 2, transcribe_ms: 300, send: true } });
    const box = screen.getByRole<HTMLTextAreaElement>("textbox", { name: "Message" });
    await waitFor(() => expect(box.value).toBe("And Rome?"));
    expect(onSend).not.toHaveBeenCalled();
    rerender(composer(onSend, false));
    await waitFor(() => expect(onSend).toHaveBeenCalledWith("And Rome?", [], [], [], undefined));
    expect(onSend).toHaveBeenCalledTimes(1);
    await waitFor(() => expect(box.value).toBe(""));
  });

  it("explains a failure and keeps what was typed", async () => {
    localStorage.setItem("perch.draft", "my draft");
    renderComposer();
    onCommand("voice_start", () => {
      throw { kind: "external", message: 'No microphone found (the ALSA audio system has no input device).' };
    });
    await userEvent.click(screen.getByRole("button", { name: "Dictate" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("No microphone found");
    expect(screen.getByRole<HTMLTextAreaElement>("textbox", { name: "Message" }).value).toBe("my draft");
    voice({ event: "failed", data: { kind: "no_speech", message: "No speech was heard." } });
    expect(await screen.findByText(/No speech was heard/)).toBeInTheDocument();
  });

  it("inserts with a space where words meet", () => {
    expect(insertAt("Hello world", 5, 5, "there")).toEqual({ value: "Hello there world", caret: 11 });
    expect(insertAt("", 0, 0, " Hi. ")).toEqual({ value: "Hi.", caret: 3 });
    expect(insertAt("Say ", 4, 4, "yes")).toEqual({ value: "Say yes", caret: 7 });
    expect(insertAt("a REPLACE b", 2, 9, "x")).toEqual({ value: "a x b", caret: 3 });
  });
});
