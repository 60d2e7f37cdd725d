import { describe, expect, it } from "vitest";
import userEvent from "@testing-library/user-event";
import { act, render, screen, waitFor } from "../test/render";
import { DictationIndicator } from "./DictationIndicator";
import { calls, emitEvent, onCommand } from "../test/tauri";

describe("the dictate-anywhere indicator", () => {
  const say = (event: unknown) => act(() => emitEvent("indicator-update", { update: { session: 7, event } }));

  it("learns it listens from the level even when it opened after the microphone, and shows the end of the words", async () => {
    render(<DictationIndicator />);
    expect(screen.getByRole("status")).toHaveTextContent("Starting the microphone…");
    // No "listening" event reached it: the level says so.
    say({ event: "level", data: { level: 0.6, seconds: 2.5 } });
    await waitFor(() => expect(screen.getByRole("status")).toHaveTextContent("Listening… Esc cancels."));
    expect(screen.getByText("2.5 sec")).toBeInTheDocument();
    const long = `${"word ".repeat(40)}and the last words`;
    say({ event: "partial", data: { text: long } });
    const words = screen.getByText(/and the last words$/);
    expect(words.textContent?.startsWith("…")).toBe(true);
    expect(words.textContent!.length).toBeLessThan(long.length);
    say({ event: "transcribing", data: { seconds: 4 } });
    expect(screen.getByRole("status")).toHaveTextContent("Writing it down…");
  });

  it("says why a dictation failed, where the user is looking", async () => {
    render(<DictationIndicator />);
    say({ event: "listening", data: { device: "Mic", sample_rate: 48000, channels: 1, max_seconds: 300 } });
    say({ event: "failed", data: { kind: "microphone", message: "The microphone went away." } });
    expect(screen.getByRole("status")).toHaveTextContent("The dictation stopped:");
    expect(screen.getByText("The microphone went away.")).toBeInTheDocument();
  });

  it("shows a failure that came while its page was still loading", async () => {
    const message = "No microphone found (the system's default input \"Default Audio Device\" could not be opened: Host is down). Connect one, or pick another in Settings -> Voice.";
    onCommand("indicator_failure", () => ({ session: 3, event: { event: "failed", data: { kind: "microphone", message } } }));
    render(<DictationIndicator />);
    expect(await screen.findByText(message)).toBeInTheDocument();
    expect(screen.getByRole("status")).toHaveTextContent("The dictation stopped:");
  });

  it("does not hear the window's own dictation events", async () => {
    render(<DictationIndicator />);
    act(() => emitEvent("voice-update", { update: { session: 1, event: { event: "partial", data: { text: "for the composer" } } } }));
    expect(screen.queryByText("for the composer")).toBeNull();
  });

  it("cancels from its button", async () => {
    onCommand("voice_cancel", () => 7);
    render(<DictationIndicator />);
    await userEvent.click(screen.getByRole("button", { name: "Cancel the dictation" }));
    await waitFor(() => expect(calls.some((c) => c.cmd === "voice_cancel")).toBe(true));
  });
});
