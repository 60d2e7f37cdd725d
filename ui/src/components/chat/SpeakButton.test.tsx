import { describe, expect, it } from "vitest";
import { act, render, screen, waitFor, within } from "../../test/render";
import userEvent from "@testing-library/user-event";
import { SpeakButton } from "./SpeakButton";
import { applySpeech } from "../../lib/speech";
import { calls, onCommand } from "../../test/tauri";

describe("Read aloud on an answer", () => {
  it("speaks the answer with the UI's phrases, offers Stop while reading, and Esc silences it", async () => {
    onCommand("speak_message", () => null);
    onCommand("speech_stop", () => "42");
    render(<SpeakButton messageId={42} />);
    await userEvent.click(screen.getByRole("button", { name: "Read aloud" }));
    // The window's phrases are also given for answers read as they stream.
    const phrases = calls.find((c) => c.cmd === "speech_phrases")?.args.phrases as { table: string } | undefined;
    expect(phrases?.table).toBe("Here is a table of {rows} rows.");
    const spoken = calls.find((c) => c.cmd === "speak_message");
    expect(spoken?.args.messageId).toBe(42);
    expect((spoken?.args.phrases as { code: string }).code).toBe("Here is some {language} code.");
    // The shell reports the voice started: Stop is offered, announced to screen readers.
    act(() => applySpeech({ kind: "speaking", id: "42", latency_ms: 180 }));
    expect(screen.getByRole("button", { name: "Stop reading" })).toBeInTheDocument();
    expect(screen.getByRole("status")).toHaveTextContent("Press Escape to stop");
    // Esc stops the voice, and does nothing else first.
    let reachedPage = false;
    const onKey = () => (reachedPage = true);
    window.addEventListener("keydown", onKey);
    await userEvent.keyboard("{Escape}");
    window.removeEventListener("keydown", onKey);
    expect(reachedPage).toBe(false);
    await waitFor(() => expect(calls.some((c) => c.cmd === "speech_stop")).toBe(true));
    expect(screen.getByRole("button", { name: "Read aloud" })).toBeInTheDocument();
    // With nothing being read, Esc is the page's again.
    reachedPage = false;
    window.addEventListener("keydown", onKey);
    await userEvent.keyboard("{Escape}");
    window.removeEventListener("keydown", onKey);
    expect(reachedPage).toBe(true);
  });

  it("says why reading failed under that answer only, until it is read again", async () => {
    onCommand("speak_message", () => null);
    render(
      <>
        <section aria-label="first">
          <SpeakButton messageId={7} />
        </section>
        <section aria-label="second">
          <SpeakButton messageId={8} />
        </section>
      </>,
    );
    act(() => applySpeech({ kind: "failed", id: "7", message: "the sound could not be played: no output device" }));
    const alerts = screen.getAllByRole("alert");
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toHaveTextContent("no output device");
    expect(screen.getByRole("region", { name: "first" })).toContainElement(alerts[0]);
    await userEvent.click(within(screen.getByRole("region", { name: "first" })).getByRole("button", { name: "Read aloud" }));
    expect(screen.queryByRole("alert")).toBeNull();
  });
});
