import { describe, expect, it } from "vitest";
import { act, render, screen, waitFor } from "../test/render";
import { MiniBubble } from "./MiniBubble";
import { calls, emitEvent, onCommand } from "../test/tauri";

describe("the bubble while dictating", () => {
  it("shows that it listens, then opens the window when the text is ready", async () => {
    onCommand("set_window_mode", () => null);
    render(<MiniBubble />);
    const say = (event: unknown) => act(() => emitEvent("voice-update", { update: { session: 3, event } }));
    say({ event: "listening", data: { device: "Mic", sample_rate: 48000, channels: 2, max_seconds: 300 } });
    expect(await screen.findByRole("button", { name: "Perch is listening" })).toBeInTheDocument();
    say({ event: "transcribing", data: { seconds: 3 } });
    expect(screen.getByRole("button", { name: "Perch is transcribing" })).toBeInTheDocument();
    say({ event: "final", data: { text: "Hello", audio_seconds: 3, transcribe_ms: 500, send: false } });
    await waitFor(() => expect(calls.some((c) => c.cmd === "set_window_mode" && c.args.mode === "normal")).toBe(true));
  });
});
