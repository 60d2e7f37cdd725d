import { describe, expect, it, vi } from "vitest";
import userEvent from "@testing-library/user-event";
import { render, screen, waitFor } from "../../test/render";
import { calls, onCommand } from "../../test/tauri";
import { AnywhereExtras, TextCleanup } from "./DictationExtras";
import type { VoiceSettings } from "../../bindings";
import { SETTINGS } from "../../test/fixtures";

const voice = SETTINGS.voice as Required<VoiceSettings>;

describe("what dictated text goes through", () => {
  it("keeps the recent dictations to copy again, and forgets them on request", async () => {
    const now = Date.now();
    let recent = [
      { text: "the words that missed", at_ms: now, outcome: { kind: "copied", reason: "KeePassXC is on the list" } },
      { text: "hello there", at_ms: now - 60_000, outcome: { kind: "typed", app: "Editor" } },
    ];
    onCommand("recent_dictations", () => recent);
    onCommand("clear_recent_dictations", () => {
      recent = [];
      return null;
    });
    const writeText = vi.fn(() => Promise.resolve());
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    render(<AnywhereExtras voice={voice} onSave={() => {}} />);
    const list = await screen.findByRole("list", { name: "Recent dictations" });
    expect(list).toHaveTextContent("the words that missed");
    expect(list).toHaveTextContent("Put on the clipboard: KeePassXC is on the list");
    expect(list).toHaveTextContent("Typed into Editor");
    await userEvent.click(screen.getAllByRole("button", { name: "Copy" })[0]);
    expect(writeText).toHaveBeenCalledWith("the words that missed");
    expect(await screen.findByRole("button", { name: "Copied" })).toBeInTheDocument();
    await userEvent.click(screen.getByRole("button", { name: "Forget them" }));
    expect(await screen.findByText("None yet.")).toBeInTheDocument();
    expect(calls.some((c) => c.cmd === "clear_recent_dictations")).toBe(true);
  });

  it("saves the never-type list and the vocabulary as one entry a line, when the field is left", async () => {
    onCommand("recent_dictations", () => []);
    const saved: Partial<VoiceSettings>[] = [];
    render(
      <>
        <AnywhereExtras voice={voice} onSave={(p) => saved.push(p)} />
        <TextCleanup voice={voice} onSave={(p) => saved.push(p)} />
      </>,
    );
    const never = screen.getByRole("textbox", { name: "Never type into" });
    await userEvent.type(never, "\n  Bitwarden \n\n");
    expect(saved).toEqual([]);
    await userEvent.tab();
    expect(saved).toEqual([{ never_type_into: ["KeePassXC", "Bitwarden"] }]);
    await userEvent.type(screen.getByRole("textbox", { name: "Vocabulary" }), "Perch{enter}gRPC");
    await userEvent.tab();
    await waitFor(() => expect(saved.at(-1)).toEqual({ vocabulary: ["Perch", "gRPC"] }));
    await userEvent.click(screen.getByRole("checkbox", { name: /Capital letters/ }));
    expect(saved.at(-1)).toEqual({ tidy_punctuation: true });
  });
});
