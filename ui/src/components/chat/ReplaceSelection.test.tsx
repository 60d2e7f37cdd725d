import { afterEach, describe, expect, it } from "vitest";
import userEvent from "@testing-library/user-event";
import { act, render, renderHook, screen, waitFor, within } from "../../test/render";
import { calls, onCommand } from "../../test/tauri";
import { resetSelection, takeSelectionForSend, useSelection } from "../../lib/selection";
import { ReplaceSelection } from "./ReplaceSelection";

const NOTES = { text: "their going", app: "Notes", window: 42, copied: false };
const XTERM = { text: "make: *** [all] Error 1", app: "bash", window: 43, copied: false };
const ANSWER = "They're **going**.\n\n[x]: https://evil.example\n\n```\nline two\n```";

/** The selection as the app has it once a question went out with it. */
function Sent({ answer }: { answer: string }) {
  const { sent } = useSelection();
  return sent ? <ReplaceSelection answer={answer} app={sent.app} /> : null;
}

async function sentWith(selection: typeof NOTES) {
  onCommand("selection_take", () => ({ selection, problem: null }));
  const { result } = renderHook(() => useSelection());
  await waitFor(() => expect(result.current.pending).toEqual(selection));
  act(() => void takeSelectionForSend());
  render(<Sent answer={ANSWER} />);
}

const typed = () => calls.filter((c) => c.cmd === "selection_replace");

describe("Replace in <app>", () => {
  afterEach(resetSelection);

  it("shows exactly what will be typed, and types only when confirmed", async () => {
    onCommand("selection_replacement", () => ({ text: "They're going.\n\nline two", delivery: "paste", refused: null }));
    onCommand("selection_replace", () => ({ kind: "typed" }));
    await sentWith(NOTES);
    await userEvent.click(await screen.findByRole("button", { name: "Replace in Notes" }));
    const preview = await screen.findByRole("region", { name: "What replaces the selection" });
    // The engine's plain text, character for character: no Markdown, no hidden definition.
    expect(within(preview).getByLabelText("Text to type").textContent).toBe("They're going.\n\nline two");
    expect(preview).toHaveTextContent("Perch will paste exactly this over the selection, without pressing Enter:");
    expect(typed()).toHaveLength(0);
    expect(calls.find((c) => c.cmd === "selection_replacement")?.args).toEqual({ selection: NOTES, answer: ANSWER });

    await userEvent.click(within(preview).getByRole("button", { name: "Replace" }));
    expect(typed().map((c) => c.args)).toEqual([{ selection: NOTES, answer: ANSWER }]);
    await waitFor(() => expect(screen.queryByRole("region", { name: "What replaces the selection" })).toBeNull());
  });

  it("Cancel types nothing", async () => {
    onCommand("selection_replacement", () => ({ text: "They're going.", delivery: "keys", refused: null }));
    await sentWith(NOTES);
    await userEvent.click(await screen.findByRole("button", { name: "Replace in Notes" }));
    const preview = await screen.findByRole("region", { name: "What replaces the selection" });
    expect(preview).toHaveTextContent("Perch will type exactly this over the selection:");
    await userEvent.click(within(preview).getByRole("button", { name: "Cancel" }));
    expect(screen.queryByRole("region", { name: "What replaces the selection" })).toBeNull();
    expect(typed()).toHaveLength(0);
    expect(screen.getByRole("button", { name: "Replace in Notes" })).toBeInTheDocument();
  });

  it("says a terminal gets nothing typed, and puts the text on the clipboard when asked", async () => {
    const refused = "bash is a terminal, where typed text runs as commands, so Perch never types into it";
    onCommand("selection_replacement", () => ({ text: "make clean", delivery: null, refused }));
    const told = "Bash is a terminal... The text is on the clipboard instead: paste it into bash yourself with Ctrl+Shift+V.";
    onCommand("selection_replace", () => ({ kind: "on_clipboard", message: told }));
    await sentWith(XTERM);
    await userEvent.click(await screen.findByRole("button", { name: "Replace in bash" }));
    const preview = await screen.findByRole("region", { name: "What replaces the selection" });
    expect(within(preview).getByRole("note")).toHaveTextContent(
      "Bash is a terminal, where typed text runs as commands, so Perch never types into it. Perch will put this text on the clipboard instead, for you to paste:",
    );
    expect(within(preview).queryByRole("button", { name: "Replace" })).toBeNull();
    await userEvent.click(within(preview).getByRole("button", { name: "Copy to the clipboard" }));
    expect(typed()).toHaveLength(1);
    expect(await screen.findByRole("status")).toHaveTextContent(told);
  });

  it("says why when the preview cannot be made", async () => {
    onCommand("selection_replacement", () => {
      throw { kind: "external", message: "the X server at DISPLAY did not answer" };
    });
    await sentWith(NOTES);
    await userEvent.click(await screen.findByRole("button", { name: "Replace in Notes" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("the X server at DISPLAY did not answer");
    expect(typed()).toHaveLength(0);
  });
});
